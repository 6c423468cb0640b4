/**
 * Fast path, OpenAI chat completions: turns the SSE events of a successful streaming response
 * into the AssistantMessage events pi-ai 1.6's openai-completions module produces for the
 * same bytes (same events, same order, same message, same key order), without the `openai`
 * SDK's Stream (async generators, byte copies per chunk) in between.
 *
 * What the SDK's Stream does with each event is reproduced first (`[DONE]` ends the data, JSON
 * it cannot parse ends in its "malformed server-sent event" error, an `error` event or an event
 * whose JSON has `error` throws an APIError-shaped message, `thread.*` events are wrapped),
 * then what pi-ai does with each chunk.
 */
import type { AssistantMessage, Model, Api, Usage } from "@mariozechner/pi-ai";
import type { PiAiParts } from "./pi-ai-parts.js";
import { isReasoningDetail } from "./openai-request.js";
import type { FastAssembler, FastSink } from "./types.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- wire JSON of unknown shape, handled as pi-ai does */
type Json = any;

/** The message of the SDK's APIError(undefined, error, undefined) (its makeMessage). */
function apiErrorMessage(error: Json): string {
  const msg = error?.message ? (typeof error.message === "string" ? error.message : JSON.stringify(error.message)) : error ? JSON.stringify(error) : undefined;
  return msg ? msg : "(no status code or body)";
}

function mapStopReason(reason: Json): { stopReason: AssistantMessage["stopReason"]; errorMessage?: string } {
  if (reason === null) return { stopReason: "stop" };
  switch (reason) {
    case "stop":
    case "end":
      return { stopReason: "stop" };
    case "length":
      return { stopReason: "length" };
    case "function_call":
    case "tool_calls":
      return { stopReason: "toolUse" };
    default:
      return { stopReason: "error", errorMessage: `Provider finish_reason: ${reason}` };
  }
}

function chunkUsage(raw: Json, model: Model<Api>, parts: PiAiParts): Usage {
  const promptTokens = raw.prompt_tokens || 0;
  // Cache reads as reported (OpenAI / OpenRouter, DeepSeek, Kimi spell them differently); writes apart.
  const cacheRead = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? raw.cached_tokens ?? 0;
  const cacheWrite = raw.prompt_tokens_details?.cache_write_tokens || 0;
  const input = Math.max(0, promptTokens - cacheRead - cacheWrite);
  const output = raw.completion_tokens || 0;
  const usage: Usage & { reasoning?: number } = {
    input,
    output,
    cacheRead,
    cacheWrite,
    reasoning: raw.completion_tokens_details?.reasoning_tokens || raw.reasoning_tokens || 0,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  parts.calculateCost(model, usage);
  if (model.provider === "openrouter" || model.baseUrl.includes("openrouter.ai")) parts.applyOpenRouterReportedCost(usage, raw);
  return usage;
}

/** Add a streamed detail: consecutive text or summary pieces join into one entry, encrypted ones stay apart. */
function appendDetail(details: Json[], detail: Json): void {
  const last = details[details.length - 1];
  const fill = () => {
    last.id ??= detail.id;
    last.format ||= detail.format;
    last.index ??= detail.index;
  };
  if (detail.type === "reasoning.text" && last?.type === "reasoning.text") {
    last.text += detail.text;
    last.signature ||= detail.signature;
    fill();
  } else if (detail.type === "reasoning.summary" && last?.type === "reasoning.summary") {
    last.summary += detail.summary;
    fill();
  } else details.push({ ...detail });
}

const REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_text"] as const;

export function createOpenAICompletionsAssembler(model: Model<Api>, output: AssistantMessage, sink: FastSink, parts: PiAiParts): FastAssembler {
  const blocks = output.content as Json[];
  let textBlock: Json = null;
  let hasFinishReason = false;
  // pi-ai 1.6: a stream must end with a finish_reason unless the model's compat says it sends none.
  const requiresFinishReason = (model as { compat?: { supportsFinishReason?: boolean } }).compat?.supportsFinishReason !== false;
  let thinkingBlock: Json = null;
  const byIndex = new Map<number, Json>();
  const byId = new Map<string, Json>();
  // Streaming state of each tool call, kept off the block (the partial message shows none).
  const callState = new Map<Json, { streamIndex?: number; text: string }>();
  // Reasoning details for replay: kept here while streaming, the thinking block's signature once it ends.
  let details: Json[] | undefined;
  const applyDetails = (block: Json) => {
    if (details !== undefined) block.thinkingSignature = JSON.stringify(details);
  };
  let done = false;
  const indexOf = (block: Json) => blocks.indexOf(block);
  const ensureThinkingBlock = (signature: string) => {
    if (!thinkingBlock) {
      thinkingBlock = { type: "thinking", thinking: "", thinkingSignature: signature };
      blocks.push(thinkingBlock);
      sink.push({ type: "thinking_start", contentIndex: indexOf(thinkingBlock), partial: output });
    }
    return thinkingBlock;
  };

  const ensureToolCallBlock = (toolCall: Json) => {
    const streamIndex = typeof toolCall.index === "number" ? toolCall.index : undefined;
    const name = toolCall.function?.name ?? "";
    let block = streamIndex !== undefined ? byIndex.get(streamIndex) : undefined;
    if (!block && toolCall.id) block = byId.get(toolCall.id);
    if (!block) {
      block = { type: "toolCall", id: toolCall.id || "", name, arguments: {} };
      callState.set(block, { streamIndex, text: "" });
      if (streamIndex !== undefined) byIndex.set(streamIndex, block);
      if (toolCall.id) byId.set(toolCall.id, block);
      blocks.push(block);
      sink.push({ type: "toolcall_start", contentIndex: indexOf(block), partial: output });
    }
    const state = callState.get(block)!;
    if (streamIndex !== undefined && state.streamIndex === undefined) {
      state.streamIndex = streamIndex;
      byIndex.set(streamIndex, block);
    }
    if (toolCall.id) byId.set(toolCall.id, block);
    if (!block.name && name) block.name = name;
    return block;
  };

  const onChunk = (chunk: Json) => {
    if (!chunk || typeof chunk !== "object") return;
    output.responseId ||= chunk.id;
    if (typeof chunk.model === "string" && chunk.model.length > 0 && chunk.model !== model.id) output.responseModel ||= chunk.model;
    if (chunk.usage) output.usage = chunkUsage(chunk.usage, model, parts);
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!choice) return;
    if (!chunk.usage && choice.usage) output.usage = chunkUsage(choice.usage, model, parts);
    if (choice.finish_reason) {
      hasFinishReason = true;
      (output as { rawStopReason?: string }).rawStopReason = choice.finish_reason; // (p18: pi 1.6 rawStopReason)
      const r = mapStopReason(choice.finish_reason);
      output.stopReason = r.stopReason;
      if (r.errorMessage) output.errorMessage = r.errorMessage;
    }
    const delta = choice.delta;
    if (!delta) return;
    // Reasoning first: a proxy may send reasoning and answer in one delta, the thinking block goes first.
    let field: (typeof REASONING_FIELDS)[number] | null = null;
    for (const f of REASONING_FIELDS) {
      const v = delta[f];
      if (typeof v === "string" && v.length > 0) {
        field = f;
        break;
      }
    }
    if (field) {
      const text = delta[field] as string;
      const block = ensureThinkingBlock(model.provider === "opencode-go" && field === "reasoning" ? "reasoning_content" : field);
      block.thinking += text;
      sink.push({ type: "thinking_delta", contentIndex: indexOf(block), delta: text, partial: output });
    }
    if (Array.isArray(delta.reasoning_details)) {
      for (const detail of delta.reasoning_details) {
        if (!isReasoningDetail(detail)) continue;
        ensureThinkingBlock("");
        details ??= [];
        appendDetail(details, detail);
      }
    }
    if (delta.content !== null && delta.content !== undefined && delta.content.length > 0) {
      if (!textBlock) {
        textBlock = { type: "text", text: "" };
        blocks.push(textBlock);
        sink.push({ type: "text_start", contentIndex: indexOf(textBlock), partial: output });
      }
      textBlock.text += delta.content;
      sink.push({ type: "text_delta", contentIndex: indexOf(textBlock), delta: delta.content, partial: output });
    }
    if (delta.tool_calls) {
      for (const toolCall of delta.tool_calls) {
        const block = ensureToolCallBlock(toolCall);
        if (!block.id && toolCall.id) {
          block.id = toolCall.id;
          byId.set(toolCall.id, block);
        }
        let args = "";
        if (toolCall.function?.arguments) {
          args = toolCall.function.arguments;
          const state = callState.get(block)!;
          state.text += args;
          block.arguments = parts.parseStreamingJson(state.text);
        }
        sink.push({ type: "toolcall_delta", contentIndex: indexOf(block), delta: args, partial: output });
      }
    }
  };

  return {
    dialect: "sdk",
    swallowAbortOnRead: true,
    checkAbortBeforeRead: false,
    onEvent(event, data) {
      if (done) return;
      if (data.startsWith("[DONE]")) {
        done = true;
        return;
      }
      let parsed: Json;
      try {
        parsed = JSON.parse(data);
      } catch {
        throw new SyntaxError("Error reading response: malformed server-sent event JSON.");
      }
      if (event !== null && event.startsWith("thread.")) return onChunk({ event, data: parsed });
      // The SDK throws an APIError whose `error` pi-ai reads (`error.metadata.raw`).
      if (event === "error") {
        const body = parsed?.error ?? parsed;
        throw Object.assign(new Error(apiErrorMessage(body)), { error: body });
      }
      if (parsed && parsed.error) throw Object.assign(new Error(apiErrorMessage(parsed.error)), { error: parsed.error });
      onChunk(parsed);
    },
    finish(aborted) {
      for (const block of blocks) {
        const contentIndex = indexOf(block);
        if (block.type === "text") sink.push({ type: "text_end", contentIndex, content: block.text, partial: output });
        else if (block.type === "thinking") {
          applyDetails(block);
          sink.push({ type: "thinking_end", contentIndex, content: block.thinking, partial: output });
        } else if (block.type === "toolCall") {
          Object.assign(block, parts.parseToolCallArguments(callState.get(block)?.text));
          callState.delete(block);
          sink.push({ type: "toolcall_end", contentIndex, toolCall: block, partial: output });
        }
      }
      if (aborted) throw new Error("Request was aborted");
      if ((output.stopReason as string) === "aborted") throw new Error("Request was aborted");
      if (!hasFinishReason && !requiresFinishReason) output.stopReason = blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
      if (output.stopReason === "error") throw new Error(output.errorMessage || "Provider returned an error stop reason");
      if ((requiresFinishReason && !hasFinishReason) || (output.stopReason as string) === "pending") throw new Error("Stream ended without finish_reason");
    },
    cleanUp() {
      for (const block of blocks) if (block.type === "thinking") applyDetails(block);
    },
    errorMessage(error) {
      let message = parts.providerErrorMessage(error);
      // Providers behind OpenRouter put more detail in error.metadata.raw.
      const raw = (error as { error?: { metadata?: { raw?: unknown } } } | undefined)?.error?.metadata?.raw;
      if (raw && !message.includes(String(raw))) message += `\n${raw}`;
      return message;
    },
  };
}
