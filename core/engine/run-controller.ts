/**
 * The run controller of a session: a prompt from input to settled. Slash commands, the input
 * hook, templates, the steering / follow-up / next-turn queues, the agent loop with its hooks
 * (context, tool_call, tool_result), the provider_error answers (retry after a delay, compact
 * and retry), after_turn, abort and settle. It owns the run state; the session facade owns the
 * transcript, the model and the events it emits through.
 */
import { runAgentLoop, type AgentLoopConfig } from "./agent/loop.js";
import { convertToLlm, createCustomMessage, createUserMessage, messageText } from "./agent/messages.js";
import { systemMessageUpdate } from "./system-message.js";
import type { AgentMessage, AgentToolResult, AssistantMessage, CustomMessage, ImageContent, ToolCall } from "../kernel/types.js";
import type { SessionHandle } from "../kernel/contracts.js";
import { fileGuardActive } from "../kernel/file-guard.js";
import { precompileHooks } from "../kernel/hooks.js";
import { TurnBoundaries } from "./turn-boundary.js";
import { beforeCustomRun, beforeSettle, contextWithSystem, withSections } from "./run-hooks.js";
import { routeReason } from "./virtual-route.js";

export type Disposition = "started" | "queued" | "handled";
export type QueueMode = "all" | "one-at-a-time";
export type InputSource = "interactive" | "rpc" | "extension" | "print" | "sdk";

export interface PromptOptions {
  images?: ImageContent[];
  streamingBehavior?: "steer" | "followUp";
  source?: InputSource;
  /** Expand /template and /skill:name (default true). */
  expandPromptTemplates?: boolean;
  /** Called after preflight, before the run starts (before agent_start) — RPC writes its response here. */
  onAccepted?: (disposition: Disposition) => void | Promise<void>;
}

export class RunController {
  private steeringQueue: AgentMessage[] = [];
  private followUpQueue: AgentMessage[] = [];
  private nextTurnMessages: CustomMessage[] = [];
  private abortController: AbortController | undefined;
  private retryAbort: AbortController | undefined;
  private running = false;
  private runDone: Promise<void> = Promise.resolve();
  private pendingBash: AgentMessage[] = [];
  /** A per-prompt system prompt from before_agent_start. */
  turnSystemPrompt: string | undefined;
  /** pi 1.6: the failed response an automatic retry follows; its next request is routed with reason "retry". */
  private failedResponse: AssistantMessage | undefined;

  /** pi 1.6 turn boundaries (turn_end's drafts and continue). */
  private readonly turns: TurnBoundaries;

  constructor(private readonly session: SessionHandle) {
    this.turns = new TurnBoundaries(session, {
      addMessage: (m) => this.addMessage(m),
      pending: () => [...this.steeringQueue, ...this.followUpQueue],
    });
  }

  get isRunning(): boolean {
    return this.running;
  }
  get signal(): AbortSignal | undefined {
    return this.abortController?.signal;
  }
  get isRetrying(): boolean {
    return this.retryAbort !== undefined;
  }
  get pendingMessageCount(): number {
    return this.steeringQueue.length + this.followUpQueue.length;
  }

  private get kernel() {
    return this.session.kernel;
  }

  // ---- prompting ------------------------------------------------------------------------------

  async prompt(text: string, opts: PromptOptions = {}): Promise<Disposition> {
    const s = this.session;
    const source = opts.source ?? s.inputSource;

    // 1. Extension and plugin slash commands run at once, even while streaming.
    if (text.startsWith("/") && (await this.tryCommand(text))) {
      await opts.onAccepted?.("handled");
      return "handled";
    }

    // 2. The input hook: transform or consume.
    const input = { type: "input" as const, text, images: opts.images, source, ...(this.running && opts.streamingBehavior ? { streamingBehavior: opts.streamingBehavior } : {}) }; // (streamingBehavior)
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
    if (opts.expandPromptTemplates !== false && finalText.startsWith("/")) finalText = await this.expand(finalText);

    // 4. Busy: queue or refuse.
    if (this.running) {
      if (!opts.streamingBehavior) {
        throw new Error("The agent is busy with a run; send this as a steer or follow-up message (streamingBehavior), or wait until it settles");
      }
      await this.queue(opts.streamingBehavior, createUserMessage(finalText, images));
      await opts.onAccepted?.("queued");
      return "queued";
    }

    // 5. Model and key.
    await s.gateway.requireModelAndKey();

    const release = this.begin();
    let aborted = false;
    try {
      await this.flushPendingBash();
      // 6. The user message and pending next-turn messages; before_agent_start.
      const prompts: AgentMessage[] = [createUserMessage(finalText, images), ...this.nextTurnMessages.splice(0)];
      this.turnSystemPrompt = undefined;
      const base = await s.getSystemPrompt();
      if (this.kernel.hooks.before_agent_start.isUsed()) {
        const ev = await this.kernel.hooks.before_agent_start.promise({ type: "before_agent_start", prompt: finalText, images, systemPrompt: base, messages: [] });
        if (ev) {
          for (const m of ev.messages ?? []) prompts.push(createCustomMessage(m.customType, m.content, m.display, m.details));
          const sp = withSections(ev.systemPrompt, ev.sections); // (pi 1.6 prompt sections)
          if (sp !== base) this.turnSystemPrompt = sp;
        }
      }
      await opts.onAccepted?.("started");
      aborted = await this.runWithRecovery(prompts);
    } finally {
      this.turnSystemPrompt = undefined;
      release();
    }
    await this.settle(aborted);
    return "started";
  }

  /**
   * Marks a run as started; the returned function marks the loop as over (what abort() waits
   * for). `settledDone` resolves only once the run has settled too (agent_settled sent, or the
   * next run started for queued messages).
   */
  private begin(): () => void {
    this.running = true;
    let release!: () => void;
    this.runDone = new Promise((r) => (release = r));
    const previous = this.resolveSettled;
    this.settledDone = new Promise((r) => (this.resolveSettled = r));
    previous?.();
    return () => {
      this.running = false;
      release();
    };
  }
  private settledDone: Promise<void> = Promise.resolve();
  private resolveSettled: (() => void) | undefined;
  private settled(): void {
    const r = this.resolveSettled;
    this.resolveSettled = undefined;
    r?.();
  }

  private async expand(text: string): Promise<string> {
    const expand = this.kernel.service("expand-prompt");
    return expand ? expand(text) : text;
  }

  /**
   * Run the loop; on a failed provider call ask provider_error what to do (retry after a delay,
   * compact and retry, or let the error stand). Returns whether the run was aborted.
   */
  private async runWithRecovery(prompts: AgentMessage[]): Promise<boolean> {
    const s = this.session;
    let attempt = 0;
    let retryEnded = false;
    let pendingPrompts = prompts;
    let compacted = false;
    this.failedResponse = undefined;
    for (;;) {
      const ac = new AbortController();
      this.abortController = ac;
      let added: AgentMessage[];
      // pi 1.6 agent_end.willRetry: provider_error is asked before agent_end, its answer used below.
      const lastAssistant = (msgs: AgentMessage[]) => [...msgs].reverse().find((m) => (m as { role: string }).role === "assistant") as AssistantMessage | undefined;
      const askRecovery = (last: AssistantMessage | undefined) =>
        !ac.signal.aborted && last?.stopReason === "error" && this.kernel.hooks.provider_error.isUsed()
          ? this.kernel.hooks.provider_error.promise({ type: "provider_error", session: s, message: last as never, attempt, compacted })
          : Promise.resolve(undefined);
      let asked: { answer: Awaited<ReturnType<typeof askRecovery>> } | undefined;
      try {
        const config = await this.loopConfig();
        // pi 1.6: a run that sends new input first records the prompt and tools if they changed.
        if (pendingPrompts.length) {
          const sys = systemMessageUpdate(s.transcript, config.systemPrompt, config.tools);
          if (sys) pendingPrompts = [sys, ...pendingPrompts];
        }
        if (attempt > 0) {
          // pi 1.6: a retry that succeeded ends (auto_retry_end) with its answer's message_end.
          const emit = config.emit;
          const retried = attempt;
          config.emit = async (event) => {
            await emit(event);
            const m = event.type === "message_end" ? (event.message as { role: string; stopReason?: string }) : undefined;
            if (m?.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted" && !retryEnded) {
              retryEnded = true;
              await s.emit({ type: "auto_retry_end", success: true, attempt: retried });
            }
          };
        }
        config.willRetry = async (msgs) => {
          asked = { answer: await askRecovery(lastAssistant(msgs)) };
          return !!asked.answer && ("retry" in asked.answer || "compactAndRetry" in asked.answer);
        };
        added = await runAgentLoop(pendingPrompts, s.transcript, config, ac.signal);
      } finally {
        this.abortController = undefined;
      }
      const last = lastAssistant(added);
      if (ac.signal.aborted || last?.stopReason === "aborted") {
        if (attempt > 0 && !retryEnded) await s.emit({ type: "auto_retry_end", success: false, attempt, finalError: "aborted" });
        return true;
      }
      const failed = last?.stopReason === "error";
      const answer = failed ? (asked ? asked.answer : await askRecovery(last)) : undefined;
      if (answer && "compactAndRetry" in answer) {
        compacted = true;
        const next = await this.compactAfterOverflow(last!);
        if (next === "retry") {
          this.failedResponse = last;
          pendingPrompts = [];
          continue;
        }
        return next === "aborted";
      }
      if (answer && "retry" in answer) {
        attempt++;
        retryEnded = false;
        await s.emit({ type: "auto_retry_start", attempt, maxAttempts: answer.maxAttempts, delayMs: answer.delayMs, errorMessage: last!.errorMessage ?? "" });
        // Drop the failed message from the context (it stays in the session file).
        const idx = s.transcript.lastIndexOf(last!);
        if (idx >= 0) s.transcript.splice(idx, 1);
        if (!(await this.retryDelay(answer.delayMs))) {
          await s.emit({ type: "auto_retry_end", success: false, attempt, finalError: "Retry cancelled" });
          return true;
        }
        this.failedResponse = last;
        pendingPrompts = [];
        continue;
      }
      if (attempt > 0 && !retryEnded) {
        await s.emit(failed ? { type: "auto_retry_end", success: false, attempt, finalError: last?.errorMessage } : { type: "auto_retry_end", success: true, attempt });
      }
      return false;
    }
  }

  /** Compact after a context overflow: "retry" the turn, "stop" (the error stands), or "aborted". */
  private async compactAfterOverflow(failed: AssistantMessage): Promise<"retry" | "stop" | "aborted"> {
    const s = this.session;
    const dropFailed = () => {
      const last = s.transcript[s.transcript.length - 1] as AssistantMessage | undefined;
      if (last === failed || (last?.role === "assistant" && last.stopReason === "error")) s.transcript.pop();
    };
    dropFailed();
    try {
      await s.runCompaction("overflow", { willRetry: true });
    } catch (error) {
      // A cancelled compaction (abort(), abortCompaction(), a handler) ends the run as aborted.
      if (/cancelled/i.test(error instanceof Error ? error.message : "")) return "aborted";
      this.kernel.diagnostics.report({ level: "warning", source: "compaction", message: "compaction after a context overflow failed", error });
      return "stop";
    }
    // The reloaded context ends with the failed answer again (it stays in the file, not in the retry).
    dropFailed();
    return s.isDisposed ? "aborted" : "retry";
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
    this.inSettle = true;
    try {
      await this.settleRun(aborted);
    } finally {
      this.inSettle = false;
      if (!this.running) this.settled();
    }
  }
  private inSettle = false;

  private async settleRun(aborted: boolean): Promise<void> {
    await this.flushPendingBash();
    // Messages queued after the loop's last poll start a new run.
    if (!aborted && (this.followUpQueue.length || this.steeringQueue.length) && !this.session.isDisposed) {
      void this.continueRun();
      return;
    }
    // (pi 1.6 agent_before_settle may append entries, queue a follow-up (cc-hooks' Stop) and ask for one more request)
    const more = await beforeSettle(this.kernel, aborted ? "aborted" : this.lastRunOutcome(), {
      appendCustomEntry: (t, d) => void (this.session.sessionManager as unknown as { appendCustomEntry(t: string, d?: unknown): string }).appendCustomEntry(t, d),
      addMessage: (m) => this.addMessage(m),
      queueFollowUp: (m) => void this.followUpQueue.push(m),
    });
    if (more && !this.session.isDisposed) {
      await this.continueRun(); // (awaited: the caller's prompt() resolves after the extra request)
      return;
    }
    await this.session.emit({ type: "agent_settled", aborted });
  }

  /** Runs the messages still queued (after an abort) when nothing runs; false when there is nothing to run. */
  resumeQueue(): boolean {
    if (this.running || this.session.isDisposed || !(this.followUpQueue.length || this.steeringQueue.length)) return false;
    void this.continueRun();
    return true;
  }

  /** How the last run ended, from its last assistant message. */
  private lastRunOutcome(): "completed" | "error" {
    const t = this.session.transcript;
    for (let i = t.length - 1; i >= 0; i--) {
      const m = t[i] as { role: string; stopReason?: string };
      if (m.role === "assistant") return m.stopReason === "error" ? "error" : "completed";
    }
    return "completed";
  }

  /** Run the loop again from the current transcript (queued messages are picked up). */
  private async continueRun(): Promise<void> {
    if (this.running) return;
    const release = this.begin();
    let aborted = false;
    try {
      const queued = [...this.steeringQueue.splice(0), ...this.followUpQueue.splice(0)];
      await this.emitQueue();
      aborted = await this.runWithRecovery(queued);
    } finally {
      release();
    }
    await this.settle(aborted);
  }

  private async loopConfig(): Promise<AgentLoopConfig> {
    const s = this.session;
    const model = s.model!;
    const systemPrompt = this.turnSystemPrompt ?? (await s.getSystemPrompt());
    const hooks = this.kernel.hooks;
    const kernelTools = this.kernel.tools;
    return {
      model,
      systemPrompt,
      thinkingLevel: s.thinkingLevel, // (pi 1.6 assistant thinkingLevel)
      // read per model call: a tool activated during the run (1.6's tool_search,
      // pi.setActiveTools from a handler) is declared and callable from the next call of the same run.
      get tools() {
        return s.getActiveTools();
      },
      // pi 1.6: tools with `codemode` / `deferred` exposure stay callable from other tools (codemode
      // scripts) whether they are active or not.
      get callableTools() {
        return kernelTools.all().filter((t) => t.exposure === "codemode" || t.exposure === "deferred");
      },
      // With in-process file writes confined (the OS sandbox), a message's tool calls run one after
      // another, so a command cannot swap a file while a write of the same message runs.
      get toolExecution() {
        return fileGuardActive() ? ("sequential" as const) : ("parallel" as const);
      },
      stream: (m, ctx, signal) => {
        const failed = this.failedResponse; // (pi 1.6 routes the request after a failed one with reason "retry")
        this.failedResponse = undefined;
        return s.gateway.openStream(m, ctx, signal, undefined, failed ? "retry" : routeReason(s.transcript), failed);
      },
      buildContext: async (messages, base) => {
        let msgs = messages;
        if (hooks.context.isUsed()) {
          const ev = await hooks.context.promise({ type: "context", messages: structuredClone(messages) });
          if (ev?.messages) msgs = ev.messages;
        }
        const whole = await contextWithSystem(this.kernel, base, msgs); // (pi 1.6 context_with_system)
        if (whole) msgs = whole.messages;
        if (this.kernel.settings.get().images?.blockImages) msgs = stripImages(msgs);
        return whole ? { systemPrompt: whole.systemPrompt, tools: whole.tools, messages: convertToLlm(msgs) } : convertToLlm(msgs);
      },
      beforeToolCall: async (call: ToolCall, args) => {
        if (!hooks.tool_call.isUsed()) return undefined;
        return hooks.tool_call.promise({ type: "tool_call", toolCallId: call.id, toolName: call.name, input: args, ...parentOf(call) });
      },
      afterToolCall: async (call, args, result, isError) => {
        if (!hooks.tool_result.isUsed()) return { result, isError };
        const ev = await hooks.tool_result.promise({ type: "tool_result", toolCallId: call.id, toolName: call.name, input: args, content: result.content, details: result.details, isError, ...pickToolExtras(result), ...parentOf(call) }); // (structuredContent, usage)
        const r: AgentToolResult = { content: ev?.content ?? result.content, details: ev?.details ?? result.details, ...pickToolExtras(ev) };
        return { result: r, isError: ev?.isError ?? isError };
      },
      getSteeringMessages: () => this.dequeue(this.steeringQueue, s.steeringMode),
      getFollowUpMessages: () => this.dequeue(this.followUpQueue, s.followUpMode),
      emit: async (e) => {
        if (e.type === "turn_end") await this.turns.emit(e); // (pi 1.6 turn boundary)
        else await s.emit(e);
        if (e.type === "turn_end" && hooks.after_turn.isUsed() && this.abortController) {
          await hooks.after_turn.promise({ type: "after_turn", session: s, message: e.message, signal: this.abortController.signal });
        }
      },
      whileWaiting: (answered) => precompileHooks(hooks, answered),
      toolContext: (scope) => (scope ? Object.assign(Object.create(s.contextFactory()), { toolScope: scope }) : s.contextFactory()),
      takeContinue: () => this.turns.takeContinue(), // (pi 1.6 turn_end continue)
    };
  }

  private async dequeue(queue: AgentMessage[], mode: QueueMode): Promise<AgentMessage[]> {
    if (!queue.length) return [];
    const out = mode === "all" ? queue.splice(0) : queue.splice(0, 1);
    await this.emitQueue();
    return out;
  }

  private async tryCommand(text: string): Promise<boolean> {
    const space = text.indexOf(" ");
    const name = (space === -1 ? text.slice(1) : text.slice(1, space)).trim();
    const cmd = this.kernel.commands.get(name);
    if (!cmd || cmd.source === "prompt" || cmd.source === "skill") return false;
    const args = space === -1 ? "" : text.slice(space + 1).trim();
    try {
      await cmd.handler(args, this.session.contextFactory());
    } catch (error) {
      this.kernel.diagnostics.report({ level: "error", source: this.kernel.commands.entry(name)?.source ?? name, hook: `/${name}`, message: "command failed", error });
    }
    return true;
  }

  // ---- queues ---------------------------------------------------------------------------------

  async enqueue(kind: "steer" | "followUp", text: string, images?: ImageContent[]): Promise<Disposition> {
    if (text.startsWith("/") && this.kernel.commands.get(text.slice(1).split(" ")[0]!)?.source === "extension") {
      throw new Error(`Extension commands cannot be queued; send "${text.split(" ")[0]}" as a prompt`);
    }
    if (!this.running) return this.prompt(text.startsWith("/") ? await this.expand(text) : text, { images, expandPromptTemplates: false });
    // A queued message goes through the input hook too, marked with how it is delivered.
    let input = { type: "input" as const, text, images, source: this.session.inputSource, streamingBehavior: kind };
    if (this.kernel.hooks.input.isUsed()) {
      const r = await this.kernel.hooks.input.promise(input);
      if (r && r.action === "handled") return "handled";
    }
    const finalText = input.text.startsWith("/") ? await this.expand(input.text) : input.text;
    await this.queue(kind, createUserMessage(finalText, input.images));
    return "queued";
  }
  private async queue(kind: "steer" | "followUp", m: AgentMessage): Promise<void> {
    (kind === "steer" ? this.steeringQueue : this.followUpQueue).push(m);
    await this.emitQueue();
  }
  private async emitQueue(): Promise<void> {
    await this.session.emit({ type: "queue_update", ...this.getQueue() });
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
  async sendCustomMessage(m: CustomMessage, opts: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" }): Promise<void> {
    if (opts.deliverAs === "nextTurn") {
      this.nextTurnMessages.push(m);
      return;
    }
    if (this.running) {
      await this.queue(opts.deliverAs === "followUp" ? "followUp" : "steer", m);
      return;
    }
    if (opts.triggerTurn) {
      // (pi 1.6 before_agent_start with messageType "custom")
      const pre = await beforeCustomRun(this.kernel, m, await this.session.getSystemPrompt());
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

  /** A user bash result: added now when idle, after the run otherwise. */
  async addBashMessage(m: AgentMessage): Promise<void> {
    if (this.running) this.pendingBash.push(m);
    else await this.addMessage(m);
  }

  /** Append a message to the transcript outside a run (persisted, events emitted). */
  private async addMessage(m: AgentMessage): Promise<void> {
    this.session.transcript.push(m);
    await this.session.emit({ type: "message_start", message: m });
    await this.session.emit({ type: "message_end", message: m });
  }

  private async flushPendingBash(): Promise<void> {
    while (this.pendingBash.length) await this.addMessage(this.pendingBash.shift()!);
  }

  // ---- abort ----------------------------------------------------------------------------------

  /** Abort the current run and a pending retry; resolves once idle. */
  async abort(): Promise<void> {
    this.retryAbort?.abort();
    this.abortController?.abort();
    await this.runDone;
  }
  abortRetry(): void {
    this.retryAbort?.abort();
  }
  async waitForIdle(): Promise<void> {
    while (this.running) await this.runDone;
  }
  /** Resolves once the current (or last) run has settled: agent_settled is out. */
  waitForSettled(): Promise<void> {
    // A run that threw never settles: nothing to wait for once it is over.
    return this.running || this.inSettle ? this.settledDone : Promise.resolve();
  }
}

/** A nested call's parent (pi 1.6 executeTool). */
function parentOf(call: ToolCall): { parentToolCallId?: string } {
  const p = (call as { parentToolCallId?: unknown }).parentToolCallId;
  return typeof p === "string" ? { parentToolCallId: p } : {};
}

function stripImages(messages: AgentMessage[]): AgentMessage[] {
  return messages.map((m) => {
    const c = (m as { content?: unknown }).content;
    if (!Array.isArray(c) || !c.some((b) => b?.type === "image")) return m;
    return { ...m, content: c.map((b) => (b?.type === "image" ? { type: "text", text: "[image omitted: images.blockImages is on]" } : b)) } as AgentMessage;
  });
}

/** The pi 1.6 fields of a tool result that the tool_result hook passes through. */
function pickToolExtras(r: unknown): { structuredContent?: unknown; usage?: unknown; terminate?: true } {
  const o = (r ?? {}) as { structuredContent?: unknown; usage?: unknown; terminate?: unknown };
  return {
    ...(o.structuredContent !== undefined ? { structuredContent: o.structuredContent } : {}),
    ...(o.usage !== undefined ? { usage: o.usage } : {}),
    ...(o.terminate === true ? { terminate: true as const } : {}),
  };
}
