/**
 * Fast path, OpenAI chat completions: turns the SSE events of a successful streaming response
 * into the AssistantMessage events pi-ai 0.73.1's openai-completions module produces for the
 * same bytes (same events, same order, same message, same key order), without the `openai`
 * SDK's Stream (async generators, byte copies per chunk) in between.
 *
 * What the SDK's Stream does with each event is reproduced first (`[DONE]` ends the data, an
 * event whose JSON has `error` throws an APIError-shaped message, `thread.*` events are wrapped),
 * then what pi-ai does with each chunk.
 */
import type { AssistantMessage, Model, Api, Usage } from "@mariozechner/pi-ai";
import type { PiAiParts } from "./pi-ai-parts.js";
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
  const reportedCached = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? 0;
  const cacheWrite = raw.prompt_tokens_details?.cache_write_tokens || 0;
  const cacheRead = cacheWrite > 0 ? Math.max(0, reportedCached - cacheWrite) : reportedCached;
  const input = Math.max(0, promptTokens - cacheRead - cacheWrite);
  const output = raw.completion_tokens || 0;
  const usage: Usage & { reasoning?: number } = {
    input,
    output,
    cacheRead,
    cacheWrite,
    reasoning: raw.completion_tokens_details?.reasoning_tokens || raw.reasoning_tokens || 0, // (p18: pi 1.6 usage.reasoning)
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  parts.calculateCost(model, usage);
  return usage;
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
  let done = false;
  const indexOf = (block: Json) => blocks.indexOf(block);

  const ensureToolCallBlock = (toolCall: Json) => {
    const streamIndex = typeof toolCall.index === "number" ? toolCall.index : undefined;
    let block = streamIndex !== undefined ? byIndex.get(streamIndex) : undefined;
    if (!block && toolCall.id) block = byId.get(toolCall.id);
    if (!block) {
      block = { type: "toolCall", id: toolCall.id || "", name: toolCall.function?.name || "", arguments: {}, partialArgs: "", streamIndex };
      if (streamIndex !== undefined) byIndex.set(streamIndex, block);
      if (toolCall.id) byId.set(toolCall.id, block);
      blocks.push(block);
      sink.push({ type: "toolcall_start", contentIndex: indexOf(block), partial: output });
    }
    if (streamIndex !== undefined && block.streamIndex === undefined) {
      block.streamIndex = streamIndex;
      byIndex.set(streamIndex, block);
    }
    if (toolCall.id) byId.set(toolCall.id, block);
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
    if (delta.content !== null && delta.content !== undefined && delta.content.length > 0) {
      if (!textBlock) {
        textBlock = { type: "text", text: "" };
        blocks.push(textBlock);
        sink.push({ type: "text_start", contentIndex: indexOf(textBlock), partial: output });
      }
      textBlock.text += delta.content;
      sink.push({ type: "text_delta", contentIndex: indexOf(textBlock), delta: delta.content, partial: output });
    }
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
      if (!thinkingBlock) {
        thinkingBlock = { type: "thinking", thinking: "", thinkingSignature: field };
        blocks.push(thinkingBlock);
        sink.push({ type: "thinking_start", contentIndex: indexOf(thinkingBlock), partial: output });
      }
      thinkingBlock.thinking += text;
      sink.push({ type: "thinking_delta", contentIndex: indexOf(thinkingBlock), delta: text, partial: output });
    }
    if (choice?.delta?.tool_calls) {
      for (const toolCall of choice.delta.tool_calls) {
        const block = ensureToolCallBlock(toolCall);
        if (!block.id && toolCall.id) {
          block.id = toolCall.id;
          byId.set(toolCall.id, block);
        }
        if (!block.name && toolCall.function?.name) block.name = toolCall.function.name;
        let args = "";
        if (toolCall.function?.arguments) {
          args = toolCall.function.arguments;
          block.partialArgs = (block.partialArgs ?? "") + toolCall.function.arguments;
          block.arguments = parts.parseStreamingJson(block.partialArgs);
        }
        sink.push({ type: "toolcall_delta", contentIndex: indexOf(block), delta: args, partial: output });
      }
    }
    const details = delta.reasoning_details;
    if (details && Array.isArray(details)) {
      for (const detail of details) {
        if (detail.type === "reasoning.encrypted" && detail.id && detail.data) {
          const match = blocks.find((b) => b.type === "toolCall" && b.id === detail.id);
          if (match) match.thoughtSignature = JSON.stringify(detail);
        }
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
      const parsed: Json = JSON.parse(data);
      if (event === null || !event.startsWith("thread.")) {
        // The SDK throws an APIError whose `error` pi-ai reads (`error.metadata.raw`).
        if (parsed && parsed.error) throw Object.assign(new Error(apiErrorMessage(parsed.error)), { error: parsed.error });
        onChunk(parsed);
      } else onChunk({ event, data: parsed });
    },
    finish(aborted) {
      for (const block of blocks) {
        const contentIndex = indexOf(block);
        if (block.type === "text") sink.push({ type: "text_end", contentIndex, content: block.text, partial: output });
        else if (block.type === "thinking") sink.push({ type: "thinking_end", contentIndex, content: block.thinking, partial: output });
        else if (block.type === "toolCall") {
          block.arguments = parts.parseStreamingJson(block.partialArgs);
          delete block.partialArgs;
          delete block.streamIndex;
          sink.push({ type: "toolcall_end", contentIndex, toolCall: block, partial: output });
        }
      }
      if (aborted) throw new Error("Request was aborted");
      if (output.stopReason === "aborted") throw new Error("Request was aborted");
      if (!hasFinishReason && !requiresFinishReason) output.stopReason = blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
      if (output.stopReason === "error") throw new Error(output.errorMessage || "Provider returned an error stop reason");
      if (requiresFinishReason && !hasFinishReason) throw new Error("Stream ended without finish_reason");
    },
    cleanUp() {
      for (const block of blocks) {
        delete block.index;
        delete block.partialArgs;
        delete block.streamIndex;
      }
    },
  };
}
