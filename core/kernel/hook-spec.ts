/**
 * The one declaration of the kernel's hooks: for each hook its name, its kind and (as types)
 * its payload and what its taps may answer. Everything else is derived from HOOK_SPEC: the
 * tapable table (core/kernel/hooks.ts picks the class from the kind), HOOK_NAMES, HOOK_KINDS and
 * EVENT_HOOKS. Adding a hook is one line here.
 *
 * Kinds:
 * - observer: taps are told; their return value is ignored and they change nothing;
 * - bail: the first tap returning something other than `undefined` decides the result;
 * - waterfall: taps may change the payload (in place or by returning a new one), passed on;
 * - collect: taps push into a list on the payload (resources_discover);
 * - sync-bail: a synchronous bail hook (kernel_mode_select).
 */
import type {
  AfterProviderResponseEvent,
  AfterTurnEvent,
  AgentBeforeSettleEvent,
  BeforeAgentStartEvent,
  BeforeProviderHeadersEvent,
  BeforeProviderRequestEvent,
  CacheWarmingDecisionEvent,
  CancelResult,
  ContextEvent,
  ContextWithSystemEvent,
  EventOf,
  InputEvent,
  InputResult,
  KernelReadyEvent,
  McpServersChangeEvent,
  ModeSelectArgs,
  ProjectTrustEvent,
  ProjectTrustResult,
  ProviderErrorEvent,
  ProviderErrorResult,
  ProviderStreamEventEvent,
  ResourcesDiscoverEvent,
  SessionBeforeCompactEvent,
  SessionBeforeCompactResult,
  SessionBeforeForkEvent,
  SessionBeforeSwitchEvent,
  SessionBeforeTreeEvent,
  SessionCompactEvent,
  SessionCompactFailedEvent,
  SessionDirectoryEvent,
  SessionForkEvent,
  SessionInfoChangedEvent,
  SessionShutdownEvent,
  SessionStartEvent,
  SessionSwitchEvent,
  SessionTreeEvent,
  StartupCheckEvent,
  StartupCheckResult,
  ThinkingLevelSelectEvent,
  ToolCallEvent,
  ToolCallResult,
  ToolResultEvent,
  UIPromptEvent,
  UserBashEvent,
  UserBashResult,
} from "./hook-events.js";
import type { AgentSessionEvent } from "./types.js";

export type HookKind = "observer" | "bail" | "waterfall" | "collect" | "sync-bail";

/**
 * One hook's declaration. `payload` and `result` are never set: they carry the payload type and
 * the type a deciding tap returns. `sessionEvent` marks hooks whose payload is an agent/session
 * event the session also broadcasts to its subscribers.
 */
export interface HookSpec<K extends HookKind = HookKind, P = unknown, R = unknown> {
  readonly kind: K;
  readonly sessionEvent: boolean;
  readonly payload?: P;
  readonly result?: R;
}

const spec = <K extends HookKind, P, R>(kind: K, sessionEvent = false): HookSpec<K, P, R> => ({ kind, sessionEvent });
const observer = <P>() => spec<"observer", P, void>("observer");
const bail = <P, R>() => spec<"bail", P, R>("bail");
const waterfall = <P>() => spec<"waterfall", P, P>("waterfall");
const collect = <P>() => spec<"collect", P, void>("collect");
const syncBail = <P, R>() => spec<"sync-bail", P, R>("sync-bail");
/** Hooks the session also broadcasts as events (the payload is that event). */
const sessionObserver = <T extends AgentSessionEvent["type"]>() => spec<"observer", EventOf<T>, void>("observer", true);
const sessionWaterfall = <T extends AgentSessionEvent["type"]>() => spec<"waterfall", EventOf<T>, EventOf<T>>("waterfall", true);

export const HOOK_SPEC = {
  // session life cycle
  session_start: observer<SessionStartEvent>(),
  session_shutdown: observer<SessionShutdownEvent>(),
  session_switch: observer<SessionSwitchEvent>(),
  session_fork: observer<SessionForkEvent>(),
  session_compact: observer<SessionCompactEvent>(),
  session_tree: observer<SessionTreeEvent>(),
  session_before_switch: bail<SessionBeforeSwitchEvent, CancelResult>(),
  session_before_fork: bail<SessionBeforeForkEvent, CancelResult>(),
  session_before_tree: bail<SessionBeforeTreeEvent, CancelResult>(),
  session_before_compact: bail<SessionBeforeCompactEvent, SessionBeforeCompactResult>(),
  session_directory: bail<SessionDirectoryEvent, { sessionDir?: string }>(),
  resources_discover: collect<ResourcesDiscoverEvent>(),

  // agent: transforming hooks
  input: bail<InputEvent, InputResult>(),
  before_agent_start: waterfall<BeforeAgentStartEvent>(),
  context: waterfall<ContextEvent>(),
  before_provider_request: waterfall<BeforeProviderRequestEvent>(),
  tool_call: bail<ToolCallEvent, ToolCallResult>(),
  tool_result: waterfall<ToolResultEvent>(),
  user_bash: bail<UserBashEvent, UserBashResult>(),

  // agent: observers (awaited, so a slow consumer slows the loop instead of growing memory)
  agent_start: sessionObserver<"agent_start">(),
  agent_end: sessionObserver<"agent_end">(),
  turn_start: sessionObserver<"turn_start">(),
  // a waterfall: pi handlers may append entries and ask for one more request (see turnBoundaryOf)
  turn_end: sessionWaterfall<"turn_end">(),
  message_start: sessionObserver<"message_start">(),
  message_update: sessionObserver<"message_update">(),
  // a waterfall: taps may replace the finished message in place (see PI_CONVENTIONS in plugins/extensions/pi-conventions.ts)
  message_end: sessionWaterfall<"message_end">(),
  tool_execution_start: sessionObserver<"tool_execution_start">(),
  tool_execution_update: sessionObserver<"tool_execution_update">(),
  tool_execution_end: sessionObserver<"tool_execution_end">(),
  model_select: sessionObserver<"model_select">(),
  queue_update: sessionObserver<"queue_update">(),
  compaction_start: sessionObserver<"compaction_start">(),
  compaction_end: sessionObserver<"compaction_end">(),
  auto_retry_start: sessionObserver<"auto_retry_start">(),
  auto_retry_end: sessionObserver<"auto_retry_end">(),
  agent_settled: sessionObserver<"agent_settled">(),

  // session info, provider traffic, settling, trust and UI prompts
  session_info_changed: observer<SessionInfoChangedEvent>(),
  session_compact_failed: observer<SessionCompactFailedEvent>(),
  context_with_system: waterfall<ContextWithSystemEvent>(),
  before_provider_headers: waterfall<BeforeProviderHeadersEvent>(),
  after_provider_response: observer<AfterProviderResponseEvent>(),
  provider_stream_event: observer<ProviderStreamEventEvent>(),
  agent_before_settle: waterfall<AgentBeforeSettleEvent>(),
  thinking_level_select: observer<ThinkingLevelSelectEvent>(),
  project_trust: bail<ProjectTrustEvent, ProjectTrustResult>(),
  mcp_servers_change: observer<McpServersChangeEvent>(),
  cache_warming_decision: bail<CacheWarmingDecisionEvent, Record<string, unknown>>(),
  ui_prompt_start: observer<UIPromptEvent>(),
  ui_prompt_end: observer<UIPromptEvent>(),

  // kernel
  kernel_mode_select: syncBail<ModeSelectArgs, string>(),

  // run recovery and life cycle
  provider_error: bail<ProviderErrorEvent, ProviderErrorResult>(),
  after_turn: observer<AfterTurnEvent>(),
  kernel_ready: observer<KernelReadyEvent>(),
  startup_check: bail<StartupCheckEvent, StartupCheckResult>(),
} as const satisfies Record<string, HookSpec>;

type Spec = typeof HOOK_SPEC;
export type HookName = keyof Spec;
/** The payload type of a hook. */
export type HookPayload<N extends HookName> = Payloads[N];
type Payloads = { [N in HookName]: Spec[N] extends HookSpec<HookKind, infer P, unknown> ? P : never };
/** What a deciding tap of a bail hook returns (the payload type for waterfalls, void for observers). */
export type HookResult<N extends HookName> = Results[N];
type Results = { [N in HookName]: Spec[N] extends HookSpec<HookKind, unknown, infer R> ? R : never };
/** Each hook's kind. */
export type HookKinds = { readonly [N in HookName]: Spec[N]["kind"] };

export const HOOK_NAMES: readonly HookName[] = Object.freeze(Object.keys(HOOK_SPEC) as HookName[]);
export const HOOK_KINDS: HookKinds = Object.freeze(Object.fromEntries(HOOK_NAMES.map((n) => [n, HOOK_SPEC[n].kind])) as HookKinds);
/** Hooks whose payload is an agent/session event that the session broadcasts to subscribers. */
export const EVENT_HOOKS: ReadonlySet<string> = new Set(HOOK_NAMES.filter((n) => HOOK_SPEC[n].sessionEvent));

/** Hooks whose taps return the (changed) payload. */
export type WaterfallHookName = HookNameOfKind<"waterfall">;
type HookNameOfKind<K extends HookKind> = { [N in HookName]: HookKinds[N] extends K ? N : never }[HookName];
/** What a tap of a hook may return. */
export type HookReturn<N extends HookName> = N extends HookNameOfKind<"waterfall">
  ? HookPayload<N> | undefined | void
  : N extends HookNameOfKind<"bail">
    ? HookResult<N> | undefined | void
    : N extends HookNameOfKind<"sync-bail">
      ? HookResult<N> | undefined
      : void;
export type HookHandler<N extends HookName> = (event: HookPayload<N>) => HookReturn<N> | Promise<HookReturn<N>>;
