/**
 * This package's own package.json, found by walking up from this module (works from dist/sdk/
 * and from the bundle in dist/bundle/).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: { root: string; version: string; name: string } | undefined;

export function packageInfo(): { root: string; version: string; name: string } {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, "package.json");
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "pi-kernel" && pkg.version) return (cached = { root: dir, version: pkg.version, name: pkg.name });
    }
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find pi-kernel's package.json");
    dir = up;
  }
}
