/**
 * `pi --list-tools`: every registered tool, where it came from, and what wraps it (in the
 * order the wrappers apply, innermost first).
 */
import { relative } from "node:path";
import type { Kernel } from "../../core/kernel/index.js";

export interface ToolListOptions {
  /** Tool name → source before extensions loaded (to mark overrides). */
  base?: ReadonlyMap<string, string>;
  /** Tools active by default in a new session, when known. */
  active?: ReadonlySet<string>;
}

function label(kernel: Kernel, source: string): string {
  if (source === "tools") return "built-in";
  if (source.startsWith("/")) {
    const rel = relative(kernel.cwd, source);
    return rel && !rel.startsWith("..") ? rel : source;
  }
  return source;
}

export function formatToolList(kernel: Kernel, opts: ToolListOptions = {}): string {
  const rows = kernel.tools.describe().map((t) => {
    const before = opts.base?.get(t.name);
    let from = label(kernel, t.source);
    if (before && before !== t.source) from += ` (replaces ${label(kernel, before)})`;
    return {
      name: t.name,
      from,
      wraps: t.wrappedBy.map((w) => label(kernel, w)).join(" → "),
    };
  });
  if (!rows.length) return "No tools are registered.\n";
  const w1 = Math.max(4, ...rows.map((r) => r.name.length));
  const w2 = Math.max(6, ...rows.map((r) => r.from.length));
  const lines = [`${"TOOL".padEnd(w1)}  ${"SOURCE".padEnd(w2)}  WRAPPED BY`];
  for (const r of rows) lines.push(`${r.name.padEnd(w1)}  ${r.from.padEnd(w2)}  ${r.wraps || "-"}`.trimEnd());
  return lines.join("\n") + "\n";
}
