/**
 * AgentSession: one conversation. It owns the transcript, the queues, the model and thinking
 * level, runs the agent loop and broadcasts every event once: first through the kernel hook of
 * that name (plugins and extensions), then to `subscribe()` listeners (modes, SDK hosts) — one
 * path, in one order.
 */
import { applyProviderEvents } from "./provider-events.js"; // (e18)
import { notifySessionInfo, notifyThinkingLevel } from "./pi16-notify.js"; // (e18)
import { beforeCustomRun, beforeSettle, withSections } from "./pi16-run.js"; // (e18)
import type { Kernel, AssistantStream } from "../kernel.js";
import { runAgentLoop, type AgentLoopConfig, type LlmContext } from "../agent/loop.js";
import { convertToLlm, createCustomMessage, createUserMessage, messageText } from "../agent/messages.js";
import type {
  AgentMessage,
  AgentSessionEvent,
  AgentToolResult,
  AnyModel,
  AssistantMessage,
  CustomMessage,
  ImageContent,
  ThinkingLevel,
  ToolCall,
  ToolDefinition,
} from "../types.js";
import { THINKING_LEVELS } from "../types.js";
import { buildDefaultSystemPrompt, type SystemPromptBuilder } from "./system-prompt.js";
import type { SessionStore } from "./store.js";
import type { ModelSource } from "./model-source.js";
// (added for sessions: tree operations, compaction, secret redaction)
import { asTreeStore } from "./store.js";
import { SecretSet } from "./redact.js";
import type { CompactionReason, CompactionResult, Compactor } from "./compaction-service.js";
import { getUserMessagesForForking, navigateTree, type NavigateTreeOptions, type NavigateTreeResult } from "./tree.js";
import type { Message } from "../types.js";

export type Disposition = "started" | "queued" | "handled";
export type QueueMode = "all" | "one-at-a-time";
export type SessionMode = "print" | "json" | "rpc" | "tui" | "sdk";

export interface PromptOptions {
  images?: ImageContent[];
  streamingBehavior?: "steer" | "followUp";
  source?: "interactive" | "rpc" | "extension" | "print" | "sdk";
  /** Expand /template and /skill:name (default true). */
  expandPromptTemplates?: boolean;
  /** Called after preflight, before the run starts (before agent_start) — RPC writes its response here. */
  onAccepted?: (disposition: Disposition) => void | Promise<void>;
}

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

export type SessionListener = (event: AgentSessionEvent) => void | Promise<void>;

export interface AgentSessionOptions {
  kernel: Kernel;
  sessionManager: SessionStore;
  models: ModelSource;
  cwd: string;
  mode: SessionMode;
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

const RETRYABLE =
  /overloaded|rate.?limit|too many requests|\b429\b|\b500\b|\b502\b|\b503\b|\b504\b|service.?unavailable|server.?error|internal.?error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|terminated|retry delay|ECONNRESET|socket hang up|in JSON at position|Unexpected (token|end of JSON)|is not valid JSON|could not parse/i;
const OVERFLOW = /context.?(length|window)|too many tokens|prompt is too long|maximum context|exceeds the context|input is too long|token limit/i;

/**
 * Transient provider failures worth another attempt: rate limits, 5xx, dropped connections,
 * and a garbled stream (a response whose SSE did not parse). Context overflow is never retried.
 */
export function isRetryableError(message: string | undefined): boolean {
  if (!message) return false;
  return RETRYABLE.test(message) && !OVERFLOW.test(message);
}
export function isContextOverflow(message: string | undefined): boolean {
  return !!message && OVERFLOW.test(message);
}

export class AgentSession {
  readonly kernel: Kernel;
  readonly cwd: string;
  readonly mode: SessionMode;
  sessionManager: SessionStore;
  readonly models: ModelSource;

  private transcript: AgentMessage[] = [];
  private listeners = new Set<SessionListener>();
  private steeringQueue: AgentMessage[] = [];
  private followUpQueue: AgentMessage[] = [];
  private nextTurnMessages: CustomMessage[] = [];
  private _model: AnyModel | undefined;
  private _thinkingLevel: ThinkingLevel;
  private _activeTools: string[];
  private abortController: AbortController | undefined;
  private running = false;
  private runDone: Promise<void> = Promise.resolve();
  private retryAbort: AbortController | undefined;
  private disposed = false;
  private readonly offToolsChange: () => void;
  private turnSystemPrompt: string | undefined;
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
  contextFactory: () => Record<string, unknown>;

  constructor(opts: AgentSessionOptions) {
    this.kernel = opts.kernel;
    this.cwd = opts.cwd;
    this.mode = opts.mode;
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
    if (this._model) this._thinkingLevel = this.clampThinking(this._thinkingLevel);
    this.contextFactory = () => ({ cwd: this.cwd, hasUI: false, mode: this.mode, session: this, sessionManager: this.sessionManager, model: this._model });
    this.offToolsChange = this.kernel.tools.onChange(() => (this.systemPromptDirty = true));
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
    return this.running;
  }
  /** The abort signal of the run in progress (undefined when idle). */
  get signal(): AbortSignal | undefined {
    return this.abortController?.signal;
  }
  get isRetrying(): boolean {
    return this.retryAbort !== undefined;
  }
  get pendingMessageCount(): number {
    return this.steeringQueue.length + this.followUpQueue.length;
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
    if (this.turnSystemPrompt !== undefined) return this.turnSystemPrompt;
    if (this.systemPromptDirty || this.baseSystemPrompt === undefined) {
      const builder = this.kernel.service<SystemPromptBuilder>("system-prompt") ?? buildDefaultSystemPrompt;
      this.baseSystemPrompt = await builder({
        cwd: this.cwd,
        tools: this.getActiveTools(),
        customPrompt: this.customSystemPrompt,
        appendPrompt: this.appendSystemPrompt,
      });
      this.systemPromptDirty = false;
    }
    return this.baseSystemPrompt;
  }
  invalidateSystemPrompt(): void {
    this.systemPromptDirty = true;
  }

  // ---- events ---------------------------------------------------------------------------------

  subscribe(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Broadcast one event: the kernel hook first, then subscribers, each awaited in order. */
  async emit(event: AgentSessionEvent): Promise<void> {
    const hook = (this.kernel.hooks as unknown as Record<string, { promise(e: unknown): Promise<unknown>; isUsed(): boolean }>)[event.type];
    if (hook && hook.isUsed()) await hook.promise(event);
    if (event.type === "message_end") this.persist(event.message);
    for (const l of this.listeners) {
      try {
        await l(event);
      } catch (error) {
        this.kernel.diagnostics.report({ level: "error", source: "subscriber", hook: event.type, message: "session listener failed", error });
      }
    }
  }

  private persist(message: AgentMessage): void {
    const role = (message as { role: string }).role;
    if (role === "user" || role === "assistant" || role === "toolResult" || role === "custom" || role === "bashExecution") {
      try {
        this.sessionManager.appendMessage(this.secrets.redact(message)); // (changed for sessions: credentials are never stored)
      } catch (error) {
        this.kernel.diagnostics.report({ level: "error", source: "session", message: "could not save a message", error });
      }
    }
  }

  private async emitQueue(): Promise<void> {
    await this.emit({
      type: "queue_update",
      steering: this.steeringQueue.map((m) => messageText(m)),
      followUp: this.followUpQueue.map((m) => messageText(m)),
    });
  }

  // ---- prompting ------------------------------------------------------------------------------

  /**
   * Submit user input. Resolves when the run (with retries) is settled; `onAccepted` reports the
   * disposition before anything runs. Preflight failures reject before `onAccepted`.
   */
  async prompt(text: string, opts: PromptOptions = {}): Promise<Disposition> {
    this.assertAlive();
    const source = opts.source ?? (this.mode === "rpc" ? "rpc" : this.mode === "tui" ? "interactive" : this.mode === "sdk" ? "sdk" : "print");

    // 1. Extension and plugin slash commands run at once, even while streaming.
    if (text.startsWith("/")) {
      const handled = await this.tryCommand(text);
      if (handled) {
        await opts.onAccepted?.("handled");
        return "handled";
      }
    }

    // 2. The input hook: transform or consume.
    const input = { type: "input" as const, text, images: opts.images, source, ...(this.running && opts.streamingBehavior ? { streamingBehavior: opts.streamingBehavior } : {}) }; // (e18: streamingBehavior)
    if (this.kernel.hooks.input.isUsed()) {
      const r = await this.kernel.hooks.input.promise(input);
      if (r && r.action === "handled") {
        await opts.onAccepted?.("handled");
        return "handled";
      }
    }
    let finalText = input.text;
    const images = input.images;

    // 3. Prompt templates and skills.
    if (opts.expandPromptTemplates !== false && finalText.startsWith("/")) {
      const expand = this.kernel.service<(t: string) => string | Promise<string>>("expand-prompt");
      if (expand) finalText = await expand(finalText);
    }

    // 4. Busy: queue or refuse.
    if (this.running) {
      if (!opts.streamingBehavior) {
        throw new Error("The agent is busy with a run; send this as a steer or follow-up message (streamingBehavior), or wait until it settles");
      }
      if (opts.streamingBehavior === "steer") await this.queueSteer(finalText, images);
      else await this.queueFollowUp(finalText, images);
      await opts.onAccepted?.("queued");
      return "queued";
    }

    // 5. Model and key.
    const model = this._model;
    if (!model) throw new Error(this.noModelMessage());
    const apiKey = await this.models.getApiKey(model);
    if (apiKey === undefined && !this.models.isKeyless(model)) throw new Error(await this.noKeyMessage(model));
    this.secrets.add(apiKey); // (added for sessions: never stored)

    this.running = true;
    let release!: () => void;
    this.runDone = new Promise((r) => (release = r));
    let aborted = false;
    try {
      await this.flushPendingBash();
      // 6. The user message and pending next-turn messages; before_agent_start.
      const prompts: AgentMessage[] = [createUserMessage(finalText, images)];
      const injected = this.nextTurnMessages.splice(0);
      prompts.push(...injected);
      this.turnSystemPrompt = undefined;
      const base = await this.getSystemPrompt();
      if (this.kernel.hooks.before_agent_start.isUsed()) {
        const ev = await this.kernel.hooks.before_agent_start.promise({
          type: "before_agent_start",
          prompt: finalText,
          images,
          systemPrompt: base,
          messages: [],
        });
        if (ev) {
          for (const m of ev.messages ?? []) prompts.push(createCustomMessage(m.customType, m.content, m.display, m.details));
          const sp = withSections(ev.systemPrompt, ev.sections); // (e18: pi 1.6 prompt sections)
          if (sp !== base) this.turnSystemPrompt = sp;
        }
      }
      await opts.onAccepted?.("started");
      aborted = await this.runWithRetries(prompts);
    } finally {
      this.turnSystemPrompt = undefined;
      this.running = false;
      release();
    }
    await this.settle(aborted);
    return "started";
  }

  /** Run the loop; retry retryable provider errors with exponential backoff. Returns whether the run was aborted. */
  private async runWithRetries(prompts: AgentMessage[]): Promise<boolean> {
    const settings = this.kernel.settings.get().retry;
    let attempt = 0;
    let pendingPrompts = prompts;
    let overflowTried = false;
    for (;;) {
      const ac = new AbortController();
      this.abortController = ac;
      let added: AgentMessage[];
      try {
        added = await runAgentLoop(pendingPrompts, this.transcript, await this.loopConfig(), ac.signal);
      } finally {
        this.abortController = undefined;
      }
      const last = [...added].reverse().find((m) => (m as { role: string }).role === "assistant") as AssistantMessage | undefined;
      if (ac.signal.aborted || last?.stopReason === "aborted") {
        if (attempt > 0) await this.emit({ type: "auto_retry_end", success: false, attempt, finalError: "aborted" });
        return true;
      }
      const failed = last?.stopReason === "error";
      // (added for compaction) a context overflow: compact and retry the turn, once.
      if (failed && this.isOwnOverflow(last!)) {
        const next = await this.recoverFromOverflow(last!, overflowTried);
        overflowTried = true;
        if (next === "retry") {
          pendingPrompts = [];
          continue;
        }
        return next === "aborted";
      }
      if (failed && this.autoRetryEnabled && settings.enabled !== false && isRetryableError(last!.errorMessage) && attempt < settings.maxRetries) {
        attempt++;
        const delayMs = Math.min(settings.baseDelayMs * 2 ** (attempt - 1), settings.maxDelayMs ?? 60000);
        await this.emit({ type: "auto_retry_start", attempt, maxAttempts: settings.maxRetries, delayMs, errorMessage: last!.errorMessage ?? "" });
        // Drop the failed message from the context (it stays in the session file).
        const idx = this.transcript.lastIndexOf(last!);
        if (idx >= 0) this.transcript.splice(idx, 1);
        const ok = await this.retryDelay(delayMs);
        if (!ok) {
          await this.emit({ type: "auto_retry_end", success: false, attempt, finalError: "Retry cancelled" });
          return true;
        }
        pendingPrompts = [];
        continue;
      }
      if (attempt > 0) {
        await this.emit(failed ? { type: "auto_retry_end", success: false, attempt, finalError: last?.errorMessage } : { type: "auto_retry_end", success: true, attempt });
      }
      return false;
    }
  }

  private retryDelay(ms: number): Promise<boolean> {
    const ac = new AbortController();
    this.retryAbort = ac;
    return new Promise<boolean>((resolve) => {
      const t = setTimeout(() => done(true), ms);
      const done = (ok: boolean) => {
        clearTimeout(t);
        ac.signal.removeEventListener("abort", onAbort);
        if (this.retryAbort === ac) this.retryAbort = undefined;
        resolve(ok);
      };
      const onAbort = () => done(false);
      ac.signal.addEventListener("abort", onAbort);
    });
  }

  private async settle(aborted: boolean): Promise<void> {
    await this.flushPendingBash();
    // Messages queued after the loop's last poll start a new run.
    if (!aborted && (this.followUpQueue.length || this.steeringQueue.length) && !this.disposed) {
      void this.continueRun();
      return;
    }
    // (e18: pi 1.6 agent_before_settle may append entries, queue a follow-up (cc-hooks' Stop) and ask for one more request)
    const more = await beforeSettle(this.kernel, aborted ? "aborted" : this.lastRunOutcome(), {
      appendCustomEntry: (t, d) => void (this.sessionManager as unknown as { appendCustomEntry(t: string, d?: unknown): string }).appendCustomEntry(t, d),
      addMessage: (m) => this.addMessage(m),
      queueFollowUp: (m) => void this.followUpQueue.push(m),
    });
    if (more && !this.disposed) {
      await this.continueRun(); // (awaited: the caller's prompt() resolves after the extra request)
      return;
    }
    await this.emit({ type: "agent_settled", aborted });
  }

  /** (e18) How the last run ended, from its last assistant message. */
  private lastRunOutcome(): "completed" | "error" {
    for (let i = this.transcript.length - 1; i >= 0; i--) {
      const m = this.transcript[i] as { role: string; stopReason?: string };
      if (m.role === "assistant") return m.stopReason === "error" ? "error" : "completed";
    }
    return "completed";
  }

  /** Run the loop again from the current transcript (queued messages are picked up). */
  private async continueRun(): Promise<void> {
    if (this.running) return;
    this.running = true;
    let release!: () => void;
    this.runDone = new Promise((r) => (release = r));
    let aborted = false;
    try {
      const queued = [...this.steeringQueue.splice(0), ...this.followUpQueue.splice(0)];
      await this.emitQueue();
      aborted = await this.runWithRetries(queued);
    } finally {
      this.running = false;
      release();
    }
    await this.settle(aborted);
  }

  private async loopConfig(): Promise<AgentLoopConfig> {
    const model = this._model!;
    const systemPrompt = this.turnSystemPrompt ?? (await this.getSystemPrompt());
    const hooks = this.kernel.hooks;
    return {
      model,
      systemPrompt,
      tools: this.getActiveTools(),
      toolExecution: "parallel",
      stream: (m, ctx, signal) => this.openStream(m, ctx, signal),
      buildContext: async (messages) => {
        let msgs = messages;
        if (hooks.context.isUsed()) {
          const ev = await hooks.context.promise({ type: "context", messages: structuredClone(messages) });
          if (ev?.messages) msgs = ev.messages;
        }
        if (this.kernel.settings.get().images?.blockImages) msgs = stripImages(msgs);
        return convertToLlm(msgs);
      },
      beforeToolCall: async (call: ToolCall, args) => {
        if (!hooks.tool_call.isUsed()) return undefined;
        return hooks.tool_call.promise({ type: "tool_call", toolCallId: call.id, toolName: call.name, input: args });
      },
      afterToolCall: async (call, args, result, isError) => {
        if (!hooks.tool_result.isUsed()) return { result, isError };
        const ev = await hooks.tool_result.promise({
          type: "tool_result",
          toolCallId: call.id,
          toolName: call.name,
          input: args,
          content: result.content,
          details: result.details,
          isError,
          ...pickToolExtras(result), // (e18: structuredContent, usage)
        });
        const r: AgentToolResult = { content: ev?.content ?? result.content, details: ev?.details ?? result.details, ...pickToolExtras(ev) }; // (e18)
        return { result: r, isError: ev?.isError ?? isError };
      },
      getSteeringMessages: () => this.dequeue(this.steeringQueue, this.steeringMode),
      getFollowUpMessages: () => this.dequeue(this.followUpQueue, this.followUpMode),
      emit: async (e) => {
        await this.emit(e);
        if (e.type === "turn_end") await this.checkCompactionAfterTurn(e.message); // (added for compaction)
      },
      toolContext: () => this.contextFactory(),
    };
  }

  private dequeue(queue: AgentMessage[], mode: QueueMode): AgentMessage[] {
    if (!queue.length) return [];
    const out = mode === "all" ? queue.splice(0) : queue.splice(0, 1);
    void this.emitQueue();
    return out;
  }

  private async openStream(model: AnyModel, context: LlmContext, signal: AbortSignal, extra?: Record<string, unknown>): Promise<AssistantStream> {
    const custom = this.kernel.models.get(model.provider)?.streamSimple;
    const provider = this.kernel.providers.get(model.api);
    const streamFn = custom ?? provider?.stream;
    if (!streamFn) throw new Error(`No provider can stream the API "${model.api}" (model ${model.provider}/${model.id}); is its provider plugin installed?`);
    let apiKey: string | undefined;
    let headers: Record<string, string> | undefined;
    if (this.models.getApiKeyAndHeaders) {
      const r = await this.models.getApiKeyAndHeaders(model);
      if (!r.ok) throw new Error(r.error ?? `cannot resolve the API key for provider "${model.provider}"`);
      apiKey = r.apiKey;
      headers = r.headers;
    } else {
      apiKey = await this.models.getApiKey(model);
    }
    // (added for sessions) what goes to the provider as a credential never goes to the file
    this.secrets.add(apiKey);
    for (const v of Object.values(headers ?? {})) this.secrets.add(v);
    const s = this.kernel.settings.get();
    const hooks = this.kernel.hooks;
    const level = this._thinkingLevel;
    const options: Record<string, unknown> = {
      apiKey,
      signal,
      sessionId: this.sessionManager.getSessionId(),
      reasoning: level !== "off" && model.reasoning ? level : undefined,
      thinkingBudgets: s.thinkingBudgets,
      timeoutMs: s.retry.provider?.timeoutMs,
      maxRetries: s.retry.provider?.maxRetries,
      maxRetryDelayMs: s.retry.provider?.maxRetryDelayMs,
      headers,
    };
    if (hooks.before_provider_request.isUsed()) {
      options.onPayload = async (payload: unknown) => {
        const ev = await hooks.before_provider_request.promise({ type: "before_provider_request", payload, model });
        return ev?.payload !== payload ? ev?.payload : undefined;
      };
    }
    if (extra) Object.assign(options, extra); // (added for compaction: completeOnce)
    await applyProviderEvents(hooks, model, options); // (e18: pi 1.6 before_provider_headers / after_provider_response)
    for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];
    return streamFn(model, context as never, options as never);
  }

  private async tryCommand(text: string): Promise<boolean> {
    const space = text.indexOf(" ");
    const name = (space === -1 ? text.slice(1) : text.slice(1, space)).trim();
    const cmd = this.kernel.commands.get(name);
    if (!cmd || cmd.source === "prompt" || cmd.source === "skill") return false;
    const args = space === -1 ? "" : text.slice(space + 1).trim();
    try {
      await cmd.handler(args, this.contextFactory());
    } catch (error) {
      this.kernel.diagnostics.report({ level: "error", source: this.kernel.commands.entry(name)?.source ?? name, hook: `/${name}`, message: "command failed", error });
    }
    return true;
  }

  // ---- queues ---------------------------------------------------------------------------------

  async steer(text: string, images?: ImageContent[]): Promise<Disposition> {
    return this.enqueue("steer", text, images);
  }
  async followUp(text: string, images?: ImageContent[]): Promise<Disposition> {
    return this.enqueue("followUp", text, images);
  }
  private async enqueue(kind: "steer" | "followUp", text: string, images?: ImageContent[]): Promise<Disposition> {
    this.assertAlive();
    if (text.startsWith("/") && this.kernel.commands.get(text.slice(1).split(" ")[0]!)?.source === "extension") {
      throw new Error(`Extension commands cannot be queued; send "${text.split(" ")[0]}" as a prompt`);
    }
    let finalText = text;
    const expand = this.kernel.service<(t: string) => string | Promise<string>>("expand-prompt");
    if (expand && finalText.startsWith("/")) finalText = await expand(finalText);
    if (!this.running) return this.prompt(finalText, { images, expandPromptTemplates: false });
    if (kind === "steer") await this.queueSteer(finalText, images);
    else await this.queueFollowUp(finalText, images);
    return "queued";
  }
  private async queueSteer(text: string, images?: ImageContent[]) {
    this.steeringQueue.push(createUserMessage(text, images));
    await this.emitQueue();
  }
  private async queueFollowUp(text: string, images?: ImageContent[]) {
    this.followUpQueue.push(createUserMessage(text, images));
    await this.emitQueue();
  }
  getQueue(): { steering: string[]; followUp: string[] } {
    return { steering: this.steeringQueue.map((m) => messageText(m)), followUp: this.followUpQueue.map((m) => messageText(m)) };
  }
  async clearQueue(): Promise<{ steering: string[]; followUp: string[] }> {
    const removed = this.getQueue();
    this.steeringQueue = [];
    this.followUpQueue = [];
    await this.emitQueue();
    return removed;
  }

  /** Custom message from an extension (sendMessage). */
  async sendCustomMessage(
    msg: { customType: string; content: CustomMessage["content"]; display?: boolean; details?: unknown },
    opts: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" } = {},
  ): Promise<void> {
    const m = createCustomMessage(msg.customType, msg.content, msg.display ?? true, msg.details);
    if (opts.deliverAs === "nextTurn") {
      this.nextTurnMessages.push(m);
      return;
    }
    if (this.running) {
      if (opts.deliverAs === "followUp") this.followUpQueue.push(m);
      else this.steeringQueue.push(m);
      await this.emitQueue();
      return;
    }
    if (opts.triggerTurn) {
      // (e18: pi 1.6 before_agent_start with messageType "custom")
      const pre = await beforeCustomRun(this.kernel, m as CustomMessage, await this.getSystemPrompt());
      this.followUpQueue.push(m, ...pre.messages);
      this.turnSystemPrompt = pre.systemPrompt;
      try {
        await this.continueRun();
      } finally {
        this.turnSystemPrompt = undefined;
      }
      return;
    }
    await this.addMessage(m);
  }

  // ---- abort ----------------------------------------------------------------------------------

  /** Abort the current run (and a pending retry); resolves once the session is idle. */
  async abort(): Promise<void> {
    this.retryAbort?.abort();
    this.abortController?.abort();
    this.compactionAbort?.abort(); // (added for compaction) a compaction inside the run stops too
    await this.runDone;
  }
  abortRetry(): void {
    this.retryAbort?.abort();
  }
  /** Resolves when no run is active. */
  async waitForIdle(): Promise<void> {
    while (this.running) await this.runDone;
  }

  // ---- model and thinking ---------------------------------------------------------------------

  async setModel(model: AnyModel, source: "set" | "cycle" | "restore" = "set", persist = true): Promise<void> {
    const previous = this._model;
    this._model = model;
    this._thinkingLevel = this.clampThinking(this._thinkingLevel);
    if (persist) {
      try {
        this.sessionManager.appendModelChange(model.provider, model.id);
      } catch {
        /* reported by the store */
      }
      this.kernel.settings.update({ defaultProvider: model.provider, defaultModel: model.id });
    }
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
    await this.setModel(next, "cycle");
    const scopedLevel = scoped ? this.scopedModels.find((s) => s.model === next)?.thinkingLevel : undefined;
    if (scopedLevel) this.setThinkingLevel(scopedLevel);
    return { model: next, thinkingLevel: this._thinkingLevel, isScoped: scoped };
  }

  getAvailableThinkingLevels(): ThinkingLevel[] {
    const m = this._model;
    if (!m || !m.reasoning) return ["off"];
    const xhigh = /gpt-5\.[2-9]|opus-4-[6-9]/.test(m.id) || !!(m as { thinkingLevelMap?: Record<string, unknown> }).thinkingLevelMap?.xhigh;
    return THINKING_LEVELS.filter((l) => l !== "xhigh" || xhigh);
  }

  private clampThinking(level: ThinkingLevel): ThinkingLevel {
    const levels = this.getAvailableThinkingLevels();
    if (levels.includes(level)) return level;
    if (levels.length === 1) return levels[0]!;
    return level === "xhigh" ? "high" : levels[levels.length - 1]!;
  }

  setThinkingLevel(level: ThinkingLevel, persist = true): ThinkingLevel {
    const next = this.clampThinking(level);
    const previous = this._thinkingLevel; // (e18)
    const changed = next !== this._thinkingLevel;
    this._thinkingLevel = next;
    if (persist && changed) {
      try {
        this.sessionManager.appendThinkingLevelChange(next);
      } catch {
        /* reported by the store */
      }
      this.kernel.settings.update({ defaultThinkingLevel: next });
    }
    if (changed) notifyThinkingLevel(this.kernel, next, previous); // (e18: pi 1.6 thinking_level_select)
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

  // ---- user bash ------------------------------------------------------------------------------

  private bashAbort: AbortController | undefined;
  private pendingBash: AgentMessage[] = [];

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
      const exec = this.kernel.service<BashExecutor>("bash-executor");
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
    if (this.running) this.pendingBash.push(msg);
    else await this.addMessage(msg);
    return result;
  }

  abortBash(): void {
    this.bashAbort?.abort();
  }

  /** Append a message to the transcript outside a run (persisted, events emitted). */
  private async addMessage(m: AgentMessage): Promise<void> {
    this.transcript.push(m);
    await this.emit({ type: "message_start", message: m });
    await this.emit({ type: "message_end", message: m });
  }

  private async flushPendingBash(): Promise<void> {
    while (this.pendingBash.length) await this.addMessage(this.pendingBash.shift()!);
  }

  // ---- misc -----------------------------------------------------------------------------------

  setSessionName(name: string): void {
    const n = name.trim();
    if (!n) throw new Error("session name must not be empty");
    this.sessionManager.appendSessionInfo(n);
    notifySessionInfo(this.kernel, n); // (e18: pi 1.6 session_info_changed)
  }

  getLastAssistantText(): string | null {
    for (let i = this.transcript.length - 1; i >= 0; i--) {
      const m = this.transcript[i]!;
      if ((m as { role: string }).role === "assistant") {
        const text = messageText(m);
        return text || null;
      }
    }
    return null;
  }

  /**
   * Message counts of the current context; tokens and cost of every answer in the session
   * (all branches, also those compacted away: what the session has used). (changed for sessions)
   */
  getSessionStats() {
    let userMessages = 0, assistantMessages = 0, toolCalls = 0, toolResults = 0;
    const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    let cost = 0;
    for (const m of this.transcript) {
      const role = (m as { role: string }).role;
      if (role === "user") userMessages++;
      else if (role === "toolResult") toolResults++;
      else if (role === "assistant") {
        assistantMessages++;
        toolCalls += (m as AssistantMessage).content.filter((b) => b.type === "toolCall").length;
      }
    }
    const store = this.sessionManager as Partial<import("./store.js").TreeSessionStore>;
    const answers: AssistantMessage[] =
      typeof store.getEntries === "function"
        ? store.getEntries().flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message as AssistantMessage] : []))
        : (this.transcript.filter((m) => (m as { role: string }).role === "assistant") as AssistantMessage[]);
    for (const a of answers) {
      tokens.input += a.usage?.input ?? 0;
      tokens.output += a.usage?.output ?? 0;
      tokens.cacheRead += a.usage?.cacheRead ?? 0;
      tokens.cacheWrite += a.usage?.cacheWrite ?? 0;
      cost += a.usage?.cost?.total ?? 0;
    }
    tokens.total = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;
    return {
      sessionFile: this.sessionFile,
      sessionId: this.sessionId,
      userMessages,
      assistantMessages,
      toolCalls,
      toolResults,
      totalMessages: this.transcript.length,
      tokens,
      cost,
      contextUsage: this.getContextUsage(),
    };
  }

  /** Context use from the last assistant usage (tokens, window, percent). */
  getContextUsage(): { tokens: number | null; contextWindow: number; percent: number | null } {
    const window = this._model?.contextWindow ?? 0;
    for (let i = this.transcript.length - 1; i >= 0; i--) {
      const m = this.transcript[i] as AssistantMessage;
      if (m.role === "assistant" && m.usage && m.stopReason !== "error" && m.stopReason !== "aborted") {
        const u = m.usage;
        const tokens = u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
        return { tokens, contextWindow: window, percent: window ? (tokens / window) * 100 : null };
      }
    }
    return { tokens: null, contextWindow: window, percent: null };
  }

  /**
   * Replace the transcript from the store (after compaction or tree navigation). The array is
   * changed in place, so a run in progress continues from the new context. (changed for compaction)
   */
  reloadFromStore(): void {
    const messages = this.sessionManager.buildSessionContext().messages;
    this.transcript.splice(0, this.transcript.length, ...messages);
  }

  private noModelMessage(): string {
    const dir = this.kernel.agentDir;
    return (
      "No model is selected. Set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment, " +
      `or ${dir}/auth.json) or configure a provider in ${dir}/models.json, then choose a model with ` +
      `--model <provider/id> (see --list-models)${this.mode === "tui" ? " or /model" : ""}, or set defaultProvider/defaultModel in ${dir}/settings.json`
    );
  }
  private async noKeyMessage(model: AnyModel): Promise<string> {
    const env = (await this.models.envVarNames?.(model.provider)) ?? [];
    const envHint = env.length ? `set ${env.join(" or ")}, ` : "";
    return (
      `No API key for provider "${model.provider}" (model ${model.id}). To set one: ${envHint}pass --api-key <key>, ` +
      `or add {"${model.provider}": {"type": "api_key", "key": "..."}} to ${this.kernel.agentDir}/auth.json`
    );
  }

  private assertAlive(): void {
    if (this.disposed) throw new Error("this session was disposed");
  }

  /** Abort, emit session_shutdown, stop listening. `extra` fields (targetSessionFile) go into the event. (changed for sessions) */
  async dispose(reason: "exit" | "switch" | "reload" | "dispose" = "dispose", extra: { targetSessionFile?: string } = {}): Promise<void> {
    if (this.disposed) return;
    await this.abort();
    this.disposed = true;
    this.offToolsChange();
    (this.sessionManager as { flushPendingWrites?: () => boolean }).flushPendingWrites?.();
    if (this.kernel.hooks.session_shutdown.isUsed()) {
      await this.kernel.hooks.session_shutdown.promise({ type: "session_shutdown", reason, ...extra } as { type: "session_shutdown"; reason: typeof reason });
    }
    this.listeners.clear();
  }
  get isDisposed(): boolean {
    return this.disposed;
  }

  // ---- (added for sessions) tree operations ----------------------------------------------------

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
    if (this.running) throw new Error("navigateTree: the agent is running; abort it or wait until it settles");
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
  private readonly secrets = new SecretSet();

  // ---- (added for compaction) ------------------------------------------------------------------

  private compactionAbort: AbortController | undefined;

  private compactor(): Compactor | undefined {
    return this.kernel.service<Compactor>("compactor");
  }

  /**
   * Compact the context now (/compact, RPC compact, ctx.compact()). A running turn is aborted
   * first (and saved). Throws when there is nothing to compact, a handler cancelled, or the
   * summary failed; compaction_start / compaction_end {reason: "manual"} are emitted either way.
   */
  async compact(customInstructions?: string): Promise<CompactionResult> {
    this.assertAlive();
    if (!this.compactor()) throw new Error("compaction is not available: the compaction plugin is not installed");
    await this.abort();
    return this.runCompaction("manual", { customInstructions });
  }

  /** Stop a compaction in progress (manual or automatic). */
  abortCompaction(): void {
    this.compactionAbort?.abort();
  }

  private async runCompaction(reason: CompactionReason, opts: { customInstructions?: string; willRetry?: boolean }): Promise<CompactionResult> {
    const compactor = this.compactor();
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

  /** After each turn (mid-run too): compact when the context is over the threshold. Never throws. */
  private async checkCompactionAfterTurn(message: AgentMessage): Promise<void> {
    if (!this.autoCompactionEnabled || this.disposed || this.isCompacting) return;
    const compactor = this.compactor();
    if (!compactor || (message as { role: string }).role !== "assistant") return;
    const a = message as AssistantMessage;
    if (a.stopReason === "aborted" || this.abortController?.signal.aborted) return;
    if (a.stopReason === "error" && this.isOwnOverflow(a)) return; // handled after the loop
    try {
      if (!compactor.needsCompaction(this, a)) return;
      await this.runCompaction("threshold", {});
    } catch (error) {
      // compaction_end carried the error; keep the run going on the uncompacted context
      this.kernel.diagnostics.report({ level: "warning", source: "compaction", message: "automatic compaction failed", error });
    }
  }

  /** A context-overflow error from the current model (one from another model says nothing about this one). */
  private isOwnOverflow(a: AssistantMessage): boolean {
    const m = this._model;
    return !!m && a.provider === m.provider && a.model === m.id && isContextOverflow(a.errorMessage);
  }

  /** Compact after a context overflow: "retry" the turn, "stop" (the error stands), or "aborted" (abort() during the compaction). */
  private async recoverFromOverflow(failed: AssistantMessage, alreadyTried: boolean): Promise<"retry" | "stop" | "aborted"> {
    if (!this.autoCompactionEnabled || !this.compactor()) return "stop";
    if (alreadyTried) {
      await this.emit({
        type: "compaction_end",
        reason: "overflow",
        aborted: false,
        willRetry: false,
        errorMessage: "The context is still too long after one compaction and retry; shorten the context or pick a model with a larger window",
      });
      return "stop";
    }
    const dropFailed = () => {
      const last = this.transcript[this.transcript.length - 1];
      if (last === failed || ((last as AssistantMessage | undefined)?.role === "assistant" && (last as AssistantMessage).stopReason === "error")) this.transcript.pop();
    };
    dropFailed();
    try {
      await this.runCompaction("overflow", { willRetry: true });
    } catch (error) {
      // A cancelled compaction (abort(), abortCompaction(), a handler) ends the run as aborted.
      if (/cancelled/i.test(error instanceof Error ? error.message : "")) return "aborted";
      this.kernel.diagnostics.report({ level: "warning", source: "compaction", message: "compaction after a context overflow failed", error });
      return "stop";
    }
    // The reloaded context ends with the failed answer again (it stays in the file, not in the retry).
    dropFailed();
    return this.disposed ? "aborted" : "retry";
  }

  /**
   * One completion from the current model through the same provider path as a turn (key,
   * headers, before_provider_request), without tools. For summaries and other side requests.
   * Resolves with the final message (stopReason "error" / "aborted" included); throws only when
   * no model is selected or no provider can serve it.
   */
  async completeOnce(systemPrompt: string, messages: Message[], signal?: AbortSignal, opts: { maxTokens?: number } = {}): Promise<AssistantMessage> {
    const model = this._model;
    if (!model) throw new Error(this.noModelMessage());
    const ac = signal ?? new AbortController().signal;
    const stream = await this.openStream(model, { systemPrompt, messages, tools: [] }, ac, opts.maxTokens ? { maxTokens: opts.maxTokens } : undefined);
    for await (const ev of stream) {
      if (ev.type === "done" || ev.type === "error") break;
    }
    return stream.result();
  }
}

function stripImages(messages: AgentMessage[]): AgentMessage[] {
  return messages.map((m) => {
    const c = (m as { content?: unknown }).content;
    if (!Array.isArray(c) || !c.some((b) => b?.type === "image")) return m;
    return { ...m, content: c.map((b) => (b?.type === "image" ? { type: "text", text: "[image omitted: images.blockImages is on]" } : b)) } as AgentMessage;
  });
}

/** (e18) The pi 1.6 fields of a tool result that the tool_result hook passes through. */
function pickToolExtras(r: unknown): { structuredContent?: unknown; usage?: unknown; terminate?: true } {
  const o = (r ?? {}) as { structuredContent?: unknown; usage?: unknown; terminate?: unknown };
  return {
    ...(o.structuredContent !== undefined ? { structuredContent: o.structuredContent } : {}),
    ...(o.usage !== undefined ? { usage: o.usage } : {}),
    ...(o.terminate === true ? { terminate: true as const } : {}),
  };
}
