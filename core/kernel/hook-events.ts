/**
 * The payload types of the kernel's hooks: what each hook's taps receive and may answer.
 * Types only; core/kernel/hook-spec.ts pairs each hook name with its kind and payload.
 */
import type { SessionHandle } from "./contracts.js";
import type {
  AgentMessage,
  AgentSessionEvent,
  AgentToolResult,
  AnyModel,
  ImageContent,
  TextContent,
} from "./types.js";

/** The agent/session event of one `type`. */
export type EventOf<T extends AgentSessionEvent["type"]> = Extract<AgentSessionEvent, { type: T }>;

// ---- session life cycle -------------------------------------------------------------------

export type SessionStartReason = "startup" | "new" | "resume" | "fork" | "clone" | "import" | "reload";
export interface SessionStartEvent {
  type: "session_start";
  reason: SessionStartReason;
  previousSessionFile?: string;
}
export interface SessionShutdownEvent {
  type: "session_shutdown";
  reason?: "exit" | "switch" | "reload" | "dispose";
}
export interface SessionSwitchEvent {
  type: "session_switch";
  reason: "new" | "resume";
  previousSessionFile?: string;
}
export interface SessionForkEvent {
  type: "session_fork";
  previousSessionFile?: string;
}
export interface SessionCompactEvent {
  type: "session_compact";
  compactionEntry: unknown;
  fromExtension: boolean;
  /** What started it (pi 1.6). */
  reason?: "manual" | "threshold" | "overflow";
  /** Whether the failed turn is retried after it (overflow recovery). */
  willRetry?: boolean;
}
export interface SessionTreeEvent {
  type: "session_tree";
  newLeafId: string | null;
  oldLeafId: string | null;
  summaryEntry?: unknown;
  fromExtension?: boolean;
}
export interface SessionBeforeSwitchEvent {
  type: "session_before_switch";
  reason: "new" | "resume" | "fork" | "clone" | "import";
  targetSessionFile?: string;
}
export interface SessionBeforeForkEvent {
  type: "session_before_fork";
  entryId: string;
}
export interface SessionBeforeTreeEvent {
  type: "session_before_tree";
  preparation: Record<string, unknown>;
  signal: AbortSignal;
}
export interface CancelResult {
  cancel?: boolean;
  [extra: string]: unknown;
}
export interface SessionBeforeCompactEvent {
  type: "session_before_compact";
  preparation: unknown;
  branchEntries: unknown[];
  customInstructions?: string;
  /** What started it (pi 1.6). */
  reason?: "manual" | "threshold" | "overflow";
  willRetry?: boolean;
  signal: AbortSignal;
}
export interface SessionBeforeCompactResult {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId: string; tokensBefore: number; details?: unknown };
}
export interface SessionDirectoryEvent {
  type: "session_directory";
  cwd: string;
}
export interface ResourcesDiscoverResult {
  skillPaths?: string[];
  promptPaths?: string[];
  themePaths?: string[];
}
export interface ResourcesDiscoverEvent {
  type: "resources_discover";
  cwd: string;
  reason: "startup" | "reload";
  /** Taps push their findings here. */
  results: Array<ResourcesDiscoverResult & { source: string }>;
}

// ---- agent ----------------------------------------------------------------------------------

export interface InputEvent {
  type: "input";
  text: string;
  images?: ImageContent[];
  source: "interactive" | "rpc" | "extension" | "print" | "sdk";
  /** How the input is delivered while a run streams; absent when idle. */
  streamingBehavior?: "steer" | "followUp";
}
export type InputResult = { action: "handled" } | undefined;

export interface BeforeAgentStartEvent {
  type: "before_agent_start";
  prompt: string;
  images?: ImageContent[];
  /** "custom" for a run an extension's message started (then `message` is that message). */
  messageType?: "user" | "custom";
  message?: unknown;
  systemPrompt: string;
  /** pi 1.6 prompt sections (name → text), appended to the system prompt as <name> blocks; taps change them in place. */
  sections?: Record<string, string>;
  /** Custom messages to add before the prompt; taps append. */
  messages: Array<{ customType: string; content: string | (TextContent | ImageContent)[]; display: boolean; details?: unknown }>;
}
export interface ContextEvent {
  type: "context";
  messages: AgentMessage[];
}
export interface BeforeProviderRequestEvent {
  type: "before_provider_request";
  payload: unknown;
  model: AnyModel;
}
export interface ToolCallEvent {
  type: "tool_call";
  toolCallId: string;
  /** A nested call's calling tool call (pi 1.6 executeTool). */
  parentToolCallId?: string;
  toolName: string;
  /** The validated arguments; taps may change them in place. */
  input: Record<string, unknown>;
}
export interface ToolCallResult {
  block?: boolean;
  reason?: string;
  /** With `block`: end the run after this tool batch when every call of it terminates (pi 1.6). */
  terminate?: boolean;
}
export interface ToolResultEvent {
  type: "tool_result";
  toolCallId: string;
  parentToolCallId?: string;
  toolName: string;
  input: Record<string, unknown>;
  content: AgentToolResult["content"];
  details: unknown;
  isError: boolean;
  /** Machine-readable result (tools with an outputSchema). */
  structuredContent?: unknown;
  /** Usage of the tool execution itself. */
  usage?: unknown;
}
export interface UserBashEvent {
  type: "user_bash";
  command: string;
  excludeFromContext: boolean;
  cwd: string;
}
export interface UserBashResult {
  operations?: unknown;
  result?: unknown;
}

// ---- provider, settle, trust and UI events ---------------------------------------------------

export interface SessionInfoChangedEvent {
  type: "session_info_changed";
  /** The session's name after the change; undefined when cleared. */
  name: string | undefined;
}
export interface SessionCompactFailedEvent {
  type: "session_compact_failed";
  reason: "manual" | "threshold" | "overflow";
  errorMessage?: string;
  aborted: boolean;
  willRetry: boolean;
  fromExtension: boolean;
}
export interface ContextWithSystemEvent {
  type: "context_with_system";
  /** The full request transcript, system prompt first as a `{role: "system"}` message. */
  messages: AgentMessage[];
}
export interface BeforeProviderHeadersEvent {
  type: "before_provider_headers";
  /** Taps change this object in place; a `null` value removes the header. */
  headers: Record<string, string | null>;
  model: AnyModel;
}
export interface AfterProviderResponseEvent {
  type: "after_provider_response";
  status: number;
  headers: Record<string, string>;
  model: AnyModel;
}
export interface ProviderStreamEventEvent {
  type: "provider_stream_event";
  provider: string;
  api: string;
  model: string;
  data: unknown;
}
export interface AgentBeforeSettleEvent {
  type: "agent_before_settle";
  outcome: "completed" | "aborted" | "error";
  /** Entries taps ask to append (session boundary drafts). Taps push. */
  entries: Array<Record<string, unknown> & { type: string }>;
  /** Set true by a tap to run one more provider request before settling. */
  continue: boolean;
  /**
   * Set by a tap to run the agent once more with this message (Claude Code's Stop hook, see
   * plugins/cc-hooks); the new run's own end emits this hook again.
   */
  followUp?: { customType: string; content: string; display?: boolean };
}
export interface ThinkingLevelSelectEvent {
  type: "thinking_level_select";
  level: string;
  previousLevel: string;
}
export interface ProjectTrustEvent {
  type: "project_trust";
  cwd: string;
}
export interface ProjectTrustResult {
  trusted: "yes" | "no" | "undecided";
  remember?: boolean;
}
export interface McpServersChangeEvent {
  type: "mcp_servers_change";
  servers: Array<{ name: string; [k: string]: unknown }>;
}
export interface CacheWarmingDecisionEvent {
  type: "cache_warming_decision";
  [k: string]: unknown;
}
export interface UIPromptEvent {
  type: "ui_prompt_start" | "ui_prompt_end";
  reason: "ui_prompt";
  kind: "select" | "confirm" | "input" | "editor" | "custom";
  title?: string;
}

// ---- kernel ---------------------------------------------------------------------------------

export interface ModeSelectArgs {
  /** Parsed argv (pass 2). */
  argv: Record<string, unknown>;
  /** The mode the generic rules ask for: "rpc" | "json" | "print" | "interactive" | a --mode value. */
  requested: string;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
}

// ---- run recovery and life cycle ------------------------------------------------------------

/** The session as the run hooks hand it to their taps (type only: the hook table loads nothing). */
export type RunSession = SessionHandle;

/**
 * A provider call ended in an error (the failed answer is the last message of the context).
 * Taps decide what happens next: the first answer wins (bail). Nobody answering: the error stands.
 */
export interface ProviderErrorEvent {
  type: "provider_error";
  session: RunSession;
  /** The failed answer (stopReason "error", its errorMessage). */
  message: AgentMessage & { role: "assistant"; errorMessage?: string; provider: string; model: string };
  /** Retries already made for this prompt. */
  attempt: number;
  /** Whether this prompt was already compacted and retried once after a context overflow. */
  compacted: boolean;
}
/** Retry the call after `delayMs` (auto_retry_start reports attempt/maxAttempts), or compact the context and retry. */
export type ProviderErrorResult = { retry: true; delayMs: number; maxAttempts: number } | { compactAndRetry: true };

/** A turn ended and every turn_end listener has seen it; the run goes on after the taps. */
export interface AfterTurnEvent {
  type: "after_turn";
  session: RunSession;
  message: AgentMessage;
  /** The run's abort signal. */
  signal: AbortSignal;
}

/** Every plugin is set up and the session runtime is bound: a plugin's first live step. */
export interface KernelReadyEvent {
  type: "kernel_ready";
}

/**
 * The CLI has parsed its flags and no flag answered and exited: plugins check their flags and
 * settings before a session starts. A tap answering `{ error }` ends the run with that message
 * (exit 1, no stack trace); the taps after it do not run.
 */
export interface StartupCheckEvent {
  type: "startup_check";
  flags: Readonly<Record<string, unknown>>;
}
export interface StartupCheckResult {
  error: string;
}

