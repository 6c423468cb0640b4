/**
 * The direct path for chat completions (direct.ts) against pi-ai 1.6's own module
 * (`@earendil-works/pi-ai/api/openai-completions`, as plugins/providers/pi-ai-api.ts calls it)
 * with the `openai` SDK and Node's fetch:
 *  - the request: for a table of models (OpenAI, a reasoning custom model, OpenRouter, Z.ai,
 *    DeepSeek, Moonshot, compat overrides), options and contexts (with and without tools, tool
 *    results, reasoning replay), a recording server gets the same method, URL, headers and body
 *    (byte for byte) from both;
 *  - the answer: the same events and final message (usage, cost, stop reason) for the same
 *    scripted streams;
 *  - what is pi-ai's: HTTP errors (its messages, its retries, no extra attempt), a refused
 *    connection, a timeout; onPayload runs once and its payload is what is sent; onResponse.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import type { Api, AssistantMessage, AssistantMessageEvent, Context, Model } from "@mariozechner/pi-ai";
import { startLlmServer } from "../../../tests/fixtures/llm-server.mjs";
import type { StreamFn, AssistantStream } from "../../../core/kernel/index.js";
import { createOpenAICompletionsStream, directApplies, noteNativeFetch } from "./direct.js";
import { withFastPath, loadPiAiParts } from "./fast-path.js";

const execFileP = promisify(execFile);

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

// ---- a recording server: keeps every request, answers a short chat-completions stream ----------
let recorder: Server;
let recorderUrl: string;
const seen: Seen[] = [];
const SSE =
  `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta: { content: "ok" }, finish_reason: null }] })}\n\n` +
  `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } })}\n\n` +
  "data: [DONE]\n\n";

let llm: Awaited<ReturnType<typeof startLlmServer>>;
let piStream: StreamFn;
let viaPi: StreamFn;
let fallbackUsed = 0;
/** The direct path; a call it does not serve counts in fallbackUsed and goes to pi-ai's path. */
let direct: StreamFn;

beforeAll(async () => {
  recorder = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const coding = /\/(gzip|deflate|br)\//.exec(req.url ?? "")?.[1];
      res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "r1", "set-cookie": ["a=1", "b=2"], "x-multi": ["1", "2"], ...(coding ? { "content-encoding": coding } : {}) });
      if (coding === "gzip") res.end(gzipSync(SSE));
      else if (coding === "deflate") res.end(deflateSync(SSE));
      else if (coding === "br") res.end(brotliCompressSync(SSE));
      else res.end(SSE);
    });
  });
  await new Promise<void>((r) => recorder.listen(0, "127.0.0.1", () => r()));
  recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  llm = await startLlmServer({});
  piStream = await (await import("../pi-ai-api.js")).loadPiAiStream("openai-completions");
  viaPi = withFastPath("openai-completions", piStream, await loadPiAiParts());
  noteNativeFetch(globalThis.fetch);
  direct = createOpenAICompletionsStream(async () => {
    fallbackUsed++;
    return viaPi;
  });
});
afterAll(async () => {
  await new Promise<void>((r) => recorder?.close(() => r()));
  await llm?.close();
});
afterEach(() => {
  delete process.env.PI_CACHE_RETENTION;
});

function model(over: Record<string, unknown> = {}): Model<Api> {
  return {
    id: "m1",
    name: "m1",
    api: "openai-completions",
    provider: "bench",
    baseUrl: `${recorderUrl}/v1`,
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 100000,
    maxTokens: 50000,
    ...over,
  } as Model<Api>;
}

/** `v` through JSON with a replacer (to blank what differs by construction: timestamps, ids). */
function through<T>(v: T, replace: (k: string, x: unknown) => unknown = (_k, x) => x): T {
  // durationMs is a measurement: equal when both have a whole number of milliseconds.
  return JSON.parse(JSON.stringify(v, (k, x) => (k === "durationMs" ? (Number.isInteger(x) && (x as number) >= 0 ? "ms" : x) : replace(k, x))));
}

async function drain(s: AssistantStream): Promise<{ events: AssistantMessageEvent[]; message: AssistantMessage }> {
  const events: AssistantMessageEvent[] = [];
  for await (const e of s as AsyncIterable<AssistantMessageEvent>) events.push(e);
  return { events, message: await s.result() };
}

/** The request pi-ai 1.6 + SDK + fetch make, and the one the direct path makes, for the same call. */
async function bothRequests(m: Model<Api>, context: Context, options: Record<string, unknown>): Promise<[Seen, Seen]> {
  seen.length = 0;
  const before = fallbackUsed;
  const a = await drain(piStream(m, context, { apiKey: "sk-test-1", maxRetries: 0, ...options } as never));
  expect(a.message.stopReason).toBe("stop");
  const b = await drain(direct(m, context, { apiKey: "sk-test-1", maxRetries: 0, ...options } as never));
  expect(b.message.stopReason).toBe("stop");
  expect(fallbackUsed).toBe(before);
  expect(seen).toHaveLength(2);
  return [seen[0]!, seen[1]!];
}

const png = { type: "image" as const, data: "aGVsbG8=", mimeType: "image/png" };
const tools = [
  { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } },
];
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
function history(provider = "bench", api = "openai-completions", id = "m1"): Context["messages"] {
  const origin = { api, provider, model: id, usage, timestamp: 1 };
  return [
    { role: "user", content: "first \ud800 question", timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm", thinkingSignature: "reasoning_content" },
        { type: "text", text: "let me look" },
        { type: "toolCall", id: "call_1|very/long+id=", name: "read", arguments: { path: "a.txt" }, thoughtSignature: JSON.stringify({ type: "reasoning.encrypted", id: "call_1", data: "x" }) },
        { type: "toolCall", id: "call_2", name: "bash", arguments: { command: "ls" } },
      ],
      stopReason: "toolUse",
      ...origin,
    } as never,
    { role: "toolResult", toolCallId: "call_1|very/long+id=", toolName: "read", content: [{ type: "text", text: "contents" }, png], isError: false, timestamp: 1 },
    { role: "toolResult", toolCallId: "call_2", toolName: "bash", content: [png], isError: false, timestamp: 1 },
    { role: "user", content: [{ type: "text", text: "and now?" }, png], timestamp: 1 },
    { role: "assistant", content: [], stopReason: "aborted", ...origin } as never,
    { role: "assistant", content: [{ type: "text", text: "   " }, { type: "text", text: "done" }], stopReason: "stop", ...origin } as never,
    { role: "user", content: "thanks", timestamp: 1 },
  ];
}

/** A history whose thinking carries OpenRouter reasoning details, a long `call|item` id, an empty tool result. */
function replayDetails(provider: string, id: string): Context["messages"] {
  const origin = { api: "openai-completions", provider, model: id, usage, timestamp: 1 };
  const details = [{ type: "reasoning.text", text: "hmm", format: "x", index: 0 }, { type: "reasoning.encrypted", data: "enc", id: "r1" }];
  const longId = `call_${"a".repeat(30)}|item+${"b".repeat(30)}`;
  return [
    { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "go" }], timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm", thinkingSignature: JSON.stringify(details) },
        { type: "toolCall", id: longId, name: "read", arguments: { path: "a" } },
      ],
      stopReason: "toolUse",
      ...origin,
    } as never,
    { role: "toolResult", toolCallId: longId, toolName: "read", content: [{ type: "text", text: "  " }], isError: false, timestamp: 1 },
    { role: "user", content: "next", timestamp: 1 },
  ];
}

describe("direct path: the request is pi-ai 1.6's and the SDK's", () => {
  const hi: Context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };
  const cases: [string, () => [Record<string, unknown>, Context, Record<string, unknown>]][] = [
    ["a plain model, one user message", () => [{}, hi, {}]],
    ["system prompt, tools, history with thinking, tool calls, images", () => [{}, { systemPrompt: "be brief", messages: history(), tools }, {}]],
    ["history with tool calls but no tools", () => [{}, { messages: history() }, {}]],
    ["no tools, an empty tools list", () => [{}, { systemPrompt: "s", messages: history(), tools: [] }, {}]],
    ["a custom reasoning model: system role, reasoning_effort, temperature, max tokens, tool choice", () => [
      { reasoning: true, thinkingLevelMap: { xhigh: "max" } },
      { systemPrompt: "sys", messages: history(), tools },
      { reasoning: "xhigh", temperature: 0.2, maxTokens: 123, toolChoice: "auto" },
    ]],
    ["a custom reasoning model marked for the developer role and strict tools", () => [
      { reasoning: true, compat: { supportsDeveloperRole: true, supportsStrictMode: true } },
      { systemPrompt: "sys", messages: history(), tools },
      { reasoning: "high" },
    ]],
    ["reasoning model with thinking off mapped to a value", () => [{ reasoning: true, thinkingLevelMap: { off: "none", minimal: null } }, { messages: history() }, { reasoning: "minimal" }]],
    ["the model's maxTokens fitted into a small context window", () => [{ contextWindow: 40000, maxTokens: 64000 }, { systemPrompt: "x".repeat(20000), messages: history() }, {}]],
    ["a requested maxTokens above the room left", () => [{ contextWindow: 8000 }, { messages: history() }, { maxTokens: 7000 }]],
    ["model headers, option headers overriding them, a null header, session id", () => [
      { headers: { "X-Model": "a", "x-over": "model", "User-Agent": "custom/1", Accept: null } },
      hi,
      { headers: { "X-Over": "option" }, sessionId: "sess-1", timeoutMs: 90000 },
    ]],
    ["openai: developer role, prompt cache key (clamped), long retention from the environment", () => {
      process.env.PI_CACHE_RETENTION = "long";
      return [{ provider: "openai", id: "gpt-x", baseUrl: `${recorderUrl}/api.openai.com/v1/`, reasoning: true }, { systemPrompt: "sys", messages: history("openai", "openai-completions", "gpt-x"), tools }, { sessionId: "s".repeat(80), reasoning: "low" }];
    }],
    ["openrouter: reasoning object, routing, anthropic cache control, session header", () => [
      { provider: "openrouter", id: "anthropic/claude-x", baseUrl: `${recorderUrl}/openrouter.ai/api/v1`, reasoning: true, compat: { openRouterRouting: { order: ["a"] } } },
      { systemPrompt: "sys", messages: history("openrouter", "openai-completions", "anthropic/claude-x"), tools },
      { reasoning: "high", cacheRetention: "long", sessionId: "s" },
    ]],
    ["openrouter: reasoning details replayed, thinking off", () => [
      { provider: "openrouter", id: "openai/gpt-x", baseUrl: `${recorderUrl}/openrouter.ai/api/v1`, reasoning: true },
      { messages: replayDetails("openrouter", "openai/gpt-x") },
      { sessionId: "s3" },
    ]],
    ["deepseek: thinking, reasoning_content on assistant messages, max_tokens, no store", () => [
      { provider: "deepseek", baseUrl: `${recorderUrl}/api.deepseek.com/v1`, reasoning: true },
      { messages: history("deepseek") },
      { reasoning: "medium" },
    ]],
    ["deepseek: thinking off", () => [{ provider: "deepseek", baseUrl: `${recorderUrl}/api.deepseek.com/v1`, reasoning: true }, { messages: history("deepseek"), tools }, {}]],
    ["zai: thinking disabled, tools", () => [{ provider: "zai", baseUrl: `${recorderUrl}/api.z.ai/v1`, reasoning: true }, { messages: history("zai"), tools }, {}]],
    ["zai: thinking enabled", () => [{ provider: "zai", baseUrl: `${recorderUrl}/api.z.ai/v1`, reasoning: true }, { systemPrompt: "s", messages: history("zai") }, { reasoning: "high" }]],
    ["moonshot: max_tokens", () => [{ provider: "moonshotai", baseUrl: `${recorderUrl}/api.moonshot.ai/v1` }, { messages: history("moonshotai"), tools }, { maxTokens: 77 }]],
    ["together: reasoning enabled flag", () => [{ provider: "together", baseUrl: `${recorderUrl}/api.together.xyz/v1`, reasoning: true }, { messages: history("together") }, { reasoning: "low" }]],
    ["compat overrides: names on tool results, bridge messages, thinking as text, qwen template, affinity headers, tools with tool history", () => [
      {
        reasoning: true,
        compat: {
          requiresToolResultName: true,
          requiresAssistantAfterToolResult: true,
          requiresThinkingAsText: true,
          requiresToolsWithToolHistory: true,
          thinkingFormat: "qwen-chat-template",
          sendSessionAffinityHeaders: true,
          supportsStore: false,
          supportsUsageInStreaming: false,
          maxTokensField: "max_tokens",
          zaiToolStream: true,
          vllmPriority: 3,
          promptCacheKeyMode: "enabled",
        },
      },
      { systemPrompt: "s", messages: history() },
      { sessionId: "aff-1", reasoning: "low" },
    ]],
    ["qwen thinking, non-null assistant content", () => [
      { reasoning: true, compat: { thinkingFormat: "qwen", requiresNonNullAssistantContent: true, supportsStrictMode: true } },
      { messages: history(), tools },
      { reasoning: "medium" },
    ]],
    ["vercel gateway routing, a non-vision model", () => [
      { baseUrl: `${recorderUrl}/ai-gateway.vercel.sh/v1`, input: ["text"], compat: { vercelGatewayRouting: { only: ["x"], order: ["y", "x"] } } },
      { messages: history() },
      { cacheRetention: "none", sessionId: "s" },
    ]],
    ["messages from another provider's model", () => [{}, { messages: history("anthropic", "anthropic-messages", "claude") }, {}]],
  ];
  for (const [name, make] of cases) {
    it(name, async () => {
      const [over, context, options] = make();
      const m = model(over);
      expect(directApplies(m, { apiKey: "k", ...options }, context)).toBe(true);
      const [a, b] = await bothRequests(m, context, options);
      expect(b.method).toBe(a.method);
      expect(b.url).toBe(a.url);
      expect(b.headers).toEqual(a.headers);
      expect(b.body).toBe(a.body);
    });
  }

  it("the key is sent as the SDK sends it (the recorder sees it, llm-server redacts it)", async () => {
    const [a, b] = await bothRequests(model(), { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, {});
    expect(a.headers.authorization).toBe("Bearer sk-test-1");
    expect(b.headers.authorization).toBe("Bearer sk-test-1");
  });

  it("onPayload sees pi-ai's payload once and what it returns is sent; onResponse gets pi-ai's status and headers", async () => {
    const got: { payloads: unknown[]; responses: unknown[] }[] = [];
    for (const fn of [piStream, direct]) {
      const rec = { payloads: [] as unknown[], responses: [] as unknown[] };
      got.push(rec);
      seen.length = 0;
      await drain(
        fn(model(), { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, {
          apiKey: "sk",
          maxRetries: 0,
          onPayload: (p: unknown) => {
            rec.payloads.push(structuredClone(p));
            return { ...(p as object), extra_field: 1 };
          },
          onResponse: (r: unknown) => void rec.responses.push(r),
        } as never),
      );
      expect(JSON.parse(seen[0]!.body).extra_field).toBe(1);
    }
    expect(got[1]).toEqual(got[0]);
    expect(got[1]!.payloads).toHaveLength(1);
  });
});

describe("direct path: thinking levels up to max are pi-ai 1.6's", () => {
  // The thinking fields each level up to max maps to, in pi-ai's request and in the direct path's
  // (the whole request is compared above).
  const FIELDS = ["reasoning_effort", "reasoning", "thinking", "enable_thinking", "chat_template_kwargs"];
  const thinkingFields = (body: string) => {
    const b = JSON.parse(body) as Record<string, unknown>;
    return Object.fromEntries(FIELDS.filter((k) => k in b).map((k) => [k, b[k]]));
  };
  const cases: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
    ["max mapped to max", { reasoning: true, thinkingLevelMap: { xhigh: "xhigh", max: "max" } }, "max", { reasoning_effort: "max" }],
    ["max mapped to the provider's own value; xhigh not offered goes up to it", { reasoning: true, thinkingLevelMap: { max: "ultra" } }, "xhigh", { reasoning_effort: "ultra" }],
    ["max not mapped: the highest level offered", { reasoning: true }, "max", { reasoning_effort: "high" }],
    ["max mapped to null: xhigh", { reasoning: true, thinkingLevelMap: { xhigh: "xhigh", max: null } }, "max", { reasoning_effort: "xhigh" }],
    ["deepseek", { provider: "deepseek", baseUrl: `${"RECORDER"}/api.deepseek.com/v1`, reasoning: true, thinkingLevelMap: { max: "max" } }, "max", { thinking: { type: "enabled" }, reasoning_effort: "max" }],
    ["openrouter", { provider: "openrouter", id: "anthropic/claude-x", baseUrl: `${"RECORDER"}/openrouter.ai/api/v1`, reasoning: true, thinkingLevelMap: { max: "xhigh" } }, "max", { reasoning: { effort: "xhigh" } }],
  ];
  let pi16: StreamFn;
  beforeAll(async () => {
    pi16 = await (await import("../pi-ai-api.js")).loadPiAiStream("openai-completions");
  });
  for (const [name, over, level, want] of cases) {
    it(name, async () => {
      const m = model(JSON.parse(JSON.stringify(over).replaceAll("RECORDER", recorderUrl)));
      const hi: Context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };
      seen.length = 0;
      await drain(pi16(m, hi, { apiKey: "sk", maxRetries: 0, reasoning: level } as never));
      const before = fallbackUsed;
      await drain(direct(m, hi, { apiKey: "sk", maxRetries: 0, reasoning: level } as never));
      expect(fallbackUsed).toBe(before);
      expect(seen).toHaveLength(2);
      expect(thinkingFields(seen[0]!.body)).toEqual(want);
      expect(thinkingFields(seen[1]!.body)).toEqual(want);
    });
  }
});

describe("direct path: the answer is pi-ai's", () => {
  const strip = (v: unknown) => through(v, (k, x) => (k === "partial" ? undefined : k === "timestamp" ? 0 : k === "responseId" ? "id" : x));
  const turns: [string, Record<string, unknown>][] = [
    ["text, thinking, tool calls, usage", { thinking: "let me think", text: "Héllo wörld", toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }, { name: "bash", arguments: { command: "ls" }, id: "call_b" }], chunkSize: 3, usage: { input: 9, output: 4, cacheRead: 2 } }],
    ["a long answer, many chunks", { text: "word ", repeat: 400, chunkSize: 5 }],
    ["an odd stop reason", { text: "x", stopReason: "content_filter" }],
    ["a malformed record", { text: "a b c d", malformed: 2 }],
  ];
  for (const [name, turn] of turns) {
    it(name, async () => {
      const m = model({ baseUrl: `${llm.url}/v1`, reasoning: true });
      const out = [];
      for (const fn of [piStream, direct]) {
        llm.setScript({ default: turn } as never);
        const r = await drain(fn(m, { messages: [{ role: "user", content: "go", timestamp: 1 }] }, { apiKey: "sk", maxRetries: 0 } as never));
        out.push({ events: strip(r.events), message: strip(r.message) });
        if (fn === direct) expect((r.message as { rawStopReason?: string }).rawStopReason).toBe(turn.malformed ? undefined : (turn.stopReason ?? (turn.toolCalls ? "tool_calls" : "stop")));
      }
      expect(out[1]).toEqual(out[0]);
    });
  }
});

describe("direct path: compressed bodies", () => {
  for (const coding of ["gzip", "deflate", "br"]) {
    it(`a ${coding} body is decoded as fetch decodes it`, async () => {
      const m = model({ baseUrl: `${recorderUrl}/${coding}/v1` });
      const hi: Context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };
      const a = await drain(piStream(m, hi, { apiKey: "sk", maxRetries: 0 } as never));
      const before = fallbackUsed;
      const b = await drain(direct(m, hi, { apiKey: "sk", maxRetries: 0 } as never));
      expect(fallbackUsed).toBe(before);
      expect(b.message.content).toEqual([{ type: "text", text: "ok" }]);
      expect(through({ ...b.message, timestamp: 0 })).toEqual(through({ ...a.message, timestamp: 0 }));
    });
  }
});

describe("direct path: what stays pi-ai's", () => {
  const hi: Context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };
  const strip = (m: AssistantMessage) => through({ ...m, timestamp: 0, responseId: m.responseId ? "id" : undefined });

  it("HTTP errors: pi-ai's message, its retries, and no extra attempt", async () => {
    const m = model({ baseUrl: `${llm.url}/v1` });
    for (const [turn, retries, attempts] of [
      [{ error: { status: 429, message: "slow down" } }, 0, 1],
      [{ error: { status: 400, message: "bad request" } }, 2, 1],
      [{ text: "fine", error: { status: 500, times: 1 } }, 1, 2],
    ] as const) {
      const results = [];
      for (const fn of [piStream, direct]) {
        llm.setScript({ default: turn } as never);
        await fetch(`${llm.url}/__reset`, { method: "POST" });
        const r = await drain(fn(m, hi, { apiKey: "sk", maxRetries: retries } as never));
        results.push({ message: strip(r.message), attempts: llm.stats().total });
      }
      expect(results[1]!.attempts).toBe(attempts);
      expect(results[1]).toEqual(results[0]);
    }
  });

  it("a refused connection, a timeout and a connection cut mid-body end as pi-ai's do (in a plain Node process)", async () => {
    // Run outside Jest: Node's own errors come from another realm under its VM modules, and
    // pi-ai's `instanceof Error` reads them differently there. Uses the built dist/ (npm run build).
    const fixture = fileURLToPath(new URL("../../../tests/fixtures/direct-outcomes.mjs", import.meta.url));
    const { stdout } = await execFileP(process.execPath, [fixture], { timeout: 120000, maxBuffer: 1 << 20 });
    const out = JSON.parse(stdout) as Record<string, { pi: AssistantMessage; direct: AssistantMessage }> & { fallbacks: number };
    expect(out["refused connection"]!.pi.errorMessage).toMatch(/^Connection error\.: connect ECONNREFUSED /);
    expect(out["timeout before the headers"]!.pi.errorMessage).toBe("Request timed out.: This operation was aborted (20)");
    expect(out["connection cut mid-body"]!.pi.errorMessage).toBe("terminated: other side closed (UND_ERR_SOCKET)");
    for (const name of ["refused connection", "timeout before the headers", "connection cut mid-body"]) {
      expect(out[name]!.direct).toEqual(out[name]!.pi);
    }
    // The refused connection and the timeout were handed to pi-ai's path; the cut was not.
    expect(out.fallbacks).toBe(2);
  });

  it("calls it does not serve go to pi-ai's path", async () => {
    const m = model();
    const saved = { ...process.env };
    const savedFetch = globalThis.fetch;
    try {
      expect(directApplies(m, { apiKey: "k" })).toBe(true);
      expect(directApplies(m, {})).toBe(false);
      expect(directApplies(model({ provider: "github-copilot" }), { apiKey: "k" })).toBe(false);
      expect(directApplies(model({ baseUrl: "http://x/{ACCOUNT}/v1" }), { apiKey: "k" })).toBe(false);
      process.env.PI_STREAM_FAST_PATH = "0";
      expect(directApplies(m, { apiKey: "k" })).toBe(false);
      delete process.env.PI_STREAM_FAST_PATH;
      process.env.HTTPS_PROXY = "http://127.0.0.1:1";
      expect(directApplies(m, { apiKey: "k" })).toBe(false);
      delete process.env.HTTPS_PROXY;
      process.env.OPENAI_ORG_ID = "org";
      expect(directApplies(m, { apiKey: "k" })).toBe(false);
      delete process.env.OPENAI_ORG_ID;
      // A replaced fetch (the network plugin's dispatcher, an extension's) is used: pi-ai's path.
      let calls = 0;
      globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
        calls++;
        return savedFetch(...args);
      }) as typeof fetch;
      expect(directApplies(m, { apiKey: "k" })).toBe(false);
      const before = fallbackUsed;
      const r = await drain(direct(m, hi, { apiKey: "k", maxRetries: 0 } as never));
      expect(r.message.stopReason).toBe("stop");
      expect(fallbackUsed).toBe(before + 1);
      expect(calls).toBe(1);
    } finally {
      globalThis.fetch = savedFetch;
      process.env = saved;
    }
  });
});
