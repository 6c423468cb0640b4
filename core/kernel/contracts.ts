/**
 * The narrow contracts the engine implements, named in the kernel so that hook payloads,
 * services and the mode context can speak of a session or a runtime without importing the
 * engine (the kernel imports nothing else of the project).
 *
 * Each handle lists what any holder may rely on. The engine widens each one to its full class
 * by declaration merging in core/engine/index.ts (`interface SessionHandle extends AgentSession`),
 * so code compiled with the engine in view — built-in plugins, modes, the SDK, a third-party
 * plugin importing the package — sees the whole session; the kernel itself needs only this.
 */
import type { AgentMessage, AgentSessionEvent, AnyModel } from "./types.js";
import type { ExtensionUI } from "./ui.js";

/** One live session: the conversation, its file, its event stream. */
export interface SessionHandle {
  readonly cwd: string;
  readonly sessionId: string;
  /** The session file; undefined for an in-memory session (--no-session). */
  readonly sessionFile: string | undefined;
  readonly messages: readonly AgentMessage[];
  /** A run (prompt, tool calls) is under way. */
  readonly isStreaming: boolean;
  /** Every event of the session; returns the unsubscribe function. */
  subscribe(listener: (event: AgentSessionEvent) => void | Promise<void>): () => void;
}

/** The session runtime: the current session, and switching it (/new, resume, fork). */
export interface RuntimeHandle {
  readonly cwd: string;
  readonly session: SessionHandle;
  /** Called with the new session after each switch; returns the unsubscribe function. */
  onRebind(fn: (session: SessionHandle) => void | Promise<void>): () => void;
}

/**
 * What a slash command's handler, a shortcut's handler and a tool's `execute()` receive: the
 * session's context (AgentSession.contextFactory builds it). The engine gives these fields; the
 * extensions plugin gives pi's ExtensionContext instead (these fields and `ui`, `abort()`,
 * `compact()`, …), which a handler written for it reads through that type.
 */
export interface CommandContext {
  readonly cwd: string;
  /** A person answers dialogs (the interactive mode). */
  readonly hasUI: boolean;
  /** The mode that runs the session ("print", "json", "rpc", "tui", "sdk", a plugin's own). */
  readonly mode: string;
  readonly session?: SessionHandle;
  /** The session's model when the context was made. */
  readonly model?: AnyModel;
  /** The session's store (a core/stores SessionStore; the kernel does not name the stores). */
  readonly sessionManager?: unknown;
  /** The dialogs and notices of the mode's UI, when the context has one. */
  readonly ui?: ExtensionUI;
}

/** The context of a tool call: the command context, and for a call another tool made, its scope. */
export interface ToolContext extends CommandContext {
  /** The running call a nested call belongs to (codemode scripts, executeTool). */
  readonly toolScope?: unknown;
}
