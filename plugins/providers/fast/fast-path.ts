/**
 * The streaming fast path for OpenAI chat completions and Anthropic messages.
 *
 * pi-ai still does everything up to the response: options, auth, headers, the payload (and the
 * onPayload hook), retries, HTTP errors, onResponse. Only the body of a successful streaming
 * response is read here instead of by the SDK / pi-ai: the bytes are decoded by sse.ts and turned
 * into the same AssistantMessage events by the API's assembler, and the socket is read only as
 * fast as those events are consumed (backpressure: a reader that stops, e.g. a blocked RPC
 * stdout, stops the read instead of growing memory).
 *
 * How the body is taken over: pi-ai's SDK client is given a wrapper fetch (`intercept`) as
 * `options.fetch` (pi-ai 1.6) and, for the synchronous call of the stream function, as the global
 * `fetch` (for a module that builds its client then with the global it finds); the wrapper makes the real request with
 * the SDK's URL and init unchanged (`providerFetch`, the one place requests go out), keeps a
 * successful response's body and hands the SDK an empty body with the real status and headers.
 * pi-ai's `start` event (sent after onResponse) is the signal to start reading; pi-ai's own events
 * for the empty body are dropped. Anything else (an HTTP error, a failed request, a throw) is
 * pi-ai's own stream, forwarded unchanged.
 *
 * Applies when (else pi-ai's path, unchanged): the API is openai-completions or
 * anthropic-messages; PI_STREAM_FAST_PATH is not "0"; a global fetch exists; for Anthropic, the
 * options carry an API key that is not an OAuth token and no `client`, and the request is not
 * sent in a message thread (pi-ai continues threads from the replies it read itself).
 */
import type { AssistantMessage, Model, Api } from "@mariozechner/pi-ai";
import type { AssistantStream, StreamFn } from "../../../core/kernel/index.js";
import { AssistantMessageEventStream } from "../../../core/stores/index.js";
import { createAnthropicAssembler } from "./anthropic.js";
import { createOpenAICompletionsAssembler } from "./openai-completions.js";
import { loadPiAiParts, type PiAiParts } from "./pi-ai-parts.js";
import { SseDecoder } from "./sse.js";
import type { FastAssembler } from "./types.js";

export type FastApi = "openai-completions" | "anthropic-messages";
export { loadPiAiParts };

type Fetch = typeof globalThis.fetch;

/** Every provider request of the fast path goes out here (request options are the SDK's, unchanged). */
export function providerFetch(fetchImpl: Fetch, input: Parameters<Fetch>[0], init?: Parameters<Fetch>[1]): Promise<Response> {
  return fetchImpl(input, init);
}

interface StreamOptionsLike {
  apiKey?: unknown;
  client?: unknown;
  sessionId?: unknown;
  cacheRetention?: unknown;
  signal?: AbortSignal;
  /** pi 1.6's option: each parsed provider stream event (the extension hook provider_stream_event). */
  onProviderStreamEvent?: (data: unknown, model: Model<Api>) => unknown;
}

/** Whether the fast path serves this request (the conditions in the header). */
export function fastPathApplies(api: FastApi, options: StreamOptionsLike | undefined, model?: Model<Api>): boolean {
  if (process.env.PI_STREAM_FAST_PATH === "0" || typeof globalThis.fetch !== "function") return false;
  if (api === "anthropic-messages") {
    const key = options?.apiKey;
    if (!(typeof key === "string" && key !== "" && !key.includes("sk-ant-oat") && options?.client === undefined)) return false;
    return !(model && usesMessageThreads(model, options));
  }
  return true;
}

/**
 * Whether pi-ai sends this Anthropic request in a message thread (Anthropic's own API, or a model
 * marked for threads, with a session id and caching on): pi-ai then keeps the reply it read to
 * continue the thread next time, which needs it to read the body itself.
 */
function usesMessageThreads(model: Model<Api>, options: StreamOptionsLike | undefined): boolean {
  const o = options;
  const threads = (model as { compat?: { supportsMessageThreads?: boolean } }).compat?.supportsMessageThreads ?? (typeof model.baseUrl === "string" && model.baseUrl.includes("api.anthropic.com"));
  return threads && typeof o?.sessionId === "string" && o.sessionId !== "" && o?.cacheRetention !== "none";
}

/** The `openai` SDK's test for an aborted read (its isAbortError). */
function isAbortError(err: unknown): boolean {
  return typeof err === "object" && err !== null && (("name" in err && err.name === "AbortError") || ("message" in err && String(err.message).includes("FetchRequestCanceledException")));
}

/**
 * An option key (direct.ts): the outcome of a first attempt the direct path already made (an
 * HTTP error response, a failed connection, a timeout). pi-ai's SDK gets it as the result of its
 * first fetch, then goes on as it would (error message, retries), its later fetches real ones.
 */
export const FIRST_FETCH = Symbol("pi.fast-path.first-fetch");

/** Wrap pi-ai's stream function of `api` with the fast path. */
export function withFastPath(api: FastApi, inner: StreamFn, parts: PiAiParts): StreamFn {
  return (model, context, options) => {
    if (!fastPathApplies(api, options as StreamOptionsLike | undefined, model as Model<Api>)) return inner(model, context, options);
    let taken: Response | undefined;
    const realFetch: Fetch = (options as { fetch?: Fetch } | undefined)?.fetch ?? globalThis.fetch;
    let first = (options as { [FIRST_FETCH]?: () => Promise<Response> } | undefined)?.[FIRST_FETCH];
    const intercept: Fetch = async (input, init) => {
      const pending = first;
      first = undefined;
      const res = await (pending ? pending() : providerFetch(realFetch, input, init));
      if (taken || !res.ok || !res.body || res.status === 204 || res.status === 205) return res;
      taken = res;
      const empty = new ReadableStream<Uint8Array>({ start: (c) => c.close() });
      return new Response(empty, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const started = streamStart();
    let piStream: AssistantStream;
    // pi-ai 1.6 hands `options.fetch` to the SDK client it builds once the request starts; for a
    // module that builds its client synchronously with the global fetch, the global is swapped too.
    const globalFetch = globalThis.fetch;
    globalThis.fetch = intercept;
    try {
      piStream = inner(model, context, { ...(options as object), fetch: intercept } as typeof options);
    } finally {
      globalThis.fetch = globalFetch;
    }
    const out = new AssistantMessageEventStream();
    const opts = options as StreamOptionsLike | undefined;
    void relay(api, piStream, out, () => taken, model as Model<Api>, opts?.signal, parts, started, opts?.onProviderStreamEvent);
    return out;
  };
}

/** Forward pi-ai's events until its `start` for a taken-over body, then read that body here. */
async function relay(
  api: FastApi,
  piStream: AssistantStream,
  out: AssistantMessageEventStream,
  taken: () => Response | undefined,
  model: Model<Api>,
  signal: AbortSignal | undefined,
  parts: PiAiParts,
  started: StreamStart,
  onRaw?: StreamOptionsLike["onProviderStreamEvent"],
): Promise<void> {
  const it = piStream[Symbol.asyncIterator]();
  for (;;) {
    const r = await it.next();
    const body = taken();
    if (r.done) {
      void body?.body?.cancel().catch(() => undefined);
      out.end();
      return;
    }
    const ev = r.value;
    if (ev.type === "start" && body?.body) {
      const reader = body.body.getReader();
      const source: BodySource = { read: () => reader.read(), cancel: () => void reader.cancel().catch(() => undefined) };
      await readBody(api, source, { ...started, partial: ev.partial }, out, model, signal, parts, onRaw);
      return;
    }
    out.push(ev);
    if (out.isDone) {
      void body?.body?.cancel().catch(() => undefined);
      return;
    }
  }
}

/** A successful response's body, one network chunk per read. */
export interface BodySource {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(): void;
}

/** Read a successful streaming body into `out` (start … done / error), as pi-ai would. */
export async function readBody(
  api: FastApi,
  reader: BodySource,
  started: StreamStart,
  out: AssistantMessageEventStream,
  model: Model<Api>,
  signal: AbortSignal | undefined,
  parts: PiAiParts,
  onRaw?: StreamOptionsLike["onProviderStreamEvent"],
): Promise<void> {
  // pi-ai's message at its `start` event when there is one (fields it set before the response,
  // such as the provider's thinking level or diagnostics, are kept), with nothing streamed yet.
  const output: AssistantMessage = {
    ...(started.partial ?? { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id }),
    content: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "pending" as AssistantMessage["stopReason"],
    timestamp: started.partial?.timestamp ?? started.timestamp,
  };
  const timed = (message: AssistantMessage) => timeMessage(message, started);
  out.push({ type: "start", partial: output });
  const asm: FastAssembler =
    api === "openai-completions" ? createOpenAICompletionsAssembler(model, output, out, parts) : createAnthropicAssembler(model, output, out, parts);
  // Raw events for provider_stream_event (only when someone listens): parsed records, handed over
  // after each network chunk, before the next read.
  const rawEvents: unknown[] | undefined = onRaw ? [] : undefined;
  const decoder = new SseDecoder(asm.dialect, (event, data, raw) => {
    if (rawEvents && data !== "[DONE]") {
      try {
        rawEvents.push(JSON.parse(data));
      } catch {
        // not JSON: the assembler reports it as pi-ai does
      }
    }
    asm.onEvent(event, data, raw);
  });
  try {
    for (;;) {
      if (asm.checkAbortBeforeRead && signal?.aborted) throw new Error("Request was aborted");
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (asm.swallowAbortOnRead && isAbortError(error)) break;
        throw error;
      }
      if (chunk.done) {
        decoder.end();
        if (rawEvents?.length) for (const data of rawEvents.splice(0)) await onRaw!(data, model);
        break;
      }
      decoder.push(chunk.value!);
      if (rawEvents?.length) for (const data of rawEvents.splice(0)) await onRaw!(data, model);
      // Backpressure: the next read waits until the reader has taken what this chunk produced.
      if (out.backlog > 0) await out.drained();
    }
    asm.finish(signal?.aborted === true);
    out.push({ type: "done", reason: output.stopReason as "stop" | "length" | "toolUse", message: timed(output) });
    out.end();
  } catch (error) {
    reader.cancel();
    asm.cleanUp();
    output.stopReason = signal?.aborted ? "aborted" : "error";
    output.errorMessage = asm.errorMessage(error);
    out.push({ type: "error", reason: output.stopReason, error: timed(output) });
    out.end();
  }
}

/** When a stream function was called: its wall-clock time (the message timestamp) and a monotonic one. */
export interface StreamStart {
  timestamp: number;
  monotonic: number;
  /** pi-ai's message at its `start` event (the fast path); the direct path has none. */
  partial?: AssistantMessage;
}

export function streamStart(): StreamStart {
  return { timestamp: Date.now(), monotonic: performance.now() };
}

/**
 * pi-ai 1.6 times each answer: the final message gets `durationMs`, whole milliseconds since
 * the stream function was called (monotonic clock), unless it has one already.
 */
export function timeMessage<T extends AssistantMessage>(message: T, started: StreamStart): T {
  const m = message as T & { durationMs?: number };
  if (m.durationMs === undefined) m.durationMs = Math.max(0, Math.round(performance.now() - started.monotonic));
  return message;
}

/** A chat-completions answer carrying a tool call, with usage, as a server streams it. */
const CANNED_TOOL_CALL_ANSWER = [
  { choices: [{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_0", type: "function", function: { name: "tool", arguments: "" } }] }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"path":"a.txt",' } }] }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"n":1}' } }] }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
  { choices: [], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } },
]
  .map((c) => `data: ${JSON.stringify({ id: "chatcmpl-0", object: "chat.completion.chunk", created: 0, model: "m", ...c })}\n\n`)
  .concat("data: [DONE]\n\n");

/**
 * Read a canned chat-completions answer carrying a tool call through readBody (the SSE decoder,
 * the assembler, the streaming-JSON parser, the event stream), so that V8 has compiled that code
 * before the first real answer arrives: on its first run it costs a few milliseconds, which
 * otherwise fall between a fast server's last byte and the tool call. Nothing leaves it: the
 * body, the message, the model and the stream are its own, and the stream is read to its end.
 * Resolves with the message read (undefined if the path failed).
 */
export async function warmAnswerPath(parts: PiAiParts): Promise<AssistantMessage | undefined> {
  const model = { id: "m", name: "m", api: "openai-completions", provider: "warm-up", baseUrl: "http://127.0.0.1", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 } as unknown as Model<Api>;
  const chunks = CANNED_TOOL_CALL_ANSWER.map((s) => new TextEncoder().encode(s));
  const body: BodySource = { read: async () => (chunks.length ? { done: false, value: chunks.shift()! } : { done: true }), cancel: () => undefined };
  const out = new AssistantMessageEventStream();
  const reading = readBody("openai-completions", body, streamStart(), out, model, undefined, parts);
  let final: AssistantMessage | undefined;
  for await (const ev of out) {
    if (ev.type === "done") final = ev.message;
    if (ev.type === "done" || ev.type === "error") break;
  }
  await reading;
  return final;
}
