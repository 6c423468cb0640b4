/**
 * The small file helpers every part uses, defined once: `~` expansion and atomic writes.
 */
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** `~` and `~/x` → the home folder (`home`, default the user's); anything else unchanged. */
export function expandHome(p: string, home: string = homedir()): string {
  if (p === "~") return home;
  if (p.startsWith("~/")) return join(home, p.slice(2));
  return p;
}

/**
 * Write `content` to `path` atomically: a temp file beside it, then a rename, so a reader sees
 * the old file or the new one, never half of one. The folder is created (with `dirMode`);
 * `mode` applies to the new file (also when umask would narrow it).
 */
export function writeFileAtomic(path: string, content: string, opts: { mode?: number; dirMode?: number } = {}): void {
  mkdirSync(dirname(path), { recursive: true, ...(opts.dirMode !== undefined ? { mode: opts.dirMode } : {}) });
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}.tmp`;
  try {
    writeFileSync(tmp, content, { encoding: "utf8", ...(opts.mode !== undefined ? { mode: opts.mode } : {}) });
    if (opts.mode !== undefined) chmodSync(tmp, opts.mode);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}
