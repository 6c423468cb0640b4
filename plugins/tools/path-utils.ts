/**
 * Paths as models write them: "~/x", "@src/a.ts" (an @-mention), relative to the project.
 */
import { accessSync, constants, readFileSync, statSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { expandHome, pathSpellings } from "../../core/kernel/index.js";

/** Strip a leading "@" and expand "~" / "~/…" to the home folder. */
export function expandPath(filePath: string): string {
  return expandHome(filePath.startsWith("@") ? filePath.slice(1) : filePath);
}

/** An absolute path: `filePath` expanded, then resolved against `cwd` when relative. */
export function resolveToCwd(filePath: string, cwd: string): string {
  if (typeof filePath !== "string") throw new Error(`Invalid path: expected a string, got ${typeof filePath}`);
  if (filePath.includes("\0")) throw new Error(`Invalid path: ${JSON.stringify(filePath)} contains a NUL character`);
  const expanded = expandPath(filePath);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
}

function exists(p: string): boolean {
  try {
    accessSync(p, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Like resolveToCwd, but when the file does not exist tries the spellings a name typed by a
 * person or a model may differ in from the one on disk (all seen with macOS screenshots):
 * ordinary vs. special spaces, a narrow no-break space before AM/PM, NFD-decomposed accents,
 * a typographic apostrophe. Returns the plain resolution when none exists.
 */
export function resolveReadPath(filePath: string, cwd: string): string {
  const plain = resolveToCwd(filePath, cwd);
  if (exists(plain)) return plain;
  return pathSpellings(plain).find(exists) ?? plain;
}

/**
 * Throws (code ENOTREGULAR) when `absPath` exists but is neither a regular file nor a folder:
 * reading a FIFO would block and reading a device like /dev/zero would never end.
 */
export async function assertNotSpecialFile(absPath: string): Promise<void> {
  let st;
  try {
    st = statSync(absPath);
  } catch {
    return; // missing or unreachable: the caller's own access reports it
  }
  if (!st.isFile() && !st.isDirectory()) {
    throw Object.assign(new Error(`${absPath} is not a regular file`), { code: "ENOTREGULAR" });
  }
}

/**
 * Files up to this size are read and written in one synchronous call: a tool call on a source
 * file then costs no round trips through libuv's thread pool (nor, on the first call of a
 * process, starting that pool and loading node:fs/promises, ~3 ms together), and blocks the
 * event loop for less than a millisecond. Bigger files go through the thread pool.
 */
export const SYNC_IO_MAX_BYTES = 1024 * 1024;

/** The file's bytes: synchronously when it is a regular file of at most SYNC_IO_MAX_BYTES. */
export async function readLocalFile(absPath: string): Promise<Buffer> {
  const st = statSync(absPath);
  return st.isFile() && st.size <= SYNC_IO_MAX_BYTES ? readFileSync(absPath) : readFile(absPath);
}

/** Write `content` (UTF-8): synchronously when it is at most SYNC_IO_MAX_BYTES long. */
export async function writeLocalFile(absPath: string, content: string): Promise<void> {
  if (content.length * 3 <= SYNC_IO_MAX_BYTES) writeFileSync(absPath, content, "utf8");
  else await writeFile(absPath, content, "utf8");
}

/** Resolves when the file is there and allows `mode` (fs.constants R_OK, W_OK), and is not special. */
export async function assertLocalAccess(absPath: string, mode: number): Promise<void> {
  accessSync(absPath, mode);
  await assertNotSpecialFile(absPath);
}

/** A readable message for a file-system error on `displayPath`. */
export function describeFsError(error: unknown, displayPath: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return `File not found: ${displayPath}`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: ${displayPath}`;
    case "EISDIR":
      return `${displayPath} is a directory, not a file (use ls to list it)`;
    case "ENOTDIR":
      return `A component of ${displayPath} is not a directory`;
    case "ELOOP":
      return `Too many levels of symbolic links (a symlink loop?): ${displayPath}`;
    case "ENAMETOOLONG":
      return `Path is too long: ${displayPath}`;
    case "EMFILE":
    case "ENFILE":
      return `Too many open files while accessing ${displayPath}`;
    case "ENOTREGULAR":
      return `${displayPath} is not a regular file (a FIFO, socket or device); use bash to read from it`;
    case "ERR_FS_FILE_TOO_LARGE":
      return `File is too large to read at once: ${displayPath}`;
    default: {
      const msg = error instanceof Error ? error.message : String(error);
      return `Cannot access ${displayPath}: ${msg}`;
    }
  }
}
