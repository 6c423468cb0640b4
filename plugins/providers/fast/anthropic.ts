/**
 * Fast path, Anthropic messages: turns the SSE events of a successful streaming response into
 * the AssistantMessage events pi-ai 0.73.1's anthropic module produces for the same bytes (same
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

function mapStopReason(reason: string): AssistantMessage["stopReason"] {
  switch (reason) {
    case "end_turn":
    case "pause_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
      return "length";
    case "tool_use":
      return "toolUse";
    case "refusal":
    case "sensitive":
      return "error";
    default:
      throw new Error(`Unhandled stop reason: ${reason}`);
  }
}

export function createAnthropicAssembler(model: Model<Api>, output: AssistantMessage, sink: FastSink, parts: PiAiParts): FastAssembler {
  const blocks = output.content as Json[];
  let sawStart = false;
  let sawStop = false;
  const find = (index: unknown) => blocks.findIndex((b) => b.index === index);

  const onMessageEvent = (event: Json) => {
    if (event.type === "message_start") {
      output.responseId = event.message.id;
      const u = event.message.usage;
      output.usage.input = u.input_tokens || 0;
      output.usage.output = u.output_tokens || 0;
      output.usage.cacheRead = u.cache_read_input_tokens || 0;
      output.usage.cacheWrite = u.cache_creation_input_tokens || 0;
      output.usage.totalTokens = output.usage.input + output.usage.output + output.usage.cacheRead + output.usage.cacheWrite;
      parts.calculateCost(model, output.usage);
    } else if (event.type === "content_block_start") {
      const cb = event.content_block;
      let block: Json;
      if (cb.type === "text") {
        block = { type: "text", text: "", index: event.index };
        blocks.push(block);
        sink.push({ type: "text_start", contentIndex: blocks.length - 1, partial: output });
      } else if (cb.type === "thinking") {
        block = { type: "thinking", thinking: "", thinkingSignature: "", index: event.index };
        blocks.push(block);
        sink.push({ type: "thinking_start", contentIndex: blocks.length - 1, partial: output });
      } else if (cb.type === "redacted_thinking") {
        block = { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: cb.data, redacted: true, index: event.index };
        blocks.push(block);
        sink.push({ type: "thinking_start", contentIndex: blocks.length - 1, partial: output });
      } else if (cb.type === "tool_use") {
        block = { type: "toolCall", id: cb.id, name: cb.name, arguments: cb.input ?? {}, partialJson: "", index: event.index };
        blocks.push(block);
        sink.push({ type: "toolcall_start", contentIndex: blocks.length - 1, partial: output });
      }
    } else if (event.type === "content_block_delta") {
      const d = event.delta;
      if (d.type === "text_delta") {
        const index = find(event.index);
        const block = blocks[index];
        if (block && block.type === "text") {
          block.text += d.text;
          sink.push({ type: "text_delta", contentIndex: index, delta: d.text, partial: output });
        }
      } else if (d.type === "thinking_delta") {
        const index = find(event.index);
        const block = blocks[index];
        if (block && block.type === "thinking") {
          block.thinking += d.thinking;
          sink.push({ type: "thinking_delta", contentIndex: index, delta: d.thinking, partial: output });
        }
      } else if (d.type === "input_json_delta") {
        const index = find(event.index);
        const block = blocks[index];
        if (block && block.type === "toolCall") {
          block.partialJson += d.partial_json;
          block.arguments = parts.parseStreamingJson(block.partialJson);
          sink.push({ type: "toolcall_delta", contentIndex: index, delta: d.partial_json, partial: output });
        }
      } else if (d.type === "signature_delta") {
        const block = blocks[find(event.index)];
        if (block && block.type === "thinking") {
          block.thinkingSignature = block.thinkingSignature || "";
          block.thinkingSignature += d.signature;
        }
      }
    } else if (event.type === "content_block_stop") {
      const index = find(event.index);
      const block = blocks[index];
      if (block) {
        delete block.index;
        if (block.type === "text") sink.push({ type: "text_end", contentIndex: index, content: block.text, partial: output });
        else if (block.type === "thinking") sink.push({ type: "thinking_end", contentIndex: index, content: block.thinking, partial: output });
        else if (block.type === "toolCall") {
          block.arguments = parts.parseStreamingJson(block.partialJson);
          delete block.partialJson;
          sink.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: output });
        }
      }
    } else if (event.type === "message_delta") {
      if (event.delta.stop_reason) (output as { rawStopReason?: string }).rawStopReason = event.delta.stop_reason; // (p18: pi 1.6 rawStopReason)
      if (event.delta.stop_reason) output.stopReason = mapStopReason(event.delta.stop_reason);
      const u = event.usage;
      if (u.input_tokens != null) output.usage.input = u.input_tokens;
      if (u.output_tokens != null) output.usage.output = u.output_tokens;
      if (u.cache_read_input_tokens != null) output.usage.cacheRead = u.cache_read_input_tokens;
      if (u.cache_creation_input_tokens != null) output.usage.cacheWrite = u.cache_creation_input_tokens;
      if (u.output_tokens_details?.thinking_tokens != null) (output.usage as { reasoning?: number }).reasoning = u.output_tokens_details.thinking_tokens; // (p18: pi 1.6 usage.reasoning)
      output.usage.totalTokens = output.usage.input + output.usage.output + output.usage.cacheRead + output.usage.cacheWrite;
      parts.calculateCost(model, output.usage);
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
      if (output.stopReason === "aborted" || output.stopReason === "error") throw new Error("An unknown error occurred");
    },
    cleanUp() {
      for (const block of blocks) {
        delete block.index;
        delete block.partialJson;
      }
    },
  };
}
