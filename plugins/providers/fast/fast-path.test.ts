/**
 * The streaming fast path against pi-ai 1.6's own API modules (`@earendil-works/pi-ai/api/*`, as
 * plugins/providers/pi-ai-api.ts loads them): the same recorded bytes, split into network chunks
 * in every way tried, go through pi-ai's stream function and through the fast path; the events
 * (without the shared `partial`) and the final message (byte for byte as JSON, and deep-equal)
 * must be the same. `durationMs` is a measurement: both must have a whole number of
 * milliseconds. pi 1.6's `rawStopReason` and `usage.reasoning` are also asserted on their own.
 *
 * Streams are recorded from the scripted LLM server (text, thinking, several tool calls with
 * arguments split, usage, stop reasons, a cut, a malformed record) or written here (mid-stream
 * errors, CRLF, comments, a last event without its blank line, data after [DONE]).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import type { Api, AssistantMessage, AssistantMessageEvent, Context, Model } from "@mariozechner/pi-ai";
import { startLlmServer } from "../../../tests/fixtures/llm-server.mjs";
import type { StreamFn, AssistantStream } from "../../../core/kernel/index.js";
import { withFastPath, loadPiAiParts, fastPathApplies, warmAnswerPath, type FastApi } from "./fast-path.js";
import type { PiAiParts } from "./pi-ai-parts.js";
import { loadPiAiStream } from "../pi-ai-api.js";

type Pieces = Uint8Array[];
const enc = new TextEncoder();

function model(api: FastApi): Model<Api> {
  return {
    id: "m",
    name: "m",
    api,
    provider: "test",
    baseUrl: api === "openai-completions" ? "http://127.0.0.1:9/v1" : "http://127.0.0.1:9",
    reasoning: true,
    input: ["text"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 100000,
    maxTokens: 1000,
    ...modelOver,
  } as Model<Api>;
}
/** Fields a test puts on the model (reset after each test). */
let modelOver: Record<string, unknown> = {};
afterEach(() => {
  modelOver = {};
});
const context: Context = { messages: [{ role: "user", content: "hi", timestamp: 0 }] };

/** A fetch that answers every request with `pieces` as the body (optionally failing after them). */
function fakeFetch(pieces: Pieces, opts: { failWith?: Error; status?: number } = {}): typeof fetch {
  return (async (_input: unknown, init?: RequestInit) => {
    let i = 0;
    const signal = init?.signal;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        signal?.addEventListener("abort", () => {
          try {
            c.error(new DOMException("This operation was aborted", "AbortError"));
          } catch {
            /* closed already */
          }
        });
      },
      pull(c) {
        if (signal?.aborted) return c.error(new DOMException("This operation was aborted", "AbortError"));
        if (i < pieces.length) c.enqueue(pieces[i++]!);
        else if (opts.failWith) c.error(opts.failWith);
        else c.close();
      },
    });
    return new Response(body, { status: opts.status ?? 200, headers: { "content-type": "text/event-stream", "x-request-id": "req-1" } });
  }) as typeof fetch;
}

interface Outcome {
  events: string[];
  final: string;
  message: AssistantMessage;
  /** pi 1.6's rawStopReason and usage.reasoning of the final message. */
  added: { rawStopReason?: string; reasoning?: number };
}

/** Whether `k` of `holder` is one of the fields asserted on their own (message.rawStopReason, usage.reasoning). */
const isAdded = (holder: Record<string, unknown>, k: string) => (k === "rawStopReason" && holder.role === "assistant") || (k === "reasoning" && "totalTokens" in holder);

/** JSON of an event without the shared, still-changing `partial` and the added fields, timestamps zeroed. */
const snap = (v: unknown) =>
  JSON.stringify(v, function (this: Record<string, unknown>, k, x) {
    return k === "partial" || isAdded(this, k) ? undefined : k === "timestamp" ? 0 : k === "durationMs" ? timed(x) : x;
  });

/** The message without the added fields, clock readings zeroed (a copy; key order kept). */
const withoutAdded = <T>(v: T): T => JSON.parse(JSON.stringify(v, function (this: Record<string, unknown>, k, x) {
  return isAdded(this, k) ? undefined : k === "durationMs" ? timed(x) : k === "timestamp" ? 0 : x;
})) as T;

/** A duration stands for itself only as "a whole number of milliseconds". */
const timed = (x: unknown) => (Number.isInteger(x) && (x as number) >= 0 ? "ms" : x);

async function collect(fn: StreamFn, api: FastApi, fetchImpl: typeof fetch, extra: Record<string, unknown> = {}): Promise<Outcome> {
  const saved = globalThis.fetch;
  globalThis.fetch = fetchImpl;
  let s: AssistantStream;
  try {
    s = fn(model(api), context, { apiKey: "sk-test", maxRetries: 0, ...extra } as never);
  } finally {
    globalThis.fetch = saved;
  }
  const events: string[] = [];
  for await (const e of s as AsyncIterable<AssistantMessageEvent>) events.push(snap(e));
  const message = (await s.result()) as AssistantMessage & { rawStopReason?: string; usage: { reasoning?: number } };
  const added = {
    ...(message.rawStopReason !== undefined ? { rawStopReason: message.rawStopReason } : {}),
    ...(message.usage.reasoning !== undefined ? { reasoning: message.usage.reasoning } : {}),
  };
  return { events, final: snap(message), message: { ...withoutAdded(message), timestamp: 0 }, added };
}

let piOpenAI: StreamFn;
let piAnthropic: StreamFn;
let parts: PiAiParts;
const fns = (api: FastApi) => {
  const pi = api === "openai-completions" ? piOpenAI : piAnthropic;
  return { pi, fast: withFastPath(api, pi, parts) };
};

async function expectSame(api: FastApi, pieces: Pieces, opts: { failWith?: Error; extra?: () => Record<string, unknown> } = {}): Promise<Outcome> {
  const { pi, fast } = fns(api);
  const a = await collect(pi, api, fakeFetch(pieces, opts), opts.extra?.());
  const b = await collect(fast, api, fakeFetch(pieces, opts), opts.extra?.());
  expect(b.added).toEqual(a.added);
  expect(b.events).toEqual(a.events);
  expect(b.final).toBe(a.final);
  expect(b.message).toStrictEqual(a.message);
  return b;
}

/** pi-ai 1.6's message for a chat-completions stream that ends without a finish_reason. */
const NO_FINISH = "Stream ended without finish_reason";

const whole = (s: string): Pieces => [enc.encode(s)];
const splitAt = (bytes: Uint8Array, ...at: number[]): Pieces => {
  const out: Pieces = [];
  let from = 0;
  for (const p of [...at, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
};
const perByte = (s: string): Pieces => Array.from(enc.encode(s), (b) => Uint8Array.of(b));

// ---- recorded streams -----------------------------------------------------------------------

const recorded: Record<string, string> = {};
let server: Awaited<ReturnType<typeof startLlmServer>>;

async function record(name: string, api: FastApi, turn: Record<string, unknown>) {
  await server.setScript({ default: turn } as never);
  const openai = api === "openai-completions";
  const res = await fetch(server.url + (openai ? "/v1/chat/completions" : "/v1/messages"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, max_tokens: 100, stream_options: { include_usage: true }, messages: [{ role: "user", content: "x" }] }),
  });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += dec.decode(r.value, { stream: true });
  } catch {
    // a cut stream: the server destroyed the socket; keep what it wrote before
  }
  recorded[name] = text + dec.decode();
}

beforeAll(async () => {
  piOpenAI = await loadPiAiStream("openai-completions");
  piAnthropic = await loadPiAiStream("anthropic-messages");
  parts = await loadPiAiParts();
  server = await startLlmServer({});
  const full = {
    thinking: "let me think",
    text: "Héllo wörld, a reply",
    toolCalls: [
      { name: "read", arguments: { path: "a.txt", limit: 10 } },
      { name: "bash", arguments: { command: "echo \"ü\" && ls -la" } },
    ],
    chunkSize: 3,
    usage: { input: 120, output: 40, cacheRead: 30, cacheWrite: 5, reasoning: 12 },
  };
  for (const api of ["openai-completions", "anthropic-messages"] as const) {
    const p = api === "openai-completions" ? "oa" : "an";
    await record(`${p}-full`, api, full);
    await record(`${p}-text`, api, { text: "one two three four five", stopReason: "length" });
    await record(`${p}-odd-stop`, api, { text: "x", stopReason: "content_filter" });
    await record(`${p}-broken-args`, api, { toolCalls: [{ name: "edit", arguments: '{"path": "a", "x": [1, 2' }] });
    await record(`${p}-malformed`, api, { text: "a b c d", malformed: 2 });
    await record(`${p}-cut`, api, { text: "a b c d e f", cutAfterChunks: 3 });
  }
});
afterAll(async () => {
  await server?.close();
});

describe("fast path = pi-ai 1.6, recorded streams", () => {
  for (const api of ["openai-completions", "anthropic-messages"] as const) {
    const p = api === "openai-completions" ? "oa" : "an";

    it(`${api}: text, thinking, two tool calls, usage — split at every byte position`, async () => {
      const bytes = enc.encode(recorded[`${p}-full`]!);
      expect(bytes.length).toBeGreaterThan(1000);
      const first = await expectSame(api, [bytes]);
      expect(first.message.content.map((c) => c.type)).toEqual(["thinking", "text", "toolCall", "toolCall"]);
      expect(first.message.stopReason).toBe("toolUse");
      // pi 1.6 takes a chat completion's cached_tokens as the cache reads (writes counted apart).
      expect(first.message.usage.cacheRead).toBe(api === "openai-completions" ? 35 : 30);
      // pi 1.6's fields, from the provider's own finish reason and reasoning-token count
      expect(first.added).toEqual({ rawStopReason: api === "openai-completions" ? "tool_calls" : "tool_use", reasoning: 12 });
      for (let i = 1; i < bytes.length; i++) await expectSame(api, splitAt(bytes, i));
    });

    it(`${api}: one byte per read, and three-way splits`, async () => {
      const s = recorded[`${p}-full`]!;
      await expectSame(api, perByte(s));
      const bytes = enc.encode(s);
      let seed = 7;
      const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % bytes.length;
      for (let k = 0; k < 150; k++) {
        const [a, b] = [rnd(), rnd()].sort((x, y) => x - y);
        await expectSame(api, splitAt(bytes, a!, b!));
      }
    });

    it(`${api}: other stop reasons, broken tool arguments, a malformed record, a cut stream`, async () => {
      for (const name of ["text", "odd-stop", "broken-args", "malformed", "cut"]) {
        const s = recorded[`${p}-${name}`]!;
        expect(s.length).toBeGreaterThan(0);
        await expectSame(api, whole(s));
        await expectSame(api, perByte(s));
      }
      // The cut again, this time as the socket error it was.
      const cut = await expectSame(api, whole(recorded[`${p}-cut`]!), { failWith: new TypeError("terminated") });
      expect(cut.message.stopReason).toBe("error");
      const length = await expectSame(api, whole(recorded[`${p}-text`]!));
      expect(length.message.stopReason).toBe("length");
      // OpenAI always reports a reasoning count with its usage (0 here); Anthropic only when it has one (pi 1.6 likewise)
      expect(length.added).toEqual(api === "openai-completions" ? { rawStopReason: "length", reasoning: 0 } : { rawStopReason: "max_tokens" });
      const odd = await expectSame(api, whole(recorded[`${p}-odd-stop`]!));
      expect(odd.message.stopReason).toBe("error");
      expect(odd.added.rawStopReason).toBe("content_filter");
      expect(cut.added.rawStopReason).toBeUndefined();
    });

    it(`${api}: aborted before the body is read`, async () => {
      const extra = () => {
        const ac = new AbortController();
        return { signal: ac.signal, onResponse: () => ac.abort() };
      };
      const r = await expectSame(api, whole(recorded[`${p}-full`]!), { extra });
      expect(r.message.stopReason).toBe("aborted");
    });
  }
});

describe("fast path = pi-ai 1.6, written streams", () => {
  const oaChunk = (delta: unknown, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: "c1", model: "other-model", choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  const anEvent = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const anStart = anEvent("message_start", { type: "message_start", message: { id: "msg_1", usage: { input_tokens: 5, output_tokens: 1 } } });
  const anText = anEvent("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    anEvent("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "par" } });

  const openai: Record<string, string> = {
    "mid-stream error with metadata": oaChunk({ content: "partial " }) + `data: ${JSON.stringify({ error: { message: "Overloaded", metadata: { raw: "upstream 529" } } })}\n\n`,
    "mid-stream error without a message": oaChunk({ content: "x" }) + `data: {"error":{"code":500}}\n\n`,
    "CRLF, comments, data after [DONE]": (oaChunk({ content: "a" }) + ": keep-alive\n\n" + oaChunk({ content: "b" }, { usage: { prompt_tokens: 10, completion_tokens: 2 } })).replace(/\n/g, "\r\n") + "data: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ignored\"}}]}\n\n",
    "a last event without its blank line": oaChunk({ content: "a" }) + `data: ${JSON.stringify({ choices: [{ delta: { content: "dropped" } }] })}`,
    "reasoning fields, usage in the choice, tool call by id": oaChunk({ reasoning: "think" }) + oaChunk({ reasoning_text: "more" }) +
      oaChunk({ tool_calls: [{ id: "t1", function: { name: "f", arguments: "{\"a\":" } }] }) + oaChunk({ tool_calls: [{ id: "t1", function: { arguments: "1}" } }] }) +
      `data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "tool_calls", usage: { prompt_tokens: 7, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 1 } } }] })}\n\n`,
    "not JSON": oaChunk({ content: "a" }) + "data: {nope\n\n",
    "a thread event and null": `event: thread.message\ndata: {"x":1}\n\ndata: null\n\n` + oaChunk({ content: "z" }),
  };
  const anthropic: Record<string, string> = {
    "event: error mid-stream": anStart + anText + `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
    "unknown stop reason": anStart + anText + anEvent("message_delta", { type: "message_delta", delta: { stop_reason: "weird" }, usage: { output_tokens: 3 } }),
    "ended before message_stop": anStart + anText,
    "refusal": anStart + anText + anEvent("content_block_stop", { type: "content_block_stop", index: 0 }) +
      anEvent("message_delta", { type: "message_delta", delta: { stop_reason: "refusal" }, usage: { output_tokens: 3 } }) + anEvent("message_stop", { type: "message_stop" }),
    "CRLF, comments, a last event without its blank line": (anStart + ": ping\n\n" + anText).replace(/\n/g, "\r\n") +
      anEvent("content_block_stop", { type: "content_block_stop", index: 0 }) + `event: message_stop\ndata: {"type":"message_stop"}`,
    "unparseable event": anStart + "event: content_block_start\ndata: {broken\n\n",
    "redacted thinking and a tool call": anStart +
      anEvent("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "sig" } }) +
      anEvent("content_block_stop", { type: "content_block_stop", index: 0 }) +
      anEvent("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "tu", name: "f", input: {} } }) +
      anEvent("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"q\": \"a" } }) +
      anEvent("content_block_stop", { type: "content_block_stop", index: 1 }) +
      anEvent("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9, cache_read_input_tokens: 2 } }) +
      anEvent("message_stop", { type: "message_stop" }),
  };

  // Streams for a model of their own (provider, price tiers, fallback models).
  const details = (d: unknown[]) => oaChunk({ reasoning_details: d });
  const stop = (finish: string, usage: unknown) => `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`;
  const withModel: [FastApi, string, Record<string, unknown>, string][] = [
    ["openai-completions", "OpenRouter: reasoning details merged into the thinking signature, reported cost", { provider: "openrouter", id: "x/m" },
      details([{ type: "reasoning.text", text: "th", format: "f", index: 0 }]) + oaChunk({ reasoning: "think" }) + details([{ type: "reasoning.text", text: "ink", signature: "s1" }]) +
      details([{ type: "reasoning.encrypted", data: "enc", id: "r1" }, { type: "bogus" }]) + oaChunk({ content: "answer" }) +
      stop("stop", { prompt_tokens: 9, completion_tokens: 4, cost: 0.5, is_byok: false })],
    ["openai-completions", "OpenRouter: bring-your-own-key cost, reasoning and content in one delta", { provider: "openrouter", id: "x/m" },
      oaChunk({ reasoning: "r", content: "c" }) + stop("stop", { prompt_tokens: 9, completion_tokens: 4, cost: 0.1, is_byok: true, cost_details: { upstream_inference_cost: 0.2 } })],
    ["openai-completions", "price tiers, cache reads reported at the top level", { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, tiers: [{ inputTokensAbove: 100, input: 6, output: 30, cacheRead: 0.6, cacheWrite: 7.5 }] } },
      oaChunk({ content: "x" }) + stop("stop", { prompt_tokens: 400, completion_tokens: 4, cached_tokens: 50 })],
    ["anthropic-messages", "a fallback model's cost, 1h cache writes, thinking tokens, input transformations", { compat: { allowedFallbackModels: [{ provider: "test", model: "m-small", cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 } }] } },
      anEvent("message_start", { type: "message_start", message: { id: "msg_2", model: "m-small", usage: { input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: 10, cache_creation: { ephemeral_1h_input_tokens: 4 } }, input_transformations: [{ type: "trim", path: "/messages/0", reason: null }] } }) +
      anEvent("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "fallback" } }) +
      anEvent("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "thinking", thinking: "pre ", signature: "s0" } }) +
      anEvent("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "thinking_delta", thinking: "more" } }) +
      anEvent("content_block_stop", { type: "content_block_stop", index: 1 }) +
      anEvent("content_block_start", { type: "content_block_start", index: 2, content_block: { type: "text", text: "hi " } }) +
      anEvent("content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "there" } }) +
      anEvent("content_block_stop", { type: "content_block_stop", index: 2 }) +
      anEvent("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 7, cache_creation: { ephemeral_1h_input_tokens: 6 }, output_tokens_details: { thinking_tokens: 3 } } }) +
      anEvent("message_stop", { type: "message_stop" })],
    ["anthropic-messages", "a refusal with its explanation", {},
      anStart + anText + anEvent("content_block_stop", { type: "content_block_stop", index: 0 }) +
      anEvent("message_delta", { type: "message_delta", delta: { stop_reason: "refusal", stop_details: { explanation: "not that" } }, usage: { output_tokens: 3 } }) + anEvent("message_stop", { type: "message_stop" })],
    ["anthropic-messages", "a fallback block after output, OpenRouter's reported cost", { provider: "openrouter", id: "anthropic/m" },
      anStart + anText + anEvent("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "fallback" } })],
    ["anthropic-messages", "OpenRouter's reported cost, no stop reason", { provider: "openrouter", id: "anthropic/m" },
      anStart + anText + anEvent("content_block_stop", { type: "content_block_stop", index: 0 }) +
      anEvent("message_delta", { type: "message_delta", delta: {}, usage: { output_tokens: 3, cost: 0.25, is_byok: false } }) + anEvent("message_stop", { type: "message_stop" })],
  ];
  for (const [api, name, over, body] of withModel) {
    it(`${api}: ${name}`, async () => {
      modelOver = over;
      const r = await expectSame(api, whole(body));
      const bytes = enc.encode(body);
      for (let i = 1; i < bytes.length; i += 7) await expectSame(api, splitAt(bytes, i));
      expect(r.events.length).toBeGreaterThan(1);
    });
  }

  for (const [api, table] of [["openai-completions", openai], ["anthropic-messages", anthropic]] as const) {
    for (const [name, s] of Object.entries(table)) {
      it(`${api}: ${name}`, async () => {
        const r = await expectSame(api, whole(s));
        await expectSame(api, perByte(s));
        const bytes = enc.encode(s);
        for (let i = 1; i < bytes.length; i += 3) await expectSame(api, splitAt(bytes, i));
        expect(r.events.length).toBeGreaterThan(1);
      });
    }
  }

  it("errors mid-stream carry pi-ai's messages", async () => {
    const r = await expectSame("openai-completions", whole(openai["mid-stream error with metadata"]!));
    expect(r.message.errorMessage).toBe("Overloaded\nupstream 529");
    expect(r.message.content).toEqual([{ type: "text", text: "partial " }]);
    const a = await expectSame("anthropic-messages", whole(anthropic["unknown stop reason"]!));
    expect(a.message.errorMessage).toBe("Unhandled stop reason: weird");
  });
});

describe("fast path = pi-ai 1.6: the end of a chat-completions stream", () => {
  const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  /** pi-ai 1.6's own module and the fast path in front of it, on the same body. */
  async function both(body: string, over: Record<string, unknown> = {}) {
    const piAiStream = await loadPiAiStream("openai-completions");
    const m = { ...model("openai-completions"), ...over } as Model<Api>;
    const run = async (fn: StreamFn) => {
      const s = fn(m, context, { apiKey: "sk-test", maxRetries: 0, fetch: fakeFetch(whole(body)) } as never);
      const types: string[] = [];
      for await (const e of s as AsyncIterable<AssistantMessageEvent>) types.push(e.type);
      const msg = (await s.result()) as AssistantMessage;
      return { types, stopReason: msg.stopReason, errorMessage: msg.errorMessage, content: msg.content };
    };
    return [await run(piAiStream), await run(withFastPath("openai-completions", piAiStream, parts))] as const;
  }

  it("no finish_reason: an error with 1.6's message, the content kept", async () => {
    const [a, b] = await both(chunk({ content: "half" }) + "data: [DONE]\n\n");
    expect(a).toMatchObject({ stopReason: "error", errorMessage: NO_FINISH, content: [{ type: "text", text: "half" }] });
    expect(b).toEqual(a);
  });

  it("no finish_reason from a model whose compat says it sends none: stop, or toolUse after a tool call", async () => {
    const compat = { compat: { supportsFinishReason: false } };
    const [a, b] = await both(chunk({ content: "ok" }), compat);
    expect(a.stopReason).toBe("stop");
    expect(b).toEqual(a);
    const [c, d] = await both(chunk({ tool_calls: [{ index: 0, id: "t1", function: { name: "f", arguments: "{}" } }] }), compat);
    expect(c.stopReason).toBe("toolUse");
    expect(d).toEqual(c);
  });

  it("a finish_reason: as before", async () => {
    const [a, b] = await both(chunk({ content: "ok" }) + chunk({}, "stop"));
    expect(a.stopReason).toBe("stop");
    expect(b).toEqual(a);
  });
});

describe("when the fast path applies", () => {
  const saved = process.env.PI_STREAM_FAST_PATH;
  afterEach(() => {
    if (saved === undefined) delete process.env.PI_STREAM_FAST_PATH;
    else process.env.PI_STREAM_FAST_PATH = saved;
  });

  it("not for Anthropic OAuth tokens, a caller's client, a missing key, or PI_STREAM_FAST_PATH=0", () => {
    expect(fastPathApplies("anthropic-messages", { apiKey: "sk-ant-api-1" })).toBe(true);
    expect(fastPathApplies("anthropic-messages", { apiKey: "sk-ant-oat01-x" })).toBe(false);
    expect(fastPathApplies("anthropic-messages", { apiKey: "k", client: {} })).toBe(false);
    expect(fastPathApplies("anthropic-messages", {})).toBe(false);
    expect(fastPathApplies("openai-completions", {})).toBe(true);
    process.env.PI_STREAM_FAST_PATH = "0";
    expect(fastPathApplies("openai-completions", { apiKey: "k" })).toBe(false);
  });

  it("HTTP errors stay pi-ai's (its retries and messages)", async () => {
    const { pi, fast } = fns("openai-completions");
    const failing = fakeFetch(whole(`{"error":{"message":"bad key"}}`), { status: 401 });
    const a = await collect(pi, "openai-completions", failing);
    const b = await collect(fast, "openai-completions", failing);
    expect(b.final).toBe(a.final);
    expect(b.message.stopReason).toBe("error");
  });
});

describe("backpressure", () => {
  it("reads the body only as fast as the events are taken", async () => {
    const chunk = `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { content: "w " }, finish_reason: null }] })}\n\n`;
    const pieces = Array.from({ length: 500 }, () => enc.encode(chunk));
    let pulled = 0;
    const counting: typeof fetch = (async (input: unknown, init?: RequestInit) => {
      const res = await fakeFetch(pieces)(input as string, init);
      const reader = res.body!.getReader();
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(c) {
            const r = await reader.read();
            if (r.done) c.close();
            else {
              pulled++;
              c.enqueue(r.value);
            }
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: 200, headers: res.headers });
    }) as typeof fetch;
    const { fast } = fns("openai-completions");
    const saved = globalThis.fetch;
    globalThis.fetch = counting;
    let s: AssistantStream;
    try {
      s = fast(model("openai-completions"), context, { apiKey: "k" } as never);
    } finally {
      globalThis.fetch = saved;
    }
    const it = (s as AsyncIterable<AssistantMessageEvent>)[Symbol.asyncIterator]();
    const types: string[] = [];
    while (types.filter((t) => t === "text_delta").length < 10) types.push((await it.next()).value!.type);
    // The reader stops here: however long it waits, the producer stays a few chunks ahead.
    for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
    expect(pulled).toBeLessThan(20);
    let rest = 0;
    for (let r = await it.next(); !r.done; r = await it.next()) rest++;
    expect(pulled).toBe(500);
    expect(rest).toBeGreaterThan(490);
    expect((await s.result()).content).toEqual([{ type: "text", text: "w ".repeat(500) }]);
  });
});

describe("the answer path's warm-up", () => {
  it("reads its canned answer to the end: one tool call with its parsed arguments, stop reason toolUse", async () => {
    const message = await warmAnswerPath(await loadPiAiParts());
    expect(message?.stopReason).toBe("toolUse");
    expect(message?.content).toEqual([{ type: "toolCall", id: "call_0", name: "tool", arguments: { path: "a.txt", n: 1 } }]);
    expect(message?.usage.totalTokens).toBe(3);
  });
});
