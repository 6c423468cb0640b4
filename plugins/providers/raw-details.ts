/**
 * pi 1.6's `rawStopReason` and `usage.reasoning` on assistant messages streamed by pi-ai 0.73.1
 * itself (which sets neither): the path of openai-responses, and of openai-completions and
 * anthropic-messages when the streaming fast path does not serve a request (PI_STREAM_FAST_PATH=0,
 * an Anthropic OAuth token; the fast path sets both fields itself, see fast/).
 *
 * The body of the successful streaming response is observed on its way to the SDK (a pass-through
 * transform; the bytes are not changed): its SSE events are parsed once more and read for what
 * pi 1.6's pi-ai reads, per API:
 * - openai-completions: `choices[0].finish_reason` ("stop", "length", "tool_calls", …);
 *   `usage.completion_tokens_details.reasoning_tokens` (or `usage.reasoning_tokens`), 0 when a
 *   usage record has neither;
 * - openai-responses: the final response's `status`, or `status.reason` with
 *   `incomplete_details.reason` ("completed", "incomplete.max_output_tokens", "failed");
 *   `usage.output_tokens_details.reasoning_tokens`, 0 when absent;
 * - anthropic-messages: message_delta's `stop_reason` ("end_turn", "max_tokens", "tool_use", …);
 *   its `usage.output_tokens_details.thinking_tokens`, only when present.
 * The fields are put on the final message (the `done` / `error` event and result()). The same
 * parsed events go to `onProviderStreamEvent` (the provider_stream_event hook) when set, before the
 * SDK reads them, as pi 1.6's stream functions do.
 *
 * How the body is reached: as in the fast path, pi-ai builds its SDK client synchronously when its
 * stream function is called and the SDK keeps the global `fetch` it finds then; for that call the
 * global is a wrapper. Not observed (so neither field, as pi-ai 0.73.1): an HTTP error, a
 * response that is not a stream, a caller's own `client` (Anthropic).
 */
import type { AssistantMessage, AssistantMessageEvent } from "@mariozechner/pi-ai";
import type { AssistantStream, StreamFn } from "../../core/kernel/index.js";
import { SseDecoder } from "./fast/sse.js";

export type DetailsApi = "openai-completions" | "openai-responses" | "anthropic-messages";

export interface RawDetails {
  rawStopReason?: string;
  reasoning?: number;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- wire JSON of unknown shape */
type Json = any;

/** Read one parsed provider stream event into `d`, as pi 1.6's pi-ai reads it. */
export function noteRawEvent(api: DetailsApi, data: Json, d: RawDetails): void {
  if (!data || typeof data !== "object") return;
  if (api === "openai-completions") {
    const choice = Array.isArray(data.choices) ? data.choices[0] : undefined;
    const usage = data.usage ?? choice?.usage;
    if (usage) d.reasoning = usage.completion_tokens_details?.reasoning_tokens || usage.reasoning_tokens || 0;
    if (choice?.finish_reason) d.rawStopReason = choice.finish_reason;
  } else if (api === "anthropic-messages") {
    if (data.type !== "message_delta") return;
    if (data.delta?.stop_reason) d.rawStopReason = data.delta.stop_reason;
    const thinking = data.usage?.output_tokens_details?.thinking_tokens;
    if (thinking != null) d.reasoning = thinking;
  } else if (data.type === "response.completed" || data.type === "response.incomplete") {
    const r = data.response;
    if (r?.usage) d.reasoning = r.usage.output_tokens_details?.reasoning_tokens || 0;
    const reason = typeof r?.incomplete_details?.reason === "string" ? r.incomplete_details.reason : undefined;
    d.rawStopReason = reason ? `${r?.status}.${reason}` : r?.status;
  } else if (data.type === "response.failed") {
    d.rawStopReason = data.response?.status;
  }
}

/** Put the details on a message: `rawStopReason`, and `usage.reasoning` (before totalTokens, as pi 1.6 orders it). */
export function applyRawDetails(message: AssistantMessage | undefined, d: RawDetails): void {
  if (!message) return;
  if (d.rawStopReason !== undefined) (message as { rawStopReason?: string }).rawStopReason = d.rawStopReason;
  const usage = message.usage as unknown as Record<string, unknown> | undefined;
  if (d.reasoning === undefined || !usage || usage.reasoning === d.reasoning) return;
  if (!("totalTokens" in usage)) {
    usage.reasoning = d.reasoning;
    return;
  }
  const entries = Object.entries(usage).filter(([k]) => k !== "reasoning");
  for (const [k] of entries) delete usage[k];
  for (const [k, v] of entries) {
    if (k === "totalTokens") usage.reasoning = d.reasoning;
    usage[k] = v;
  }
}

/**
 * Whether a record's text may hold what noteRawEvent reads (a cheap test, so that without a
 * provider_stream_event listener most records are not parsed a second time).
 */
function mayMatter(api: DetailsApi, data: string): boolean {
  if (api === "openai-completions") return data.includes('"usage"') || (data.includes('"finish_reason"') && !data.includes('"finish_reason":null'));
  if (api === "anthropic-messages") return data.includes("message_delta");
  return data.includes('"response.completed"') || data.includes('"response.incomplete"') || data.includes('"response.failed"');
}

type Fetch = typeof globalThis.fetch;
interface OptionsLike {
  onProviderStreamEvent?: (data: unknown, model: unknown) => unknown;
}

/** pi-ai's stream function of `api` with the details (and raw events) read from the response body. */
export function withRawDetails(api: DetailsApi, inner: StreamFn): StreamFn {
  const dialect = api === "anthropic-messages" ? "pi" : "sdk";
  return (model, context, options) => {
    const realFetch = globalThis.fetch;
    if (typeof realFetch !== "function") return inner(model, context, options);
    const d: RawDetails = {};
    const onRaw = (options as OptionsLike | undefined)?.onProviderStreamEvent;
    let observed = false;
    const intercept: Fetch = async (input, init) => {
      const res = await realFetch(input, init);
      if (observed || !res.ok || !res.body || !/event-stream/i.test(res.headers.get("content-type") ?? "")) return res;
      observed = true;
      const events: unknown[] = [];
      let ended = false;
      const decoder = new SseDecoder(dialect, (_event, data) => {
        if (ended) return;
        if (data.startsWith("[DONE]")) {
          ended = api === "openai-completions"; // the SDK stops reading there
          return;
        }
        if (!onRaw && !mayMatter(api, data)) return;
        try {
          events.push(JSON.parse(data));
        } catch {
          // not JSON: pi-ai reports it
        }
      });
      const take = async () => {
        for (const e of events.splice(0)) {
          noteRawEvent(api, e, d);
          if (onRaw) await onRaw(e, model);
        }
      };
      const body = res.body.pipeThrough(
        onRaw
          ? new TransformStream<Uint8Array, Uint8Array>({
              async transform(chunk, c) {
                decoder.push(chunk);
                await take();
                c.enqueue(chunk);
              },
              async flush() {
                decoder.end();
                await take();
              },
            })
          : new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, c) {
                decoder.push(chunk);
                for (const e of events.splice(0)) noteRawEvent(api, e, d);
                c.enqueue(chunk);
              },
              flush() {
                decoder.end();
                for (const e of events.splice(0)) noteRawEvent(api, e, d);
              },
            }),
      );
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    let s: AssistantStream;
    globalThis.fetch = intercept;
    try {
      s = inner(model, context, options);
    } finally {
      globalThis.fetch = realFetch;
    }
    return decorate(s, (m) => applyRawDetails(m, d));
  };
}

/** The stream with `apply` run on the final message (the terminal event and result()). */
function decorate(s: AssistantStream, apply: (m: AssistantMessage) => void): AssistantStream {
  return {
    [Symbol.asyncIterator]() {
      const it = s[Symbol.asyncIterator]();
      return {
        async next() {
          const r = await it.next();
          if (!r.done) {
            const e = r.value as AssistantMessageEvent;
            if (e.type === "done") apply(e.message);
            else if (e.type === "error") apply(e.error);
          }
          return r;
        },
        return: it.return ? (v?: unknown) => it.return!(v as never) : undefined,
      };
    },
    result: () =>
      s.result().then((m) => {
        apply(m);
        return m;
      }),
  };
}
