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
 */
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
}
export type InputResult = { action: "handled" } | undefined;

export interface BeforeAgentStartEvent {
  type: "before_agent_start";
  prompt: string;
  images?: ImageContent[];
  systemPrompt: string;
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
  toolName: string;
  /** The validated arguments; taps may change them in place. */
  input: Record<string, unknown>;
}
export interface ToolCallResult {
  block?: boolean;
  reason?: string;
}
export interface ToolResultEvent {
  type: "tool_result";
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  content: AgentToolResult["content"];
  details: unknown;
  isError: boolean;
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
    turn_end: new AsyncSeriesHook<[EventOf<"turn_end">]>(["event"], "turn_end"),
    message_start: new AsyncSeriesHook<[EventOf<"message_start">]>(["event"], "message_start"),
    message_update: new AsyncSeriesHook<[EventOf<"message_update">]>(["event"], "message_update"),
    message_end: new AsyncSeriesHook<[EventOf<"message_end">]>(["event"], "message_end"),
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
export type WaterfallHookName = "before_agent_start" | "context" | "before_provider_request" | "tool_result";
/** What a tap of a hook may return. */
export type HookReturn<N extends HookName> = N extends "kernel_mode_select"
  ? string | undefined
  : N extends WaterfallHookName
    ? HookPayload<N> | undefined | void
    : Hooks[N] extends AsyncSeriesBailHook<any, infer R>
      ? R | undefined | void
      : void;
export type HookHandler<N extends HookName> = (event: HookPayload<N>) => HookReturn<N> | Promise<HookReturn<N>>;

export const HOOK_NAMES: readonly HookName[] = Object.freeze(Object.keys(createHookTable()) as HookName[]);
/** Hooks whose payload is an agent/session event that the session broadcasts to subscribers. */
export const EVENT_HOOKS: ReadonlySet<string> = new Set<AgentSessionEvent["type"]>([
  "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
  "tool_execution_start", "tool_execution_update", "tool_execution_end", "model_select", "queue_update",
  "compaction_start", "compaction_end", "auto_retry_start", "auto_retry_end", "agent_settled",
]);

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
      register(tap: { name: string; type: string; fn: (...a: unknown[]) => unknown }) {
        const fn = tap.fn;
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

/**
 * Tap a hook with a promise-returning handler (sync handlers are fine, they are awaited).
 * Returns a function that removes the tap again (for /reload).
 */
export function tapHook<N extends HookName>(hooks: Hooks, name: N, opts: TapOptions, handler: HookHandler<N>): () => void {
  const hook = hooks[name] as unknown as {
    tap(o: object, f: unknown): void;
    tapPromise(o: object, f: unknown): void;
    taps: Array<{ piTapId?: number }>;
    _resetCompilation(): void;
  };
  // tapable copies unknown tap options onto the tap object, so an id finds it again.
  const piTapId = ++tapCounter;
  const options = { name: opts.name, stage: opts.stage ?? 0, piTapId };
  if (name === "kernel_mode_select") hook.tap(options, handler);
  else hook.tapPromise(options, async (event: unknown) => handler(event as never));
  return () => {
    const idx = hook.taps.findIndex((t) => t.piTapId === piTapId);
    if (idx >= 0) {
      hook.taps.splice(idx, 1);
      hook._resetCompilation();
    }
  };
}
