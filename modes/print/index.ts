/**
 * Print mode (`pi -p`, or stdin/stdout not a TTY) and JSON mode (`pi --mode json`):
 * run the prompts in order, then print the last answer (text) or stream every event as one
 * JSON line (json). Exit codes: protocol.md §3–4.
 */
import { definePlugin, type ModeContext, formatDiagnostic, type AssistantMessage } from "../../core/kernel/index.js";
import { StdoutGuard, protectStdout, toWireEvent, PROTOCOL_VERSION, writeProtocolNotices } from "../../core/stores/index.js";
import { messageText } from "../../core/engine/index.js";

export default definePlugin({
  name: "mode-print",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "print (text) and json run modes",
  setup(api) {
    api.registerMode({
      name: "print",
      description: "print the final answer",
      modeFlag: ["text", "print"],
      // -p, piped input, or no terminal on either side: answer and exit.
      claims: ({ flags, pipedInput, stdinIsTTY, stdoutIsTTY }) => !!flags.print || pipedInput || !stdinIsTTY || !stdoutIsTTY,
      priority: 10,
      input: "print",
      // Stray stdout writes (an extension's console.log at session_start) go to stderr from
      // before the session starts; `-p` and `--mode text` are protected from the first byte.
      prepare: () => protectStdout(),
      run: (ctx) => runPrint(ctx, "text"),
    });
    api.registerMode({ name: "json", description: "stream events as JSON lines", modeFlag: ["json"], input: "print", prepare: () => protectStdout(), run: (ctx) => runPrint(ctx, "json") });
  },
});

export async function runPrint(ctx: ModeContext, format: "text" | "json"): Promise<number> {
  const { kernel, runtime } = ctx;
  const guard = new StdoutGuard();
  guard.takeover();
  const err = (s: string) => process.stderr.write(s.endsWith("\n") ? s : s + "\n");
  const unDiag = kernel.diagnostics.subscribe((d) => {
    if (d.level !== "info") err(formatDiagnostic(d));
  });

  let signalled: number | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled !== undefined) return;
    signalled = sig === "SIGHUP" ? 129 : sig === "SIGINT" ? 130 : 143;
    void runtime.session.abort();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  // Ctrl-C too: aborting ends the tool process groups the run started.
  process.on("SIGINT", onSignal);

  let unsubscribe = () => {};
  const subscribe = () => {
    unsubscribe();
    if (format === "json") unsubscribe = runtime.session.agent.subscribe((event: any) => guard.writeRecord(toWireEvent(event)));
  };
  runtime.onRebind?.(subscribe);
  subscribe();
  const unNotices = format === "json" ? writeProtocolNotices(kernel.hooks, (r) => guard.writeRecord(r as never)) : () => {};

  let exitCode = 0;
  try {
    if (format === "json") {
      const header = runtime.sessionManager.getHeader?.() ?? {
        type: "session",
        version: 3,
        id: runtime.session.sessionId,
        timestamp: new Date().toISOString(),
        cwd: kernel.cwd,
      };
      await guard.writeRecord({ ...header, protocolVersion: PROTOCOL_VERSION });
    }
    const lastAnswer = () => [...runtime.session.messages].reverse().find((m: any) => m.role === "assistant") as AssistantMessage | undefined;
    if (!ctx.messages.length) {
      // `pi -c -p` (or --session/-r) without a prompt: the session's last answer again.
      const previous = lastAnswer();
      if (previous) {
        const text = messageText(previous);
        if (format === "text" && text) await guard.write(text.endsWith("\n") ? text : text + "\n");
        return 0;
      }
      err(`${kernel.app.name}: nothing to do: give a message (e.g. ${kernel.app.name} -p "hello") or pipe text on stdin`);
      return 1;
    }
    // The last prompt an extension or plugin command consumed (`pi -p "/cmd"`): no answer is expected.
    let endedWithCommand = false;
    for (let i = 0; i < ctx.messages.length && signalled === undefined; i++) {
      try {
        const disposition = await runtime.session.prompt(ctx.messages[i], { images: i === 0 ? ctx.images : undefined });
        endedWithCommand = disposition === "handled" && ctx.messages[i]!.startsWith("/");
      } catch (e) {
        err(`${kernel.app.name}: ${(e as Error).message}`);
        return 1;
      }
    }
    if (signalled !== undefined) return signalled;

    const last = lastAnswer();
    if (!last && endedWithCommand) return 0;
    if (!last) {
      if (format === "text") err(`${kernel.app.name}: the run produced no answer`);
      return 1;
    }
    // JSON mode reports the outcome in its records; the model's reply does not set the exit code.
    if (last.stopReason === "error" || last.stopReason === "aborted") {
      err(`${kernel.app.name}: ${last.stopReason === "aborted" ? "aborted" : "error"}: ${last.errorMessage ?? "the request failed"}`);
      if (format === "text") exitCode = 1;
    }
    if (format === "text") {
      const text = messageText(last);
      if (text) await guard.write(text.endsWith("\n") ? text : text + "\n");
      if (last.stopReason === "length") {
        err(`${kernel.app.name}: warning: the answer was cut off at the model's output limit`);
        exitCode = 1;
      } else if (!text && exitCode === 0) {
        err(`${kernel.app.name}: the answer has no text`);
        exitCode = 1;
      }
    }
    return exitCode;
  } finally {
    unsubscribe();
    unNotices();
    try {
      await runtime.dispose();
    } catch (e) {
      err(`${kernel.app.name}: error while closing the session: ${(e as Error).message}`);
    }
    unDiag();
    await guard.flush();
    guard.release();
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
    process.off("SIGINT", onSignal);
    if (signalled !== undefined) process.exitCode = signalled;
  }
}
