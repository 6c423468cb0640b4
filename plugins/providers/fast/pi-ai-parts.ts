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
 * OpenRouter's reported cost (`utils/openrouter-cost`) and provider error messages
 * (`utils/error-body`) are pi-ai's too.
 *
 * The cost calculation is the one formula of pi-ai's models.js, written out here: that module
 * loads pi-ai's whole model catalog (models.generated.js, 540 KB of source) when imported.
 */
import type { Model, Api, Usage } from "@mariozechner/pi-ai";
import { openaiSdkVersion } from "./openai-sdk-version.js";
import type { RequestParts } from "./openai-request.js";

export interface PiAiParts {
  parseStreamingJson(json: string | undefined): Record<string, unknown>;
  parseJsonWithRepair(json: string): unknown;
  /** A finished tool call's arguments: `{ arguments }`, plus `argumentsError` when they are not a JSON object. */
  parseToolCallArguments(json: string | undefined): { arguments: Record<string, unknown>; argumentsError?: string };
  calculateCost(model: Model<Api>, usage: Usage): unknown;
  /** OpenRouter's billed cost over the catalog's, when its usage reports one. */
  applyOpenRouterReportedCost(usage: Usage, reported: unknown): void;
  /** The error message pi-ai's chat-completions module gives a thrown error. */
  providerErrorMessage(error: unknown): string;
  /** An error's message with the deepest cause's reason (pi-ai's Anthropic module's error message). */
  withCauseDetail(error: Error): string;
}

interface CostRates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  tiers?: (CostRates & { inputTokensAbove: number })[];
}

/**
 * pi-ai 1.6's cost: the model's rates, or those of the highest price tier whose input threshold
 * the input (with cache reads and writes) passes; per-million prices times tokens, cache writes
 * kept an hour at twice the input price; the total their sum.
 */
export function calculateCost(model: Model<Api>, usage: Usage): Usage["cost"] {
  const u = usage as Usage & { cacheWrite1h?: number };
  const inputTokens = u.input + u.cacheRead + u.cacheWrite;
  const base = model.cost as CostRates;
  let rates: CostRates = base;
  let threshold = -1;
  for (const tier of base.tiers ?? []) {
    if (inputTokens > tier.inputTokensAbove && tier.inputTokensAbove > threshold) {
      rates = tier;
      threshold = tier.inputTokensAbove;
    }
  }
  const longWrite = u.cacheWrite1h ?? 0;
  const cost = usage.cost as Usage["cost"] & { totalFromProvider?: boolean };
  cost.input = (rates.input / 1000000) * u.input;
  cost.output = (rates.output / 1000000) * u.output;
  cost.cacheRead = (rates.cacheRead / 1000000) * u.cacheRead;
  cost.cacheWrite = (rates.cacheWrite * (u.cacheWrite - longWrite) + rates.input * 2 * longWrite) / 1000000;
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  cost.totalFromProvider = false;
  return cost;
}

let parts: Promise<PiAiParts> | undefined;

/** Loaded once; rejects (and is retried next time) when pi-ai's layout is not the expected one. */
export function loadPiAiParts(): Promise<PiAiParts> {
  parts ??= (async () => {
    const m = await import("./pi-ai-modules.js");
    const json = m.jsonParse as Partial<PiAiParts>;
    const cost = m.openrouterCost as Partial<PiAiParts>;
    const errors: unknown = m.errorBody;
    const { normalizeProviderError, formatProviderError } = errors as { normalizeProviderError?: (e: unknown) => unknown; formatProviderError?: (n: unknown) => string };
    const withCauseDetail = (errors as Partial<PiAiParts>).withCauseDetail;
    if (
      typeof json.parseStreamingJson !== "function" ||
      typeof json.parseJsonWithRepair !== "function" ||
      typeof json.parseToolCallArguments !== "function" ||
      typeof cost.applyOpenRouterReportedCost !== "function" ||
      typeof normalizeProviderError !== "function" ||
      typeof formatProviderError !== "function" ||
      typeof withCauseDetail !== "function"
    ) {
      throw new Error("pi-ai's utils/json-parse, utils/openrouter-cost or utils/error-body do not have the expected exports");
    }
    return {
      parseStreamingJson: json.parseStreamingJson,
      parseJsonWithRepair: json.parseJsonWithRepair,
      parseToolCallArguments: json.parseToolCallArguments,
      calculateCost,
      applyOpenRouterReportedCost: cost.applyOpenRouterReportedCost,
      providerErrorMessage: (error: unknown) => formatProviderError(normalizeProviderError(error)),
      withCauseDetail,
    };
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
    const m = await import("./pi-ai-modules.js");
    const [tm, su, id, tr, text, est, hash] = [m.transformMessages, m.sanitizeUnicode, m.identity, m.transcript, m.text, m.estimate, m.hash] as Array<Partial<RequestParts>>;
    const version = { VERSION: openaiSdkVersion() };
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
