/**
 * `pi.exec(command, args, {signal, timeout, cwd})`: run a program without a shell and collect
 * its output. A timeout or an aborted signal kills the process (SIGTERM, then SIGKILL after a
 * grace period) and sets `killed`. A program that cannot start resolves with code 127 and the
 * reason on stderr; the promise never rejects.
 */
import { spawn } from "node:child_process";
import type { ExecOptions, ExecResult } from "./types.js";
import { wrapCommand } from "../../core/kernel/index.js";

const KILL_GRACE_MS = 3000;

export function execCommand(command: string, args: string[], cwd: string, options: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let killed = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let child: ReturnType<typeof spawn>;
    try {
      // through the kernel's command wrapper (core/kernel/command-wrapper.ts); a refusal is caught below.
      const spec = wrapCommand({ file: command, args: Array.isArray(args) ? args.map(String) : [], cwd: options.cwd ?? cwd, env: process.env }, "exec");
      child = spawn(spec.file, spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        shell: false,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      resolve({ stdout: "", stderr: `cannot run ${command}: ${(error as Error).message}`, code: 127, killed: false });
      return;
    }
    const kill = () => {
      if (killed || settled) return;
      killed = true;
      child.kill("SIGTERM");
      graceTimer = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }, KILL_GRACE_MS);
      graceTimer.unref();
    };
    const finish = (code: number) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", kill);
      resolve({ stdout, stderr, code, killed });
    };
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (d: string) => (stdout += d));
    child.stderr?.on("data", (d: string) => (stderr += d));
    child.on("error", (error) => {
      stderr += `${stderr ? "\n" : ""}cannot run ${command}: ${error.message}`;
      finish(127);
    });
    child.on("close", (code, signal) => finish(code ?? (signal ? 128 + 15 : 1)));
    if (options.signal) {
      if (options.signal.aborted) kill();
      else options.signal.addEventListener("abort", kill, { once: true });
    }
    if (options.timeout && options.timeout > 0) timer = setTimeout(kill, options.timeout);
  });
}
