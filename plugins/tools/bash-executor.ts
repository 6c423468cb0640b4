/**
 * The user's shell runs (`!cmd` in the TUI, RPC `bash`): the same local operations and output
 * handling as the bash tool, but the result is data (output, exit code, truncation, the full
 * output file), not a tool error. Provided to the kernel as the service "bash-executor".
 */
import type { BashExecutor, BashResult } from "../../core/engine/index.js";
import { explainCommandFailure } from "../../core/kernel/index.js";
import { createLocalBashOperations, OutputCollector, type BashOperations } from "./bash.js";

export function createBashExecutor(settings: () => { shellPath?: string; shellCommandPrefix?: string }): BashExecutor {
  return async (command, opts): Promise<BashResult> => {
    const s = settings();
    const ops = (opts.operations as BashOperations | undefined) ?? createLocalBashOperations({ shellPath: s.shellPath || undefined });
    const full = s.shellCommandPrefix ? `${s.shellCommandPrefix}\n${command}` : command;
    const out = new OutputCollector(undefined, undefined, "pi-user-bash");
    let exitCode: number | undefined;
    let cancelled = false;
    try {
      const r = await ops.exec(full, opts.cwd, {
        signal: opts.signal,
        onData: (data: Buffer) => {
          out.append(data);
          opts.onData?.(data.toString("utf8"));
        },
      });
      exitCode = r.exitCode ?? undefined;
    } catch (e) {
      if (opts.signal.aborted || (e instanceof Error && e.message === "aborted")) cancelled = true;
      else {
        out.append(Buffer.from(`\n${e instanceof Error ? e.message : String(e)}\n`));
        exitCode = 1;
      }
    }
    out.end();
    // a command the sandbox blocked says so in words.
    const why = exitCode !== undefined && exitCode !== 0 ? explainCommandFailure(out.snapshot().text) : undefined;
    if (why) {
      out.append(Buffer.from(`\n${why}\n`));
      out.end();
    }
    await out.close();
    const snap = out.snapshot();
    return {
      output: snap.text,
      exitCode: cancelled ? undefined : exitCode,
      cancelled,
      truncated: snap.truncation.truncated,
      fullOutputPath: snap.truncation.truncated ? snap.fullOutputPath : undefined,
    };
  };
}
