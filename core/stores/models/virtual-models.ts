/**
 * Virtual models (pi 1.6 registerVirtualModel): catalog entries (API "pi-virtual") whose
 * requests are routed, one by one, to a physical model by the registrant's `route()`. The
 * selection (--model, /model, ctx.model) may name a virtual model; everything below the routing
 * step sees only physical models — the provider streams the routed model and the assistant
 * message records it. The router's state lives on the session branch as a custom entry
 * "pi.virtual-model-state" ({provider, modelId, state}), so it follows the tree.
 *
 * Kernel service "virtual-models" (created on first registration); the model registry lists
 * these models beside the catalog (a virtual model hides a physical one with the same id).
 */
import type { Kernel } from "../../kernel/kernel.js";
import type { AnyModel, AssistantMessage, ThinkingLevel } from "../../kernel/types.js";
import { THINKING_LEVELS } from "../../kernel/types.js";

export const VIRTUAL_MODEL_API = "pi-virtual";
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";

export type ModelRouteReason = "user" | "continuation" | "retry" | "direct";
export interface ModelRouteRequest {
  model: AnyModel;
  thinkingLevel: ThinkingLevel;
  reason: ModelRouteReason;
  previous?: { model: AnyModel; thinkingLevel?: ThinkingLevel };
  /** For "retry": the failed request (no longer in `messages`), its physical model and thinking level. */
  failed?: { model: AnyModel; thinkingLevel?: ThinkingLevel; message: AssistantMessage };
  state?: unknown;
  messages: readonly unknown[];
  signal?: AbortSignal;
}
export interface ModelRoute {
  model: AnyModel;
  thinkingLevel: ThinkingLevel;
  state?: unknown;
}
export interface VirtualModelDefinition {
  provider: string;
  id: string;
  name: string;
  thinkingLevels?: readonly string[];
  contextWindow?: number;
  maxTokens?: number;
  input?: ("text" | "image")[];
  route(request: ModelRouteRequest): ModelRoute | Promise<ModelRoute>;
}

declare module "../../kernel/services.js" {
  interface KernelServices {
    "virtual-models": VirtualModels;
  }
}

export function isVirtualModel(model: { api?: string } | undefined): boolean {
  return model?.api === VIRTUAL_MODEL_API;
}

/** The catalog entry of a virtual model (pi 1.6's shape). */
export function createVirtualModel(def: Omit<VirtualModelDefinition, "route">): AnyModel {
  const levels = def.thinkingLevels?.length ? def.thinkingLevels : ["off"];
  const thinkingLevelMap: Record<string, string | null> = {};
  for (const l of THINKING_LEVELS) thinkingLevelMap[l] = levels.includes(l) ? l : null;
  return {
    id: def.id,
    name: def.name ?? def.id,
    api: VIRTUAL_MODEL_API,
    provider: def.provider,
    baseUrl: "",
    reasoning: levels.some((l) => l !== "off"),
    thinkingLevelMap,
    input: def.input ?? ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: def.contextWindow ?? 0,
    maxTokens: def.maxTokens ?? 0,
  } as unknown as AnyModel;
}

interface Entry {
  model: AnyModel;
  def: VirtualModelDefinition;
  owner: string;
}

export class VirtualModels {
  private readonly byKey = new Map<string, Entry>();

  /** The service of this kernel, created on first use. */
  static of(kernel: Kernel): VirtualModels {
    let v = kernel.service("virtual-models");
    if (!v) {
      v = new VirtualModels();
      kernel.provide("virtual-models", v, "kernel");
    }
    return v;
  }

  /** Register (or replace) a virtual model; returns the function that removes this registration. */
  register(def: VirtualModelDefinition, owner: string): () => void {
    for (const k of ["provider", "id"] as const) {
      if (typeof def?.[k] !== "string" || !def[k].trim()) throw new TypeError(`registerVirtualModel: "${k}" must be a non-empty string`);
    }
    if (typeof def.route !== "function") throw new TypeError(`registerVirtualModel(${def.provider}/${def.id}): route must be a function`);
    const key = `${def.provider}/${def.id}`;
    const entry: Entry = { model: createVirtualModel(def), def, owner };
    this.byKey.set(key, entry);
    return () => {
      if (this.byKey.get(key) === entry) this.byKey.delete(key);
    };
  }

  unregister(provider: string, id: string): void {
    this.byKey.delete(`${provider}/${id}`);
  }

  list(): AnyModel[] {
    return [...this.byKey.values()].map((e) => e.model);
  }

  get(provider: string, id: string): Entry | undefined {
    return this.byKey.get(`${provider}/${id}`);
  }
}

/** Merge the virtual models into a model list: a virtual model hides a physical one with the same provider and id. */
export function withVirtualModels(models: AnyModel[], virtual: readonly AnyModel[]): AnyModel[] {
  if (!virtual.length) return models;
  const keys = new Set(virtual.map((m) => `${m.provider}/${m.id}`));
  return [...models.filter((m) => !keys.has(`${m.provider}/${m.id}`)), ...virtual];
}

/** The router state last stored on this branch for a virtual model. */
export function virtualModelState(branch: readonly unknown[], provider: string, modelId: string): unknown {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as { type?: string; customType?: string; data?: { provider?: string; modelId?: string; state?: unknown } };
    if (e?.type === "custom" && e.customType === VIRTUAL_MODEL_STATE_ENTRY && e.data?.provider === provider && e.data?.modelId === modelId) return e.data.state;
  }
  return undefined;
}

/**
 * The virtual model a session branch selected, if it still holds (pi 1.6's rule): assistant
 * messages name the physical models a virtual selection routed to, so the latest `model_change`
 * naming a virtual model holds until the next `model_change` — when that virtual model is
 * registered now. Otherwise undefined: the branch's model is the one the latest model_change or
 * response names, as in sessions without virtual models.
 */
export function virtualSelection(branch: readonly unknown[], find: (provider: string, modelId: string) => AnyModel | undefined): AnyModel | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as { type?: string; provider?: string; modelId?: string };
    if (e?.type !== "model_change") continue;
    const model = find(e.provider ?? "", e.modelId ?? "");
    return model && isVirtualModel(model) ? model : undefined;
  }
  return undefined;
}
