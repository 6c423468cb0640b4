/**
 * One wire API's stream function from pi 1.6's library (`@earendil-works/pi-ai/api/<api>`), the
 * module imported the first time it is asked for. pi-ai 1.6's API modules take a normalized
 * transcript (the system prompt and tool declarations carried as a leading system message); our
 * callers hand a `Context` (`systemPrompt`, `messages`, `tools`), so it is normalized with the
 * library's own `normalizeContext` on the way in, as pi-ai's `streamSimple` does.
 *
 * The specifiers are literal so that tsc checks them against pi-ai's exports map and types.
 */
import type { StreamFn } from "../../core/kernel/index.js";

interface ApiModule {
  streamSimple: unknown;
}

const MODULES = {
  "openai-completions": () => import("@earendil-works/pi-ai/api/openai-completions"),
  "openai-responses": () => import("@earendil-works/pi-ai/api/openai-responses"),
  "anthropic-messages": () => import("@earendil-works/pi-ai/api/anthropic-messages"),
  "google-generative-ai": () => import("@earendil-works/pi-ai/api/google-generative-ai"),
  "mistral-conversations": () => import("@earendil-works/pi-ai/api/mistral-conversations"),
  "azure-openai-responses": () => import("@earendil-works/pi-ai/api/azure-openai-responses"),
  "openai-codex-responses": () => import("@earendil-works/pi-ai/api/openai-codex-responses"),
  "google-vertex": () => import("@earendil-works/pi-ai/api/google-vertex"),
  "bedrock-converse-stream": () => import("@earendil-works/pi-ai/api/bedrock-converse-stream"),
  "pi-messages": () => import("@earendil-works/pi-ai/api/pi-messages"),
} satisfies Record<string, () => Promise<ApiModule>>;

export type PiAiApi = keyof typeof MODULES;

/** The wire APIs pi-ai 1.6 streams. */
export const PI_AI_API_NAMES = Object.freeze(Object.keys(MODULES) as PiAiApi[]);

type Normalize = (context: unknown) => unknown;
let normalize: Promise<Normalize> | undefined;

function loadNormalize(): Promise<Normalize> {
  normalize ??= import("@earendil-works/pi-ai/utils/transcript").then(
    (m) => m.normalizeContext as unknown as Normalize,
    (error: unknown) => {
      normalize = undefined;
      throw error;
    },
  );
  return normalize;
}

/** pi-ai 1.6's streamSimple for `api`, taking a `Context`. */
export async function loadPiAiStream(api: PiAiApi): Promise<StreamFn> {
  const [mod, normalizeContext] = await Promise.all([MODULES[api]() as Promise<ApiModule>, loadNormalize()]);
  const inner = mod.streamSimple as (model: unknown, context: unknown, options: unknown) => ReturnType<StreamFn>;
  if (typeof inner !== "function") throw new Error(`pi-ai's api/${api} module has no streamSimple`);
  return (model, context, options) => inner(model, normalizeContext(context), options);
}
