/**
 * Running one command hook: the event JSON on stdin, the command through the shell in its own
 * process group, stdout/stderr captured (capped), the whole group killed past the timeout.
 *
 * Hook commands are the user's own configuration (or a trusted project's); they go through the
 * kernel's command wrapper like every other command, so with the OS sandbox on they run inside it.
 */
import { spawn } from "node:child_process";
import { wrapCommand, type CommandSpec } from "../../core/kernel/index.js";

export const DEFAULT_TIMEOUT_S = 600;
const OUTPUT_CAP = 1024 * 1024;

export interface HookRun {
  /** Exit code; null when killed or the command could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The command could not be started. */
  spawnError?: string;
}

export function runCommand(command: string, input: unknown, opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<HookRun> {
  return new Promise((resolve) => {
    const group = process.platform !== "win32";
    let child: ReturnType<typeof spawn>;
    try {
      const plain: CommandSpec = { file: "/bin/sh", args: ["-c", command], cwd: opts.cwd, env: opts.env };
      const spec = process.platform === "win32" ? plain : wrapCommand(plain, "hook");
      child =
        spec === plain
          ? spawn(command, { shell: true, cwd: opts.cwd, env: opts.env, detached: group, stdio: ["pipe", "pipe", "pipe"] })
          : spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, detached: group, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ code: null, stdout: "", stderr: "", timedOut: false, spawnError: (error as Error).message });
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let errLen = 0;
    child.stdout!.on("data", (c: Buffer) => {
      if (outLen < OUTPUT_CAP) out.push(c);
      outLen += c.length;
    });
    child.stderr!.on("data", (c: Buffer) => {
      if (errLen < OUTPUT_CAP) err.push(c);
      errLen += c.length;
    });
    let timedOut = false;
    let settled = false;
    let spawnError: string | undefined;
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      resolve({
        code: timedOut || spawnError ? null : code,
        stdout: Buffer.concat(out).toString("utf8").slice(0, OUTPUT_CAP),
        stderr: Buffer.concat(err).toString("utf8").slice(0, OUTPUT_CAP),
        timedOut,
        spawnError,
      });
    };
    let grace: NodeJS.Timeout | undefined;
    const kill = () => {
      try {
        if (group && child.pid) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
      // A grandchild that escaped the group may hold the pipes open: do not wait for it.
      grace = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        finish(null);
      }, 2000);
    }, opts.timeoutMs);
    child.on("error", (e) => {
      spawnError = e.message;
      finish(null);
    });
    child.on("close", (code) => finish(code));
    child.stdin!.on("error", () => {
      /* the hook did not read its input (EPIPE): fine */
    });
    child.stdin!.end(JSON.stringify(input));
  });
}

type Obj = Record<string, unknown>;

/** stdout as JSON when it is a JSON object, else undefined. */
export function parseJsonOutput(stdout: string): { json?: Obj; invalid?: string } {
  const t = stdout.trim();
  if (!t.startsWith("{")) return {};
  try {
    const v = JSON.parse(t);
    return v && typeof v === "object" && !Array.isArray(v) ? { json: v as Obj } : {};
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}
