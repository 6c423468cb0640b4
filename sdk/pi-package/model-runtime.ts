/**
 * pi 1.6's model runtime for SDK hosts: `ModelRuntime` (models, credentials and requests in one
 * object), `CredentialSynchronizationError`, `resolveCliModel` and
 * `resolveModelScopeWithDiagnostics`. It is a view of this project's ModelRegistry and
 * AuthStorage (the built-in catalog, `models.json`, `auth.json`, environment keys, runtime keys);
 * a host passes it to `createAgentSession({ modelRuntime })`.
 *
 * Where 1.6 is richer (pi-ai provider objects, login flows, non-chat model types, remote catalog
 * refresh) this runtime answers with what this host has; docs/sdk.md lists the differences.
 */
import { join } from "node:path";
import { AuthStorage, type AuthCredential } from "../../core/stores/models/auth-storage.js";
import { ModelRegistry } from "../../core/stores/models/model-registry.js";
import { resolveCliModel as resolveCli, resolveModelScope, type ScopedModel } from "../../core/stores/models/model-resolver.js";
import type { ProviderModels } from "../../core/kernel/kernel.js";
import type { AnyModel, AssistantMessage, ThinkingLevel } from "../../core/kernel/types.js";
import { getAgentDir } from "../../plugins/extensions/helpers.js";

export interface CreateModelRuntimeOptions {
  /** Credential storage: an AuthStorage (this host's). Default: the file at `authPath`. */
  credentials?: AuthStorage;
  /** Default `<agentDir>/auth.json`. */
  authPath?: string;
  /** models.json; `null` for none. Default `<agentDir>/models.json`. */
  modelsPath?: string | null;
  /** Skip the availability check made on create (getAvailableSnapshot() is empty until getAvailable()). */
  refreshOnCreate?: boolean;
  /** Cancels the availability check made on create. */
  signal?: AbortSignal;
  /** (this host) The agent dir the default paths are in. Default: getAgentDir(). */
  agentDir?: string;
  /** (this host) Wrap an existing registry (its auth storage and models.json) instead of making one. */
  modelRegistry?: ModelRegistry;
  // Accepted for 1.6 compatibility; this host has no remote model catalog, so they change nothing.
  modelsStore?: unknown;
  modelsStorePath?: string;
  allowModelNetwork?: boolean;
  modelRefreshTimeoutMs?: number;
  catalogBaseUrl?: string;
}

export interface ModelRuntimeAuthOverrides {
  apiKey?: string;
  env?: Record<string, string>;
  minOAuthValidityMs?: number;
  signal?: AbortSignal;
}

export type CredentialSynchronizationOperation = "login" | "logout" | "setRuntimeApiKey" | "removeRuntimeApiKey";

/** Credentials changed, but the runtime's model and auth snapshot could not be brought up to date. */
export class CredentialSynchronizationError extends Error {
  readonly providerId: string;
  readonly operation: CredentialSynchronizationOperation;
  readonly credential: AuthCredential | undefined;
  constructor(providerId: string, operation: CredentialSynchronizationOperation, credential: AuthCredential | undefined, options: ErrorOptions) {
    const cause = options?.cause instanceof Error ? options.cause.message : options?.cause !== undefined ? String(options.cause) : "unknown cause";
    super(`${operation} for provider "${providerId}" succeeded, but the model runtime could not be synchronized: ${cause}`, options);
    this.name = "CredentialSynchronizationError";
    this.providerId = providerId;
    this.operation = operation;
    this.credential = credential;
  }
}

/** A provider as this runtime lists it: its id and its chat models. */
export interface ModelRuntimeProvider {
  id: string;
  name: string;
  models: readonly AnyModel[];
}

export interface ModelRuntimeAuthStatus {
  configured: boolean;
  source?: "stored" | "runtime" | "environment" | "fallback";
  label?: string;
}

/** What createAgentSession reads from a ModelRuntime. */
export interface ModelRuntimeSource {
  readonly authStorage: AuthStorage;
  readonly modelsPath: string | undefined;
  registeredProviderConfigs(): ReadonlyMap<string, ProviderModels>;
}

/** Models, credentials and requests for an SDK host (pi 1.6's ModelRuntime on this host's registry). */
export class ModelRuntime implements ModelRuntimeSource {
  readonly authStorage: AuthStorage;
  readonly modelRegistry: ModelRegistry;
  readonly modelsPath: string | undefined;
  private snapshot: AnyModel[] = [];
  private readonly configs = new Map<string, ProviderModels>();
  private readonly runtimeKeys = new Set<string>();

  private constructor(registry: ModelRegistry) {
    this.modelRegistry = registry;
    this.authStorage = registry.authStorage;
    this.modelsPath = registry.modelsJsonPath;
  }

  static async create(options: CreateModelRuntimeOptions = {}): Promise<ModelRuntime> {
    if (options.credentials !== undefined && !(options.credentials instanceof AuthStorage)) {
      throw new TypeError("ModelRuntime.create: `credentials` must be an AuthStorage (AuthStorage.create(path) or AuthStorage.inMemory()); pi-ai credential stores are not supported by this host");
    }
    let registry = options.modelRegistry;
    if (!registry) {
      const agentDir = options.agentDir ?? getAgentDir();
      const auth = options.credentials ?? AuthStorage.create(options.authPath ?? join(agentDir, "auth.json"));
      const modelsPath = options.modelsPath === null ? undefined : (options.modelsPath ?? join(agentDir, "models.json"));
      registry = ModelRegistry.create(auth, modelsPath);
    }
    const runtime = new ModelRuntime(registry);
    if (options.refreshOnCreate !== false && !options.signal?.aborted) await runtime.getAvailable();
    return runtime;
  }

  /** (this host) A runtime over an existing registry, e.g. a session's `services.modelRegistry`. */
  static fromRegistry(registry: ModelRegistry): ModelRuntime {
    return new ModelRuntime(registry);
  }

  // ---- models ----

  getProviders(): readonly ModelRuntimeProvider[] {
    const byId = new Map<string, AnyModel[]>();
    for (const m of this.modelRegistry.getAll()) {
      let list = byId.get(m.provider);
      if (!list) byId.set(m.provider, (list = []));
      list.push(m);
    }
    return [...byId].map(([id, models]) => ({ id, name: id, models }));
  }
  getProvider(providerId: string): ModelRuntimeProvider | undefined {
    return this.getProviders().find((p) => p.id === providerId);
  }
  getModels(providerId?: string): readonly AnyModel[] {
    const all = this.modelRegistry.getAll();
    return providerId === undefined ? all : all.filter((m) => m.provider === providerId);
  }
  getAllModels(providerId?: string): readonly AnyModel[] {
    return this.getModels(providerId);
  }
  getModel(providerId: string, modelId: string): AnyModel | undefined {
    return this.modelRegistry.find(providerId, modelId);
  }
  /** A catalog or configured model that is not virtual. */
  getPhysicalModel(providerId: string, modelId: string): AnyModel | undefined {
    const m = this.getModel(providerId, modelId);
    return m && !(m as { virtual?: unknown }).virtual ? m : undefined;
  }
  /** This host has chat models only: other types list nothing. */
  getModelsOfType(type: string, providerId?: string): readonly AnyModel[] {
    return type === "chat" ? this.getModels(providerId) : [];
  }
  getModelOfType(type: string, providerId: string, modelId: string): AnyModel | undefined {
    return type === "chat" ? this.getModel(providerId, modelId) : undefined;
  }

  /** Models whose provider has a key configured (nothing is run, no token refreshed). */
  async getAvailable(providerId?: string): Promise<readonly AnyModel[]> {
    this.snapshot = await this.modelRegistry.getAvailable();
    return providerId === undefined ? this.snapshot : this.snapshot.filter((m) => m.provider === providerId);
  }
  getAllAvailable(providerId?: string): Promise<readonly AnyModel[]> {
    return this.getAvailable(providerId);
  }
  async getAvailableOfType(type: string, providerId?: string): Promise<readonly AnyModel[]> {
    return type === "chat" ? this.getAvailable(providerId) : [];
  }
  /** The available models as of the last check (create(), getAvailable(), a credential change). */
  getAvailableSnapshot(): readonly AnyModel[] {
    return this.snapshot;
  }
  /** Problems reading models.json, as one text. */
  getError(): string | undefined {
    return this.modelRegistry.getError();
  }
  /** Re-read models.json (and auth.json) and check availability again. */
  async refresh(): Promise<{ aborted: boolean; errors: ReadonlyMap<string, Error> }> {
    this.authStorage.reload();
    this.modelRegistry.refresh();
    await this.getAvailable();
    const error = this.getError();
    return { aborted: false, errors: new Map(error ? [["models.json", new Error(error)]] : []) };
  }

  // ---- auth ----

  async checkAuth(providerId: string): Promise<{ type: "api_key" | "oauth"; source?: string } | undefined> {
    const status = await this.authStorage.getAuthStatus(providerId);
    if (!status.configured && !this.modelRegistry.isKeyless(providerId)) return undefined;
    return { type: this.isUsingOAuth(providerId) ? "oauth" : "api_key", ...(status.label ?? status.source ? { source: status.label ?? status.source } : {}) };
  }
  isUsingOAuth(providerId: string): boolean {
    return this.authStorage.get(providerId)?.type === "oauth";
  }
  isUsingSubscription(providerId: string): boolean {
    return this.isUsingOAuth(providerId);
  }
  /** A key is known for the provider now (runtime or stored key, keyless provider, or seen available at the last check). */
  hasConfiguredAuth(providerId: string): boolean {
    return this.authStorage.has(providerId) || this.getProviderAuthStatus(providerId).configured || this.modelRegistry.isKeyless(providerId) || this.snapshot.some((m) => m.provider === providerId);
  }
  getProviderAuthStatus(providerId: string): ModelRuntimeAuthStatus {
    if (this.runtimeKeys.has(providerId)) return { configured: true, source: "runtime", label: "runtime key" };
    if (this.authStorage.has(providerId)) return { configured: true, source: "stored" };
    if (this.snapshot.some((m) => m.provider === providerId)) return { configured: true };
    return { configured: false };
  }
  /** The key and headers a request to the provider (or model) would use; undefined when none is configured. */
  async getAuth(target: string | AnyModel, overrides: ModelRuntimeAuthOverrides = {}): Promise<{ auth: { apiKey?: string; headers?: Record<string, string>; baseUrl?: string }; source?: string } | undefined> {
    const model = typeof target === "string" ? this.getModels(target)[0] : target;
    if (!model) return overrides.apiKey ? { auth: { apiKey: overrides.apiKey }, source: "override" } : undefined;
    const r = await this.modelRegistry.getApiKeyAndHeaders(model);
    if (!r.ok) throw new Error(r.error);
    const apiKey = overrides.apiKey ?? r.apiKey;
    if (apiKey === undefined && !this.modelRegistry.isKeyless(model.provider)) return undefined;
    const status = await this.authStorage.getAuthStatus(model.provider);
    return { auth: { apiKey, ...(r.headers ? { headers: r.headers } : {}), baseUrl: model.baseUrl }, source: overrides.apiKey ? "override" : (status.label ?? status.source) };
  }
  async listCredentials(): Promise<ReadonlyArray<{ providerId: string; type: "api_key" | "oauth" }>> {
    return this.authStorage.list().map((providerId) => ({ providerId, type: this.authStorage.get(providerId)!.type }));
  }
  /** A key for this process only (never saved); it wins over stored and environment keys. */
  async setRuntimeApiKey(providerId: string, apiKey: string): Promise<void> {
    if (typeof providerId !== "string" || !providerId) throw new TypeError("setRuntimeApiKey: providerId must be a provider id");
    if (typeof apiKey !== "string" || !apiKey) throw new TypeError(`setRuntimeApiKey("${providerId}"): the key must be a non-empty string`);
    this.authStorage.setRuntimeApiKey(providerId, apiKey);
    this.runtimeKeys.add(providerId);
    await this.synchronize(providerId, "setRuntimeApiKey");
  }
  async removeRuntimeApiKey(providerId: string): Promise<void> {
    this.authStorage.removeRuntimeApiKey(providerId);
    this.runtimeKeys.delete(providerId);
    await this.synchronize(providerId, "removeRuntimeApiKey");
  }
  /** Forget the stored credential of a provider (auth.json). */
  async logout(providerId: string): Promise<void> {
    if (!this.authStorage.logout(providerId)) throw new Error(`logout("${providerId}"): the credential file could not be updated`);
    await this.synchronize(providerId, "logout");
  }
  /** Credential writes are synchronous here: nothing is ever pending. */
  async settleCredentialWrites(): Promise<void> {}

  private async synchronize(providerId: string, operation: CredentialSynchronizationOperation): Promise<void> {
    try {
      await this.getAvailable();
    } catch (cause) {
      throw new CredentialSynchronizationError(providerId, operation, this.authStorage.get(providerId), { cause });
    }
  }

  // ---- providers ----

  /** Add (or replace) a provider: `{ baseUrl, api, apiKey, models, streamSimple, … }` as pi.registerProvider takes it. */
  registerProvider(providerId: string, config: Omit<ProviderModels, "name">): void {
    if (typeof providerId !== "string" || !providerId) throw new TypeError("registerProvider: providerId must be a provider id");
    if (!config || typeof config !== "object") throw new TypeError(`registerProvider("${providerId}"): config must be an object`);
    const full = { ...config, name: providerId } as ProviderModels;
    this.modelRegistry.registerProvider(full);
    this.configs.set(providerId, full);
  }
  unregisterProvider(providerId: string): void {
    this.modelRegistry.unregisterProvider(providerId);
    this.configs.delete(providerId);
  }
  getRegisteredProviderIds(): readonly string[] {
    return [...this.configs.keys()];
  }
  getRegisteredProviderConfig(providerId: string): ProviderModels | undefined {
    return this.configs.get(providerId);
  }
  registeredProviderConfigs(): ReadonlyMap<string, ProviderModels> {
    return this.configs;
  }

  // ---- requests ----

  /** Stream one request on `model` with its configured key (a registered provider's streamSimple, else pi-ai's). */
  streamSimple(model: AnyModel, context: unknown, options: Record<string, unknown> = {}): AsyncIterable<unknown> & { result(): Promise<AssistantMessage> } {
    const stream = createRelay();
    void (async () => {
      try {
        const auth = await this.getAuth(model, { apiKey: options.apiKey as string | undefined });
        const opts = { ...options, apiKey: auth?.auth.apiKey, headers: { ...auth?.auth.headers, ...(options.headers as Record<string, string> | undefined) } };
        const own = this.modelRegistry.resolveStream(model) as ((m: AnyModel, c: unknown, o: unknown) => AsyncIterable<unknown> & { result(): Promise<AssistantMessage> }) | undefined;
        const source = own ? own(model, context, opts) : ((await import("@earendil-works/pi-ai/compat")) as unknown as { streamSimple: (m: AnyModel, c: unknown, o: unknown) => AsyncIterable<unknown> & { result(): Promise<AssistantMessage> } }).streamSimple(model, context, opts);
        for await (const ev of source) stream.push(ev);
        stream.end(await source.result());
      } catch (error) {
        stream.fail(error);
      }
    })();
    return stream;
  }
  stream(model: AnyModel, context: unknown, options?: Record<string, unknown>) {
    return this.streamSimple(model, context, options);
  }
  completeSimple(model: AnyModel, context: unknown, options?: Record<string, unknown>): Promise<AssistantMessage> {
    return this.streamSimple(model, context, options).result();
  }
  complete(model: AnyModel, context: unknown, options?: Record<string, unknown>): Promise<AssistantMessage> {
    return this.completeSimple(model, context, options);
  }
}

/** An async iterable fed by push() with a final result (pi-ai's event stream shape). */
function createRelay(): AsyncIterable<unknown> & { result(): Promise<AssistantMessage>; push(e: unknown): void; end(r: AssistantMessage): void; fail(e: unknown): void } {
  const queue: unknown[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  let settle!: { ok: (r: AssistantMessage) => void; err: (e: unknown) => void };
  const final = new Promise<AssistantMessage>((ok, err) => (settle = { ok, err }));
  final.catch(() => undefined);
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push: (e) => void (queue.push(e), poke()),
    end: (r) => void ((done = true), settle.ok(r), poke()),
    fail: (e) => void ((done = true), (failure = e), settle.err(e), poke()),
    result: () => final,
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length) yield queue.shift();
        else if (done) {
          if (failure !== undefined) throw failure;
          return;
        } else await new Promise<void>((r) => (wake = r));
      }
    },
  };
}

// ---- resolution -------------------------------------------------------------------------------------

type RuntimeLike = ModelRuntime | { modelRegistry: ModelRegistry };

function registryOf(opts: { modelRuntime?: RuntimeLike; modelRegistry?: ModelRegistry }, where: string): ModelRegistry {
  const r = opts.modelRuntime?.modelRegistry ?? opts.modelRegistry;
  if (!(r instanceof ModelRegistry)) throw new TypeError(`${where}: a modelRuntime (ModelRuntime.create()) or a modelRegistry is required`);
  return r;
}

export interface ResolveCliModelResult {
  model: AnyModel | undefined;
  thinkingLevel?: ThinkingLevel;
  warning: string | undefined;
  /** Set (and `model` undefined) when the flags name no model. */
  error: string | undefined;
}

/**
 * The model `--provider` / `--model` name: `provider/id`, `id`, a fuzzy pattern, with an optional
 * `:<thinking>` suffix (returned, not applied). All models count, not only those with a key.
 * Takes 1.6's `modelRuntime` or 0.73.1's `modelRegistry`.
 */
export function resolveCliModel(options: { cliProvider?: string; cliModel?: string; cliThinking?: ThinkingLevel; inlineApiKey?: boolean; modelRuntime?: RuntimeLike; modelRegistry?: ModelRegistry }): ResolveCliModelResult {
  const registry = registryOf(options, "resolveCliModel");
  const r = resolveCli({ cliProvider: options.cliProvider, cliModel: options.cliModel, modelRegistry: registry });
  if (r.error) return { model: undefined, warning: r.warning, error: r.error };
  const thinkingLevel = r.thinkingLevel ?? options.cliThinking;
  return { model: r.model, ...(thinkingLevel ? { thinkingLevel } : {}), warning: r.warning, error: undefined };
}

export interface ModelScopeDiagnostic {
  type: "warning";
  code: "no-match" | "invalid-thinking-level" | "ambiguous";
  message: string;
  pattern: string;
}

export interface ResolveModelScopeResult {
  scopedModels: ScopedModel[];
  diagnostics: ModelScopeDiagnostic[];
}

/** Scope patterns (`--models`, `enabledModels`) against the available models, with a diagnostic per problem naming its pattern. */
export async function resolveModelScopeWithDiagnostics(patterns: string[], modelRuntime: RuntimeLike): Promise<ResolveModelScopeResult> {
  if (!Array.isArray(patterns)) throw new TypeError("resolveModelScopeWithDiagnostics: patterns must be an array of strings");
  const registry = registryOf({ modelRuntime }, "resolveModelScopeWithDiagnostics");
  const available = await registry.getAvailable();
  const scopedModels: ScopedModel[] = [];
  const diagnostics: ModelScopeDiagnostic[] = [];
  for (const pattern of patterns) {
    const r = resolveModelScope([pattern], available);
    for (const message of r.warnings) {
      const code = /^No models match/.test(message) ? "no-match" : /thinking level/i.test(message) ? "invalid-thinking-level" : "ambiguous";
      diagnostics.push({ type: "warning", code, message, pattern });
    }
    for (const s of r.scoped) if (!scopedModels.some((x) => x.model.provider === s.model.provider && x.model.id === s.model.id)) scopedModels.push(s);
  }
  return { scopedModels, diagnostics };
}
