/**
 * The pi extension surface as extensions see it (`import type { ExtensionAPI } from
 * "@mariozechner/pi-coding-agent"`). Names and shapes follow the reference CLI so extensions
 * written for it type-check and run unchanged; the implementation maps every call onto the
 * kernel's hooks and registries (see host.ts, api.ts, events.ts).
 *
 * TUI-only types (components, themes, key ids) are kept loose (`any`): this host does not ship
 * the reference's terminal component library.
 */
import type { TSchema, Static } from "typebox";
import type { AgentMessage, AgentToolResult, AgentToolUpdateCallback, AnyModel, CustomMessage, ImageContent, TextContent, ThinkingLevel, ToolResultMessage, AssistantMessageEvent, ExtensionUI, UiDialogOptions } from "../../core/kernel/index.js";
import type { ReadonlySessionManager, SessionEntry, SessionManager, BranchSummaryEntry, CompactionEntry } from "../../core/stores/index.js";
import type { BashToolDetails, BashToolInput } from "../tools/bash.js";
import type { ReadToolDetails, ReadToolInput } from "../tools/read.js";
import type { EditToolDetails, EditToolInput } from "../tools/edit.js";
import type { WriteToolInput } from "../tools/write.js";
import type { GrepToolDetails, GrepToolInput } from "../tools/grep.js";
import type { FindToolDetails, FindToolInput } from "../tools/find.js";
import type { LsToolDetails, LsToolInput } from "../tools/ls.js";

export type { AgentToolResult, AgentToolUpdateCallback, ThinkingLevel, ReadonlySessionManager };

/** A theme (the TUI's); loose here. Without a UI, `ctx.ui.theme` returns plain text unchanged. */
export type Theme = any;
/** A TUI component; loose here. */
export type Component = any;
export type KeyId = string;

// ---- UI ------------------------------------------------------------------------------------------

export type ExtensionUIDialogOptions = UiDialogOptions;
export type WidgetPlacement = "aboveEditor" | "belowEditor";
export interface ExtensionWidgetOptions {
  placement?: WidgetPlacement;
}
/** pi's `ctx.ui`. The mode provides it (kernel service "ui"); print, json and SDK hosts get a no-op one. */
export type ExtensionUIContext = ExtensionUI & Record<string, any>;

// ---- context -------------------------------------------------------------------------------------

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

export interface CompactOptions {
  customInstructions?: string;
  onComplete?: (result: unknown) => void;
  onError?: (error: Error) => void;
}

/** The `ctx` every handler, tool and shortcut receives. */
export interface ExtensionContext {
  ui: ExtensionUIContext;
  /** Models of --models / enabledModels (empty: all available). */
  readonly scopedModels: ReadonlyArray<{ model: AnyModel; thinkingLevel?: ThinkingLevel }>;
  readonly thinkingLevel?: ThinkingLevel;
  /** Whether project-local code may run here (the trust plugin's answer). */
  isProjectTrusted(): boolean;
  /** False in print and json mode and for SDK hosts without a UI. */
  hasUI: boolean;
  /** "tui" | "rpc" | "json" | "print". */
  mode: string;
  cwd: string;
  sessionManager: ReadonlySessionManager & {
    /** pi 1.6: the branch's context entries (with a compaction: it, the kept entries, the rest). */
    buildContextEntries(): SessionEntry[];
    /** pi 1.6: those entries with the messages each contributes, the thinking level and the model. */
    buildSessionProjection(): import("../../core/stores/index.js").SessionProjection;
  };
  modelRegistry: any;
  model: AnyModel | undefined;
  /** The abort signal of the running turn, undefined when idle. */
  signal: AbortSignal | undefined;
  isIdle(): boolean;
  abort(): void;
  hasPendingMessages(): boolean;
  shutdown(): void;
  getContextUsage(): ContextUsage | undefined;
  compact(options?: CompactOptions): void;
  getSystemPrompt(): string;
}

export interface ReplacedSessionContext extends ExtensionCommandContext {
  sendMessage<T = unknown>(message: CustomMessageInput<T>, options?: SendMessageOptions): Promise<void>;
  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: "steer" | "followUp" }): Promise<void>;
}

/** Command handlers also get session control. */
export interface ExtensionCommandContext extends ExtensionContext {
  waitForIdle(): Promise<void>;
  newSession(options?: {
    parentSession?: string;
    setup?: (sessionManager: SessionManager) => Promise<void>;
    withSession?: (ctx: ReplacedSessionContext) => Promise<void>;
  }): Promise<{ cancelled: boolean }>;
  fork(entryId: string, options?: { position?: "before" | "at"; withSession?: (ctx: ReplacedSessionContext) => Promise<void> }): Promise<{ cancelled: boolean }>;
  navigateTree(
    targetId: string,
    options?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean }>;
  switchSession(sessionPath: string, options?: { withSession?: (ctx: ReplacedSessionContext) => Promise<void> }): Promise<{ cancelled: boolean }>;
  reload(): Promise<void>;
}

// ---- tools ---------------------------------------------------------------------------------------

export interface ToolRenderResultOptions {
  expanded: boolean;
  isPartial: boolean;
}

/** A tool as `pi.registerTool()` takes it. */
export interface ToolDefinition<TParams extends TSchema = TSchema, TDetails = unknown, TState = any> {
  name: string;
  label?: string;
  description: string;
  promptSnippet?: string;
  promptGuidelines?: string[];
  parameters: TParams;
  renderShell?: "default" | "self";
  prepareArguments?: (args: unknown) => Static<TParams>;
  executionMode?: "parallel" | "sequential";
  /** pi 1.6: "direct" (default), "codemode" / "deferred" (callable from codemode, not activated on registration), "hidden". */
  exposure?: "direct" | "codemode" | "deferred" | "hidden";
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal: AbortSignal | undefined,
    onUpdate: AgentToolUpdateCallback<TDetails> | undefined,
    ctx: ExtensionContext,
  ): Promise<AgentToolResult<TDetails>>;
  renderCall?: (args: Static<TParams>, theme: Theme, context: any) => Component;
  renderResult?: (result: AgentToolResult<TDetails>, options: ToolRenderResultOptions, theme: Theme, context: TState | any) => Component;
}

export interface SourceInfo {
  path: string;
  source: string;
  scope: "user" | "project" | "temporary";
  origin: "package" | "top-level";
  baseDir?: string;
}

export type ToolInfo = Pick<ToolDefinition, "name" | "description" | "parameters" | "exposure"> & { sourceInfo: SourceInfo };

export interface SlashCommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill";
  sourceInfo: SourceInfo;
}

// ---- events --------------------------------------------------------------------------------------

export interface ResourcesDiscoverEvent {
  type: "resources_discover";
  cwd: string;
  reason: "startup" | "reload";
}
export interface ResourcesDiscoverResult {
  skillPaths?: string[];
  promptPaths?: string[];
  themePaths?: string[];
}
export interface SessionDirectoryEvent {
  type: "session_directory";
  cwd: string;
}
export interface SessionStartEvent {
  type: "session_start";
  reason: "startup" | "reload" | "new" | "resume" | "fork";
  previousSessionFile?: string;
}
export interface SessionBeforeSwitchEvent {
  type: "session_before_switch";
  reason: "new" | "resume";
  targetSessionFile?: string;
}
export interface SessionSwitchEvent {
  type: "session_switch";
  reason: "new" | "resume";
  previousSessionFile?: string;
}
export interface SessionBeforeForkEvent {
  type: "session_before_fork";
  entryId: string;
  position: "before" | "at";
}
export interface SessionForkEvent {
  type: "session_fork";
  previousSessionFile?: string;
}
export interface SessionBeforeCompactEvent {
  type: "session_before_compact";
  preparation: any;
  branchEntries: SessionEntry[];
  customInstructions?: string;
  signal: AbortSignal;
}
export interface SessionCompactEvent {
  type: "session_compact";
  compactionEntry: CompactionEntry;
  fromExtension: boolean;
}
export interface SessionShutdownEvent {
  type: "session_shutdown";
  reason: "quit" | "reload" | "new" | "resume" | "fork";
  targetSessionFile?: string;
}
export interface SessionBeforeTreeEvent {
  type: "session_before_tree";
  preparation: any;
  signal: AbortSignal;
}
export interface SessionTreeEvent {
  type: "session_tree";
  newLeafId: string | null;
  oldLeafId: string | null;
  summaryEntry?: BranchSummaryEntry;
  fromExtension?: boolean;
}
export interface ContextEvent {
  type: "context";
  messages: AgentMessage[];
}
export interface BeforeProviderRequestEvent {
  type: "before_provider_request";
  payload: unknown;
}
export interface BeforeAgentStartEvent {
  type: "before_agent_start";
  prompt: string;
  images?: ImageContent[];
  systemPrompt: string;
  systemPromptOptions: {
    cwd: string;
    selectedTools: string[];
    customPrompt?: string;
    appendSystemPrompt?: string;
    [key: string]: unknown;
  };
}
export interface AgentStartEvent {
  type: "agent_start";
}
export interface AgentEndEvent {
  type: "agent_end";
  messages: AgentMessage[];
}
export interface AgentSettledEvent {
  type: "agent_settled";
  aborted: boolean;
}
export interface TurnStartEvent {
  type: "turn_start";
  turnIndex: number;
  timestamp: number;
}
export interface TurnEndEvent {
  type: "turn_end";
  turnIndex: number;
  message: AgentMessage;
  toolResults: ToolResultMessage[];
}
export interface MessageStartEvent {
  type: "message_start";
  message: AgentMessage;
}
export interface MessageUpdateEvent {
  type: "message_update";
  message: AgentMessage;
  assistantMessageEvent: AssistantMessageEvent;
}
export interface MessageEndEvent {
  type: "message_end";
  message: AgentMessage;
}
export interface ToolExecutionStartEvent {
  type: "tool_execution_start";
  toolCallId: string;
  toolName: string;
  args: any;
}
export interface ToolExecutionUpdateEvent {
  type: "tool_execution_update";
  toolCallId: string;
  toolName: string;
  args: any;
  partialResult: any;
}
export interface ToolExecutionEndEvent {
  type: "tool_execution_end";
  toolCallId: string;
  toolName: string;
  result: any;
  isError: boolean;
}
export type ModelSelectSource = "set" | "cycle" | "restore";
export interface ModelSelectEvent {
  type: "model_select";
  model: AnyModel;
  previousModel: AnyModel | undefined;
  source: ModelSelectSource;
}
export interface UserBashEvent {
  type: "user_bash";
  command: string;
  excludeFromContext: boolean;
  cwd: string;
}
export type InputSource = "interactive" | "rpc" | "extension";
export interface InputEvent {
  type: "input";
  text: string;
  images?: ImageContent[];
  source: InputSource;
}
export type InputEventResult = { action: "continue" } | { action: "transform"; text: string; images?: ImageContent[] } | { action: "handled" };

interface ToolCallEventBase {
  type: "tool_call";
  toolCallId: string;
}
export interface BashToolCallEvent extends ToolCallEventBase {
  toolName: "bash";
  input: BashToolInput;
}
export interface ReadToolCallEvent extends ToolCallEventBase {
  toolName: "read";
  input: ReadToolInput;
}
export interface EditToolCallEvent extends ToolCallEventBase {
  toolName: "edit";
  input: EditToolInput;
}
export interface WriteToolCallEvent extends ToolCallEventBase {
  toolName: "write";
  input: WriteToolInput;
}
export interface GrepToolCallEvent extends ToolCallEventBase {
  toolName: "grep";
  input: GrepToolInput;
}
export interface FindToolCallEvent extends ToolCallEventBase {
  toolName: "find";
  input: FindToolInput;
}
export interface LsToolCallEvent extends ToolCallEventBase {
  toolName: "ls";
  input: LsToolInput;
}
export interface CustomToolCallEvent extends ToolCallEventBase {
  toolName: string;
  input: Record<string, unknown>;
}
export type ToolCallEvent =
  | BashToolCallEvent
  | ReadToolCallEvent
  | EditToolCallEvent
  | WriteToolCallEvent
  | GrepToolCallEvent
  | FindToolCallEvent
  | LsToolCallEvent
  | CustomToolCallEvent;

interface ToolResultEventBase {
  type: "tool_result";
  toolCallId: string;
  input: Record<string, unknown>;
  content: (TextContent | ImageContent)[];
  isError: boolean;
}
export interface BashToolResultEvent extends ToolResultEventBase {
  toolName: "bash";
  details: BashToolDetails | undefined;
}
export interface ReadToolResultEvent extends ToolResultEventBase {
  toolName: "read";
  details: ReadToolDetails | undefined;
}
export interface EditToolResultEvent extends ToolResultEventBase {
  toolName: "edit";
  details: EditToolDetails | undefined;
}
export interface WriteToolResultEvent extends ToolResultEventBase {
  toolName: "write";
  details: undefined;
}
export interface GrepToolResultEvent extends ToolResultEventBase {
  toolName: "grep";
  details: GrepToolDetails | undefined;
}
export interface FindToolResultEvent extends ToolResultEventBase {
  toolName: "find";
  details: FindToolDetails | undefined;
}
export interface LsToolResultEvent extends ToolResultEventBase {
  toolName: "ls";
  details: LsToolDetails | undefined;
}
export interface CustomToolResultEvent extends ToolResultEventBase {
  toolName: string;
  details: unknown;
}
export type ToolResultEvent =
  | BashToolResultEvent
  | ReadToolResultEvent
  | EditToolResultEvent
  | WriteToolResultEvent
  | GrepToolResultEvent
  | FindToolResultEvent
  | LsToolResultEvent
  | CustomToolResultEvent;

export interface ContextEventResult {
  messages?: AgentMessage[];
}
export interface ToolCallEventResult {
  block?: boolean;
  reason?: string;
  /** With `block`: the run ends after this batch (no further model request) when every result of it terminates. */
  terminate?: boolean;
}
export interface ToolResultEventResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
}
export interface UserBashEventResult {
  operations?: unknown;
  result?: unknown;
}
export interface MessageEndEventResult {
  message?: AgentMessage;
}
export interface BeforeAgentStartEventResult {
  message?: CustomMessageInput;
  systemPrompt?: string;
}
export interface SessionBeforeSwitchResult {
  cancel?: boolean;
}
export interface SessionBeforeForkResult {
  cancel?: boolean;
  skipConversationRestore?: boolean;
}
export interface SessionBeforeCompactResult {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId: string; tokensBefore: number; details?: unknown };
}
export interface SessionBeforeTreeResult {
  cancel?: boolean;
  summary?: { summary: string; details?: unknown };
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/** Every event an extension can subscribe to, with its payload and what a handler may return. */
export interface ExtensionEventMap {
  resources_discover: [ResourcesDiscoverEvent, ResourcesDiscoverResult];
  session_directory: [SessionDirectoryEvent, { sessionDir?: string }];
  session_start: [SessionStartEvent, void];
  session_before_switch: [SessionBeforeSwitchEvent, SessionBeforeSwitchResult];
  session_switch: [SessionSwitchEvent, void];
  session_before_fork: [SessionBeforeForkEvent, SessionBeforeForkResult];
  session_fork: [SessionForkEvent, void];
  session_before_compact: [SessionBeforeCompactEvent, SessionBeforeCompactResult];
  session_compact: [SessionCompactEvent, void];
  session_shutdown: [SessionShutdownEvent, void];
  session_before_tree: [SessionBeforeTreeEvent, SessionBeforeTreeResult];
  session_tree: [SessionTreeEvent, void];
  context: [ContextEvent, ContextEventResult];
  before_provider_request: [BeforeProviderRequestEvent, unknown];
  before_agent_start: [BeforeAgentStartEvent, BeforeAgentStartEventResult];
  agent_start: [AgentStartEvent, void];
  agent_end: [AgentEndEvent, void];
  agent_settled: [AgentSettledEvent, void];
  turn_start: [TurnStartEvent, void];
  turn_end: [TurnEndEvent, void];
  message_start: [MessageStartEvent, void];
  message_update: [MessageUpdateEvent, void];
  message_end: [MessageEndEvent, MessageEndEventResult];
  tool_execution_start: [ToolExecutionStartEvent, void];
  tool_execution_update: [ToolExecutionUpdateEvent, void];
  tool_execution_end: [ToolExecutionEndEvent, void];
  model_select: [ModelSelectEvent, void];
  tool_call: [ToolCallEvent, ToolCallEventResult];
  tool_result: [ToolResultEvent, ToolResultEventResult];
  user_bash: [UserBashEvent, UserBashEventResult];
  input: [InputEvent, InputEventResult];
}
export type ExtensionEventName = keyof ExtensionEventMap;

export type ExtensionHandler<E, R = undefined> = (event: E, ctx: ExtensionContext) => Promise<R | void> | R | void;

// ---- messages and providers -------------------------------------------------------------------------

export type CustomMessageInput<T = unknown> = Pick<CustomMessage<T>, "customType" | "content" | "display" | "details">;
export interface SendMessageOptions {
  triggerTurn?: boolean;
  deliverAs?: "steer" | "followUp" | "nextTurn";
}

export interface ProviderModelConfig {
  id: string;
  name: string;
  api?: string;
  baseUrl?: string;
  reasoning: boolean;
  thinkingLevelMap?: Record<string, string | null>;
  input: ("text" | "image")[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
}

export interface ProviderConfig {
  name?: string;
  baseUrl?: string;
  apiKey?: string;
  api?: string;
  streamSimple?: (model: AnyModel, context: any, options?: any) => any;
  headers?: Record<string, string>;
  authHeader?: boolean;
  models?: ProviderModelConfig[];
  oauth?: {
    name: string;
    login(callbacks: any): Promise<any>;
    refreshToken(credentials: any): Promise<any>;
    getApiKey(credentials: any): string;
    modifyModels?(models: AnyModel[], credentials: any): AnyModel[];
  };
}

export interface ExecOptions {
  signal?: AbortSignal;
  timeout?: number;
  cwd?: string;
}
export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
  killed: boolean;
}

export interface EventBus {
  emit(channel: string, data?: unknown): void;
  on(channel: string, handler: (data: unknown) => unknown): () => void;
}

export interface RegisteredCommand {
  name: string;
  description?: string;
  getArgumentCompletions?: (argumentPrefix: string) => unknown;
  handler: (args: string, ctx: ExtensionCommandContext) => Promise<void> | void;
}

export type MessageRenderer<T = unknown> = (message: CustomMessage<T>, options: { expanded: boolean }, theme: Theme) => Component | undefined;

/** A tool decorator (beyond the reference): receives the tool as it stands, returns the one to use. */
export type ToolWrapper = (tool: ToolDefinition<any, any>) => ToolDefinition<any, any>;

/** What an extension factory receives. */
export interface ExtensionAPI {
  on<E extends ExtensionEventName>(event: E, handler: ExtensionHandler<ExtensionEventMap[E][0], ExtensionEventMap[E][1]>): void;
  on(event: string, handler: ExtensionHandler<any, any>): void;

  registerTool<TParams extends TSchema = TSchema, TDetails = unknown, TState = any>(tool: ToolDefinition<TParams, TDetails, TState>): void;
  registerCommand(name: string, options: Omit<RegisteredCommand, "name">): void;
  registerShortcut(shortcut: KeyId, options: { description?: string; handler: (ctx: ExtensionContext) => Promise<void> | void }): void;
  registerFlag(name: string, options: { description?: string; type: "boolean" | "string"; default?: boolean | string }): void;
  getFlag(name: string): boolean | string | undefined;
  registerMessageRenderer<T = unknown>(customType: string, renderer: MessageRenderer<T>): void;
  registerProvider(name: string, config: ProviderConfig): void;
  unregisterProvider(name: string): void;
  /** Beyond the reference: decorate any registered tool (built-in, MCP, another extension's). */
  wrapTool(name: string, wrapper: ToolWrapper): void;

  sendMessage<T = unknown>(message: CustomMessageInput<T>, options?: SendMessageOptions): void;
  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: "steer" | "followUp" }): void;
  appendEntry<T = unknown>(customType: string, data?: T): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  getActiveTools(): string[];
  getAllTools(): ToolInfo[];
  setActiveTools(toolNames: string[]): void;
  getCommands(): SlashCommandInfo[];
  setModel(model: AnyModel): Promise<boolean>;
  getThinkingLevel(): ThinkingLevel;
  setThinkingLevel(level: ThinkingLevel): void;
  events: EventBus;
  // pi 1.6
  registerToolRenderer(resolver: (...a: any[]) => unknown): void;
  registerEntryRenderer(customType: string, renderer: (...a: any[]) => unknown): void;
  registerMarkdownTransformer(transformer: (...a: any[]) => unknown, options?: unknown): void;
  registerMcpServer(name: string, config: Record<string, unknown>): void;
  unregisterMcpServer(name: string): void;
  getMcpServers(): Array<{ name: string; config: Record<string, unknown>; extensionPath: string }>;
  getSettings(): Record<string, unknown>;
  registerVirtualModel(model: Record<string, unknown>): void;
  unregisterVirtualModel(provider: string, id: string): void;
}

export type ExtensionFactory = (pi: ExtensionAPI) => void | Promise<void>;
