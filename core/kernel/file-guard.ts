/**
 * The seam in-process file writes go through when a plugin confines them (the OS sandbox): the
 * local operations of the write and edit tools ask the installed guard at the moment they write,
 * not only when the call was checked, and open the file so that it cannot be redirected between
 * the check and the write.
 *
 * A guarded write resolves the path (links followed, a dangling link to where it points), asks
 * the guard about that real path, opens it without following a link in its last part
 * (O_NOFOLLOW) and without truncating, then asks the kernel where the open file really is
 * (/proc/self/fd) and asks the guard again about that place. Only then is the file truncated and
 * written. A folder swapped for a link after the check, or a file swapped for a link, fails
 * with the reason; a file the open created in the wrong place is removed again.
 *
 * While a guard is active, tool calls of one message run one after another (a command cannot
 * swap a file while a write of the same message runs).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { closeSync, constants, fstatSync, ftruncateSync, mkdirSync, openSync, readlinkSync, realpathSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface FileWriteGuard {
  /** Who installed it (for messages). */
  source: string;
  /** Whether it confines writes now (e.g. the sandbox is on). */
  active(): boolean;
  /** The real path a write to `absPath` lands on (links followed, also dangling ones). */
  resolve(absPath: string): string;
  /** Why a write to the real path `realPath` is refused, or undefined when it is allowed. */
  refuse(realPath: string): string | undefined;
}

const guards: FileWriteGuard[] = [];
const bypass = new AsyncLocalStorage<boolean>();

/** Run `fn`; file writes it makes (also asynchronously) skip the guards (a write the person allowed). */
export function runUnguarded<T>(fn: () => T): T {
  return bypass.run(true, fn);
}

export function installFileGuard(guard: FileWriteGuard): () => void {
  guards.push(guard);
  return () => {
    const i = guards.indexOf(guard);
    if (i >= 0) guards.splice(i, 1);
  };
}

function activeGuards(): FileWriteGuard[] {
  if (bypass.getStore() === true) return [];
  return guards.filter((g) => {
    try {
      return g.active();
    } catch {
      // A guard that cannot tell confines (fail closed).
      return true;
    }
  });
}

/** Does a guard confine file writes now (then tool calls run one at a time)? */
export function fileGuardActive(): boolean {
  return guards.length > 0 && activeGuards().length > 0;
}

export class GuardRefusal extends Error {}

function judge(list: FileWriteGuard[], real: string): void {
  for (const g of list) {
    const why = g.refuse(real);
    if (why) throw new GuardRefusal(`[${g.source}] ${why}`);
  }
}

/** Create `dir` (and its parents) after checking where it really lands; false when no guard is active. */
export function guardedMkdir(dir: string): boolean {
  const list = activeGuards();
  if (!list.length) return false;
  const real = list[0]!.resolve(dir);
  judge(list, real);
  mkdirSync(real, { recursive: true });
  // The folder a link race might have produced is checked where it really is.
  judge(list, realpathSync(real));
  return true;
}

/** Write `content` to `absPath` as described above; false when no guard is active (write normally). */
export function guardedWriteFile(absPath: string, content: string | Buffer): boolean {
  const list = activeGuards();
  if (!list.length) return false;
  const real = list[0]!.resolve(absPath);
  judge(list, real);
  let created = false;
  let fd: number;
  // O_NONBLOCK: a FIFO swapped in fails at once instead of hanging the write (regular files ignore it).
  const flags = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  try {
    fd = openSync(real, flags | constants.O_CREAT | constants.O_EXCL, 0o644);
    created = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    fd = openSync(real, flags);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new GuardRefusal(`${absPath} is not a regular file`);
    let actual: string;
    try {
      actual = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      actual = join(realpathSync(dirname(real)), basename(real));
    }
    if (actual !== real) {
      if (created) unlinkQuietly(actual);
      throw new GuardRefusal(`${absPath} changed while it was written (it now leads to ${actual}); nothing was written`);
    }
    try {
      judge(list, actual);
    } catch (e) {
      if (created) unlinkQuietly(actual);
      throw e;
    }
    ftruncateSync(fd, 0);
    const buf = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off, off);
  } finally {
    closeSync(fd);
  }
  return true;
}

function unlinkQuietly(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    /* already gone */
  }
}
