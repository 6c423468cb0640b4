/**
 * Finding ripgrep and fd on PATH. Looked up once per PATH value and cached; nothing is ever
 * downloaded: without them grep and find use the in-process walker.
 */
import { accessSync, constants, statSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { delimiter, join } from "node:path";

const cache = new Map<string, string | null>();

/** Absolute path of the first executable named one of `names` on PATH, or undefined. */
export function findExecutable(names: readonly string[], pathEnv: string | undefined = process.env.PATH): string | undefined {
  const key = `${names.join(",")}\u0000${pathEnv ?? ""}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  let found: string | null = null;
  const exts = process.platform === "win32" ? (process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  outer: for (const dir of (pathEnv ?? "").split(delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      for (const ext of exts) {
        const candidate = join(dir, name + ext);
        try {
          accessSync(candidate, constants.X_OK);
          if (!statSync(candidate).isFile()) continue;
          found = candidate;
          break outer;
        } catch {
          /* not here */
        }
      }
    }
  }
  cache.set(key, found);
  return found ?? undefined;
}

const helpCache = new Map<string, string>();

/** The `--help` text of an executable (cached), used to probe for optional flags. */
export function helpText(exe: string): string {
  let text = helpCache.get(exe);
  if (text === undefined) {
    try {
      const r = spawnSync(exe, ["--help"], { encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "pipe"] });
      text = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    } catch {
      text = "";
    }
    helpCache.set(exe, text);
  }
  return text;
}

export function ripgrepPath(): string | undefined {
  return findExecutable(["rg"]);
}

/** fd is packaged as `fdfind` on Debian and Ubuntu. */
export function fdPath(): string | undefined {
  return findExecutable(["fd", "fdfind"]);
}

/** Forget cached look-ups (tests). */
export function clearExecutableCache(): void {
  cache.clear();
  helpCache.clear();
}
