/**
 * A bash started before its command is known.
 *
 * Starting a program from this process means forking it, and once the heap has grown a fork
 * takes milliseconds of the event loop (the page tables are copied). A bash that is already
 * running and waits for its command lets a tool call skip that fork. The first one starts with
 * the session; after a command, the next one is only wanted, and starts when the model begins
 * its next answer (`prepareWantedShell`), while this process waits for the model anyway.
 *
 * The prepared bash reads a run token and a command from file descriptor 3 (each ended by a NUL),
 * closes it, exports the token and runs the command with `eval`, so the command starts without a
 * second bash having to start. Its stdin is /dev/null from the start: Node's pipes are sockets,
 * and a bash whose stdin is a socket takes itself for a remote shell (rshd) and reads ~/.bashrc
 * when SHLVL is unset or 0, as it is for a CLI started by an IDE, a service, cron or `docker exec`
 * (with a pyenv or nvm set-up there, ~100-300 ms, and whatever the file prints or changes).
 *
 * What the command sees is what `bash -c <command>` gives it: argv[0], environment, working
 * directory, stdin, open files, process group (its own) and exit status. What differs is what no
 * command relies on: bash names a syntax error's source "eval" instead of
 * "-c", a program the command ends with runs as a child of the shell (bash does not exec the last
 * command in place), so one killed by a signal the shell did not get shows as exit code 128+n,
 * and the shell holds the command in an unexported variable (`__pi_command`).
 *
 * Only the plain local case uses it: bash, not Windows, no command wrapper (the sandbox wraps
 * each command itself), and the same shell, folder and environment as the command asks for;
 * anything else spawns as before. One bash waits at a time, for the whole process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { basename } from "node:path";
import type { Writable } from "node:stream";
import { TOOL_RUN_ENV } from "./process-tree.js";

/** Reads the token and the command, then runs the command. Ends without running anything on EOF. */
const SCRIPT = `IFS= read -r -d '' -u 3 __pi_token || exit 125; IFS= read -r -d '' -u 3 __pi_command || exit 125; exec 3<&-; export ${TOOL_RUN_ENV}="$__pi_token"; unset __pi_token; eval "$__pi_command"`;

/** The stream the command goes through: the bash's file descriptor 3. */
function commandChannel(child: ChildProcess): Writable | undefined {
  return (child.stdio[3] as Writable | null | undefined) ?? undefined;
}

interface Prepared {
  child: ChildProcess;
  file: string;
  cwd: string;
  /** The folder's identity when the bash started in it (a folder made again is another one). */
  dir: string;
  env: NodeJS.ProcessEnv;
}

let waiting: Prepared | undefined;
/** What the next bash should be started for, once there is time (the last command's shell, folder and environment). */
let wanted: { file: string; cwd: string; env: NodeJS.ProcessEnv } | undefined;

/** Whether commands for `file` with `args` can be run by a prepared bash on this platform. */
export function canPrepare(file: string, args: readonly string[]): boolean {
  return process.platform !== "win32" && basename(file) === "bash" && args.length === 1 && args[0] === "-c";
}

function dirIdentity(cwd: string): string | undefined {
  try {
    const s = statSync(cwd);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

function sameEnv(a: NodeJS.ProcessEnv, b: NodeJS.ProcessEnv): boolean {
  let n = 0;
  for (const k in a) {
    if (k === TOOL_RUN_ENV) continue;
    if (a[k] !== b[k]) return false;
    n++;
  }
  for (const k in b) if (k !== TOOL_RUN_ENV) n--;
  return n === 0;
}

/** End the waiting bash, if any (closing its command channel ends it without running anything), and want none. */
export function discardPreparedShell(): void {
  wanted = undefined;
  endWaiting();
}

function endWaiting(): void {
  const w = waiting;
  waiting = undefined;
  if (!w) return;
  commandChannel(w.child)?.destroy();
  w.child.stdout?.destroy();
  w.child.stderr?.destroy();
}

/**
 * Start a bash that waits for a command to run with `file` in `cwd` with `env` (the token aside).
 * It keeps neither this process alive nor the one that waited before (that one is ended).
 */
export function prepareShell(file: string, cwd: string, env: NodeJS.ProcessEnv): void {
  wanted = undefined;
  endWaiting();
  const dir = dirIdentity(cwd);
  if (dir === undefined) return;
  const { [TOOL_RUN_ENV]: _token, ...base } = env;
  // bash reads BASH_ENV when it starts: the waiting bash would read it once more, early.
  if (base.BASH_ENV) return;
  let child: ChildProcess;
  try {
    child = spawn(file, ["-c", SCRIPT], { cwd, env: base, detached: true, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  } catch {
    return;
  }
  const entry: Prepared = { child, file, cwd, dir, env: base };
  child.on("error", () => {
    if (waiting === entry) waiting = undefined;
  });
  child.once("exit", () => {
    if (waiting === entry) waiting = undefined;
  });
  // Waiting must not keep the process alive: a finished run exits, and its channel closing ends the bash.
  child.unref();
  for (const s of [commandChannel(child), child.stdout, child.stderr]) (s as unknown as { unref?(): void } | null | undefined)?.unref?.();
  commandChannel(child)?.on("error", () => {});
  waiting = entry;
}

/**
 * The waiting bash, now running `command` with `token`, when it was started for this shell,
 * folder and environment and is still alive; otherwise undefined (and a mismatched one is ended).
 */
export function takePreparedShell(file: string, cwd: string, env: NodeJS.ProcessEnv, token: string, command: string): ChildProcess | undefined {
  const w = waiting;
  if (!w) return undefined;
  waiting = undefined;
  const channel = commandChannel(w.child);
  const alive = w.child.exitCode === null && w.child.signalCode === null && w.child.pid !== undefined && channel !== undefined && !channel.destroyed;
  if (!alive || w.file !== file || w.cwd !== cwd || !sameEnv(w.env, env) || dirIdentity(cwd) !== w.dir || command.includes("\0") || token.includes("\0")) {
    waiting = w;
    endWaiting();
    return undefined;
  }
  w.child.ref();
  for (const s of [channel, w.child.stdout, w.child.stderr]) (s as unknown as { ref?(): void } | null | undefined)?.ref?.();
  channel!.end(`${token}\0${command}\0`);
  return w.child;
}

/** Want a bash for the next command like this one (started by `prepareWantedShell`). */
export function wantPreparedShell(file: string, cwd: string, env: NodeJS.ProcessEnv): void {
  wanted = { file, cwd, env };
}

/** Start the wanted bash, if one is wanted and none waits: call it when this process has time. */
export function prepareWantedShell(): void {
  const w = wanted;
  if (!w || waiting) return;
  prepareShell(w.file, w.cwd, w.env);
}

/** The process id of the bash that waits, if one does. */
export function preparedShellPid(): number | undefined {
  return waiting?.child.pid;
}
