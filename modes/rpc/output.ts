/**
 * The output side of RPC mode, set up as soon as the mode is chosen (in kernel_mode_select),
 * before the session runtime is built: so what extensions do in `session_start` (ctx.ui.setTitle,
 * a dialog, a throwing handler) already reaches the client as records, as in the reference.
 *
 * - takes stdout over with the stdout guard (every record through `write`, awaitable),
 * - turns kernel diagnostics into `extension_error` records,
 * - provides the kernel services "ui" (the RPC ExtensionUI), "shutdown" (ctx.shutdown()) and
 *   "background-work" (held until the server calls startBackgroundWork()).
 *
 * The input side (stdin, commands, events) is server.ts, started by the mode's run().
 * Small on purpose: it is imported at start-up by the plugin's index.
 */
import type { Kernel, Diagnostic } from "../../core/kernel/index.js";
import { StdoutGuard } from "../../core/stores/index.js";
import { createRpcUi, type RpcUi } from "./ui.js";

export interface RpcOutput {
  guard: StdoutGuard;
  /** Queues one record; resolves when the guard accepts more (awaiting it is the backpressure). Never rejects. */
  write(record: unknown): Promise<void>;
  ui: RpcUi;
  /** Set once ctx.shutdown() was called. */
  readonly shutdownRequested: boolean;
  /** The server's reaction to ctx.shutdown() (called after the request is recorded). */
  onShutdownRequest?: () => void;
  /** Runs the background work held so far, and any later at once (the client is quiet or prompting). */
  startBackgroundWork(): void;
  /** Withdraws the services and the diagnostics subscription, flushes and releases stdout. */
  close(): Promise<void>;
}

const outputs = new WeakMap<Kernel, RpcOutput>();

/** Sets up (once per kernel) and returns the RPC output. */
export function openRpcOutput(kernel: Kernel): RpcOutput {
  const existing = outputs.get(kernel);
  if (existing) return existing;
  const guard = new StdoutGuard();
  guard.takeover();
  const write = (record: unknown): Promise<void> =>
    guard.writeRecord(record).catch((error: unknown) => {
      // Only values without a JSON form reject; say so instead of losing the record silently.
      process.stderr.write(`${kernel.app.name}: could not serialise an RPC record: ${(error as Error).message}\n`);
    });

  const unDiag = kernel.diagnostics.subscribe((d: Diagnostic) => {
    if (d.level === "info") return;
    const err = d.error instanceof Error ? d.error.message : d.error !== undefined ? String(d.error) : "";
    void write({
      type: "extension_error",
      extensionPath: d.source,
      event: d.hook ?? "",
      error: err && !d.message.includes(err) ? `${d.message}: ${err}` : d.message,
      level: d.level,
    });
  });

  const ui = createRpcUi({ send: (r) => write(r), report: (d) => kernel.diagnostics.report(d) });
  const unUi = kernel.provide("ui", ui, "mode-rpc");
  let requested = false;
  const unShutdown = kernel.provide(
    "shutdown",
    () => {
      requested = true;
      queueMicrotask(() => out.onShutdownRequest?.());
    },
    "mode-rpc",
  );

  let held: (() => void)[] | undefined = [];
  const unBackground = kernel.provide("background-work", (work) => (held ? held.push(work) : work()), "mode-rpc");

  let closing: Promise<void> | undefined;
  const out: RpcOutput = {
    guard,
    write,
    ui,
    get shutdownRequested() {
      return requested;
    },
    startBackgroundWork() {
      const works = held;
      held = undefined;
      for (const work of works ?? []) work();
    },
    close() {
      closing ??= (async () => {
        ui.cancelAll();
        unDiag();
        unUi();
        unShutdown();
        unBackground();
        await guard.flush();
        guard.release();
        outputs.delete(kernel);
      })();
      return closing;
    },
  };
  outputs.set(kernel, out);
  return out;
}
