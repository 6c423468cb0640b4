/**
 * The pieces of pi-ai 0.73.1 the fast path reuses so that its results are pi-ai's by
 * construction: streaming-JSON parsing of tool arguments (partial-json plus pi-ai's repair), the
 * JSON repair Anthropic events go through, and the cost calculation. They are not in pi-ai's
 * exports map, so they are addressed by file URL next to the provider module that is loaded
 * anyway (the same module instances that module uses: no second copy, no extra load time).
 */
import type { Model, Api, Usage } from "@mariozechner/pi-ai";

export interface PiAiParts {
  parseStreamingJson(json: string | undefined): Record<string, unknown>;
  parseJsonWithRepair(json: string): unknown;
  calculateCost(model: Model<Api>, usage: Usage): unknown;
}

let parts: Promise<PiAiParts> | undefined;

/** Loaded once; rejects (and is retried next time) when pi-ai's layout is not the expected one. */
export function loadPiAiParts(): Promise<PiAiParts> {
  parts ??= (async () => {
    const anchor = import.meta.resolve("@mariozechner/pi-ai/openai-completions");
    const json = (await import(new URL("../utils/json-parse.js", anchor).href)) as Partial<PiAiParts>;
    const models = (await import(new URL("../models.js", anchor).href)) as Partial<PiAiParts>;
    if (typeof json.parseStreamingJson !== "function" || typeof json.parseJsonWithRepair !== "function" || typeof models.calculateCost !== "function") {
      throw new Error("pi-ai's json-parse.js / models.js do not have the expected exports");
    }
    return { parseStreamingJson: json.parseStreamingJson, parseJsonWithRepair: json.parseJsonWithRepair, calculateCost: models.calculateCost };
  })().catch((error: unknown) => {
    parts = undefined;
    throw error;
  });
  return parts;
}
