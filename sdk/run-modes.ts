/**
 * The run modes as functions for hosts and custom CLIs: each one takes a session runtime (from
 * createAgentSessionRuntime, or the CLI's), lets the mode prepare what it needs before the
 * session starts (RPC opens its output, the TUI its deferred UI), binds the runtime (session_start)
 * and runs the mode plugin's run(). They are the only SDK functions that take the terminal over:
 * the mode owns stdout (and stdin for RPC and the TUI) until it returns its exit code, and it
 * disposes the runtime when it ends.
 */
import type { ModeContext } from "../core/kernel.js";
import type { SessionMode } from "../core/session/agent-session.js";
import type { AgentSessionRuntime } from "../core/session/runtime.js";
import type { ImageContent } from "../core/types.js";
import { SdkSessionRuntime } from "./sdk.js";

export interface PrintModeOptions {
  /** "text" (default): print the last answer; "json": every event as a JSON line. */
  mode?: "text" | "json";
  /** The first prompt (sent with `initialImages`). */
  initialMessage?: string;
  initialImages?: ImageContent[];
  /** More prompts, sent in order after the first. */
  messages?: string[];
  /** Flag values the mode and plugins see (default: the runtime's). */
  flags?: Record<string, unknown>;
}

export interface InteractiveModeOptions {
  initialMessage?: string;
  initialImages?: ImageContent[];
  messages?: string[];
  flags?: Record<string, unknown>;
}

export interface RpcModeOptions {
  flags?: Record<string, unknown>;
}

function flagsOf(runtime: AgentSessionRuntime, given?: Record<string, unknown>): Record<string, unknown> {
  if (given) return given;
  return runtime.kernel.service<{ flags?: Record<string, unknown> }>("argv")?.flags ?? {};
}

async function runMode(
  runtime: AgentSessionRuntime,
  modeName: string,
  sessionMode: SessionMode,
  ctx: { flags?: Record<string, unknown>; messages: string[]; images: ImageContent[] },
): Promise<number> {
  if (!runtime || typeof runtime !== "object" || !runtime.kernel) throw new TypeError(`run ${modeName} mode: pass the session runtime (createAgentSessionRuntime() or createAgentSession().runtime)`);
  const kernel = runtime.kernel;
  const mode = kernel.modes.get(modeName);
  if (!mode) throw new Error(`the ${modeName} mode is not installed: its plugin is not among this runtime's plugins`);
  const argv = flagsOf(runtime, ctx.flags);
  // The mode gets ready before session_start (RPC opens its output and UI, the TUI a deferred UI).
  kernel.hooks.kernel_mode_select.call({ argv, requested: modeName, stdinIsTTY: !!process.stdin.isTTY, stdoutIsTTY: !!process.stdout.isTTY });
  if (runtime instanceof SdkSessionRuntime) {
    runtime.setMode(sessionMode);
    await runtime.bindExtensions();
  } else if (!runtime.isStarted) {
    await runtime.start();
  }
  const modeCtx: ModeContext = { kernel, argv, messages: ctx.messages, images: ctx.images, runtime };
  return mode.run(modeCtx);
}

/** Print mode: send the prompts in order, then print the last answer (text) or stream events (json). Returns the exit code. */
export function runPrintMode(runtime: AgentSessionRuntime, options: PrintModeOptions = {}): Promise<number> {
  const json = options.mode === "json";
  if (options.mode !== undefined && options.mode !== "text" && !json) return Promise.reject(new TypeError(`runPrintMode: mode must be "text" or "json" (got ${JSON.stringify(options.mode)})`));
  const messages = [...(options.initialMessage !== undefined ? [options.initialMessage] : []), ...(options.messages ?? [])];
  return runMode(runtime, json ? "json" : "print", json ? "json" : "print", { flags: options.flags, messages, images: options.initialImages ?? [] });
}

/** RPC mode: JSON commands on stdin, responses and events on stdout (see `pi rpc-schema`). Resolves with the exit code when stdin closes or the client shuts down. */
export function runRpcMode(runtime: AgentSessionRuntime, options: RpcModeOptions = {}): Promise<number> {
  return runMode(runtime, "rpc", "rpc", { flags: options.flags, messages: [], images: [] });
}

/** The interactive terminal UI. Resolves with the exit code when the user quits. */
export function runInteractiveMode(runtime: AgentSessionRuntime, options: InteractiveModeOptions = {}): Promise<number> {
  const messages = [...(options.initialMessage !== undefined ? [options.initialMessage] : []), ...(options.messages ?? [])];
  return runMode(runtime, "interactive", "tui", { flags: options.flags, messages, images: options.initialImages ?? [] });
}
