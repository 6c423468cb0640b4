/**
 * The one hook table of the kernel (architecture.md §2).
 *
 * Each key is a public event name; the tapable class is its semantics, decided once here.
 * Every hook takes ONE argument, the event payload. Plugins tap through `Kernel.on()` (which
 * names the tap after the plugin) or directly on `kernel.hooks.<name>`; nobody else imports
 * tapable.
 *
 * Conventions for return values:
 * - series bail hooks: return `undefined` to pass, anything else stops the chain and is the result.
 * - waterfall hooks: return the (new or changed) payload, or `undefined` to leave it as it is.
 * - `input`: a tap changes `event.text`/`event.images` in place to transform and returns
 *   `{action:"handled"}` to consume the input.
 * - `resources_discover`: taps push into `event.results`.
 * Each hook's kind (HOOK_KINDS) and its pi-facing conventions (PI_CONVENTIONS: what a pi
 * extension's handler sees and how its return value maps onto the hook's result) are declared
 * once below; the extension plugin applies them with one generic adapter.
 */
import { turnBoundaryOf } from "./turn-boundary-state.js";
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncBailHook } from "tapable";
import type {
  AgentMessage,
  AgentSessionEvent,
  AgentToolResult,
  AnyModel,
  Diagnostic,
  ImageContent,
  TextContent,
} from "./types.js";

type EventOf<T extends AgentSessionEvent["type"]> = Extract<AgentSessionEvent, { type: T }>;

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

// ---- pi 1.6 events ----------------------------------------------------------------------------

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

// ==== (kernel round 2) run recovery and life-cycle hooks ====================================

/** The session as the run hooks hand it to their taps (type only: the hook table loads nothing). */
export type RunSession = import("./session/agent-session.js").AgentSession;

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

function createRunHooks() {
  return {
    provider_error: new AsyncSeriesBailHook<[ProviderErrorEvent], ProviderErrorResult | undefined>(["event"], "provider_error"),
    after_turn: new AsyncSeriesHook<[AfterTurnEvent]>(["event"], "after_turn"),
    kernel_ready: new AsyncSeriesHook<[KernelReadyEvent]>(["event"], "kernel_ready"),
  } as const;
}
// ==== (end kernel round 2 block) =============================================================

export interface HookError {
  plugin: string;
  hook: string;
  error: unknown;
}

function createHookTable() {
  return {
    // session life cycle
    session_start: new AsyncSeriesHook<[SessionStartEvent]>(["event"], "session_start"),
    session_shutdown: new AsyncSeriesHook<[SessionShutdownEvent]>(["event"], "session_shutdown"),
    session_switch: new AsyncSeriesHook<[SessionSwitchEvent]>(["event"], "session_switch"),
    session_fork: new AsyncSeriesHook<[SessionForkEvent]>(["event"], "session_fork"),
    session_compact: new AsyncSeriesHook<[SessionCompactEvent]>(["event"], "session_compact"),
    session_tree: new AsyncSeriesHook<[SessionTreeEvent]>(["event"], "session_tree"),
    session_before_switch: new AsyncSeriesBailHook<[SessionBeforeSwitchEvent], CancelResult | undefined>(["event"], "session_before_switch"),
    session_before_fork: new AsyncSeriesBailHook<[SessionBeforeForkEvent], CancelResult | undefined>(["event"], "session_before_fork"),
    session_before_tree: new AsyncSeriesBailHook<[SessionBeforeTreeEvent], CancelResult | undefined>(["event"], "session_before_tree"),
    session_before_compact: new AsyncSeriesBailHook<[SessionBeforeCompactEvent], SessionBeforeCompactResult | undefined>(["event"], "session_before_compact"),
    session_directory: new AsyncSeriesBailHook<[SessionDirectoryEvent], { sessionDir?: string } | undefined>(["event"], "session_directory"),
    resources_discover: new AsyncSeriesHook<[ResourcesDiscoverEvent]>(["event"], "resources_discover"),

    // agent: transforming hooks
    input: new AsyncSeriesBailHook<[InputEvent], InputResult>(["event"], "input"),
    before_agent_start: new AsyncSeriesWaterfallHook<[BeforeAgentStartEvent]>(["event"], "before_agent_start"),
    context: new AsyncSeriesWaterfallHook<[ContextEvent]>(["event"], "context"),
    before_provider_request: new AsyncSeriesWaterfallHook<[BeforeProviderRequestEvent]>(["event"], "before_provider_request"),
    tool_call: new AsyncSeriesBailHook<[ToolCallEvent], ToolCallResult | undefined>(["event"], "tool_call"),
    tool_result: new AsyncSeriesWaterfallHook<[ToolResultEvent]>(["event"], "tool_result"),
    user_bash: new AsyncSeriesBailHook<[UserBashEvent], UserBashResult | undefined>(["event"], "user_bash"),

    // agent: observers (awaited, so a slow consumer slows the loop instead of growing memory)
    agent_start: new AsyncSeriesHook<[EventOf<"agent_start">]>(["event"], "agent_start"),
    agent_end: new AsyncSeriesHook<[EventOf<"agent_end">]>(["event"], "agent_end"),
    turn_start: new AsyncSeriesHook<[EventOf<"turn_start">]>(["event"], "turn_start"),
    // (a waterfall: pi 1.6 handlers may append entries and ask for one more request, see turnBoundaryOf)
    turn_end: new AsyncSeriesWaterfallHook<[EventOf<"turn_end">]>(["event"], "turn_end"),
    message_start: new AsyncSeriesHook<[EventOf<"message_start">]>(["event"], "message_start"),
    message_update: new AsyncSeriesHook<[EventOf<"message_update">]>(["event"], "message_update"),
    // (a waterfall: taps may replace the finished message in place, see PI_CONVENTIONS)
    message_end: new AsyncSeriesWaterfallHook<[EventOf<"message_end">]>(["event"], "message_end"),
    tool_execution_start: new AsyncSeriesHook<[EventOf<"tool_execution_start">]>(["event"], "tool_execution_start"),
    tool_execution_update: new AsyncSeriesHook<[EventOf<"tool_execution_update">]>(["event"], "tool_execution_update"),
    tool_execution_end: new AsyncSeriesHook<[EventOf<"tool_execution_end">]>(["event"], "tool_execution_end"),
    model_select: new AsyncSeriesHook<[EventOf<"model_select">]>(["event"], "model_select"),
    queue_update: new AsyncSeriesHook<[EventOf<"queue_update">]>(["event"], "queue_update"),
    compaction_start: new AsyncSeriesHook<[EventOf<"compaction_start">]>(["event"], "compaction_start"),
    compaction_end: new AsyncSeriesHook<[EventOf<"compaction_end">]>(["event"], "compaction_end"),
    auto_retry_start: new AsyncSeriesHook<[EventOf<"auto_retry_start">]>(["event"], "auto_retry_start"),
    auto_retry_end: new AsyncSeriesHook<[EventOf<"auto_retry_end">]>(["event"], "auto_retry_end"),
    agent_settled: new AsyncSeriesHook<[EventOf<"agent_settled">]>(["event"], "agent_settled"),

    // pi 1.6
    session_info_changed: new AsyncSeriesHook<[SessionInfoChangedEvent]>(["event"], "session_info_changed"),
    session_compact_failed: new AsyncSeriesHook<[SessionCompactFailedEvent]>(["event"], "session_compact_failed"),
    context_with_system: new AsyncSeriesWaterfallHook<[ContextWithSystemEvent]>(["event"], "context_with_system"),
    before_provider_headers: new AsyncSeriesWaterfallHook<[BeforeProviderHeadersEvent]>(["event"], "before_provider_headers"),
    after_provider_response: new AsyncSeriesHook<[AfterProviderResponseEvent]>(["event"], "after_provider_response"),
    provider_stream_event: new AsyncSeriesHook<[ProviderStreamEventEvent]>(["event"], "provider_stream_event"),
    agent_before_settle: new AsyncSeriesWaterfallHook<[AgentBeforeSettleEvent]>(["event"], "agent_before_settle"),
    thinking_level_select: new AsyncSeriesHook<[ThinkingLevelSelectEvent]>(["event"], "thinking_level_select"),
    project_trust: new AsyncSeriesBailHook<[ProjectTrustEvent], ProjectTrustResult | undefined>(["event"], "project_trust"),
    mcp_servers_change: new AsyncSeriesHook<[McpServersChangeEvent]>(["event"], "mcp_servers_change"),
    cache_warming_decision: new AsyncSeriesBailHook<[CacheWarmingDecisionEvent], Record<string, unknown> | undefined>(["event"], "cache_warming_decision"),
    ui_prompt_start: new AsyncSeriesHook<[UIPromptEvent]>(["event"], "ui_prompt_start"),
    ui_prompt_end: new AsyncSeriesHook<[UIPromptEvent]>(["event"], "ui_prompt_end"),

    // kernel
    kernel_mode_select: new SyncBailHook<[ModeSelectArgs], string | undefined>(["args"], "kernel_mode_select"),

    // run recovery and life cycle (kernel round 2)
    ...createRunHooks(),
  } as const;
}

export type Hooks = ReturnType<typeof createHookTable>;
export type HookName = keyof Hooks;
/** The payload type of a hook. */
export type HookPayload<N extends HookName> = Hooks[N] extends { promise(arg: infer A): unknown }
  ? A
  : Hooks[N] extends { call(arg: infer A): unknown }
    ? A
    : never;
/** Hooks whose taps return the (changed) payload. */
export type WaterfallHookName = {
  [N in HookName]: (typeof HOOK_KINDS)[N] extends "waterfall" ? N : never;
}[HookName];
/** What a tap of a hook may return. */
export type HookReturn<N extends HookName> = N extends "kernel_mode_select"
  ? string | undefined
  : N extends WaterfallHookName
    ? HookPayload<N> | undefined | void
    : Hooks[N] extends AsyncSeriesBailHook<any, infer R>
      ? R | undefined | void
      : void;
export type HookHandler<N extends HookName> = (event: HookPayload<N>) => HookReturn<N> | Promise<HookReturn<N>>;

/**
 * Each hook's kind, declared once (the table above picks the tapable class to match):
 * - observer: taps are told; their return value is ignored and they change nothing;
 * - bail: the first tap returning something other than `undefined` decides the result;
 * - waterfall: taps may change the payload (in place or by returning a new one), passed on;
 * - collect: taps push into a list on the payload (resources_discover);
 * - sync-bail: a synchronous bail hook (kernel_mode_select).
 * A hook missing here fails to compile.
 */
export type HookKind = "observer" | "bail" | "waterfall" | "collect" | "sync-bail";
export const HOOK_KINDS = {
  session_start: "observer",
  session_shutdown: "observer",
  session_switch: "observer",
  session_fork: "observer",
  session_compact: "observer",
  session_tree: "observer",
  session_before_switch: "bail",
  session_before_fork: "bail",
  session_before_tree: "bail",
  session_before_compact: "bail",
  session_directory: "bail",
  resources_discover: "collect",
  input: "bail",
  before_agent_start: "waterfall",
  context: "waterfall",
  before_provider_request: "waterfall",
  tool_call: "bail",
  tool_result: "waterfall",
  user_bash: "bail",
  agent_start: "observer",
  agent_end: "observer",
  turn_start: "observer",
  turn_end: "waterfall",
  message_start: "observer",
  message_update: "observer",
  message_end: "waterfall",
  tool_execution_start: "observer",
  tool_execution_update: "observer",
  tool_execution_end: "observer",
  model_select: "observer",
  queue_update: "observer",
  compaction_start: "observer",
  compaction_end: "observer",
  auto_retry_start: "observer",
  auto_retry_end: "observer",
  agent_settled: "observer",
  session_info_changed: "observer",
  session_compact_failed: "observer",
  context_with_system: "waterfall",
  before_provider_headers: "waterfall",
  after_provider_response: "observer",
  provider_stream_event: "observer",
  agent_before_settle: "waterfall",
  thinking_level_select: "observer",
  project_trust: "bail",
  mcp_servers_change: "observer",
  cache_warming_decision: "bail",
  ui_prompt_start: "observer",
  ui_prompt_end: "observer",
  kernel_mode_select: "sync-bail",
  // run recovery and life cycle (kernel round 2)
  provider_error: "bail",
  after_turn: "observer",
  kernel_ready: "observer",
} as const satisfies Record<keyof ReturnType<typeof createHookTable>, HookKind>;

// ---- pi conventions ---------------------------------------------------------------------------

/** What a pi convention may ask of the host that adapts handlers (the extension plugin). */
export interface PiAdapterEnv {
  /** Who taps (an extension's path): results it contributes are tagged with it. */
  owner: string;
  /** The reason of the session replacement under way ("new", "resume", "fork", …), if any. */
  pendingSwitch(): string | undefined;
  /** The system prompt's parts, for before_agent_start. */
  systemPromptOptions(): Record<string, unknown>;
}

/**
 * How a pi-style handler `(event, ctx) => result` maps onto a hook:
 * - `toPi`: the event the handler sees (default: the payload itself); `undefined` = this handler
 *   is not called for this payload;
 * - `fromPi`: applies the handler's result. For a bail hook it returns the hook's result
 *   (`undefined` passes on); for a waterfall/collect hook it changes the payload. Observers
 *   cannot declare one: whatever their handlers return is ignored.
 * - `noContext`: the handler is called without a ctx.
 */
export interface PiConvention<N extends HookName> {
  toPi?(event: HookPayload<N>, env: PiAdapterEnv): object | undefined;
  fromPi?(result: any, event: HookPayload<N>, env: PiAdapterEnv): unknown;
  noContext?: boolean;
}
type ObserverHookName = { [N in HookName]: (typeof HOOK_KINDS)[N] extends "observer" ? N : never }[HookName];
export type PiConventions = { [N in Exclude<HookName, ObserverHookName | "kernel_mode_select">]?: PiConvention<N> } & {
  [N in ObserverHookName]?: Omit<PiConvention<N>, "fromPi">;
};

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object";
/** pi names "clone" a fork and "import" a resume. */
const piReason = (r: string | undefined): string | undefined => (r === "clone" ? "fork" : r === "import" ? "resume" : r);
/** A bail result is returned only when it does something, so `{cancel: false}` does not stop later handlers. */
const cancelled = (r: unknown) => (isObj(r) && r.cancel ? { ...r, cancel: true } : undefined);

/** Drafts a handler returned, those with a type only. */
const drafts = (r: Obj): Array<Record<string, unknown> & { type: string }> =>
  Array.isArray(r.entries) ? r.entries.filter((x: unknown) => isObj(x) && typeof x.type === "string") : [];

/** Hooks not listed use the defaults: the handler sees the payload; an observer's result is ignored. */
export const PI_CONVENTIONS: PiConventions = {
  session_start: { toPi: (e) => ({ type: e.type, reason: piReason(e.reason), previousSessionFile: e.previousSessionFile }) },
  session_shutdown: {
    toPi: (e, env) => {
      const ev = e as SessionShutdownEvent & { targetSessionFile?: string };
      if (ev.reason === "reload") return { type: e.type, reason: "reload" };
      if (ev.reason !== "switch") return { type: e.type, reason: "quit" };
      const reason = piReason(env.pendingSwitch()) ?? "new";
      return ev.targetSessionFile ? { type: e.type, reason, targetSessionFile: ev.targetSessionFile } : { type: e.type, reason };
    },
  },
  session_before_switch: {
    // fork and clone go to session_before_fork
    toPi: (e) => (e.reason === "fork" || e.reason === "clone" ? undefined : { type: e.type, reason: piReason(e.reason), targetSessionFile: e.targetSessionFile }),
    fromPi: (r) => (isObj(r) && r.cancel ? { cancel: true } : undefined),
  },
  session_before_fork: {
    toPi: (e) => ({ type: e.type, entryId: e.entryId, position: (e as Obj).position === "at" ? "at" : "before" }),
    fromPi: cancelled,
  },
  session_before_compact: {
    fromPi: (r) => (!isObj(r) ? undefined : r.cancel ? { cancel: true } : r.compaction ? { compaction: r.compaction } : undefined),
  },
  session_before_tree: {
    fromPi: (r) =>
      isObj(r) && (r.cancel || r.summary || r.customInstructions !== undefined || r.replaceInstructions !== undefined || r.label !== undefined) ? r : undefined,
  },
  session_directory: {
    noContext: true,
    fromPi: (r) => (isObj(r) && typeof r.sessionDir === "string" && r.sessionDir ? { sessionDir: r.sessionDir } : undefined),
  },
  resources_discover: {
    toPi: (e) => ({ type: e.type, cwd: e.cwd, reason: e.reason }),
    fromPi: (r, e, env) => {
      if (!isObj(r)) return;
      const item: Obj = { source: env.owner };
      for (const k of ["skillPaths", "promptPaths", "themePaths"]) if (Array.isArray(r[k]) && r[k].length) item[k] = r[k];
      if (Object.keys(item).length > 1) e.results.push(item as ResourcesDiscoverResult & { source: string });
    },
  },
  input: {
    toPi: (e) => ({
      type: e.type,
      text: e.text,
      images: e.images,
      source: e.source === "rpc" || e.source === "extension" || e.source === "interactive" ? e.source : "interactive",
      ...((e as Obj).streamingBehavior ? { streamingBehavior: (e as Obj).streamingBehavior } : {}),
    }),
    fromPi: (r, e) => {
      if (!isObj(r) || r.action === "continue") return undefined;
      if (r.action === "handled") return { action: "handled" };
      if (r.action === "transform") {
        if (typeof r.text === "string") e.text = r.text;
        if (r.images !== undefined) e.images = r.images;
      }
      return undefined;
    },
  },
  before_agent_start: {
    toPi: (e, env) => ({
      type: e.type,
      messageType: (e as Obj).messageType ?? "user",
      ...((e as Obj).messageType === "custom" ? { message: (e as Obj).message } : { prompt: e.prompt, images: e.images }),
      systemPrompt: e.systemPrompt,
      systemPromptOptions: { ...env.systemPromptOptions(), sections: (e.sections ??= {}) },
    }),
    fromPi: (r, e) => {
      if (!isObj(r)) return;
      if (r.message) e.messages.push(r.message);
      if (typeof r.systemPrompt === "string") e.systemPrompt = r.systemPrompt;
    },
  },
  context: { fromPi: (r, e) => void (isObj(r) && Array.isArray(r.messages) && (e.messages = r.messages)) },
  context_with_system: { fromPi: (r, e) => void (isObj(r) && Array.isArray(r.messages) && (e.messages = r.messages)) },
  before_provider_request: {
    toPi: (e) => ({ type: e.type, payload: e.payload }),
    fromPi: (r, e) => void (r !== undefined && (e.payload = r)),
  },
  // headers are changed in place by the handler; its return value is ignored
  before_provider_headers: { toPi: (e) => ({ type: e.type, headers: e.headers }) },
  after_provider_response: { toPi: (e) => ({ type: e.type, status: e.status, headers: e.headers }) },
  tool_call: {
    fromPi: (r) => (isObj(r) && r.block ? { block: true, reason: typeof r.reason === "string" ? r.reason : undefined, ...(r.terminate === true ? { terminate: true } : {}) } : undefined),
  },
  tool_result: {
    fromPi: (r, e) => {
      if (!isObj(r)) return;
      if (r.content !== undefined) {
        e.content = r.content;
        // replacing the content alone drops the machine-readable copy (pi 1.6)
        if (r.structuredContent === undefined) delete e.structuredContent;
      }
      if (r.structuredContent !== undefined) e.structuredContent = r.structuredContent;
      if (r.details !== undefined) e.details = r.details;
      if (r.isError !== undefined) e.isError = !!r.isError;
      if (r.usage !== undefined) e.usage = r.usage;
    },
  },
  user_bash: {
    fromPi: (r) => (isObj(r) && r.result ? { result: r.result } : isObj(r) && r.operations ? { operations: r.operations } : undefined),
  },
  message_end: {
    fromPi: (r, e) => {
      const next = isObj(r) ? r.message : undefined;
      const cur = e.message as Obj;
      if (!isObj(next) || next === cur) return;
      if (next.role !== cur?.role) throw new Error(`message_end: the replacement message must keep the role "${cur?.role}"`);
      // Replace in place: the transcript holds this very object and saves it after the hook.
      for (const k of Object.keys(cur)) if (!(k in next)) delete cur[k];
      Object.assign(cur, next);
    },
  },
  turn_end: {
    toPi: (e) => {
      const b = turnBoundaryOf(e);
      if (!b) return e;
      return {
        ...e,
        entries: [...b.entries],
        continue: b.continue,
        context: b.context(),
        outcome: b.outcome,
        messageEntryId: b.messageEntryId,
        toolResultEntryIds: [...b.toolResultEntryIds],
      };
    },
    fromPi: (r, e) => {
      const b = turnBoundaryOf(e);
      if (!b || !isObj(r)) return;
      b.entries.push(...drafts(r));
      if (r.continue === true) b.continue = true;
    },
  },
  agent_before_settle: {
    toPi: (e) => ({ type: e.type, outcome: e.outcome, entries: [...e.entries], continue: e.continue }),
    fromPi: (r, e) => {
      if (!isObj(r)) return;
      if (Array.isArray(r.entries)) e.entries.push(...(r.entries.filter((x: unknown) => isObj(x) && typeof x.type === "string") as AgentBeforeSettleEvent["entries"]));
      if (r.continue === true) e.continue = true;
    },
  },
  project_trust: {
    fromPi: (r) => (isObj(r) && (r.trusted === "yes" || r.trusted === "no") ? { trusted: r.trusted, remember: !!r.remember } : undefined),
  },
  cache_warming_decision: { fromPi: (r) => (isObj(r) ? r : undefined) },
};

export const HOOK_NAMES: readonly HookName[] = Object.freeze(Object.keys(createHookTable()) as HookName[]);
/** Hooks whose payload is an agent/session event that the session broadcasts to subscribers. */
export const EVENT_HOOKS: ReadonlySet<string> = new Set<AgentSessionEvent["type"]>([
  "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
  "tool_execution_start", "tool_execution_update", "tool_execution_end", "model_select", "queue_update",
  "compaction_start", "compaction_end", "auto_retry_start", "auto_retry_end", "agent_settled",
]);

/** What a removed tap answers: "no result", in the calling convention of its tap type. */
function passOf(type: string, args: unknown[]): unknown {
  if (type === "promise") return Promise.resolve(undefined);
  if (type === "async") (args[args.length - 1] as (e?: unknown, r?: unknown) => void)(null, undefined);
  return undefined;
}

/**
 * Build the frozen hook table with the error-isolating interceptor on every hook:
 * a throwing tap is reported as {plugin, hook, error} and the chain goes on, except
 * `tool_call`, where a throw blocks the tool (fail closed).
 */
export function createHooks(report: (e: HookError) => void): Readonly<Hooks> {
  const table = createHookTable();
  for (const [hookName, hook] of Object.entries(table)) {
    const failClosed = hookName === "tool_call";
    (hook as { intercept(i: object): void }).intercept({
      register(tap: { name: string; type: string; fn: (...a: unknown[]) => unknown; piTapId?: number }) {
        const inner = tap.fn;
        const id = tap.piTapId;
        // a removed tap (tapHook's remover) passes: undefined continues bail and waterfall chains
        const fn = id === undefined ? inner : (...a: unknown[]) => (removedTaps.has(id) ? passOf(tap.type, a) : inner(...a));
        const onError = (error: unknown) => {
          report({ plugin: tap.name, hook: hookName, error });
          if (failClosed) {
            const msg = error instanceof Error ? error.message : String(error);
            return { block: true, reason: `Blocked because a tool_call handler (${tap.name}) failed: ${msg}` };
          }
          return undefined;
        };
        if (tap.type === "promise") {
          tap.fn = async (...a: unknown[]) => {
            try {
              return await fn(...a);
            } catch (e) {
              return onError(e);
            }
          };
        } else if (tap.type === "sync") {
          tap.fn = (...a: unknown[]) => {
            try {
              return fn(...a);
            } catch (e) {
              return onError(e);
            }
          };
        } else {
          tap.fn = (...a: unknown[]) => {
            const cb = a.pop() as (e?: unknown, r?: unknown) => void;
            try {
              fn(...a, (e: unknown, r: unknown) => (e ? cb(null, onError(e)) : cb(null, r)));
            } catch (e) {
              cb(null, onError(e));
            }
          };
        }
        return tap;
      },
    });
  }
  return Object.freeze(table);
}

export interface TapOptions {
  /** Who taps: a plugin name or an extension path; used in error reports. */
  name: string;
  /** Lower runs first (tapable stage). */
  stage?: number;
}

let tapCounter = 0;
/** Taps removed since the hook was last compiled: the interceptor's wrapper skips them. */
const removedTaps = new Set<number>();

/**
 * Tap a hook with a promise-returning handler (sync handlers are fine, they are awaited).
 * Returns a function that removes the tap again (for /reload). tapable has no public way to
 * remove a tap: the tap is marked removed (its wrapper, installed by the interceptor of
 * createHooks, then passes without calling the handler) and left out of `taps`, so the next
 * tap, which recompiles the hook through tapable's public path, drops it for good.
 */
export function tapHook<N extends HookName>(hooks: Hooks, name: N, opts: TapOptions, handler: HookHandler<N>): () => void {
  const hook = hooks[name] as unknown as {
    tap(o: object, f: unknown): void;
    tapPromise(o: object, f: unknown): void;
    taps: Array<{ piTapId?: number }>;
  };
  // tapable copies unknown tap options onto the tap object, so an id finds it again.
  const piTapId = ++tapCounter;
  const options = { name: opts.name, stage: opts.stage ?? 0, piTapId };
  if (name === "kernel_mode_select") hook.tap(options, handler);
  else hook.tapPromise(options, async (event: unknown) => handler(event as never));
  return () => {
    const idx = hook.taps.findIndex((t) => t.piTapId === piTapId);
    if (idx < 0) return;
    removedTaps.add(piTapId);
    hook.taps.splice(idx, 1);
  };
}
