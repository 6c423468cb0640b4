/**
 * The git processes the checkpoint stores run, and what happens to them when pi exits.
 *
 * Every git child is registered under `<store>/writers/<child pid>` while it runs. A run can end
 * at any moment (the reader of stdout went away, SIGTERM), possibly while a capture's git child
 * is still writing the store: at process exit the children still running get SIGTERM (git removes
 * its lock files on it), a bounded wait, then SIGKILL, so no git process outlives pi. The refs of
 * captured trees not written yet are written then too (exit hooks run synchronously).
 *
 * A lock left behind anyway (pi or git killed with SIGKILL) is found stale when none of the
 * registered writers is alive: the next run removes it and goes on (recoverStaleLock).
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface Running {
  child: ChildProcess;
  storeDir: string;
}

const running = new Set<Running>();
/** Work to do synchronously at exit (the stores' unwritten refs). */
const atExit = new Set<() => void>();
let hooked = false;

/** How long exit waits for a terminated git child before killing it (ms). */
const EXIT_WAIT_MS = 1500;

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", endAll);
  // A signal nobody else handles ends Node without "exit": end the children first, then die of it.
  for (const sig of ["SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      if (process.listenerCount(sig) > 1) return; // a mode handles it and exits (the exit hook runs)
      endAll();
      process.removeListener(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** Registers a running git child of a store; returns what to call when it has exited. */
export function track(child: ChildProcess, storeDir: string): () => void {
  hook();
  const entry: Running = { child, storeDir };
  running.add(entry);
  const mark = child.pid ? join(storeDir, "writers", String(child.pid)) : undefined;
  if (mark) {
    try {
      writeFileSync(mark, String(process.pid));
    } catch {
      try {
        mkdirSync(join(storeDir, "writers"), { recursive: true });
        writeFileSync(mark, String(process.pid));
      } catch {
        /* a store that cannot be written fails in git itself, with its message */
      }
    }
  }
  return () => {
    running.delete(entry);
    if (mark) rmSync(mark, { force: true });
  };
}

/** Runs `fn` synchronously when the process exits (until the returned function is called). */
export function onExit(fn: () => void): () => void {
  hook();
  atExit.add(fn);
  return () => atExit.delete(fn);
}

/** Git children of this process still running. */
export function runningCount(): number {
  return running.size;
}

/** Whether a process is alive (a zombie, one that has exited but was not reaped yet, is not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc: assume it runs
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** Exit: end the git children still running (SIGTERM, a bounded wait, SIGKILL), then the synchronous exit work. */
export function endAll(): void {
  const left = [...running];
  for (const r of left) r.child.kill("SIGTERM");
  const deadline = Date.now() + EXIT_WAIT_MS;
  let pids = left.map((r) => r.child.pid).filter((p): p is number => typeof p === "number");
  while (pids.length && Date.now() < deadline) {
    pids = pids.filter(alive);
    if (pids.length) sleepSync(5);
  }
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone meanwhile */
    }
  }
  for (const r of left) {
    if (r.child.pid) rmSync(join(r.storeDir, "writers", String(r.child.pid)), { force: true });
    running.delete(r);
  }
  for (const fn of [...atExit]) {
    try {
      fn();
    } catch {
      /* exiting: nothing to report to */
    }
  }
}

/**
 * A store's `index.lock` (or another `*.lock` git left) whose writer is gone: when none of the
 * registered writers other than this process's running children is alive, the lock is stale and
 * removed. Returns whether it removed something (the caller then retries).
 */
export function recoverStaleLock(storeDir: string, lockPath: string): boolean {
  if (!existsSync(lockPath)) return true; // released meanwhile: retry
  const mine = new Set([...running].map((r) => r.child.pid));
  let names: string[] = [];
  try {
    names = readdirSync(join(storeDir, "writers"));
  } catch {
    /* no writers registered */
  }
  for (const name of names) {
    const pid = Number(name);
    if (mine.has(pid)) continue;
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) return false; // another process's git is at work
    rmSync(join(storeDir, "writers", name), { force: true });
  }
  try {
    unlinkSync(lockPath);
  } catch {
    /* removed by someone else */
  }
  return true;
}

/** Writes ref updates synchronously (at exit). */
export function updateRefsSync(args: string[], env: NodeJS.ProcessEnv, cwd: string, input: string): void {
  execFileSync("git", args, { env, cwd, input, stdio: ["pipe", "ignore", "ignore"], timeout: 3000 });
}
