/**
 * The processes a tool command started, including those that left its process group: `setsid`,
 * a double fork whose parent exited (the orphan is re-parented to init), `nohup … &` in a new
 * session. Linux only (it reads /proc); elsewhere the process group is all there is.
 *
 * Two ways find them, both taken before anything is signalled (killing changes the tree):
 * - ancestry: every process whose chain of parents reaches the command's shell;
 * - a marker: the command runs with `PI_TOOL_RUN=<random token>` in its environment, which every
 *   descendant inherits unless it clears its environment; /proc/<pid>/environ of a process of
 *   the same user shows it even after the process changed session and parent.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable that marks a tool command's processes. */
export const TOOL_RUN_ENV = "PI_TOOL_RUN";

/** A fresh marker value for one command. */
export function newRunToken(): string {
  return randomBytes(12).toString("hex");
}

function pids(): number[] {
  try {
    return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return [];
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid …; comm may hold spaces and parentheses: read after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(rest[1]);
  } catch {
    return undefined;
  }
}

function hasMarker(pid: number, marker: Buffer): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(marker);
  } catch {
    return false;
  }
}

/**
 * The processes that belong to the command whose shell is `root`: its descendants by ancestry
 * and every process carrying `token` in its environment. Never this process. Empty off Linux.
 */
export function commandProcesses(root: number, token?: string): number[] {
  if (process.platform !== "linux") return [];
  const all = pids();
  const out = new Set<number>();
  const parent = new Map<number, number | undefined>();
  for (const p of all) parent.set(p, parentOf(p));
  for (const p of all) {
    for (let q: number | undefined = p, guard = 0; q && guard < 64; q = parent.get(q), guard++) {
      if (q === root) {
        out.add(p);
        break;
      }
    }
  }
  if (token) {
    const marker = Buffer.from(`${TOOL_RUN_ENV}=${token}\0`);
    for (const p of all) if (!out.has(p) && hasMarker(p, marker)) out.add(p);
  }
  out.delete(process.pid);
  return [...out];
}
