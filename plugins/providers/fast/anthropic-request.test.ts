/**
 * Anthropic messages through the streaming fast path: pi-ai 1.6's own module
 * (`@earendil-works/pi-ai/api/anthropic-messages`) builds and sends the request, the fast path
 * only reads the answer. For a table of models and contexts (adaptive and budget thinking, with
 * and without tools, tool results, thinking replayed, cache retention) a recording server must
 * get the same method, URL, headers and body from the module alone and from the module behind
 * the fast path (as the providers plugin serves it), and both must end in the same message.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Api, AssistantMessage, Context, Model } from "@mariozechner/pi-ai";
import type { StreamFn, AssistantStream } from "../../../core/kernel/index.js";
import { loadPiAiStream } from "../pi-ai-api.js";
import { PI_AI_STREAM_LOADERS } from "../index.js";
import { fastPathApplies } from "./fast-path.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const ev = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
const SSE =
  ev("message_start", { type: "message_start", message: { id: "msg_1", model: "claude-x", usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 3 } } }) +
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hm" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
  ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "ok" } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 1 }) +
  ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } }) +
  ev("message_stop", { type: "message_stop" });

let server: Server;
let url: string;
const seen: Seen[] = [];
let pi: StreamFn;
let viaPlugin: StreamFn;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "text/event-stream", "request-id": "r1" });
      res.end(SSE);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pi = await loadPiAiStream("anthropic-messages");
  viaPlugin = await PI_AI_STREAM_LOADERS["anthropic-messages"]!();
});
afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
});

function model(over: Record<string, unknown> = {}): Model<Api> {
  return {
    id: "claude-x",
    name: "claude-x",
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: url,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200000,
    maxTokens: 64000,
    ...over,
  } as Model<Api>;
}

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const tools = [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
function history(): Context["messages"] {
  const origin = { api: "anthropic-messages", provider: "anthropic", model: "claude-x", usage, timestamp: 1 };
  return [
    { role: "user", content: "look at a.txt", timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should read it", thinkingSignature: "sig-1" },
        { type: "text", text: "reading" },
        { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.txt" } },
      ],
      stopReason: "toolUse",
      ...origin,
    } as never,
    { role: "toolResult", toolCallId: "toolu_1", toolName: "read", content: [{ type: "text", text: "contents" }], isError: false, timestamp: 1 },
    { role: "user", content: "and?", timestamp: 1 },
  ];
}

async function drain(s: AssistantStream): Promise<AssistantMessage> {
  for await (const _ of s as AsyncIterable<unknown>) void _;
  return s.result();
}

/** The message with its clock readings blanked (a whole number of milliseconds stays "ms"). */
const steady = (m: AssistantMessage) =>
  JSON.parse(JSON.stringify(m, (k, x) => (k === "timestamp" ? 0 : k === "durationMs" && Number.isInteger(x) && x >= 0 ? "ms" : x)));

describe("Anthropic through the fast path: pi-ai 1.6's request, the same answer", () => {
  // The last element: the kind of `thinking` the request carries (none: no field).
  const cases: [string, Record<string, unknown>, Context, Record<string, unknown>, string | undefined][] = [
    ["no thinking, no tools", {}, { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, {}, "disabled"],
    ["budget thinking, system prompt, tools, tool results, thinking replayed", {}, { systemPrompt: "be brief", messages: history(), tools }, { reasoning: "medium" }, "enabled"],
    ["adaptive thinking with an effort, tools", { compat: { forceAdaptiveThinking: true }, thinkingLevelMap: { xhigh: "xhigh" } }, { systemPrompt: "s", messages: history(), tools }, { reasoning: "xhigh" }, "adaptive"],
    ["adaptive thinking, history without tools", { compat: { forceAdaptiveThinking: true } }, { messages: history() }, { reasoning: "low" }, "adaptive"],
    ["long cache retention, session id, headers", { headers: { "x-model": "a" } }, { systemPrompt: "s", messages: history(), tools }, { cacheRetention: "long", sessionId: "sess-1", headers: { "x-call": "b" }, maxTokens: 2000 }, "disabled"],
    ["a non-reasoning model", { reasoning: false }, { systemPrompt: "s", messages: history(), tools }, { reasoning: "high" }, undefined],
  ];
  for (const [name, over, context, options, thinking] of cases) {
    it(name, async () => {
      const m = model(over);
      expect(fastPathApplies("anthropic-messages", { apiKey: "sk-ant-api-test" })).toBe(true);
      seen.length = 0;
      const a = await drain(pi(m, context, { apiKey: "sk-ant-api-test", maxRetries: 0, ...options } as never));
      const b = await drain(viaPlugin(m, context, { apiKey: "sk-ant-api-test", maxRetries: 0, ...options } as never));
      expect(a.stopReason).toBe("stop");
      expect(seen).toHaveLength(2);
      const [x, y] = seen as [Seen, Seen];
      expect(y.method).toBe(x.method);
      expect(y.url).toBe(x.url);
      expect(y.headers).toEqual(x.headers);
      expect(y.body).toBe(x.body);
      expect((JSON.parse(y.body) as { thinking?: { type: string } }).thinking?.type).toBe(thinking);
      expect(steady(b)).toStrictEqual(steady(a));
      expect(b.content.map((c) => c.type)).toEqual(["thinking", "text"]);
    });
  }
});

describe("Anthropic message threads stay pi-ai's", () => {
  it("a request pi-ai sends in a thread is not taken over, so the next one continues the thread", async () => {
    const m = model({ compat: { supportsMessageThreads: true } });
    const options = { apiKey: "sk-ant-api-test", maxRetries: 0, sessionId: "thread-1" };
    expect(fastPathApplies("anthropic-messages", options, m)).toBe(false);
    expect(fastPathApplies("anthropic-messages", { ...options, cacheRetention: "none" }, m)).toBe(true);
    expect(fastPathApplies("anthropic-messages", options, model({ baseUrl: "https://api.anthropic.com" }))).toBe(false);
    expect(fastPathApplies("anthropic-messages", { ...options, sessionId: undefined }, m)).toBe(true);
    seen.length = 0;
    const first: Context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };
    const reply = await drain(viaPlugin(m, first, options as never));
    expect(reply.stopReason).toBe("stop");
    await drain(viaPlugin(m, { messages: [...first.messages, reply, { role: "user", content: "more", timestamp: 2 }] }, options as never));
    expect(seen).toHaveLength(2);
    expect(JSON.parse(seen[1]!.body).thread).toEqual({ type: "continue", previous_message_id: "msg_1" });
  });
});
