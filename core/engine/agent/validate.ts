/**
 * Tool-call argument validation against the tool's JSON Schema parameters.
 *
 * Uses the provider library's validator (`@earendil-works/pi-ai/utils/validation`: one compiled
 * pi-schema validator per schema object, with coercion of the values models often send as
 * strings, and the error text models are used to reading). It is imported on the first tool
 * call only, and the bundle inlines it into one lazily loaded chunk, so the first call reads one
 * file instead of hundreds of schema-library modules.
 */
import type { ToolCall, ToolDefinition } from "../../kernel/types.js";

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
 * Start loading the validator without waiting, then compile the validators of `tools`' schemas
 * (one per schema object, kept by the library), one tool per turn of the event loop. The loop
 * calls it once a request with tools is on its way, so this happens while the model works and
 * the first tool call finds its validator ready. Compiling stops once `answered()` is true: from
 * then on the answer's own work comes first, and a tool call compiles the one validator it needs.
 * A failure is reported by the validation that needs it.
 */
export function preloadValidator(tools: ReadonlyArray<{ name: string; parameters: unknown }> = [], answered: () => boolean = () => false): void {
  load()
    .then((fn) => {
      const pending = tools.filter((t) => t.parameters && typeof t.parameters === "object" && !compiled.has(t.parameters as object));
      const next = (): void => {
        if (answered()) return;
        const tool = pending.shift();
        if (!tool) return;
        compiled.add(tool.parameters as object);
        try {
          // Empty arguments: compiles the schema's validator; the verdict does not matter.
          fn(tool, { type: "toolCall", id: "", name: tool.name, arguments: {} } as ToolCall);
        } catch {
          // a schema with required fields refuses {}: compiled all the same
        }
        if (pending.length) setImmediate(next);
      };
      next();
    })
    .catch(() => {});
}
const compiled = new WeakSet<object>();

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
