/**
 * Tool-call argument validation against the tool's JSON Schema parameters.
 *
 * Uses the provider library's validator (`@earendil-works/pi-ai/utils/validation`: one compiled
 * pi-schema validator per schema object, with coercion of the values models often send as
 * strings, and the error text models are used to reading). It is imported on the first tool
 * call only, and the bundle inlines it into one lazily loaded chunk, so the first call reads one
 * file instead of hundreds of schema-library modules.
 */
import type { ToolCall, ToolDefinition } from "../types.js";

type ValidateFn = (tool: { name: string; parameters: unknown }, toolCall: ToolCall) => Record<string, unknown>;
let validator: Promise<ValidateFn> | undefined;

function load(): Promise<ValidateFn> {
  if (!validator) {
    validator = import("@earendil-works/pi-ai/utils/validation").then((m) => m.validateToolArguments as unknown as ValidateFn);
    // A failed load is retried by the next call.
    validator.catch(() => {
      validator = undefined;
    });
  }
  return validator;
}

/**
 * Start loading the validator without waiting (the loop calls it once a request with tools is on
 * its way, so the chunk loads while the model works). A failure is reported by the validation
 * that needs it.
 */
export function preloadValidator(): void {
  load().catch(() => {});
}

/** Validated (and coerced) arguments, or an error message the model can read. */
export async function validateToolArguments(
  tool: ToolDefinition,
  toolCall: ToolCall,
): Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; error: string }> {
  if (!tool.parameters || typeof tool.parameters !== "object") return { ok: true, args: toolCall.arguments ?? {} };
  try {
    const fn = await load();
    return { ok: true, args: fn(tool, { ...toolCall, arguments: toolCall.arguments ?? {} }) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
