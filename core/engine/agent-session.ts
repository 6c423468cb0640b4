/**
 * AgentSession: one conversation, as a small facade over parts with one job each:
 *
 *   session-events.ts    the one event path (hook, persist, subscribers; each awaited)
 *   run-controller.ts    prompt → settled: queues, steer/follow-up, the loop, provider_error
 *                        answers (retry, compact and retry), after_turn, abort
 *   provider-gateway.ts  stream function, key and headers, options, before_provider_request
 *   session-stats.ts     counts, tokens, cost, context use (pure)
 *   tree.ts              tree navigation; models/thinking.ts: the levels a model takes
 *
 * The facade owns what the parts share: the transcript, the model and thinking level, the
 * active tools and the system prompt, the store, the secrets never to be stored.
 */
import { notifySessionInfo, notifyThinkingLevel } from "./setter-hooks.js";
import type { Kernel } from "../kernel/kernel.js";
import type { ToolContext } from "../kernel/contracts.js";
import { createCustomMessage } from "./agent/messages.js";
import type { AgentMessage, AgentSessionEvent, AnyModel, AssistantMessage, CustomMessage, ImageContent, Message, ThinkingLevel, ToolDefinition } from "../kernel/types.js";
import { buildDefaultSystemPrompt } from "./system-prompt.js";
import type { SessionStore } from "../stores/session/store.js";
import type { ModelSource } from "./model-source.js";
import { asTreeStore } from "../stores/session/store.js";
import { SecretSet } from "../kernel/redact.js";
import type { CompactionReason, CompactionResult } from "./compaction-service.js";
import { getUserMessagesForForking, navigateTree, type NavigateTreeOptions, type NavigateTreeResult } from "./tree.js";
import { SessionEvents, type SessionListener } from "./session-events.js";
import { ProviderGateway } from "./provider-gateway.js";
import { RunController, type Disposition, type InputSource, type PromptOptions, type QueueMode } from "./run-controller.js";
import { contextUsage, lastAssistantText, sessionStats, type ContextUsage, type SessionStats } from "./session-stats.js";
import { clampThinkingLevel, supportedThinkingLevels } from "../stores/models/thinking.js";
import { modelThinkingLevel } from "../kernel/settings-compat.js"; // (pi 1.6 modelThinkingLevels)

export type { SessionListener } from "./session-events.js";
export { isContextOverflow, isRetryableError } from "./provider-errors.js";

/** The name of the mode that runs the session ("print", "json", "rpc", "tui", "sdk", a plugin's own mode). */
export type SessionMode = string;

/** Result of a user `!cmd` / RPC `bash` run. */
export interface BashResult {
  output: string;
  exitCode?: number;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}
/** Runs a shell command for the user (the tools plugin provides it as the service "bash-executor"). */
export type BashExecutor = (
  command: string,
  opts: { cwd: string; signal: AbortSignal; operations?: unknown; onData?: (chunk: string) => void },
) => Promise<BashResult>;

export interface AgentSessionOptions {
  kernel: Kernel;
  sessionManager: SessionStore;
  models: ModelSource;
  cwd: string;
  /** The running mode's own name. */
  mode: SessionMode;
  /** Whether the mode shows a UI (hints name its slash commands). Default: mode "tui". */
  hasUI?: boolean;
  /** Where the mode's input comes from (the input hook's `source`). Default: from the mode name. */
  inputSource?: InputSource;
  model?: AnyModel;
  thinkingLevel?: ThinkingLevel;
  /** Names of the tools the model sees. */
  activeTools: string[];
  customSystemPrompt?: string;
  appendSystemPrompt?: string;
  /** Models for cycling (--models / enabledModels); empty = all available. */
  scopedModels?: Array<{ model: AnyModel; thinkingLevel?: ThinkingLevel }>;
  /** The store's context when the caller built it already (saves a second walk of a large session). */
  initialContext?: { messages: AgentMessage[] };
}

const DEFAULT_SOURCES: Record<string, InputSource> = { rpc: "rpc", tui: "interactive", sdk: "sdk", print: "print", json: "print" };

export class AgentSession {
  readonly kernel: Kernel;
  readonly cwd: string;
  readonly mode: SessionMode;
  readonly hasUI: boolean;
  readonly inputSource: InputSource;
  sessionManager: SessionStore;
  readonly models: ModelSource;

  /** The context (the parts change it in place: a run in progress continues from it). @internal */
  readonly transcript: AgentMessage[];
  /** @internal */
  readonly secrets = new SecretSet();
  /** @internal */
  readonly gateway: ProviderGateway;
  private readonly events: SessionEvents;
  private readonly run: RunController;

  private _model: AnyModel | undefined;
  private _thinkingLevel: ThinkingLevel;
  private _activeTools: string[];
  private disposed = false;
  private readonly offToolsChange: () => void;
  private baseSystemPrompt: string | undefined;
  private systemPromptDirty = true;

  steeringMode: QueueMode;
  followUpMode: QueueMode;
  autoRetryEnabled: boolean;
  autoCompactionEnabled: boolean;
  isCompacting = false;
  customSystemPrompt?: string;
  appendSystemPrompt?: string;
  scopedModels: Array<{ model: AnyModel; thinkingLevel?: ThinkingLevel }>;
  /** The ctx handed to tools and commands; the extensions plugin replaces it. */
  contextFactory: () => ToolContext;

  constructor(opts: AgentSessionOptions) {
    this.kernel = opts.kernel;
    this.cwd = opts.cwd;
    this.mode = opts.mode;
    this.hasUI = opts.hasUI ?? opts.mode === "tui";
    this.inputSource = opts.inputSource ?? DEFAULT_SOURCES[opts.mode] ?? "sdk";
    this.sessionManager = opts.sessionManager;
    this.models = opts.models;
    this._model = opts.model;
    this._thinkingLevel = opts.thinkingLevel ?? "off";
    this._activeTools = [...opts.activeTools];
    this.customSystemPrompt = opts.customSystemPrompt;
    this.appendSystemPrompt = opts.appendSystemPrompt;
    this.scopedModels = opts.scopedModels ?? [];
    const s = this.kernel.settings.get();
    this.steeringMode = s.steeringMode;
    this.followUpMode = s.followUpMode;
    this.autoRetryEnabled = s.retry.enabled;
    this.autoCompactionEnabled = s.compaction.enabled;
    this.transcript = [...(opts.initialContext ?? opts.sessionManager.buildSessionContext()).messages];
    if (this._model) this._thinkingLevel = clampThinkingLevel(this._model, this._thinkingLevel);
    this.contextFactory = () => ({ cwd: this.cwd, hasUI: false, mode: this.mode, session: this, sessionManager: this.sessionManager, model: this._model });
    this.offToolsChange = this.kernel.tools.onChange(() => (this.systemPromptDirty = true));
    this.events = new SessionEvents(this.kernel, (m) => this.persistMessage(this.secrets.redact(m)));
    this.gateway = new ProviderGateway(this);
    this.run = new RunController(this);
  }

  // ---- state ----------------------------------------------------------------------------------

  get messages(): readonly AgentMessage[] {
    return this.transcript;
  }
  get model(): AnyModel | undefined {
    return this._model;
  }
  get thinkingLevel(): ThinkingLevel {
    return this._thinkingLevel;
  }
  get isStreaming(): boolean {
    return this.run.isRunning;
  }
  /** The abort signal of the run in progress (undefined when idle). */
  get signal(): AbortSignal | undefined {
    return this.run.signal;
  }
  get isRetrying(): boolean {
    return this.run.isRetrying;
  }
  get pendingMessageCount(): number {
    return this.run.pendingMessageCount;
  }
  get sessionId(): string {
    return this.sessionManager.getSessionId();
  }
  get sessionFile(): string | undefined {
    return this.sessionManager.getSessionFile();
  }
  get sessionName(): string | undefined {
    return this.sessionManager.getSessionName();
  }
  get isDisposed(): boolean {
    return this.disposed;
  }

  getActiveToolNames(): string[] {
    return this._activeTools.filter((n) => this.kernel.tools.has(n));
  }
  getActiveTools(): ToolDefinition[] {
    return this.getActiveToolNames().map((n) => this.kernel.tools.get(n)!).filter(Boolean);
  }
  setActiveTools(names: string[]): void {
    const unknown = names.filter((n) => !this.kernel.tools.has(n));
    for (const n of unknown) this.kernel.diagnostics.report({ level: "warning", source: "session", message: `unknown tool "${n}" ignored` });
    this._activeTools = names.filter((n) => this.kernel.tools.has(n));
    this.systemPromptDirty = true;
  }

  /** The system prompt as the model will see it next (before per-turn changes). */
  async getSystemPrompt(): Promise<string> {
    if (this.run.turnSystemPrompt !== undefined) return this.run.turnSystemPrompt;
    if (this.systemPromptDirty || this.baseSystemPrompt === undefined) {
      const builder = this.kernel.service("system-prompt") ?? buildDefaultSystemPrompt;
      this.baseSystemPrompt = await builder({ cwd: this.cwd, tools: this.getActiveTools(), customPrompt: this.customSystemPrompt, appendPrompt: this.appendSystemPrompt });
      this.systemPromptDirty = false;
    }
    return this.baseSystemPrompt;
  }
  invalidateSystemPrompt(): void {
    this.systemPromptDirty = true;
  }
  /** A finished message into the store: custom messages as `custom_message` entries (as pi 1.6 writes them). */
  private persistMessage(m: AgentMessage): void {
    const store = this.sessionManager as SessionStore & { appendCustomMessageEntry?: (customType: string, content: unknown, display: boolean, details?: unknown) => string };
    const c = m as { role: string; customType?: unknown; content?: unknown; display?: unknown; details?: unknown };
    if (c.role === "custom" && typeof c.customType === "string" && store.appendCustomMessageEntry) {
      store.appendCustomMessageEntry(c.customType, c.content, c.display !== false, c.details);
      return;
    }
    store.appendMessage(m);
  }
  /** The system prompt last built (pi's `session.systemPrompt`; the SDK builds it when the session is made). */
  get systemPrompt(): string {
    return this.run.turnSystemPrompt ?? this.baseSystemPrompt ?? "";
  }

  // ---- events ---------------------------------------------------------------------------------

  subscribe(listener: SessionListener): () => void {
    return this.events.subscribe(listener);
  }
  /**
   * The agent behind the session (pi's `session.agent`): its `subscribe` listeners are awaited in
   * order, a barrier the run waits for (what the modes use for backpressure); `state` is a view
   * of the run's state.
   */
  get agent(): { subscribe(listener: SessionListener): () => void; readonly state: { messages: readonly AgentMessage[]; systemPrompt: string; model: AnyModel | undefined; thinkingLevel: ThinkingLevel; isStreaming: boolean } } {
    const session = this;
    return {
      subscribe: (listener) => this.events.subscribe(listener),
      get state() {
        return { messages: session.messages, systemPrompt: session.systemPrompt, model: session.model, thinkingLevel: session.thinkingLevel, isStreaming: session.isStreaming };
      },
    };
  }
  /** Broadcast one event through the one path (hook, persist, subscribers), awaited. */
  emit(event: AgentSessionEvent): Promise<void> {
    return this.events.emit(event);
  }

  // ---- prompting and queues (run-controller.ts) -----------------------------------------------

  /**
   * Submit user input. Resolves when the run (with retries) is settled; `onAccepted` reports the
   * disposition before anything runs. Preflight failures reject before `onAccepted`.
   */
  async prompt(text: string, opts: PromptOptions = {}): Promise<Disposition> {
    this.assertAlive();
    return this.run.prompt(text, opts);
  }
  async steer(text: string, images?: ImageContent[]): Promise<Disposition> {
    this.assertAlive();
    return this.run.enqueue("steer", text, images);
  }
  async followUp(text: string, images?: ImageContent[]): Promise<Disposition> {
    this.assertAlive();
    return this.run.enqueue("followUp", text, images);
  }
  getQueue(): { steering: string[]; followUp: string[] } {
    return this.run.getQueue();
  }
  clearQueue(): Promise<{ steering: string[]; followUp: string[] }> {
    return this.run.clearQueue();
  }
  /** Custom message from an extension (sendMessage). */
  async sendCustomMessage(
    msg: { customType: string; content: CustomMessage["content"]; display?: boolean; details?: unknown },
    opts: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" } = {},
  ): Promise<void> {
    await this.run.sendCustomMessage(createCustomMessage(msg.customType, msg.content, msg.display ?? true, msg.details), opts);
  }

  /** Abort the current run (a pending retry, a compaction inside the run); resolves once idle. */
  async abort(): Promise<void> {
    this.compactionAbort?.abort();
    await this.run.abort();
  }
  abortRetry(): void {
    this.run.abortRetry();
  }
  /** Resolves when no run is active. */
  waitForIdle(): Promise<void> {
    return this.run.waitForIdle();
  }
  /** Runs the messages still queued (after an abort) when nothing runs; false when there is nothing to run. */
  resumeQueue(): boolean {
    return this.run.resumeQueue();
  }
  /** Resolves once the last run has settled (its agent_settled event is out). */
  waitForSettled(): Promise<void> {
    return this.run.waitForSettled();
  }

  // ---- model and thinking ---------------------------------------------------------------------

  /**
   * Switch the model. `persist` records the change in the session file; `saveDefault` also writes
   * it to settings.json as the default (the TUI's /model and Ctrl+P cycling pass false: they pick
   * for this session, as in pi 1.6; Ctrl+S in /model's list passes true).
   */
  async setModel(model: AnyModel, source: "set" | "cycle" | "restore" = "set", persist = true, saveDefault = persist): Promise<void> {
    const previous = this._model;
    this._model = model;
    // (1.6 compat) switching to a model with a modelThinkingLevels entry starts it at that level.
    const perModel = source === "restore" ? undefined : (modelThinkingLevel(this.kernel.settings.get(), model.provider, model.id) as ThinkingLevel | undefined);
    const before = this._thinkingLevel;
    this._thinkingLevel = clampThinkingLevel(model, perModel ?? this._thinkingLevel);
    if (persist) {
      try {
        this.sessionManager.appendModelChange(model.provider, model.id);
        if (perModel && this._thinkingLevel !== before) this.sessionManager.appendThinkingLevelChange(this._thinkingLevel);
      } catch {
        /* reported by the store */
      }
    }
    if (saveDefault) this.kernel.settings.update({ defaultProvider: model.provider, defaultModel: model.id });
    this.systemPromptDirty = true;
    await this.emit({ type: "model_select", model, previousModel: previous, source });
  }

  async cycleModel(direction: "forward" | "backward" = "forward"): Promise<{ model: AnyModel; thinkingLevel: ThinkingLevel; isScoped: boolean } | null> {
    const scoped = this.scopedModels.length > 0;
    const candidates = scoped ? this.scopedModels.map((s) => s.model) : await this.models.getAvailable();
    if (candidates.length < 2 && !(candidates.length === 1 && !this._model)) return null;
    const cur = candidates.findIndex((m) => m.provider === this._model?.provider && m.id === this._model?.id);
    const step = direction === "forward" ? 1 : -1;
    const next = candidates[(cur + step + candidates.length) % candidates.length]!;
    await this.setModel(next, "cycle", true, false); // (pi 1.6) cycling picks for this session only
    const scopedLevel = scoped ? this.scopedModels.find((s) => s.model === next)?.thinkingLevel : undefined;
    if (scopedLevel) this.setThinkingLevel(scopedLevel);
    return { model: next, thinkingLevel: this._thinkingLevel, isScoped: scoped };
  }

  /** The levels the current model's definition says it takes (models/thinking.ts). */
  getAvailableThinkingLevels(): ThinkingLevel[] {
    return supportedThinkingLevels(this._model);
  }

  /**
   * Set the thinking level, clamped to the model's levels; a change is recorded in the session
   * file. `persist` also saves the requested level as defaultThinkingLevel in settings.json (pi
   * 1.6: only "set as default" does; Shift+Tab, /thinking and RPC pick for this session).
   */
  setThinkingLevel(level: ThinkingLevel, options: { persist?: boolean } = {}): ThinkingLevel {
    const next = clampThinkingLevel(this._model, level);
    const previous = this._thinkingLevel;
    const changed = next !== this._thinkingLevel;
    this._thinkingLevel = next;
    if (options.persist) this.kernel.settings.update({ defaultThinkingLevel: level });
    if (changed) {
      try {
        this.sessionManager.appendThinkingLevelChange(next);
      } catch {
        /* reported by the store */
      }
      notifyThinkingLevel(this.kernel, next, previous); // (pi 1.6 thinking_level_select)
    }
    return next;
  }

  cycleThinkingLevel(): ThinkingLevel | null {
    const levels = this.getAvailableThinkingLevels();
    if (levels.length < 2) return null;
    const i = levels.indexOf(this._thinkingLevel);
    return this.setThinkingLevel(levels[(i + 1) % levels.length]!);
  }

  /**
   * Load the current model's provider module ahead of the first prompt. Modes call this once
   * they are idle (RPC after its first response), so the module's load is off the first
   * request's path. Failures are ignored here: the request reports them.
   */
  warmUp(): void {
    const model = this._model;
    if (!model || this.kernel.models.get(model.provider)?.streamSimple) return;
    void this.kernel.providers.get(model.api)?.preload?.().catch(() => undefined);
  }

  /**
   * One completion from the current model through the same provider path as a turn (key,
   * headers, before_provider_request), without tools. For summaries and other side requests.
   */
  completeOnce(systemPrompt: string, messages: Message[], signal?: AbortSignal, opts: { maxTokens?: number } = {}): Promise<AssistantMessage> {
    return this.gateway.completeOnce(systemPrompt, messages, signal, opts);
  }

  // ---- user bash ------------------------------------------------------------------------------

  private bashAbort: AbortController | undefined;

  /**
   * Run a command for the user (`!cmd`, `!!cmd`, RPC `bash`). The `user_bash` hook may supply
   * the result or the operations. The output becomes a bashExecution message (kept out of the
   * model's context with excludeFromContext); while a run is streaming it is added once idle.
   */
  async executeBash(command: string, opts: { excludeFromContext?: boolean; onData?: (chunk: string) => void } = {}): Promise<BashResult> {
    this.assertAlive();
    const excludeFromContext = !!opts.excludeFromContext;
    let result: BashResult | undefined;
    let operations: unknown;
    if (this.kernel.hooks.user_bash.isUsed()) {
      const r = await this.kernel.hooks.user_bash.promise({ type: "user_bash", command, excludeFromContext, cwd: this.cwd });
      if (r?.result) result = r.result as BashResult;
      else if (r?.operations) operations = r.operations;
    }
    if (!result) {
      const exec = this.kernel.service("bash-executor");
      if (!exec) throw new Error("no bash executor is installed (the tools plugin provides it)");
      const ac = new AbortController();
      this.bashAbort = ac;
      try {
        result = await exec(command, { cwd: this.cwd, signal: ac.signal, operations, onData: opts.onData });
      } finally {
        if (this.bashAbort === ac) this.bashAbort = undefined;
      }
    }
    const msg: AgentMessage = {
      role: "bashExecution",
      command,
      output: result.output,
      exitCode: result.exitCode,
      cancelled: result.cancelled,
      truncated: result.truncated,
      fullOutputPath: result.fullOutputPath,
      timestamp: Date.now(),
      ...(excludeFromContext ? { excludeFromContext: true } : {}),
    };
    await this.run.addBashMessage(msg);
    return result;
  }

  abortBash(): void {
    this.bashAbort?.abort();
  }


  // ---- stats (session-stats.ts) ---------------------------------------------------------------

  setSessionName(name: string): void {
    const n = name.trim();
    if (!n) throw new Error("session name must not be empty");
    this.sessionManager.appendSessionInfo(n);
    notifySessionInfo(this.kernel, n); // (pi 1.6 session_info_changed)
  }
  getLastAssistantText(): string | null {
    return lastAssistantText(this.transcript);
  }
  getSessionStats(): SessionStats {
    return sessionStats(this.transcript, this.sessionManager, this._model);
  }
  getContextUsage(): ContextUsage {
    return contextUsage(this.transcript, this._model);
  }

  /**
   * Replace the transcript from the store (after compaction or tree navigation). The array is
   * changed in place, so a run in progress continues from the new context.
   */
  reloadFromStore(): void {
    const messages = this.sessionManager.buildSessionContext().messages;
    this.transcript.splice(0, this.transcript.length, ...messages);
  }

  private assertAlive(): void {
    if (this.disposed) throw new Error("this session was disposed");
  }

  /** Abort, emit session_shutdown, stop listening. `extra` fields (targetSessionFile) go into the event. */
  async dispose(reason: "exit" | "switch" | "reload" | "dispose" = "dispose", extra: { targetSessionFile?: string } = {}): Promise<void> {
    if (this.disposed) return;
    await this.abort();
    this.disposed = true;
    this.offToolsChange();
    (this.sessionManager as { flushPendingWrites?: () => boolean }).flushPendingWrites?.();
    if (this.kernel.hooks.session_shutdown.isUsed()) {
      await this.kernel.hooks.session_shutdown.promise({ type: "session_shutdown", reason, ...extra } as { type: "session_shutdown"; reason: typeof reason });
    }
    this.events.clear();
  }

  // ---- tree operations -------------------------------------------------------------------------

  private branchSummaryAbort: AbortController | undefined;

  /**
   * Move to another entry of this session's tree, in the same file. A user (or custom) message
   * as target puts the leaf on its parent and returns its text for the editor; any other entry
   * becomes the leaf. With `summarize` the branch left behind is summarised into a
   * branch_summary entry at the new position. session_before_tree may cancel or supply the
   * summary; session_tree reports the move. Refused while a run is active.
   */
  async navigateTree(targetId: string, opts: NavigateTreeOptions = {}): Promise<NavigateTreeResult> {
    this.assertAlive();
    if (this.run.isRunning) throw new Error("navigateTree: the agent is running; abort it or wait until it settles");
    if (this.branchSummaryAbort) throw new Error("navigateTree: a tree navigation is already in progress");
    const ac = new AbortController();
    this.branchSummaryAbort = ac;
    try {
      return await navigateTree(this, targetId, opts, ac.signal);
    } finally {
      this.branchSummaryAbort = undefined;
    }
  }

  /** Stop a branch summary in progress (navigateTree then resolves {cancelled: true, aborted: true}). */
  abortBranchSummary(): void {
    this.branchSummaryAbort?.abort();
  }

  /** The user messages a fork can start from (all branches), with their text. */
  getUserMessagesForForking(): Array<{ entryId: string; text: string }> {
    return getUserMessagesForForking(asTreeStore(this.sessionManager, "getUserMessagesForForking"));
  }

  /** Set (or with undefined / "" clear) the label of an entry. */
  setLabel(entryId: string, label: string | undefined): void {
    const store = asTreeStore(this.sessionManager, "setLabel");
    if (!store.getEntry(entryId)) throw new Error(`setLabel: no entry "${entryId}" in this session`);
    store.appendLabelChange(entryId, label?.trim() || undefined);
  }

  /** A copy of `value` with every credential this session used replaced (for anything stored or exported). */
  redactSecrets<T>(value: T): T {
    return this.secrets.redact(value);
  }

  // ---- compaction (the compaction plugin provides the "compactor") -------------------------------

  private compactionAbort: AbortController | undefined;

  /**
   * Compact the context now (/compact, RPC compact, ctx.compact()). A running turn is aborted
   * first (and saved). Throws when there is nothing to compact, a handler cancelled, or the
   * summary failed; compaction_start / compaction_end {reason: "manual"} are emitted either way.
   */
  async compact(customInstructions?: string): Promise<CompactionResult> {
    this.assertAlive();
    if (!this.kernel.service("compactor")) throw new Error("compaction is not available: the compaction plugin is not installed");
    await this.abort();
    return this.runCompaction("manual", { customInstructions });
  }

  /** Stop a compaction in progress (manual or automatic). */
  abortCompaction(): void {
    this.compactionAbort?.abort();
  }

  /** Run the compactor once (manual, threshold from after_turn, overflow from provider_error). */
  async runCompaction(reason: CompactionReason, opts: { customInstructions?: string; willRetry?: boolean } = {}): Promise<CompactionResult> {
    const compactor = this.kernel.service("compactor");
    if (!compactor) throw new Error("compaction is not available: the compaction plugin is not installed");
    if (this.isCompacting) throw new Error("a compaction is already running");
    const ac = new AbortController();
    this.compactionAbort = ac;
    this.isCompacting = true;
    try {
      return await compactor.compact(this, { reason, customInstructions: opts.customInstructions, willRetry: opts.willRetry, signal: ac.signal });
    } finally {
      this.isCompacting = false;
      if (this.compactionAbort === ac) this.compactionAbort = undefined;
    }
  }
}
