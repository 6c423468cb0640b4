/**
 * The run modes as functions for hosts and custom CLIs: each one takes a session runtime (from
 * createAgentSessionRuntime, or the CLI's), lets the mode prepare what it needs before the
 * session starts (RPC opens its output, the TUI its deferred UI), binds the runtime (session_start)
 * and runs the mode plugin's run(). They are the only SDK functions that take the terminal over:
 * the mode owns stdout (and stdin for RPC and the TUI) until it returns its exit code, and it
 * disposes the runtime when it ends.
 */
import type { ModeContext } from "../core/kernel/kernel.js";
import { modeForFlag, prepareMode, sessionTraitsOf } from "../core/kernel/modes.js";
import type { AgentSessionRuntime } from "../core/engine/runtime.js";
import type { ImageContent } from "../core/kernel/types.js";
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
  return runtime.kernel.service("argv")?.flags ?? {};
}

export interface ModeRunOptions {
  messages?: string[];
  images?: ImageContent[];
  flags?: Record<string, unknown>;
}

/**
 * Run the registered mode a `--mode` value names (a plugin's own mode too) on this runtime.
 * The mode is resolved through the kernel's mode registry (core/kernel/modes.ts).
 */
export async function runModeByFlag(runtime: AgentSessionRuntime, modeFlag: string, options: ModeRunOptions = {}): Promise<number> {
  if (!runtime || typeof runtime !== "object" || !runtime.kernel) throw new TypeError(`run the ${modeFlag} mode: pass the session runtime (createAgentSessionRuntime() or createAgentSession().runtime)`);
  const kernel = runtime.kernel;
  const mode = modeForFlag(kernel, modeFlag);
  if (!mode) throw new Error(`the ${modeFlag} mode is not installed: its plugin is not among this runtime's plugins`);
  const argv = flagsOf(runtime, options.flags);
  const stdinIsTTY = !!process.stdin.isTTY;
  const stdoutIsTTY = !!process.stdout.isTTY;
  kernel.hooks.kernel_mode_select.call({ argv, requested: mode.name, stdinIsTTY, stdoutIsTTY });
  // The mode gets ready before session_start (RPC opens its output and UI, the TUI a deferred UI).
  prepareMode(kernel, mode);
  if (runtime instanceof SdkSessionRuntime) {
    runtime.setMode(sessionTraitsOf(mode));
    await runtime.bindExtensions();
  } else if (!runtime.isStarted) {
    await runtime.start();
  }
  const modeCtx: ModeContext = { kernel, argv, messages: options.messages ?? [], images: options.images ?? [], runtime };
  return mode.run(modeCtx);
}

/** Print mode: send the prompts in order, then print the last answer (text) or stream events (json). Returns the exit code. */
export function runPrintMode(runtime: AgentSessionRuntime, options: PrintModeOptions = {}): Promise<number> {
  const json = options.mode === "json";
  if (options.mode !== undefined && options.mode !== "text" && !json) return Promise.reject(new TypeError(`runPrintMode: mode must be "text" or "json" (got ${JSON.stringify(options.mode)})`));
  const messages = [...(options.initialMessage !== undefined ? [options.initialMessage] : []), ...(options.messages ?? [])];
  return runModeByFlag(runtime, json ? "json" : "text", { flags: options.flags, messages, images: options.initialImages ?? [] });
}

/** RPC mode: JSON commands on stdin, responses and events on stdout (see `pi rpc-schema`). Resolves with the exit code when stdin closes or the client shuts down. */
export function runRpcMode(runtime: AgentSessionRuntime, options: RpcModeOptions = {}): Promise<number> {
  return runModeByFlag(runtime, "rpc", { flags: options.flags });
}

/** The interactive terminal UI. Resolves with the exit code when the user quits. */
export function runInteractiveMode(runtime: AgentSessionRuntime, options: InteractiveModeOptions = {}): Promise<number> {
  const messages = [...(options.initialMessage !== undefined ? [options.initialMessage] : []), ...(options.messages ?? [])];
  return runModeByFlag(runtime, "interactive", { flags: options.flags, messages, images: options.initialImages ?? [] });
}
