/**
 * Fast path, Anthropic messages: turns the SSE events of a successful streaming response into
 * the AssistantMessage events pi-ai 1.6's anthropic-messages module produces for the same bytes (same
 * events, same order, same message, same key order). pi-ai already reads this body itself; the
 * fast path saves its async generators, its per-line string slicing and the per-delta block
 * search, and reads the socket only as fast as the events are consumed.
 *
 * Not used with an OAuth token (tool names are mapped back from Claude Code's) or a caller's own
 * client: see fast-path.ts.
 */
import type { AssistantMessage, Model, Api } from "@mariozechner/pi-ai";
import type { PiAiParts } from "./pi-ai-parts.js";
import type { FastAssembler, FastSink } from "./types.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- wire JSON of unknown shape, handled as pi-ai does */
type Json = any;

const MESSAGE_EVENTS = new Set(["message_start", "message_delta", "message_stop", "content_block_start", "content_block_delta", "content_block_stop"]);

function mapStopReason(reason: string, details: Json): { stopReason: AssistantMessage["stopReason"]; errorMessage?: string } {
  switch (reason) {
    case "end_turn":
    case "pause_turn":
    case "stop_sequence":
      return { stopReason: "stop" };
    case "max_tokens":
      return { stopReason: "length" };
    case "tool_use":
      return { stopReason: "toolUse" };
    case "refusal":
      return { stopReason: "error", errorMessage: details?.explanation || "The model refused to complete the request" };
    case "sensitive":
      return { stopReason: "error", errorMessage: "Provider stopped with: sensitive" };
    default:
      throw new Error(`Unhandled stop reason: ${reason}`);
  }
}

export function createAnthropicAssembler(model: Model<Api>, output: AssistantMessage, sink: FastSink, parts: PiAiParts): FastAssembler {
  const blocks = output.content as Json[];
  const out = output as AssistantMessage & { responseModel?: string; rawStopReason?: string; diagnostics?: Json[] };
  const usage = output.usage as AssistantMessage["usage"] & { cacheWrite1h?: number; reasoning?: number };
  let sawStart = false;
  let sawStop = false;
  // Anthropic's block index → our content index and the tool call's argument text (kept off the block).
  const open = new Map<number, { contentIndex: number; json?: string }>();
  let usageModel: Model<Api> = model;
  let transformations: Json[] | undefined;
  const openRouter = model.provider === "openrouter" || model.baseUrl.includes("openrouter.ai");

  const startBlock = (index: number, block: Json, type: "text_start" | "thinking_start" | "toolcall_start", json?: string) => {
    blocks.push(block);
    open.set(index, { contentIndex: blocks.length - 1, json });
    sink.push({ type, contentIndex: blocks.length - 1, partial: output });
  };

  const onMessageEvent = (event: Json) => {
    if (event.type === "message_start") {
      output.responseId = event.message.id;
      if (Array.isArray(event.message.input_transformations)) transformations = event.message.input_transformations;
      const responseModel = event.message.model;
      if (responseModel !== model.id) out.responseModel = responseModel;
      const fallbackCost =
        responseModel === model.id
          ? undefined
          : (model as Json).compat?.allowedFallbackModels?.find((f: Json) => f.provider === model.provider && f.model === responseModel)?.cost;
      usageModel = fallbackCost ? ({ ...model, id: responseModel, cost: fallbackCost } as Model<Api>) : model;
      const u = event.message.usage;
      usage.input = u.input_tokens || 0;
      usage.output = u.output_tokens || 0;
      usage.cacheRead = u.cache_read_input_tokens || 0;
      usage.cacheWrite = u.cache_creation_input_tokens || 0;
      usage.cacheWrite1h = u.cache_creation?.ephemeral_1h_input_tokens || 0;
      usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
      parts.calculateCost(usageModel, usage);
    } else if (event.type === "content_block_start") {
      const cb = event.content_block;
      if (cb.type === "fallback") {
        if (blocks.length > 0) throw new Error("Anthropic performed an unsupported mid-output model fallback");
      } else if (cb.type === "text") startBlock(event.index, { type: "text", text: cb.text ?? "" }, "text_start");
      else if (cb.type === "thinking") startBlock(event.index, { type: "thinking", thinking: cb.thinking ?? "", thinkingSignature: cb.signature ?? "" }, "thinking_start");
      else if (cb.type === "redacted_thinking") startBlock(event.index, { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: cb.data, redacted: true }, "thinking_start");
      else if (cb.type === "tool_use") startBlock(event.index, { type: "toolCall", id: cb.id, name: cb.name, arguments: cb.input ?? {} }, "toolcall_start", "");
    } else if (event.type === "content_block_delta") {
      const o = open.get(event.index);
      const block = o === undefined ? undefined : blocks[o.contentIndex];
      const d = event.delta;
      if (!o || !block) return;
      if (d.type === "text_delta") {
        if (block.type === "text") {
          block.text += d.text;
          sink.push({ type: "text_delta", contentIndex: o.contentIndex, delta: d.text, partial: output });
        }
      } else if (d.type === "thinking_delta") {
        if (block.type === "thinking") {
          block.thinking += d.thinking;
          sink.push({ type: "thinking_delta", contentIndex: o.contentIndex, delta: d.thinking, partial: output });
        }
      } else if (d.type === "input_json_delta") {
        if (block.type === "toolCall" && o.json !== undefined) {
          o.json += d.partial_json;
          block.arguments = parts.parseStreamingJson(o.json);
          sink.push({ type: "toolcall_delta", contentIndex: o.contentIndex, delta: d.partial_json, partial: output });
        }
      } else if (d.type === "signature_delta") {
        if (block.type === "thinking") block.thinkingSignature = (block.thinkingSignature || "") + d.signature;
      }
    } else if (event.type === "content_block_stop") {
      const o = open.get(event.index);
      open.delete(event.index);
      const block = o === undefined ? undefined : blocks[o.contentIndex];
      if (!o || !block) return;
      const index = o.contentIndex;
      if (block.type === "text") sink.push({ type: "text_end", contentIndex: index, content: block.text, partial: output });
      else if (block.type === "thinking") sink.push({ type: "thinking_end", contentIndex: index, content: block.thinking, partial: output });
      else if (block.type === "toolCall" && o.json !== undefined) {
        Object.assign(block, parts.parseToolCallArguments(o.json));
        sink.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: output });
      }
    } else if (event.type === "message_delta") {
      if (Array.isArray(event.input_transformations)) transformations = event.input_transformations;
      if (event.delta.stop_reason) {
        out.rawStopReason = event.delta.stop_reason;
        const r = mapStopReason(event.delta.stop_reason, event.delta.stop_details);
        output.stopReason = r.stopReason;
        if (r.errorMessage) output.errorMessage = r.errorMessage;
      }
      const u = event.usage;
      if (u) {
        if (u.input_tokens != null) usage.input = u.input_tokens;
        if (u.output_tokens != null) usage.output = u.output_tokens;
        if (u.cache_read_input_tokens != null) usage.cacheRead = u.cache_read_input_tokens;
        if (u.cache_creation_input_tokens != null) usage.cacheWrite = u.cache_creation_input_tokens;
        if (u.cache_creation?.ephemeral_1h_input_tokens != null) usage.cacheWrite1h = u.cache_creation.ephemeral_1h_input_tokens;
        if (u.output_tokens_details?.thinking_tokens != null) usage.reasoning = u.output_tokens_details.thinking_tokens;
      }
      usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
      parts.calculateCost(usageModel, usage);
      if (openRouter && u) parts.applyOpenRouterReportedCost(usage, u);
    }
  };

  return {
    dialect: "pi",
    swallowAbortOnRead: false,
    checkAbortBeforeRead: true,
    onEvent(event, data, raw) {
      if (event === "error") throw new Error(data);
      if (!MESSAGE_EVENTS.has(event ?? "")) return;
      let parsed: Json;
      try {
        parsed = parts.parseJsonWithRepair(data);
        if (parsed.type === "message_start") sawStart = true;
        else if (parsed.type === "message_stop") sawStop = true;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(`Could not parse Anthropic SSE event ${event}: ${message}; data=${data}; raw=${raw.join("\\n")}`);
      }
      onMessageEvent(parsed);
    },
    finish(aborted) {
      if (sawStart && !sawStop) throw new Error("Anthropic stream ended before message_stop");
      if (aborted) throw new Error("Request was aborted");
      if ((output.stopReason as string) === "pending") throw new Error("Anthropic stream ended without a stop reason");
      if (output.stopReason === "aborted" || output.stopReason === "error") throw new Error(output.errorMessage || "An unknown error occurred");
      if (transformations && transformations.length > 0) {
        const details = { transformations: transformations.map((t) => ({ type: t.type ?? undefined, path: t.path ?? undefined, reason: t.reason ?? undefined })) };
        out.diagnostics = [...(out.diagnostics ?? []), { type: "anthropic_input_transformations", timestamp: Date.now(), details }];
      }
    },
    cleanUp() {
      // nothing on the blocks: streaming state is kept apart
    },
    errorMessage(error) {
      return error instanceof Error ? parts.withCauseDetail(error) : JSON.stringify(error);
    },
  };
}
