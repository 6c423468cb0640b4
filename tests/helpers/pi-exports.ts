/**
 * The value (runtime) names a reference pi package's dist/index.d.ts exports, read from its
 * `export { ... } from` lines: `export type { ... }` blocks and `type X` members are types only.
 */
import { readFileSync } from "node:fs";

export function referenceValueExports(dts: string): string[] {
  const text = readFileSync(dts, "utf8");
  const out = new Set<string>();
  for (const m of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from/g)) {
    if (m[1]) continue;
    for (const raw of m[2]!.split(",")) {
      const item = raw.trim();
      if (!item || item.startsWith("type ")) continue;
      const name = item.split(/\s+as\s+/).pop()!.trim();
      out.add(name);
    }
  }
  return [...out].sort();
}
