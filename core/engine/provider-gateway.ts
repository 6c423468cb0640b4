/**
 * The provider gateway of a session: everything between "call the model" and the provider's
 * stream function — the stream function for the model's API (a provider's own streamSimple
 * first), the key and headers, the options from settings and the thinking level, the
 * before_provider_request hook. One stream for a turn, or one completion for a side request.
 * Every credential it hands out is added to the session's secrets (never stored).
 */
import { applyProviderEvents } from "./provider-events.js";
import type { AssistantStream, Kernel } from "../kernel/kernel.js";
import type { LlmContext } from "./agent/loop.js";
import type { AnyModel, AssistantMessage, Message, ThinkingLevel } from "../kernel/types.js";
import type { ModelSource } from "./model-source.js";
import type { SecretSet } from "../kernel/redact.js";
import { isVirtualModel, type ModelRouteReason } from "../stores/models/virtual-models.js";
import { routeReason, routeVirtual } from "./virtual-route.js";

export interface GatewayHost {
  readonly kernel: Kernel;
  readonly models: ModelSource;
  readonly secrets: SecretSet;
  readonly model: AnyModel | undefined;
  readonly thinkingLevel: ThinkingLevel;
  readonly sessionId: string;
  /** Whether the mode has slash commands to offer as a hint (/model). */
  readonly hasUI: boolean;
  /** The session's store (virtual models keep their router state on its branch). */
  readonly sessionManager?: unknown;
}

export class ProviderGateway {
  constructor(private readonly host: GatewayHost) {}

  /** Throws a message saying how to set things up when there is no model or no key for it. */
  async requireModelAndKey(): Promise<AnyModel> {
    const model = this.host.model;
    if (!model) throw new Error(this.noModelMessage());
    if (isVirtualModel(model)) return model; // the routed model's key is checked per request
    const apiKey = await this.host.models.getApiKey(model);
    if (apiKey === undefined && !this.host.models.isKeyless(model)) throw new Error(await this.noKeyMessage(model));
    this.host.secrets.add(apiKey);
    return model;
  }

  /** One stream from `model` for `context`. */
  async openStream(model: AnyModel, context: LlmContext, signal: AbortSignal, extra?: Record<string, unknown>, reason?: ModelRouteReason, failed?: AssistantMessage): Promise<AssistantStream> {
    const { kernel, models, secrets } = this.host;
    let level = this.host.thinkingLevel;
    if (isVirtualModel(model)) {
      // pi 1.6 virtual model: route this request to a physical model
      const routed = await routeVirtual(kernel, model, context, level, this.host.sessionManager as never, reason ?? routeReason(context.messages), signal, failed);
      model = routed.model;
      level = routed.thinkingLevel;
      const key = await models.getApiKey(model);
      if (key === undefined && !models.isKeyless(model)) throw new Error(await this.noKeyMessage(model));
    }
    const custom = kernel.models.get(model.provider)?.streamSimple;
    const provider = kernel.providers.get(model.api);
    const streamFn = custom ?? provider?.stream;
    if (!streamFn) throw new Error(`No provider can stream the API "${model.api}" (model ${model.provider}/${model.id}); is its provider plugin installed?`);
    let apiKey: string | undefined;
    let headers: Record<string, string> | undefined;
    if (models.getApiKeyAndHeaders) {
      const r = await models.getApiKeyAndHeaders(model);
      if (!r.ok) throw new Error(r.error ?? `cannot resolve the API key for provider "${model.provider}"`);
      apiKey = r.apiKey;
      headers = r.headers;
    } else {
      apiKey = await models.getApiKey(model);
    }
    // What goes to the provider as a credential never goes to the file.
    secrets.add(apiKey);
    for (const v of Object.values(headers ?? {})) secrets.add(v);
    const s = kernel.settings.get();
    const hooks = kernel.hooks;
    const options: Record<string, unknown> = {
      apiKey,
      signal,
      sessionId: this.host.sessionId,
      reasoning: level !== "off" && model.reasoning ? level : undefined,
      thinkingBudgets: s.thinkingBudgets,
      timeoutMs: s.retry.provider?.timeoutMs,
      // No silent SDK retries unless configured (pi 1.6): every failure reaches the retry plugin and shows as events.
      maxRetries: s.retry.provider?.maxRetries ?? 0,
      maxRetryDelayMs: s.retry.provider?.maxRetryDelayMs,
      headers,
    };
    if (hooks.before_provider_request.isUsed()) {
      options.onPayload = async (payload: unknown) => {
        const ev = await hooks.before_provider_request.promise({ type: "before_provider_request", payload, model });
        return ev?.payload !== payload ? ev?.payload : undefined;
      };
    }
    if (extra) Object.assign(options, extra);
    await applyProviderEvents(hooks, model, options); // (pi 1.6 before_provider_headers / after_provider_response)
    for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];
    return streamFn(model, context as never, options as never);
  }

  /**
   * One completion from the current model through the same path as a turn, without tools.
   * Resolves with the final message (stopReason "error" / "aborted" included); throws only when
   * no model is selected or no provider can serve it.
   */
  async completeOnce(systemPrompt: string, messages: Message[], signal?: AbortSignal, opts: { maxTokens?: number } = {}): Promise<AssistantMessage> {
    const model = this.host.model;
    if (!model) throw new Error(this.noModelMessage());
    const ac = signal ?? new AbortController().signal;
    const stream = await this.openStream(model, { systemPrompt, messages, tools: [] }, ac, opts.maxTokens ? { maxTokens: opts.maxTokens } : undefined, "direct");
    for await (const ev of stream) {
      if (ev.type === "done" || ev.type === "error") break;
    }
    return stream.result();
  }

  noModelMessage(): string {
    const dir = this.host.kernel.agentDir;
    return (
      "No model is selected. Set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment, " +
      `or ${dir}/auth.json) or configure a provider in ${dir}/models.json, then choose a model with ` +
      `--model <provider/id> (see --list-models)${this.host.hasUI ? " or /model" : ""}, or set defaultProvider/defaultModel in ${dir}/settings.json`
    );
  }

  private async noKeyMessage(model: AnyModel): Promise<string> {
    const env = (await this.host.models.envVarNames?.(model.provider)) ?? [];
    const envHint = env.length ? `set ${env.join(" or ")}, ` : "";
    return (
      `No API key for provider "${model.provider}" (model ${model.id}). To set one: ${envHint}pass --api-key <key>, ` +
      `or add {"${model.provider}": {"type": "api_key", "key": "..."}} to ${this.host.kernel.agentDir}/auth.json`
    );
  }
}
