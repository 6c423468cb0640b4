/**
 * The agent loop: turns of (stream an assistant message → run its tool calls) until the model
 * stops, with steering and follow-up queues and abort at any moment.
 *
 * The loop knows no tool by name and no hook by name: everything it needs comes through
 * `AgentLoopConfig` (the session wires the kernel's hooks and registries into it). Every event
 * is awaited through `emit`, so a slow consumer slows the loop instead of growing memory.
 */
import type {
  AgentEvent,
  AgentMessage,
  AgentToolResult,
  AnyModel,
  AssistantMessage,
  Message,
  ToolCall,
  ToolDefinition,
  ToolResultMessage,
  ToolExecutionContext,
} from "../../kernel/types.js";
import type { AssistantStream } from "../../kernel/kernel.js";
import { syntheticAssistant } from "./messages.js";
import { preloadValidator, validateToolArguments } from "./validate.js";

export interface LlmContext {
  systemPrompt: string;
  messages: Message[];
  tools: Array<{ name: string; description: string; parameters: unknown }>;
}

export interface AgentLoopConfig {
  model: AnyModel;
  systemPrompt: string;
  /** The active tools, already resolved (wrappers applied). */
  tools: ToolDefinition[];
  /**
   * Registered tools that are not declared to the model but that a running tool may call through
   * executeTool (pi 1.6's `codemode` / `deferred` exposure, e.g. MCP tools reached from codemode).
   */
  callableTools?: ToolDefinition[];
  /** Open one provider stream. */
  stream(model: AnyModel, context: LlmContext, signal: AbortSignal): AssistantStream | Promise<AssistantStream>;
  /**
   * The `context` hook and the conversion to LLM messages. `base` is the request's system prompt
   * and tool declarations; returning a whole context replaces them too (pi 1.6 context_with_system).
   */
  buildContext(messages: AgentMessage[], base: LlmContext): Promise<Message[] | LlmContext>;
  /** The `tool_call` hook: may block; may change args in place. */
  beforeToolCall(call: ToolCall, args: Record<string, unknown>): Promise<{ block?: boolean; reason?: string; terminate?: boolean } | undefined>;
  /** The `tool_result` hook. */
  afterToolCall(call: ToolCall, args: Record<string, unknown>, result: AgentToolResult, isError: boolean): Promise<{ result: AgentToolResult; isError: boolean }>;
  /** Dequeue steering messages (polled after each tool preflight and each turn). */
  getSteeringMessages(): Promise<AgentMessage[]> | AgentMessage[];
  /** Dequeue follow-up messages (polled when the agent would stop). */
  getFollowUpMessages(): Promise<AgentMessage[]> | AgentMessage[];
  emit(event: AgentEvent): Promise<void>;
  toolExecution: "parallel" | "sequential";
  /** The ctx handed to tool execute(); `scope` lets a tool run other tools through the loop (executeTool). */
  toolContext(scope?: ToolCallScope): ToolExecutionContext;
  /**
   * Work the tool-call path needs, done while the model works on a request (called once a
   * request is on its way): it must be cheap to call again, must not make anything wait, and
   * should stop once `answered()` is true (the answer has begun to arrive).
   */
  whileWaiting?(answered: () => boolean): void;
  /** pi 1.6: the thinking level requested, recorded on each assistant message (`thinkingLevel`). */
  thinkingLevel?: string;
  /** pi 1.6: asked once before agent_end; true when the run will be retried (agent_end.willRetry). */
  willRetry?(added: AgentMessage[]): Promise<boolean>;
  /** After a turn_end: whether a handler asked for one more provider request (pi 1.6). */
  takeContinue?(): boolean;
}

/** What a running tool may do through the loop: run another tool as a nested call. */
export interface ToolCallScope {
  /** The calling tool call's id. */
  toolCallId: string;
  signal: AbortSignal;
  /** The tools it may call. */
  tools: ToolDefinition[];
  executeTool(name: string, args: unknown, options?: { signal?: AbortSignal; onUpdate?: (partial: AgentToolResult) => void }): Promise<ToolCallOutcome>;
}
/** The outcome of a nested tool call (pi 1.6's AgentToolCallOutcome). */
export interface ToolCallOutcome {
  toolCall: ToolCall & { parentToolCallId?: string };
  result: AgentToolResult;
  isError: boolean;
  durationMs?: number;
}

export const SKIPPED_FOR_STEERING = "Skipped: the user sent a new message while this tool call was waiting to run.";

interface Prepared {
  call: ToolCall;
  tool?: ToolDefinition;
  args: Record<string, unknown>;
  /** Set when preflight already decided the result. */
  early?: { result: AgentToolResult; isError: boolean };
  /** A blocked call whose tool_call handler asked to end the run (`terminate: true`). */
  terminating?: boolean;
}

/**
 * Run the loop from `prompts` (may be empty to continue from the current transcript).
 * `transcript` is the full conversation so far; new messages are pushed onto it as they happen.
 * Returns the messages this run added.
 */
export async function runAgentLoop(
  prompts: AgentMessage[],
  transcript: AgentMessage[],
  config: AgentLoopConfig,
  signal: AbortSignal,
): Promise<AgentMessage[]> {
  const added: AgentMessage[] = [];
  const push = async (m: AgentMessage) => {
    transcript.push(m);
    added.push(m);
    await config.emit({ type: "message_start", message: m });
    await config.emit({ type: "message_end", message: m });
  };

  // The tool-call path's one-time work (validators, hook dispatchers) starts with the run's
  // set-up, which mostly waits (prompt hooks, the provider module's load), and stops once the
  // first answer has begun to arrive.
  let setupAnswered = false;
  const setupDone = () => setupAnswered;
  if (config.tools.length) preloadValidator(config.tools, setupDone);
  config.whileWaiting?.(setupDone);
  await config.emit({ type: "agent_start" });
  let turnIndex = 0;
  await config.emit({ type: "turn_start", turnIndex, timestamp: Date.now() });
  for (const p of prompts) await push(p);

  let pending: AgentMessage[] = prompts.length ? [] : await config.getSteeringMessages();
  let firstTurn = true;
  outer: for (;;) {
    let moreToolCalls = true;
    while (moreToolCalls || pending.length) {
      if (!firstTurn) {
        turnIndex++;
        await config.emit({ type: "turn_start", turnIndex, timestamp: Date.now() });
      }
      firstTurn = false;
      for (const m of pending) await push(m);
      pending = [];

      const assistant = await streamAssistant(transcript, config, signal, () => (setupAnswered = true));
      added.push(assistant);
      if (assistant.stopReason === "error" || assistant.stopReason === "aborted") {
        await config.emit({ type: "turn_end", turnIndex, message: assistant, toolResults: [] });
        break outer;
      }
      const calls = assistant.content.filter((b): b is ToolCall => b.type === "toolCall");
      moreToolCalls = calls.length > 0;
      let toolResults: ToolResultMessage[] = [];
      let steering: AgentMessage[] | undefined;
      if (moreToolCalls) {
        const r = await executeToolCalls(calls, config, signal, push);
        toolResults = r.results;
        steering = r.steering;
        // pi 1.6: when every tool of the batch returned `terminate: true`, no further model turn
        if (r.terminate) moreToolCalls = false;
      }
      await config.emit({ type: "turn_end", turnIndex, message: assistant, toolResults });
      // pi 1.6: a turn_end handler may ask for one more provider request
      if (config.takeContinue?.()) moreToolCalls = true;
      pending = steering?.length ? steering : await config.getSteeringMessages();
    }
    const followUps = await config.getFollowUpMessages();
    if (!followUps.length) break;
    pending = followUps;
  }
  const willRetry = config.willRetry ? await config.willRetry(added) : false;
  await config.emit({ type: "agent_end", messages: added, willRetry });
  return added;
}

async function streamAssistant(transcript: AgentMessage[], config: AgentLoopConfig, signal: AbortSignal, onAnswer: () => void): Promise<AssistantMessage> {
  const { model } = config;
  let final: AssistantMessage | undefined;
  let started = false;
  let requestStart: number | undefined;
  if (signal.aborted) {
    final = syntheticAssistant(model, "aborted", "Request was aborted");
  } else {
    try {
      const base: LlmContext = {
        systemPrompt: config.systemPrompt,
        messages: [],
        tools: config.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      };
      const built = await config.buildContext(transcript, base);
      const context: LlmContext = Array.isArray(built) ? { ...base, messages: built } : built;
      requestStart = performance.now();
      const stream = await config.stream(model, context, signal);
      // The tool-argument validators load and compile while the model works on the request, not
      // after its tool call arrived; that background work stops when the answer begins.
      let answered = false;
      const isAnswered = () => answered;
      if (context.tools?.length) preloadValidator(context.tools, isAnswered);
      config.whileWaiting?.(isAnswered);
      for await (const ev of stream) {
        answered = true;
        onAnswer();
        if (ev.type === "done" || ev.type === "error") break;
        if (!started) {
          started = true;
          await config.emit({ type: "message_start", message: ev.partial });
          if (ev.type === "start") continue;
        }
        if (ev.type !== "start") {
          await config.emit({ type: "message_update", message: ev.partial, assistantMessageEvent: ev });
        }
      }
      final = await stream.result();
    } catch (error) {
      const msg = error instanceof Error ? error.message : String(error);
      final = syntheticAssistant(model, signal.aborted ? "aborted" : "error", signal.aborted ? "Request was aborted" : msg);
    }
    if (signal.aborted && final.stopReason !== "aborted" && final.stopReason !== "error") {
      // The provider finished although the run was aborted: keep the message, but it ends the run.
      final = { ...final, stopReason: "aborted", errorMessage: final.errorMessage ?? "Request was aborted" };
    }
  }
  final = withResponseFacts(final, requestStart, config.thinkingLevel);
  transcript.push(final);
  if (!started) await config.emit({ type: "message_start", message: final });
  await config.emit({ type: "message_end", message: final });
  return final;
}

/**
 * The facts of pi 1.6's assistant messages the loop knows (the provider may already have set
 * them): durationMs from the request's start (monotonic clock), the requested thinkingLevel,
 * and cost.totalFromProvider (false: the cost is the catalog estimate unless the provider said).
 */
function withResponseFacts(m: AssistantMessage, requestStart: number | undefined, thinkingLevel: string | undefined): AssistantMessage {
  const out = { ...m } as AssistantMessage & { durationMs?: number; thinkingLevel?: string };
  if (out.durationMs === undefined && requestStart !== undefined) out.durationMs = Math.round(performance.now() - requestStart);
  if (out.thinkingLevel === undefined && thinkingLevel) out.thinkingLevel = thinkingLevel;
  const cost = out.usage?.cost as (AssistantMessage["usage"]["cost"] & { totalFromProvider?: boolean }) | undefined;
  if (cost && cost.totalFromProvider === undefined) out.usage = { ...out.usage, cost: { ...cost, totalFromProvider: false } as typeof cost };
  return out;
}

function errorResult(text: string): AgentToolResult {
  return { content: [{ type: "text", text }] };
}

async function executeToolCalls(
  calls: ToolCall[],
  config: AgentLoopConfig,
  signal: AbortSignal,
  push: (m: AgentMessage) => Promise<void>,
): Promise<{ results: ToolResultMessage[]; steering?: AgentMessage[]; terminate: boolean }> {
  const byName = new Map(config.tools.map((t) => [t.name, t]));
  const prepared: Prepared[] = [];
  let steering: AgentMessage[] | undefined;

  // Preflight one call at a time, in source order.
  for (const call of calls) {
    await config.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
    if (steering?.length) {
      prepared.push({ call, args: call.arguments, early: { result: errorResult(SKIPPED_FOR_STEERING), isError: true } });
      continue;
    }
    const p = await preflight(call, byName.get(call.name), config, signal);
    prepared.push(p);
    const s = await config.getSteeringMessages();
    if (s.length) steering = s;
  }

  // Execute; finalise and emit in source order as soon as each one (and all before it) is done.
  const results: ToolResultMessage[] = [];
  let terminate = prepared.length > 0;
  const runOne = (p: Prepared) => (p.early ? Promise.resolve(p.early) : runTool(p, config, signal));
  const sequential = config.toolExecution === "sequential";
  const settled: Array<Promise<{ result: AgentToolResult; isError: boolean }>> = [];
  if (!sequential) {
    const anySequentialTool = prepared.some((p) => p.tool?.executionMode === "sequential");
    if (anySequentialTool) {
      let chain: Promise<unknown> = Promise.resolve();
      for (const p of prepared) {
        const run = chain.then(() => runOne(p));
        chain = run.catch(() => undefined);
        settled.push(run);
      }
    } else {
      for (const p of prepared) settled.push(runOne(p));
    }
  }
  for (let i = 0; i < prepared.length; i++) {
    const p = prepared[i]!;
    const t0 = Date.now();
    const raw = sequential ? await runOne(p) : await settled[i]!;
    const final = p.early ? raw : await config.afterToolCall(p.call, p.args, raw.result, raw.isError);
    // pi 1.6: a blocked call counts as terminating when its tool_call handler said so.
    if (p.early ? !p.terminating : (raw.result as { terminate?: unknown }).terminate !== true) terminate = false;
    const durationMs = Date.now() - t0;
    await config.emit({
      type: "tool_execution_end",
      toolCallId: p.call.id,
      toolName: p.call.name,
      result: final.result,
      isError: final.isError,
      durationMs,
    });
    const msg: ToolResultMessage = {
      role: "toolResult",
      toolCallId: p.call.id,
      toolName: p.call.name,
      content: final.result.content,
      details: final.result.details,
      isError: final.isError,
      timestamp: Date.now(),
      // pi 1.6: how long the tool ran (absent when it did not run)
      ...(p.early ? {} : { durationMs }),
    } as ToolResultMessage;
    results.push(msg);
    await push(msg);
  }
  return { results, steering, terminate };
}

async function preflight(call: ToolCall, tool: ToolDefinition | undefined, config: AgentLoopConfig, signal: AbortSignal): Promise<Prepared> {
  if (!tool) return { call, args: call.arguments, early: { result: errorResult(`Tool ${call.name} not found`), isError: true } };
  if (signal.aborted) return { call, tool, args: call.arguments, early: { result: errorResult("Aborted before the tool ran"), isError: true } };
  let prepared = call;
  if (tool.prepareArguments) {
    try {
      prepared = { ...call, arguments: tool.prepareArguments(call.arguments ?? {}) as Record<string, unknown> };
    } catch (e) {
      return { call, tool, args: call.arguments, early: { result: errorResult(e instanceof Error ? e.message : String(e)), isError: true } };
    }
  }
  const v = await validateToolArguments(tool, prepared);
  if (!v.ok) return { call, tool, args: call.arguments, early: { result: errorResult(v.error), isError: true } };
  let decision: { block?: boolean; reason?: string; terminate?: boolean } | undefined;
  try {
    decision = await config.beforeToolCall(call, v.args);
  } catch (e) {
    decision = { block: true, reason: e instanceof Error ? e.message : String(e) };
  }
  if (decision?.block) {
    return { call, tool, args: v.args, early: { result: errorResult(decision.reason || "Tool execution was blocked"), isError: true }, terminating: decision.terminate === true };
  }
  return { call, tool, args: v.args };
}

/**
 * pi 1.6's executeTool for a running tool: another tool runs as a nested call `<id>/<n>` through
 * the same validation, tool_call / tool_result hooks (the permission gate) and tool_execution_*
 * events as a model's call, with `parentToolCallId`; it adds nothing to the transcript. Failures
 * (unknown tool, bad arguments, blocked, thrown) come back as `isError`, never as a rejection.
 */
function toolCallScope(parent: ToolCall, config: AgentLoopConfig, parentSignal: AbortSignal): ToolCallScope {
  let n = 0;
  const declared = config.tools;
  const names = new Set(declared.map((t) => t.name));
  const tools = [...declared, ...(config.callableTools ?? []).filter((t) => !names.has(t.name))];
  return {
    toolCallId: parent.id,
    signal: parentSignal,
    tools,
    async executeTool(name, args, options = {}) {
      const signal = options.signal ?? parentSignal;
      const call = { type: "toolCall", id: `${parent.id}/${++n}`, name: String(name), arguments: (args ?? {}) as Record<string, unknown>, parentToolCallId: parent.id } as ToolCall & { parentToolCallId: string };
      const tool = tools.find((t) => t.name === call.name);
      await config.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments, parentToolCallId: parent.id } as AgentEvent);
      const p = await preflight(call, tool, config, signal);
      const t0 = Date.now();
      let outcome: { result: AgentToolResult; isError: boolean };
      if (p.early) outcome = p.early;
      else {
        const scoped = { ...config, emit: (e: AgentEvent) => config.emit(e.type === "tool_execution_update" ? ({ ...e, parentToolCallId: parent.id } as AgentEvent) : e) };
        const raw = await runTool(p, scoped, signal, options.onUpdate);
        outcome = await config.afterToolCall(call, p.args, raw.result, raw.isError);
      }
      const durationMs = p.early ? undefined : Date.now() - t0;
      await config.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: outcome.result, isError: outcome.isError, durationMs, parentToolCallId: parent.id } as AgentEvent);
      return { toolCall: { ...call, arguments: p.args }, result: outcome.result, isError: outcome.isError, ...(durationMs !== undefined ? { durationMs } : {}) };
    },
  };
}

async function runTool(p: Prepared, config: AgentLoopConfig, signal: AbortSignal, extraUpdate?: (partial: AgentToolResult) => void): Promise<{ result: AgentToolResult; isError: boolean }> {
  const { call, tool, args } = p;
  // Updates are emitted in order and awaited before the end event.
  let updates: Promise<void> = Promise.resolve();
  const onUpdate = (partialResult: AgentToolResult) => {
    try {
      extraUpdate?.(partialResult);
    } catch {
      // the caller's own callback failing does not stop the tool
    }
    updates = updates.then(() =>
      config.emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, args, partialResult }),
    );
  };
  try {
    const result = await tool!.execute(call.id, args, signal, onUpdate, config.toolContext(toolCallScope(call, config, signal)));
    await updates;
    if (!result || !Array.isArray(result.content)) {
      return { result: errorResult(`Tool ${call.name} returned no content`), isError: true };
    }
    return { result, isError: !!result.isError };
  } catch (e) {
    await updates.catch(() => undefined);
    const msg = e instanceof Error ? e.message : String(e);
    return { result: errorResult(msg || `Tool ${call.name} failed`), isError: true };
  }
}
