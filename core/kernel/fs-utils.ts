/**
 * The small file helpers every part uses, defined once: `~` expansion, the spellings a typed
 * file name may differ in, and atomic writes.
 */
import { chmodSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** `~` and `~/x` → the home folder (`home`, default the user's); anything else unchanged. */
export function expandHome(p: string, home: string = homedir()): string {
  if (p === "~") return home;
  if (p.startsWith("~/")) return join(home, p.slice(2));
  return p;
}

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/**
 * The other spellings of an absolute path that a file tool tries when the written one does not
 * exist (all seen with macOS screenshots): special spaces as ordinary ones, a narrow no-break
 * space before AM/PM, NFD-decomposed accents, a typographic apostrophe. The read tool opens the
 * first that exists; the permission gate judges every one of them.
 */
export function pathSpellings(plain: string): string[] {
  const spaced = plain.replace(UNICODE_SPACES, " ");
  const amPm = spaced.replace(/ (AM|PM)\./gi, "\u202F$1.");
  const nfd = spaced.normalize("NFD");
  const curly = spaced.replace(/'/g, "\u2019");
  const nfdCurly = nfd.replace(/'/g, "\u2019");
  return [...new Set([spaced, amPm, nfd, curly, nfdCurly])].filter((c) => c !== plain);
}

/**
 * Write `content` to `path` atomically: a temp file beside it, then a rename, so a reader sees
 * the old file or the new one, never half of one. The folder is created (with `dirMode`);
 * `mode` applies to the new file (also when umask would narrow it); without one, a file that
 * already exists keeps its mode (a 0600 settings file stays 0600).
 */
export function writeFileAtomic(path: string, content: string, opts: { mode?: number; dirMode?: number } = {}): void {
  if (opts.mode === undefined) {
    try {
      opts = { ...opts, mode: statSync(path).mode & 0o7777 };
    } catch {
      // a new file: the default mode
    }
  }
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
