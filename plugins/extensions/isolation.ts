/**
 * Keeping one extension's failures to itself (security hardening).
 *
 * - Time limit per event: a handler that has not settled after `extensionHandlerTimeoutMs`
 *   (setting; default 10 minutes — long enough for a person answering the extension's dialog;
 *   0 turns it off) is abandoned: a diagnostic names the extension and the event, and the event
 *   goes on as if the handler had returned nothing. The pending timer also keeps the process
 *   alive, so a never-settling handler no longer ends the run with a silent exit code 13.
 * - An unhandled rejection or an uncaught throw (a timer callback, an event emitter) whose stack
 *   runs through a loaded extension's file is reported, naming the extension, and does not end
 *   the process. Anything else keeps Node's behaviour: printed, exit code 1.
 */
import type { Kernel } from "../../core/kernel/index.js";

export const DEFAULT_HANDLER_TIMEOUT_MS = 10 * 60_000;

function handlerTimeoutMs(kernel: Kernel): number {
  const v = Number(kernel.settings.get().extensionHandlerTimeoutMs);
  if (Number.isFinite(v) && v >= 0) return v;
  return DEFAULT_HANDLER_TIMEOUT_MS;
}

/** `handler` with the per-event time limit. */
export function withTimeLimit<H extends (...args: any[]) => unknown>(kernel: Kernel, extension: string, event: string, handler: H): H {
  if (typeof handler !== "function") return handler;
  const limited = function (this: unknown, ...args: unknown[]): unknown {
    const result = handler.apply(this, args);
    if (!result || typeof (result as Promise<unknown>).then !== "function") return result;
    const ms = handlerTimeoutMs(kernel);
    if (ms === 0) return result;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        kernel.diagnostics.report({
          level: "error",
          source: extension,
          message: `extension "${extension}": its "${event}" handler did not finish within ${ms} ms (setting extensionHandlerTimeoutMs); the event went on without it`,
        });
        resolve(undefined);
      }, ms);
    });
    return Promise.race([Promise.resolve(result).finally(() => clearTimeout(timer)), deadline]);
  };
  return limited as unknown as H;
}

interface IsolationState {
  kernel: Kernel;
  extensions: () => Array<{ name: string; path: string }>;
}
let state: IsolationState | undefined;

function owner(error: unknown): { name: string } | undefined {
  const stack = error instanceof Error ? (error.stack ?? "") : "";
  if (!stack || !state) return undefined;
  return state.extensions().find((e) => e.path && !e.path.startsWith("<") && stack.includes(e.path));
}

function onFailure(event: "unhandledRejection" | "uncaughtException", kind: string) {
  return (error: unknown) => {
    const ext = owner(error);
    if (ext && state) {
      state.kernel.diagnostics.report({ level: "error", source: ext.name, message: `extension "${ext.name}": ${kind} (isolated; the CLI goes on)`, error });
      return;
    }
    // Not an extension's: another listener (the TUI restoring the terminal first) ends the process.
    if (process.listenerCount(event) > 1) return;
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  };
}

/** Install the process-wide handlers once; `extensions` lists the loaded extensions (name and file). */
export function isolateExtensionFailures(kernel: Kernel, extensions: () => Array<{ name: string; path: string }>): void {
  const first = !state;
  state = { kernel, extensions };
  if (!first) return;
  process.on("unhandledRejection", onFailure("unhandledRejection", "an unhandled promise rejection"));
  process.on("uncaughtException", onFailure("uncaughtException", "an uncaught exception"));
}
