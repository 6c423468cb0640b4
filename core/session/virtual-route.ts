/**
 * Routing a request for a virtual model (core/models/virtual-models.ts) to a physical one: the
 * registrant's route() gets the virtual model, the thinking level, why the request is made, the
 * latest successful response's model, the router state stored on the branch and the conversation
 * (system prompt first); it answers the physical model and thinking level, and maybe a new state,
 * which is appended to the branch as a "pi.virtual-model-state" custom entry (not for "direct"
 * requests). A router that throws, or answers something that is not a physical model of the
 * catalog, fails the request with a message naming the virtual model.
 */
import type { Kernel } from "../kernel.js";
import type { LlmContext } from "../agent/loop.js";
import type { AnyModel, ThinkingLevel } from "../types.js";
import { isVirtualModel, VIRTUAL_MODEL_STATE_ENTRY, virtualModelState, type ModelRouteReason } from "../models/virtual-models.js";

interface StoreLike {
  getBranch?(): unknown[];
  appendCustomEntry?(customType: string, data?: unknown): string;
}

export async function routeVirtual(
  kernel: Kernel,
  model: AnyModel,
  context: LlmContext,
  thinkingLevel: ThinkingLevel,
  store: StoreLike | undefined,
  reason: ModelRouteReason,
  signal: AbortSignal | undefined,
): Promise<{ model: AnyModel; thinkingLevel: ThinkingLevel }> {
  const name = `${model.provider}/${model.id}`;
  const entry = kernel.service("virtual-models")?.get(model.provider, model.id);
  if (!entry) throw new Error(`Virtual model ${name} is not registered (any more); choose another model`);
  let branch: unknown[] = [];
  try {
    branch = store?.getBranch?.() ?? [];
  } catch {
    branch = [];
  }
  const state = reason === "direct" ? undefined : virtualModelState(branch, model.provider, model.id);
  let previous: { model: AnyModel } | undefined;
  for (let i = context.messages.length - 1; i >= 0 && !previous; i--) {
    const m = context.messages[i] as { role?: string; stopReason?: string; provider?: string; model?: string };
    if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") continue;
    const found = kernel.service("model-registry")?.find(m.provider ?? "", m.model ?? "");
    if (found && !isVirtualModel(found)) previous = { model: found };
  }
  let route;
  try {
    route = await entry.def.route({
      model,
      thinkingLevel,
      reason,
      ...(previous ? { previous } : {}),
      ...(state !== undefined ? { state } : {}),
      messages: [{ role: "system", content: context.systemPrompt, timestamp: Date.now() }, ...context.messages],
      signal,
    });
  } catch (error) {
    throw new Error(`Virtual model ${name}: routing failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const target = route?.model as AnyModel | undefined;
  if (!target || typeof target.provider !== "string" || typeof target.id !== "string" || typeof target.api !== "string") {
    throw new Error(`Virtual model ${name}: route() did not return a model`);
  }
  if (isVirtualModel(target)) throw new Error(`Virtual model ${name}: route() returned another virtual model (${target.provider}/${target.id})`);
  if (reason !== "direct" && route.state !== undefined && route.state !== state && typeof store?.appendCustomEntry === "function") {
    store.appendCustomEntry(VIRTUAL_MODEL_STATE_ENTRY, { provider: model.provider, modelId: model.id, state: JSON.parse(JSON.stringify(route.state)) });
  }
  return { model: target, thinkingLevel: (route.thinkingLevel as ThinkingLevel) ?? thinkingLevel };
}

/** Why the loop makes this request: after a user message, or to continue (tool results, custom messages). */
export function routeReason(context: LlmContext): ModelRouteReason {
  const last = context.messages[context.messages.length - 1] as { role?: string } | undefined;
  return last?.role === "user" ? "user" : "continuation";
}
