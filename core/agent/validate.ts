/**
 * Tool-call argument validation against the tool's TypeBox (JSON Schema) parameters.
 *
 * Uses pi-ai's validator (TypeBox Compile + Convert, with the same coercions and error text
 * as the reference) loaded on the first tool call only: it pulls in typebox/compile, which is
 * too heavy for start-up.
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ToolCall, ToolDefinition } from "../types.js";

type ValidateFn = (tool: { name: string; parameters: unknown }, toolCall: ToolCall) => Record<string, unknown>;
let validator: Promise<ValidateFn> | undefined;

function load(): Promise<ValidateFn> {
  validator ??= (async () => {
    const root = dirname(fileURLToPath(import.meta.resolve("@mariozechner/pi-ai")));
    const mod = (await import(pathToFileURL(join(root, "utils", "validation.js")).href)) as {
      validateToolArguments: ValidateFn;
    };
    return mod.validateToolArguments;
  })();
  return validator;
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
