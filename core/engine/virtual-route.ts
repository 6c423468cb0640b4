/**
 * Routing a request for a virtual model (core/stores/models/virtual-models.ts) to a physical one: the
 * registrant's route() gets the virtual model, the thinking level, why the request is made, the
 * latest successful response's model, for a "retry" the failed response (no longer in the
 * conversation) with its physical model, the router state stored on the branch and the
 * conversation (system prompt first); it answers the physical model and thinking level, and maybe a new state,
 * which is appended to the branch as a "pi.virtual-model-state" custom entry (not for "direct"
 * requests). A router that throws, or answers something that is not a physical model of the
 * catalog, fails the request with a message naming the virtual model.
 */
import type { Kernel } from "../kernel/kernel.js";
import type { LlmContext } from "./agent/loop.js";
import type { AnyModel, AssistantMessage, ThinkingLevel } from "../kernel/types.js";
import { isVirtualModel, VIRTUAL_MODEL_STATE_ENTRY, virtualModelState, type ModelRouteReason } from "../stores/models/virtual-models.js";

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
  failed?: AssistantMessage,
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
  // As pi 1.6: the latest successful response names `previous` (when its model is a physical one of
  // the catalog); a retry's failed response names `failed` (absent when routing itself failed).
  const physical = (m: { provider?: string; model?: string } | undefined): AnyModel | undefined => {
    const found = m ? kernel.service("model-registry")?.find(m.provider ?? "", m.model ?? "") : undefined;
    return found && !isVirtualModel(found) ? found : undefined;
  };
  type Sent = { role?: string; stopReason?: string; provider?: string; model?: string; thinkingLevel?: ThinkingLevel };
  const latest = [...context.messages].reverse().find((m) => (m as Sent).role === "assistant" && (m as Sent).stopReason !== "error" && (m as Sent).stopReason !== "aborted") as Sent | undefined;
  const previousModel = physical(latest);
  const previous = previousModel ? { model: previousModel, thinkingLevel: latest?.thinkingLevel } : undefined;
  const failedModel = reason === "retry" ? physical(failed as Sent | undefined) : undefined;
  let route;
  try {
    route = await entry.def.route({
      model,
      thinkingLevel,
      reason,
      ...(previous ? { previous } : {}),
      ...(failedModel && failed ? { failed: { model: failedModel, thinkingLevel: (failed as Sent).thinkingLevel, message: failed } } : {}),
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

/**
 * Why the loop makes this request (as pi 1.6): "user" when a message the user wrote follows the
 * latest response (extension messages may come after it), else "continuation" (tool results,
 * custom messages): on the session's messages, where an extension's message is still "custom". A
 * retry is named by the caller.
 */
export function routeReason(messages: readonly unknown[]): ModelRouteReason {
  const msgs = messages as readonly { role?: string }[];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const role = msgs[i]?.role;
    if (role === "assistant") return "continuation";
    if (role === "user") return "user";
  }
  return "continuation";
}
