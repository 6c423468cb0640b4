/**
 * The pieces of pi-ai the fast path reuses so that its results are pi-ai's by construction:
 * streaming-JSON parsing of tool arguments (partial-json plus pi-ai's repair) and the JSON repair
 * Anthropic events go through, from pi 1.6's library (`@earendil-works/pi-ai/utils/json-parse`,
 * an exported module: the bundle inlines it and partial-json into one small chunk, so the first
 * tool call reads one file instead of resolving and lexing CommonJS files in node_modules); for
 * the direct path (direct.ts) also pi-ai's message transformation (`api/transform-messages`),
 * surrogate clean-up (`utils/sanitize-unicode`), client identity headers (`utils/identity`), its
 * transcript, system-message text, token estimate and short hash (`utils/transcript`, `utils/text`,
 * `utils/estimate`, `utils/hash`).
 * None of these modules loads an SDK.
 *
 * The cost calculation is the one formula of pi-ai's models.js, written out here: that module
 * loads pi-ai's whole model catalog (models.generated.js, 540 KB of source) when imported.
 */
import { createRequire } from "node:module";
import type { Model, Api, Usage } from "@mariozechner/pi-ai";
import type { RequestParts } from "./openai-request.js";

export interface PiAiParts {
  parseStreamingJson(json: string | undefined): Record<string, unknown>;
  parseJsonWithRepair(json: string): unknown;
  calculateCost(model: Model<Api>, usage: Usage): unknown;
}

/** pi-ai's calculateCost: per-million prices times tokens, the total their sum (same order). */
export function calculateCost(model: Model<Api>, usage: Usage): Usage["cost"] {
  usage.cost.input = (model.cost.input / 1000000) * usage.input;
  usage.cost.output = (model.cost.output / 1000000) * usage.output;
  usage.cost.cacheRead = (model.cost.cacheRead / 1000000) * usage.cacheRead;
  usage.cost.cacheWrite = (model.cost.cacheWrite / 1000000) * usage.cacheWrite;
  usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
  return usage.cost;
}

/** The file URL of pi-ai's chat-completions module (resolved, not loaded: the `openai` package it uses is found from there). */
function piAiOpenAIModule(): string {
  return import.meta.resolve("@earendil-works/pi-ai/api/openai-completions");
}

let parts: Promise<PiAiParts> | undefined;

/** Loaded once; rejects (and is retried next time) when pi-ai's layout is not the expected one. */
export function loadPiAiParts(): Promise<PiAiParts> {
  parts ??= (async () => {
    const json = (await import("@earendil-works/pi-ai/utils/json-parse")) as Partial<PiAiParts>;
    if (typeof json.parseStreamingJson !== "function" || typeof json.parseJsonWithRepair !== "function") {
      throw new Error("pi-ai's utils/json-parse does not have the expected exports");
    }
    return { parseStreamingJson: json.parseStreamingJson, parseJsonWithRepair: json.parseJsonWithRepair, calculateCost };
  })().catch((error: unknown) => {
    parts = undefined;
    throw error;
  });
  return parts;
}

let requestParts: Promise<RequestParts> | undefined;

/** What the direct path needs to build a chat-completions request as pi-ai and the SDK do. */
export function loadRequestParts(): Promise<RequestParts> {
  requestParts ??= (async () => {
    const [tm, su, id, tr, text, est, hash] = await Promise.all([
      import("@earendil-works/pi-ai/api/transform-messages") as Promise<Partial<RequestParts>>,
      import("@earendil-works/pi-ai/utils/sanitize-unicode") as Promise<Partial<RequestParts>>,
      import("@earendil-works/pi-ai/utils/identity"),
      import("@earendil-works/pi-ai/utils/transcript") as Promise<Partial<RequestParts>>,
      import("@earendil-works/pi-ai/utils/text") as Promise<Partial<RequestParts>>,
      import("@earendil-works/pi-ai/utils/estimate") as Promise<Partial<RequestParts>>,
      import("@earendil-works/pi-ai/utils/hash") as Promise<Partial<RequestParts>>,
    ]);
    // The version of the `openai` package pi-ai itself would load (its dependency, not ours).
    // Required, not imported: importing a CommonJS file from ESM first parses it for its export
    // names (cjs-module-lexer), ~9 ms on the first prompt (measured, Node 22).
    const piAiRequire = createRequire(piAiOpenAIModule());
    const version = piAiRequire(piAiRequire.resolve("openai/version")) as { VERSION?: unknown };
    const identityHeaders = (id as { getIdentityHeaders?: unknown }).getIdentityHeaders as RequestParts["identityHeaders"] | undefined;
    const got = {
      transformMessages: tm.transformMessages,
      sanitizeSurrogates: su.sanitizeSurrogates,
      identityHeaders,
      normalizeContext: tr.normalizeContext,
      collapseSystemMessages: tr.collapseSystemMessages,
      getCurrentTools: tr.getCurrentTools,
      getSystemMessageText: text.getSystemMessageText,
      estimateContextTokens: est.estimateContextTokens,
      shortHash: hash.shortHash,
    };
    const missing = Object.entries(got).filter(([, f]) => typeof f !== "function").map(([k]) => k);
    if (missing.length > 0 || typeof version.VERSION !== "string") {
      throw new Error(`pi-ai's request helpers or openai/version do not have the expected exports (${[...missing, ...(typeof version.VERSION === "string" ? [] : ["openai VERSION"])].join(", ")})`);
    }
    return { ...(got as Omit<RequestParts, "sdkVersion">), sdkVersion: version.VERSION };
  })().catch((error: unknown) => {
    requestParts = undefined;
    throw error;
  });
  return requestParts;
}
