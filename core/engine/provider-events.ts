/**
 * The provider-call hooks of pi 1.6, wired into one request's stream options:
 * - before_provider_headers: taps change the request headers in place (a `null` value removes
 *   one) after the model registry assembled them and before the HTTP call;
 * - after_provider_response: taps see the HTTP status and response headers (through pi-ai's
 *   `onResponse`), before the body is consumed.
 * - provider_stream_event: taps see each parsed provider stream event before it is normalised,
 *   through the `onProviderStreamEvent(data, model)` option of pi-ai 1.6's stream functions (and
 *   of the providers plugin's fast path); a stream function that does not call it reports none.
 * Nothing is added when no one taps (the hooks' own interceptor makes `isUsed()` always true,
 * so the taps are counted).
 */
import type { Hooks } from "../kernel/hooks.js";
import type { AnyModel } from "../kernel/types.js";

export async function applyProviderEvents(hooks: Hooks, model: AnyModel, options: Record<string, unknown>): Promise<void> {
  if (hooks.before_provider_headers.taps.length) {
    const headers: Record<string, string | null> = { ...((options.headers as Record<string, string> | undefined) ?? {}) };
    await hooks.before_provider_headers.promise({ type: "before_provider_headers", headers, model });
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (typeof v === "string") out[k] = v;
    options.headers = out;
  }
  if (hooks.after_provider_response.taps.length) {
    const previous = options.onResponse as ((r: unknown, m: unknown) => unknown) | undefined;
    options.onResponse = async (response: { status: number; headers: Record<string, string> }, m: unknown) => {
      await previous?.(response, m);
      await hooks.after_provider_response.promise({
        type: "after_provider_response",
        status: response.status,
        headers: { ...response.headers },
        model,
      });
    };
  }
  if (hooks.provider_stream_event.taps.length) {
    const previous = options.onProviderStreamEvent as ((d: unknown, m: unknown) => unknown) | undefined;
    options.onProviderStreamEvent = async (data: unknown, m: unknown) => {
      await previous?.(data, m);
      await hooks.provider_stream_event.promise({ type: "provider_stream_event", provider: model.provider, api: model.api, model: model.id, data });
    };
  }
}
