/**
 * pi 1.6's rawStopReason / usage.reasoning on pi-ai 0.73.1's own path (raw-details.ts): the real
 * stream functions of pi-ai for openai-completions, openai-responses and anthropic-messages, fed
 * written SSE bodies through a fake global fetch. The wrapped function's message must be pi-ai's
 * plus the two fields, and every parsed event must reach onProviderStreamEvent.
 */
import { describe, it, expect, beforeAll } from "@jest/globals";
import type { Api, AssistantMessage, AssistantMessageEvent, Context, Model } from "@mariozechner/pi-ai";
import type { StreamFn, AssistantStream } from "../../core/kernel/index.js";
import { withRawDetails, applyRawDetails, type DetailsApi } from "./raw-details.js";

const context: Context = { messages: [{ role: "user", content: "hi", timestamp: 0 }] };
const enc = new TextEncoder();

function model(api: DetailsApi): Model<Api> {
  return {
    id: "m",
    name: "m",
    api,
    provider: "test",
    baseUrl: api === "anthropic-messages" ? "http://127.0.0.1:9" : "http://127.0.0.1:9/v1",
    reasoning: false,
    input: ["text"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 100000,
    maxTokens: 1000,
  } as Model<Api>;
}

/** Answers every request with `body` (in 7-byte pieces) as an event stream, or with `status`. */
function fakeFetch(body: string, status = 200): typeof fetch {
  return (async () => {
    const bytes = enc.encode(body);
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (i >= bytes.length) return c.close();
        c.enqueue(bytes.subarray(i, i + 7));
        i += 7;
      },
    });
    const type = status === 200 ? "text/event-stream" : "application/json";
    return new Response(stream, { status, headers: { "content-type": type } });
  }) as typeof fetch;
}

async function run(fn: StreamFn, api: DetailsApi, body: string, extra: Record<string, unknown> = {}, status = 200) {
  const saved = globalThis.fetch;
  globalThis.fetch = fakeFetch(body, status);
  let s: AssistantStream;
  try {
    s = fn(model(api), context, { apiKey: "sk-test", maxRetries: 0, ...extra } as never);
  } finally {
    globalThis.fetch = saved;
  }
  let terminal: AssistantMessage | undefined;
  for await (const e of s as AsyncIterable<AssistantMessageEvent>) {
    if (e.type === "done") terminal = e.message;
    if (e.type === "error") terminal = e.error;
  }
  const message = (await s.result()) as AssistantMessage & { rawStopReason?: string; usage: { reasoning?: number } };
  return { message, terminal };
}

const oa = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta: {}, finish_reason: null, ...choice }], ...extra })}\n\n`;
const an = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const rs = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

const BODIES = {
  "openai-completions":
    oa({ delta: { role: "assistant", content: "" } }) +
    oa({ delta: { content: "Hello" } }) +
    oa({ finish_reason: "length" }) +
    `data: ${JSON.stringify({ id: "c1", choices: [], usage: { prompt_tokens: 10, completion_tokens: 7, completion_tokens_details: { reasoning_tokens: 4 } } })}\n\n` +
    "data: [DONE]\n\n",
  "anthropic-messages":
    an("message_start", { message: { id: "msg_1", usage: { input_tokens: 10, output_tokens: 1 } } }) +
    an("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
    an("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hello" } }) +
    an("content_block_stop", { index: 0 }) +
    an("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 7, output_tokens_details: { thinking_tokens: 5 } } }) +
    an("message_stop", {}),
  "openai-responses":
    rs("response.created", { response: { id: "resp_1", status: "in_progress" } }) +
    rs("response.output_item.added", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] } }) +
    rs("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
    rs("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello" }) +
    rs("response.output_item.done", {
      output_index: 0,
      item: { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello", annotations: [] }] },
    }) +
    // (pi-ai 0.73.1 reads only response.completed; pi 1.6 also response.incomplete — both read here)
    rs("response.completed", {
      response: {
        id: "resp_1",
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        usage: { input_tokens: 10, output_tokens: 7, total_tokens: 17, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 6 } },
      },
    }),
} as const;

const EXPECTED: Record<DetailsApi, { rawStopReason: string; reasoning: number; stopReason: string }> = {
  "openai-completions": { rawStopReason: "length", reasoning: 4, stopReason: "length" },
  "anthropic-messages": { rawStopReason: "end_turn", reasoning: 5, stopReason: "stop" },
  "openai-responses": { rawStopReason: "incomplete.max_output_tokens", reasoning: 6, stopReason: "length" },
};

const pi: Partial<Record<DetailsApi, StreamFn>> = {};
beforeAll(async () => {
  pi["openai-completions"] = (await import("@mariozechner/pi-ai/openai-completions")).streamSimpleOpenAICompletions as unknown as StreamFn;
  pi["anthropic-messages"] = (await import("@mariozechner/pi-ai/anthropic")).streamSimpleAnthropic as unknown as StreamFn;
  pi["openai-responses"] = (await import("@mariozechner/pi-ai/openai-responses")).streamSimpleOpenAIResponses as unknown as StreamFn;
});

const strip = (m: AssistantMessage) => {
  const copy = structuredClone({ ...m, timestamp: 0 }) as AssistantMessage & { rawStopReason?: string; usage: { reasoning?: number } };
  delete copy.rawStopReason;
  delete copy.usage.reasoning;
  return copy;
};

describe("rawStopReason and usage.reasoning on pi-ai 0.73.1's path", () => {
  for (const api of Object.keys(BODIES) as DetailsApi[]) {
    it(`${api}: the provider's stop reason and reasoning tokens; the rest is pi-ai's`, async () => {
      const body = BODIES[api as keyof typeof BODIES];
      const plain = await run(pi[api]!, api, body);
      expect(plain.message.rawStopReason).toBeUndefined(); // pi-ai 0.73.1 sets neither
      expect(plain.message.usage.reasoning).toBeUndefined();
      const raw: unknown[] = [];
      const got = await run(withRawDetails(api, pi[api]!), api, body, { onProviderStreamEvent: (d: unknown) => void raw.push(d) });
      const want = EXPECTED[api];
      expect(got.message.stopReason).toBe(want.stopReason);
      expect(got.message.rawStopReason).toBe(want.rawStopReason);
      expect(got.message.usage.reasoning).toBe(want.reasoning);
      expect(got.terminal).toBe(got.message);
      expect(strip(got.message)).toEqual(strip(plain.message));
      // without a provider_stream_event listener (records pre-filtered, not all parsed): the same
      const quiet = await run(withRawDetails(api, pi[api]!), api, body);
      expect([quiet.message.rawStopReason, quiet.message.usage.reasoning]).toEqual([want.rawStopReason, want.reasoning]);
      expect(strip(quiet.message)).toEqual(strip(plain.message));
      // every parsed record went to onProviderStreamEvent, in order
      const records = body.split("\n\n").filter((r) => r && !r.includes("[DONE]")).map((r) => JSON.parse(r.slice(r.indexOf("data: ") + 6)));
      expect(raw).toEqual(records);
    });
  }

  it("an error stop keeps the provider's reason; an HTTP error has none (as pi 1.6)", async () => {
    const api = "openai-completions";
    const filtered = oa({ delta: { content: "x" } }) + oa({ finish_reason: "content_filter" }) + "data: [DONE]\n\n";
    const got = await run(withRawDetails(api, pi[api]!), api, filtered);
    expect(got.message.stopReason).toBe("error");
    expect(got.message.rawStopReason).toBe("content_filter");
    expect(got.message.usage.reasoning).toBeUndefined(); // no usage record
    const http = await run(withRawDetails(api, pi[api]!), api, `{"error":{"message":"bad key"}}`, {}, 401);
    expect(http.message.stopReason).toBe("error");
    expect(http.message.rawStopReason).toBeUndefined();
  });

  it("usage.reasoning goes before totalTokens, as pi 1.6 orders it", () => {
    const m = { role: "assistant", usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { total: 0 } } } as unknown as AssistantMessage;
    applyRawDetails(m, { rawStopReason: "stop", reasoning: 1 });
    expect(Object.keys(m.usage)).toEqual(["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]);
    expect((m as { rawStopReason?: string }).rawStopReason).toBe("stop");
  });
});
