/**
 * The direct path for OpenAI chat completions: the common call (an API key, a plain http(s) base
 * URL, see openai-request.ts) is built, sent and read here without loading pi-ai's provider
 * module, the `openai` SDK or Node's fetch (undici). Measured on Node 22 (docs/streaming.md):
 * those cost a process about 35 MiB and a few hundred ms, more than the answer itself.
 *
 *   request   openai-request.ts: what pi-ai and the SDK would send (URL, headers, JSON body);
 *             options.onPayload (the before_provider_request hook) sees and may replace the payload
 *   transport http-request.ts: node:http(s), fetch's extra headers, decoding and timeouts
 *   response  a 2xx with a body: options.onResponse, then fast-path.ts's readBody, the same code
 *             that reads the bodies pi-ai's own requests get
 *
 * Anything else is pi-ai's, unchanged in outcome: an HTTP error, a failed connection or a timeout
 * is handed to pi-ai's path as the result of its SDK's first fetch (FIRST_FETCH), so the error
 * messages and the SDK's retries are pi-ai's (the payload is not built twice: pi-ai's onPayload
 * gets the one already sent). Calls the direct path does not serve go to pi-ai's path (`fallback`,
 * loaded on first use) as before.
 */
import type { AssistantMessage, Model, Api } from "@mariozechner/pi-ai";
import type { AssistantStream, StreamFn } from "../../../core/kernel/index.js";
import { AssistantMessageEventStream, createLazyStream } from "../../../core/stores/index.js";
import { FIRST_FETCH, fastPathApplies, readBody, streamStart, timeMessage, warmAnswerPath, type StreamStart } from "./fast-path.js";
import { loadTransport, sendDirect, type DirectResponse } from "./http-request.js";
import { buildOpenAIRequest, directOpenAIApplies, simpleToStreamOptions, transcriptOf } from "./openai-request.js";
import { loadPiAiParts, loadRequestParts, type PiAiParts } from "./pi-ai-parts.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- pi-ai's option bag */
type Json = any;

/**
 * Whether the process's fetch is still Node's own: a replaced one (the network plugin's proxy /
 * timeout dispatcher, an extension's) is honoured by sending through pi-ai's path, which uses it.
 */
let nativeFetch: typeof globalThis.fetch | undefined = globalThis.fetch;
export function noteNativeFetch(f: typeof globalThis.fetch | undefined): void {
  nativeFetch = f;
}

const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"];

/** Whether this call takes the direct path. */
export function directApplies(model: Model<Api>, options: Json, context?: Json): boolean {
  if (!fastPathApplies("openai-completions", options)) return false;
  if (process.env.PI_STREAM_DIRECT === "0") return false;
  if (globalThis.fetch !== nativeFetch || PROXY_VARS.some((k) => process.env[k])) return false;
  return directOpenAIApplies(model, options, context);
}

/**
 * Load what building and sending the first direct request needs (pi-ai's message helpers,
 * node:http), so that a provider preload (the session's warm-up while a mode waits for input)
 * takes it off that request's path. The helpers that read the answer start loading too, without
 * being waited for, and then read a canned answer once (warmAnswerPath): a server that answers
 * at once would otherwise find them still loading and compiling (Node 22: 4-7 ms between its
 * last byte and the tool call). Failures are left to the request, which reports them.
 */
export async function prepareDirect(): Promise<void> {
  try {
    await loadRequestParts();
    loadTransport();
    void loadPiAiParts()
      .then(warmAnswerPath)
      .catch(() => undefined);
  } catch {
    // reported by the request
  }
}

/** The chat-completions stream function: direct when it applies, else `fallback` (pi-ai's path). */
export function createOpenAICompletionsStream(fallback: () => Promise<StreamFn>): StreamFn {
  return (model, context, options) => {
    const viaPi = (opts: unknown): AssistantStream =>
      createLazyStream(model, () => fallback().then((f) => f(model, context, opts as never)), { signal: (opts as Json)?.signal });
    if (!directApplies(model as Model<Api>, options, context)) return viaPi(options);
    const started = streamStart();
    const out = new AssistantMessageEventStream();
    void runDirect(model as Model<Api>, context, options as Json, out, viaPi, started);
    return out;
  };
}

async function runDirect(model: Model<Api>, context: Json, options: Json, out: AssistantMessageEventStream, viaPi: (opts: unknown) => AssistantStream, started: StreamStart): Promise<void> {
  const timestamp = started.timestamp;
  const signal: AbortSignal | undefined = options?.signal;
  let payload: unknown;
  let res: DirectResponse;
  try {
    // pi-ai's streaming-JSON helpers are needed only to read the answer: when no preload
    // started them, they load while the server works on the request (~8 ms on Node 22).
    const rp = await loadRequestParts();
    const transcript = transcriptOf(context, rp);
    const so = simpleToStreamOptions(model, options, transcript, rp);
    let partsLoad: Promise<PiAiParts> | undefined;
    const loadParts = () => (partsLoad ??= loadPiAiParts());
    const req = buildOpenAIRequest(model, transcript, so, rp);
    payload = req.params;
    const next = await so.onPayload?.(payload, model);
    if (next !== undefined) payload = next;
    const sent = payload;
    // pi-ai's path, should it take over: the same payload, and the hook not run a second time.
    const handOver = (first: () => Promise<Response>) => forward(viaPi({ ...options, onPayload: async () => sent, [FIRST_FETCH]: first }), out);
    if (signal?.aborted) return handOver(() => Promise.reject(new Error("aborted")));
    try {
      res = await sendDirect(req.url, req.headers, JSON.stringify(payload), signal, req.timeoutMs, () => void loadParts().catch(() => {}));
    } catch (error) {
      // The SDK's view of a failed fetch: undici's TypeError, or the timeout it recognises.
      const e = error instanceof Error ? error : new Error(String(error));
      // A timeout is fetch's abort by the SDK's own timer.
      const seen =
        e.name === "AbortError" ? e : /timed? ?out/i.test(e.message) ? new DOMException("This operation was aborted", "AbortError") : Object.assign(new TypeError("fetch failed"), { cause: e });
      return handOver(() => Promise.reject(seen));
    }
    if (res.status < 200 || res.status > 299 || res.status === 204 || res.status === 205) {
      const bytes = await readAll(res);
      const nullBody = res.status === 204 || res.status === 205 || res.status === 304;
      return handOver(async () => new Response(nullBody ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headerList }));
    }
    try {
      await so.onResponse?.({ status: res.status, headers: { ...res.headers } }, model);
    } catch (error) {
      res.body.cancel();
      throw error;
    }
    let parts: PiAiParts;
    try {
      parts = await loadParts();
    } catch (error) {
      res.body.cancel();
      throw error;
    }
    await readBody("openai-completions", res.body, started, out, model, signal, parts, options?.onProviderStreamEvent);
  } catch (error) {
    // pi-ai's catch before the response: one `error` event, nothing streamed.
    const output: AssistantMessage = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: signal?.aborted ? "aborted" : "error",
      timestamp,
    };
    const piParts = await loadPiAiParts().catch(() => undefined);
    output.errorMessage = piParts ? piParts.providerErrorMessage(error) : error instanceof Error ? error.message : JSON.stringify(error);
    out.push({ type: "error", reason: output.stopReason as "error" | "aborted", error: timeMessage(output, started) });
    out.end();
  }
}

async function readAll(res: DirectResponse): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  try {
    for (;;) {
      const c = await res.body.read();
      if (c.done) break;
      chunks.push(c.value!);
    }
  } catch {
    // a body cut short: what arrived is the body (the SDK reads it the same way)
  }
  return Buffer.concat(chunks);
}

/** Relay pi-ai's stream into `out`, at the pace `out` is read. */
async function forward(from: AssistantStream, out: AssistantMessageEventStream): Promise<void> {
  for await (const ev of from) {
    out.push(ev);
    if (out.isDone) break;
    if (out.backlog > 0) await out.drained();
  }
  out.end();
}
