/**
 * `ctx.modelRegistry` as pi 1.6 gives it to extensions: the host's model registry with 1.6's
 * synchronous and asynchronous forms (getAvailable, hasConfiguredAuth and
 * getProviderAuthStatus answer at once; refresh returns a Promise) and its request methods
 * (stream, streamSimple, complete, completeSimple) reaching any model of the registry through
 * the same provider path a session uses: a provider's own streamSimple, else the stream of the
 * model's API, with the key and headers the registry resolves (models.json overrides of
 * built-in providers included).
 */
import type { AssistantStream, Kernel, AnyModel, AssistantMessage } from "../../core/kernel/index.js";
import { type ModelRegistry, createLazyStream, VirtualModels, type VirtualModelDefinition } from "../../core/stores/index.js";

const views = new WeakMap<ModelRegistry, ModelRegistry>();

export function extensionModelRegistry(kernel: Kernel, registry: ModelRegistry | undefined): ModelRegistry | undefined {
  if (!registry) return undefined;
  let view = views.get(registry);
  if (view) return view;
  const stream = (model: AnyModel, context: unknown, options: Record<string, unknown> = {}) =>
    createLazyStream(
      model,
      async (): Promise<AssistantStream> => {
        const fn = kernel.models.get(model.provider)?.streamSimple ?? kernel.providers.get(model.api)?.stream;
        if (!fn) throw new Error(`no provider can stream the API "${model.api}" (model ${model.provider}/${model.id})`);
        const auth = await registry.getApiKeyAndHeaders(model);
        if (!auth.ok) throw new Error(auth.error);
        const opts = { ...options, apiKey: (options.apiKey as string | undefined) ?? auth.apiKey, headers: { ...auth.headers, ...(options.headers as Record<string, string> | undefined) } };
        return fn(model, context as never, opts as never);
      },
      { signal: options.signal as AbortSignal | undefined },
    );
  const complete = (model: AnyModel, context: unknown, options?: Record<string, unknown>): Promise<AssistantMessage> => stream(model, context, options).result();
  const own: Record<string, unknown> = {
    getAvailable: () => registry.getAvailableSync(),
    hasConfiguredAuth: (model: AnyModel) => registry.isKeyless(model.provider) || registry.authStorage.getAuthStatusSync(model.provider).configured,
    getProviderAuthStatus: (provider: string) => registry.authStorage.getAuthStatusSync(provider),
    refresh: async () => {
      registry.refresh();
      return { aborted: false, errors: new Map() };
    },
    getProvider: (provider: string) => {
      const models = registry.getAll().filter((m) => m.provider === provider);
      return models.length ? { id: provider, name: provider, models } : undefined;
    },
    getProviderDisplayName: (provider: string) => provider,
    // This host has chat models only.
    getModelsOfType: (type: string, provider?: string) => (type === "chat" ? registry.getAll().filter((m) => !provider || m.provider === provider) : []),
    getAvailableOfType: async (type: string, provider?: string) => (type === "chat" ? registry.getAvailableSync().filter((m) => !provider || m.provider === provider) : []),
    getModelOfType: (type: string, provider: string, id: string) => registry.findOfType(type, provider, id),
    classify: async () => {
      throw new Error("classify: this host has no classifier models");
    },
    generateImages: async () => {
      throw new Error("generateImages: this host has no image models");
    },
    getProviderAuth: async (provider: string) => {
      const apiKey = await registry.getApiKeyForProvider(provider);
      return apiKey === undefined ? undefined : { apiKey };
    },
    registerVirtualModel: (def: VirtualModelDefinition) => void VirtualModels.of(kernel).register(def, "extension"),
    unregisterVirtualModel: (provider: string, id: string) => void kernel.service("virtual-models")?.unregister(provider, id),
    getRegisteredProviderConfig: (provider: string) => kernel.models.get(provider),
    getRegisteredNativeProvider: () => undefined,
    getRegisteredProviderIds: () => kernel.models.names(),
    stream,
    streamSimple: stream,
    complete,
    completeSimple: complete,
  };
  view = new Proxy(registry, {
    has: (target, key) => (typeof key === "string" && key in own) || Reflect.has(target, key),
    get(target, key, receiver) {
      if (typeof key === "string" && key in own) return own[key];
      const v = Reflect.get(target, key, receiver === view ? target : receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  views.set(registry, view);
  return view;
}
