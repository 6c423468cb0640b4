/**
 * providers: one ApiProvider per wire API of pi 1.6's pi-ai (`@earendil-works/pi-ai/api/*`).
 * Setup only registers; each API's pi-ai module (and the SDK behind it: openai,
 * @anthropic-ai/sdk, @google/genai, …) is imported the first time a request uses that API, never
 * before. pi-ai's root module is never imported.
 *
 * `stream` returns an AssistantStream synchronously (createLazyStream): events are forwarded
 * once the module has loaded. It never throws: a failed import, a synchronous throw from pi-ai
 * (e.g. "No API key for provider: x") or an inner stream that breaks off all end the stream
 * with one `error` event (stopReason "error", or "aborted" when the signal fired).
 */
import { definePlugin, type ApiProvider, type AssistantStream, type StreamFn } from "../../core/kernel/index.js";
import { createLazyStream, describeError } from "../../core/stores/index.js";
import { loadPiAiStream, PI_AI_API_NAMES } from "./pi-ai-api.js";

/** How to get one API's streamSimple function (a dynamic import of its pi-ai subpath). */
export type StreamLoader = () => Promise<StreamFn>;

/**
 * Every API of pi-ai 1.6, each streamed by its own module (pi-ai-api.ts); chat completions and
 * Anthropic messages behind our direct / fast paths (fast/), which read the answer without the SDK.
 */
export const PI_AI_STREAM_LOADERS: Readonly<Record<string, StreamLoader>> = Object.freeze({
  ...Object.fromEntries(PI_AI_API_NAMES.map((api): [string, StreamLoader] => [api, () => loadPiAiStream(api)])),
  "openai-completions": () => withDirectPath(),
  "anthropic-messages": async () => withFastPath("anthropic-messages", await loadPiAiStream("anthropic-messages")),
});

/**
 * pi-ai's stream function of a chat-completions / Anthropic API behind the streaming fast path
 * (fast/fast-path.ts: our SSE reading of a successful response, pi-ai for everything else). If
 * the fast path cannot load, or does not serve a request, pi-ai's function is used.
 */
async function withFastPath(api: "openai-completions" | "anthropic-messages", inner: StreamFn): Promise<StreamFn> {
  try {
    const fast = await import("./fast/fast-path.js");
    const viaFast = fast.withFastPath(api, inner, await fast.loadPiAiParts());
    return (model, context, options) => (fast.fastPathApplies(api, options as never, model as never) ? viaFast : inner)(model, context, options);
  } catch {
    return inner;
  }
}

/** Node's own fetch, as it was when the plugins loaded (a replaced one is honoured: fast/direct.ts). */
const NATIVE_FETCH = globalThis.fetch;

/**
 * Chat completions: the direct path (fast/direct.ts: the common call built and sent without
 * pi-ai's provider module, the SDK or undici), pi-ai's module (behind the fast path) loaded only
 * for the calls it does not serve. If the direct path cannot load, pi-ai's path serves them all.
 */
async function withDirectPath(): Promise<StreamFn> {
  const viaPi = async () => withFastPath("openai-completions", await loadPiAiStream("openai-completions"));
  let direct: typeof import("./fast/direct.js");
  try {
    direct = await import("./fast/direct.js");
  } catch {
    return viaPi();
  }
  direct.noteNativeFetch(NATIVE_FETCH);
  await direct.prepareDirect();
  let pi: Promise<StreamFn> | undefined;
  return direct.createOpenAICompletionsStream(() =>
    (pi ??= viaPi().catch((error: unknown) => {
      pi = undefined;
      throw error;
    })),
  );
}

/** The APIs this plugin serves. */
export const PI_AI_APIS: readonly string[] = Object.freeze(Object.keys(PI_AI_STREAM_LOADERS));

/**
 * An ApiProvider whose implementation is loaded on first use (once; concurrent first calls
 * share the load). A failed load is not cached: the next request tries again.
 */
export function createLazyApiProvider(api: string, load: StreamLoader, onLoad?: (api: string) => void): ApiProvider & { readonly loaded: boolean } {
  let fn: StreamFn | undefined;
  let loading: Promise<StreamFn> | undefined;
  const get = (): Promise<StreamFn> => {
    if (fn) return Promise.resolve(fn);
    loading ??= load().then(
      (f) => {
        if (typeof f !== "function") throw new Error(`the module for API "${api}" has no stream function`);
        fn = f;
        onLoad?.(api);
        return f;
      },
      (error: unknown) => {
        loading = undefined;
        throw new Error(`cannot load the "${api}" provider module: ${describeError(error)}`, { cause: error });
      },
    );
    return loading;
  };
  const stream: StreamFn = (model, context, options): AssistantStream =>
    createLazyStream(
      model,
      () => {
        // Loaded already: call straight away (a synchronous throw still becomes an error event).
        if (fn) return fn(model, context, options);
        return get().then((f) => f(model, context, options));
      },
      { signal: options?.signal },
    );
  return {
    api,
    stream,
    preload: () => get().then(() => undefined),
    get loaded() {
      return fn !== undefined;
    },
  };
}

const loadedApis = new Set<string>();

/** APIs whose pi-ai module this process has loaded through the plugin (for tests and timing). */
export function loadedProviderApis(): string[] {
  return [...loadedApis];
}

/** A providers plugin over a given loader table (tests pass fakes; the default export uses pi-ai's). */
export function createProvidersPlugin(loaders: Readonly<Record<string, StreamLoader>> = PI_AI_STREAM_LOADERS) {
  return definePlugin({
    name: "providers",
    version: "1.0.0",
    kernel: "^1.0.0",
    description: "Streaming for pi-ai's wire APIs, each loaded on first use",
    setup(api) {
      for (const [name, load] of Object.entries(loaders)) {
        api.registerApiProvider(createLazyApiProvider(name, load, (a) => loadedApis.add(a)));
      }
      // `--list-models [search]`: the catalog, models.json and registered providers, as a table.
      api.registerFlag({
        name: "list-models",
        type: "string",
        placeholder: "[search]",
        description: "List models (optionally matching a search) and exit",
        group: "Models",
        action: (value) => listModelsText(typeof value === "string" && value ? value : undefined),
      });
      const listModelsText = async (search?: string) => {
        const { ModelRegistry } = await import("../../core/stores/index.js");
        const { listModels } = await import("../../core/stores/index.js");
        const registry = api.kernel.service("model-registry") ?? ModelRegistry.forKernel(api.kernel);
        const r = await listModels(registry, search);
        if (r.stderr) process.stderr.write(r.stderr.endsWith("\n") ? r.stderr : r.stderr + "\n");
        return r.stdout;
      };
    },
  });
}

export default createProvidersPlugin();
