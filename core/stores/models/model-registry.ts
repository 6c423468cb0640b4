/**
 * The model registry: every model the CLI can use, and the key and headers to call it with.
 *
 * Models come from three layers, applied in this order (the reference's):
 *   1. pi-ai's built-in catalog, loaded lazily: to find a model, only its provider's part;
 *      whole only for listing and availability — see builtin-catalog.ts;
 *   2. `<agentDir>/models.json`: a provider entry with only `baseUrl` / `compat` overrides the
 *      built-in provider's models; `modelOverrides` patch built-in models; `models` are upserted
 *      by id (a custom id equal to a built-in id replaces that model);
 *   3. providers registered by plugins and extensions in the kernel registry `kernel.models`:
 *      with `models` they replace all of that provider's models; with only `baseUrl`/`headers`
 *      they redirect the existing ones.
 *
 * Keys: `getApiKey(model)` asks the auth storage (runtime --api-key → auth.json → environment)
 * and then the provider's configured `apiKey` (models.json or plugin), resolved per request
 * (`!command`, environment variable name, literal). Header values resolve the same way.
 *
 * A malformed models.json is a diagnostic with the file and the position; its providers are
 * ignored, everything else works. A provider entry that fails validation is skipped alone.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { ApiProvider, Kernel, ModelDefinition, ProviderModels } from "../../kernel/kernel.js";
import { Registry } from "../../kernel/registry.js";
import { jsonErrorPosition } from "../../kernel/settings.js";
import type { Diagnostic } from "../../kernel/types.js";
import { AuthStorage, type OAuthProvider } from "./auth-storage.js";
import { isCommandValue, resolveConfigValue, resolveHeaders } from "./config-value.js";
import { loadCatalogProviderSync, loadCatalogSync, type CatalogData } from "./builtin-catalog.js";
import { isVirtualModel, withVirtualModels } from "./virtual-models.js";
import { isObj, validateProvider } from "./models-json-check.js";

export type AnyModel = Model<Api>;

/** Defaults for custom models (models.json and plugin providers), as the reference documents. */
export const CUSTOM_MODEL_DEFAULTS = Object.freeze({
  reasoning: false,
  input: ["text"] as ("text" | "image")[],
  contextWindow: 128000,
  maxTokens: 16384,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

/** One provider entry of models.json. */
export interface ModelsJsonProvider {
  name?: string;
  baseUrl?: string;
  api?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  authHeader?: boolean;
  compat?: Record<string, unknown>;
  models?: ModelDefinition[];
  modelOverrides?: Record<string, ModelOverride>;
}

export interface ModelOverride {
  name?: string;
  reasoning?: boolean;
  thinkingLevelMap?: Record<string, string | null>;
  input?: ("text" | "image")[];
  cost?: Partial<{ input: number; output: number; cacheRead: number; cacheWrite: number }>;
  contextWindow?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
}

export interface ModelsJson {
  providers: Record<string, ModelsJsonProvider>;
}

/** Provider config that matters per request (key, headers, Authorization header). */
interface RequestConfig {
  apiKey?: string;
  headers?: Record<string, string>;
  authHeader?: boolean;
  source: string;
}

export type ApiKeyAndHeaders =
  | { ok: true; apiKey?: string; headers?: Record<string, string> }
  | { ok: false; error: string };

export interface ModelRegistryOptions {
  authStorage: AuthStorage;
  /** models.json to read; undefined = none. */
  modelsJsonPath?: string;
  /** Plugin-registered providers (the kernel's `models` registry). */
  models?: Registry<ProviderModels>;
  /** Stream functions per API (the kernel's `providers` registry), for resolveStream(). */
  providers?: Registry<ApiProvider>;
  /** The built-in catalog; default: pi-ai's generated catalog, loaded on first need. */
  catalog?: () => CatalogData;
  /** One provider's part of it (for find()); default: read alone from the generated catalog, or taken from `catalog` when that is given. */
  catalogPart?: (provider: string) => CatalogData[string] | undefined;
  /** Providers that need no key, besides those registered with `keyless: true`. */
  keylessProviders?: Iterable<string>;
  /** Also told about each new diagnostic (the kernel's log). */
  report?: (d: Diagnostic) => void;
}

type Obj = Record<string, unknown>;

export class ModelRegistry {
  readonly authStorage: AuthStorage;
  readonly modelsJsonPath: string | undefined;
  private readonly registry: Registry<ProviderModels>;
  private readonly providers: Registry<ApiProvider> | undefined;
  private readonly catalogLoader: () => CatalogData;
  private readonly catalogPart: (provider: string) => CatalogData[string] | undefined;
  private readonly keyless: Set<string>;
  private readonly reportFn?: (d: Diagnostic) => void;

  private json: ModelsJson | undefined;
  private jsonDiagnostics: Diagnostic[] = [];
  private buildDiagnostics: Diagnostic[] = [];
  private reported = new Set<string>();
  private catalog: CatalogData | undefined;
  private built: AnyModel[] | undefined;
  private quick = new Map<string, AnyModel | undefined>();
  private readonly ownRegistrations = new Map<string, () => void>();

  constructor(opts: ModelRegistryOptions) {
    this.authStorage = opts.authStorage;
    this.modelsJsonPath = opts.modelsJsonPath;
    this.registry = opts.models ?? new Registry<ProviderModels>("model provider", (d) => this.report(d));
    this.providers = opts.providers;
    this.catalogLoader = opts.catalog ?? loadCatalogSync;
    this.catalogPart = opts.catalogPart ?? (opts.catalog ? (p) => this.loadCatalog()[p] : loadCatalogProviderSync);
    this.keyless = new Set(opts.keylessProviders ?? []);
    this.reportFn = opts.report;
    this.registry.onChange(() => this.invalidate());
    this.authStorage.setFallbackResolver({
      has: (p) => this.requestConfig(p)?.apiKey !== undefined,
      get: (p) => this.configuredApiKey(p),
    });
    this.loadModelsJson();
  }

  /** A registry on the kernel: auth.json and models.json in the agent dir, plugin providers from kernel.models. */
  static forKernel(kernel: Kernel, opts: { authStorage?: AuthStorage; catalog?: () => CatalogData } = {}): ModelRegistry {
    const report = (d: Diagnostic) => kernel.diagnostics.report(d);
    return new ModelRegistry({
      authStorage: opts.authStorage ?? AuthStorage.create(join(kernel.agentDir, "auth.json"), { report }),
      modelsJsonPath: join(kernel.agentDir, "models.json"),
      models: kernel.models,
      providers: kernel.providers,
      catalog: opts.catalog,
      report,
    }).withVirtualModelsOf(kernel);
  }

  /** List the virtual models of this kernel (its "virtual-models" service). */
  withVirtualModelsOf(kernel: Kernel): this {
    this.virtual = () => kernel.service("virtual-models")?.list() ?? [];
    return this;
  }

  static create(authStorage: AuthStorage, modelsJsonPath?: string, opts: Omit<ModelRegistryOptions, "authStorage" | "modelsJsonPath"> = {}): ModelRegistry {
    return new ModelRegistry({ ...opts, authStorage, modelsJsonPath });
  }

  static inMemory(authStorage: AuthStorage, opts: Omit<ModelRegistryOptions, "authStorage" | "modelsJsonPath"> = {}): ModelRegistry {
    return new ModelRegistry({ ...opts, authStorage });
  }

  // ---- diagnostics ----

  private report(d: Diagnostic): void {
    const key = `${d.level}|${d.source}|${d.message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    try {
      this.reportFn?.(d);
    } catch {
      /* ignore */
    }
  }

  /** Problems found in models.json and in provider configs (current load). */
  get diagnostics(): readonly Diagnostic[] {
    return [...this.jsonDiagnostics, ...this.buildDiagnostics];
  }

  /** Errors loading models.json, as one text (undefined when it loaded cleanly). */
  getError(): string | undefined {
    const errors = this.jsonDiagnostics.filter((d) => d.level === "error");
    if (!errors.length) return undefined;
    return `${errors.map((d) => d.message).join("\n")}\n\nFile: ${this.modelsJsonPath}`;
  }

  // ---- loading ----

  /** Re-read models.json and rebuild (the catalog itself stays loaded). */
  refresh(): void {
    this.loadModelsJson();
    this.invalidate();
  }

  private invalidate(): void {
    this.built = undefined;
    this.quick.clear();
  }

  private loadModelsJson(): void {
    this.json = undefined;
    this.jsonDiagnostics = [];
    const path = this.modelsJsonPath;
    if (!path || !existsSync(path)) return;
    const fail = (level: Diagnostic["level"], message: string) => {
      const d: Diagnostic = { level, source: path, message };
      this.jsonDiagnostics.push(d);
      this.report(d);
    };
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      fail("error", `cannot read models.json: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (!text.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(stripJsonComments(text));
    } catch (error) {
      fail("error", `malformed JSON at ${jsonErrorPosition(text, error)}; custom models and provider overrides are ignored until it is fixed`);
      return;
    }
    if (!isObj(parsed) || !isObj(parsed.providers)) {
      fail("error", `models.json must be an object with a "providers" object; ignored`);
      return;
    }
    const providers: Record<string, ModelsJsonProvider> = {};
    for (const [name, raw] of Object.entries(parsed.providers)) {
      const warnings: string[] = [];
      const problems = validateProvider(name, raw, warnings);
      for (const w of warnings) fail("warning", w);
      if (problems.length) {
        fail("error", `provider "${name}" ignored: ${problems.join("; ")}`);
        continue;
      }
      providers[name] = raw as ModelsJsonProvider;
    }
    this.json = { providers };
  }

  /** Plugin-registered provider configs, in registration order. */
  private pluginProviders(): ProviderModels[] {
    return this.registry.list().map((e) => e.value);
  }

  private pluginProvider(name: string): ProviderModels | undefined {
    return this.registry.get(name);
  }

  private requestConfig(provider: string): RequestConfig | undefined {
    const plugin = this.pluginProvider(provider);
    if (plugin && (plugin.apiKey !== undefined || plugin.headers || plugin.authHeader)) {
      return { apiKey: plugin.apiKey, headers: plugin.headers, authHeader: plugin.authHeader, source: this.registry.entry(provider)?.source ?? "plugin" };
    }
    const j = this.json?.providers[provider];
    if (j && (j.apiKey !== undefined || j.headers || j.authHeader)) {
      return { apiKey: j.apiKey, headers: j.headers, authHeader: j.authHeader, source: this.modelsJsonPath ?? "models.json" };
    }
    return undefined;
  }

  /** Per-model request headers configured in models.json or by a plugin (resolved per request). */
  private modelHeaders(provider: string, id: string): Record<string, string> | undefined {
    const plugin = this.pluginProvider(provider);
    if (plugin?.models?.length) return plugin.models.find((m) => m.id === id)?.headers;
    const j = this.json?.providers[provider];
    const custom = j?.models?.find((m) => m.id === id);
    if (custom) return custom.headers;
    return j?.modelOverrides?.[id]?.headers ?? plugin?.modelOverrides?.[id]?.headers;
  }

  private loadCatalog(): CatalogData {
    if (!this.catalog) {
      try {
        this.catalog = this.catalogLoader();
      } catch (error) {
        const d: Diagnostic = { level: "error", source: "model catalog", message: "cannot load the built-in model catalog; only custom models are available", error };
        this.buildDiagnostics.push(d);
        this.report(d);
        this.catalog = {};
      }
    }
    return this.catalog;
  }

  /** Build the full model list (loads the catalog). */
  private build(): AnyModel[] {
    if (this.built) return this.built;
    this.buildDiagnostics = this.buildDiagnostics.filter((d) => d.source === "model catalog");
    // 4. OAuth providers may adjust their models (e.g. an enterprise base URL)
    this.built = this.applyOAuthModifications(this.assemble(this.loadCatalog()));
    return this.built;
  }

  /**
   * Steps 1–3 of the model list over `catalog`: built-ins with their overrides, models.json's
   * custom models, plugin providers. With `only`, just that provider's models (the catalog then
   * holds that provider alone): the same models the full list has for it.
   */
  private assemble(catalog: CatalogData, only?: string): AnyModel[] {
    const jsonProviders = this.json?.providers ?? {};
    const warn = (source: string, message: string) => {
      if (this.buildDiagnostics.some((d) => d.source === source && d.message === message)) return; // one provider assembled before
      const d: Diagnostic = { level: "warning", source, message };
      this.buildDiagnostics.push(d);
      this.report(d);
    };

    // 1. built-ins, with models.json provider overrides and per-model overrides
    const models: AnyModel[] = [];
    for (const [provider, byId] of Object.entries(catalog)) {
      const j = jsonProviders[provider];
      for (const m of Object.values(byId)) {
        let model: AnyModel = m;
        if (j?.baseUrl || j?.compat) model = { ...model, baseUrl: j.baseUrl ?? model.baseUrl, ...compatOf(mergeCompat(model.compat, j.compat)) };
        const o = j?.modelOverrides?.[m.id];
        if (o) model = applyModelOverride(model, o);
        models.push(model);
      }
    }

    // 2. models.json custom models, upserted by provider + id
    const jsonSource = this.modelsJsonPath ?? "models.json";
    for (const [provider, j] of Object.entries(jsonProviders)) {
      if (!j.models?.length || (only !== undefined && provider !== only)) continue;
      const builtIn = catalog[provider] ? Object.values(catalog[provider]!)[0] : undefined;
      if (!builtIn && !j.apiKey) warn(jsonSource, `provider "${provider}" defines models but no "apiKey"; they are usable only with a key from auth.json, the environment or --api-key`);
      for (const def of j.models) {
        const api = def.api ?? j.api ?? builtIn?.api;
        const baseUrl = def.baseUrl ?? j.baseUrl ?? builtIn?.baseUrl;
        if (!api) {
          warn(jsonSource, `provider "${provider}", model "${def.id}": no "api" (set it on the provider or the model); skipped`);
          continue;
        }
        if (!baseUrl) {
          warn(jsonSource, `provider "${provider}", model "${def.id}": no "baseUrl"; skipped`);
          continue;
        }
        upsert(models, customModel(provider, def, api, baseUrl, j.compat));
      }
    }

    // 3. plugin / extension providers
    for (const p of this.pluginProviders()) {
      if (only !== undefined && p.name !== only) continue;
      const source = this.registry.entry(p.name)?.source ?? "plugin";
      if (p.models?.length) {
        const kept = models.filter((m) => m.provider !== p.name);
        models.length = 0;
        models.push(...kept);
        for (const def of p.models) {
          const api = def.api ?? p.api;
          if (!api) {
            warn(source, `provider "${p.name}", model "${def.id}": no "api"; skipped`);
            continue;
          }
          models.push(customModel(p.name, def, api, def.baseUrl ?? p.baseUrl ?? "", pluginCompat(p)));
        }
      } else {
        for (let i = 0; i < models.length; i++) {
          const m = models[i]!;
          if (m.provider !== p.name) continue;
          let next = p.baseUrl ? { ...m, baseUrl: p.baseUrl } : m;
          const o = p.modelOverrides?.[m.id];
          if (o) next = applyModelOverride(next, o as ModelOverride);
          models[i] = next;
        }
      }
    }

    return models;
  }

  private applyOAuthModifications(models: AnyModel[]): AnyModel[] {
    let out = models;
    for (const id of this.authStorage.oauthProviderIds()) {
      const p: OAuthProvider | undefined = this.authStorage.getOAuthProviderSync(id);
      const cred = this.authStorage.get(id);
      if (!p?.modifyModels || cred?.type !== "oauth") continue;
      try {
        const { type: _t, ...tokens } = cred;
        out = p.modifyModels(out, tokens);
      } catch (error) {
        this.report({ level: "warning", source: id, message: "OAuth provider failed to adjust its models", error });
      }
    }
    return out;
  }

  /** Load pi-ai's OAuth providers for stored OAuth credentials, so their model tweaks apply. */
  private async prepareOAuth(): Promise<void> {
    let changed = false;
    for (const id of this.authStorage.oauthProviderIds()) {
      if (this.authStorage.getOAuthProviderSync(id)) continue;
      if (await this.authStorage.getOAuthProvider(id)) changed = true;
    }
    if (changed) this.invalidate();
  }

  // ---- queries ----

  /** Every model (built-in + models.json + plugins + virtual models). Loads the catalog. */
  getAll(): AnyModel[] {
    return withVirtualModels(this.build(), this.virtual());
  }

  /** pi 1.6 virtual models of this kernel (service "virtual-models"). */
  virtual: () => AnyModel[] = () => [];

  /** pi 1.6: a model of a non-chat type (classifier, …). This host has chat models only. */
  findOfType(type: string, provider: string, modelId: string): AnyModel | undefined {
    return type === "chat" ? this.find(provider, modelId) : undefined;
  }

  /** Models whose provider has a key configured (no command is run, no token refreshed). */
  async getAvailable(): Promise<AnyModel[]> {
    await this.prepareOAuth();
    const virtual = this.virtual();
    const all = withVirtualModels(this.build(), virtual);
    const byProvider = new Map<string, boolean>();
    // a provider that lists only virtual models needs no key of its own (their routes pick keyed models)
    for (const m of virtual) if (!this.build().some((x) => x.provider === m.provider)) byProvider.set(m.provider, true);
    for (const m of all) if (!byProvider.has(m.provider)) byProvider.set(m.provider, false);
    await Promise.all(
      [...byProvider.keys()].filter((p) => !byProvider.get(p)).map(async (p) => {
        byProvider.set(p, await this.providerHasAuth(p));
      }),
    );
    return all.filter((m) => byProvider.get(m.provider));
  }

  /**
   * getAvailable answered at once (pi 1.6's extension-facing form): OAuth providers not loaded
   * yet leave their model adjustments out until the async getAvailable has run.
   */
  getAvailableSync(): AnyModel[] {
    const virtual = this.virtual();
    const all = withVirtualModels(this.build(), virtual);
    const byProvider = new Map<string, boolean>();
    for (const m of virtual) if (!this.build().some((x) => x.provider === m.provider)) byProvider.set(m.provider, true);
    for (const m of all) if (!byProvider.has(m.provider)) byProvider.set(m.provider, this.isKeyless(m.provider) || this.authStorage.getAuthStatusSync(m.provider).configured);
    return all.filter((m) => byProvider.get(m.provider));
  }

  /** Provider names (built-in and custom). Loads the catalog. */
  getProviders(): string[] {
    return [...new Set(this.build().map((m) => m.provider))];
  }

  /**
   * Find a model. Answered from plugin providers and complete models.json entries without
   * loading the catalog when possible.
   */
  find(provider: string, modelId: string): AnyModel | undefined {
    const v = this.virtual().find((m) => m.provider === provider && m.id === modelId);
    if (v) return v;
    if (this.built) return this.built.find((m) => m.provider === provider && m.id === modelId);
    const key = `${provider}\u0000${modelId}`;
    if (this.quick.has(key)) return this.quick.get(key);
    let fast = this.findWithoutCatalog(provider, modelId);
    if (fast === "unknown") fast = this.findInProvider(provider, modelId);
    if (fast !== "unknown") {
      this.quick.set(key, fast);
      return fast;
    }
    return this.build().find((m) => m.provider === provider && m.id === modelId);
  }

  /**
   * A model found from its provider's part of the catalog alone (a start-up with a built-in
   * default model parses ~12 KB instead of ~1 MB); "unknown" when OAuth credentials could adjust
   * the list or the part cannot be read (the full list then answers, and reports why).
   */
  private findInProvider(provider: string, modelId: string): AnyModel | undefined | "unknown" {
    if (this.authStorage.oauthProviderIds().length) return "unknown";
    let part: CatalogData[string] | undefined;
    try {
      part = this.catalogPart(provider);
    } catch {
      return "unknown";
    }
    return this.assemble(part ? { [provider]: part } : {}, provider).find((m) => m.id === modelId);
  }

  /** "unknown" when the answer needs the catalog. */
  private findWithoutCatalog(provider: string, modelId: string): AnyModel | undefined | "unknown" {
    if (this.authStorage.oauthProviderIds().includes(provider)) return "unknown";
    const plugin = this.pluginProvider(provider);
    if (plugin?.models?.length) {
      // A plugin provider with models replaces the whole provider: its list is the answer.
      const def = plugin.models.find((m) => m.id === modelId);
      const api = def?.api ?? plugin.api;
      if (!def || !api) return undefined;
      return customModel(provider, def, api, def.baseUrl ?? plugin.baseUrl ?? "", pluginCompat(plugin));
    }
    const j = this.json?.providers[provider];
    const def = j?.models?.find((m) => m.id === modelId);
    if (!j || !def) return "unknown";
    const api = def.api ?? j.api;
    const baseUrl = def.baseUrl ?? j.baseUrl;
    if (!api || !baseUrl) return "unknown"; // inherits from a built-in provider
    const model = customModel(provider, def, api, baseUrl, j.compat);
    return plugin?.baseUrl ? { ...model, baseUrl: plugin.baseUrl } : model;
  }

  /** The provider needs no key: it was registered with `keyless: true` (or named in keylessProviders). */
  isKeyless(provider: string): boolean {
    return this.keyless.has(provider) || this.registry.get(provider)?.keyless === true;
  }

  private async providerHasAuth(provider: string): Promise<boolean> {
    if (this.isKeyless(provider)) return true;
    return this.authStorage.hasAuth(provider);
  }

  /** Is a key configured for this model's provider (no command is run)? */
  async hasConfiguredAuth(model: AnyModel): Promise<boolean> {
    if (isVirtualModel(model) && !this.build().some((x) => x.provider === model.provider)) return true; // a provider of virtual models only needs no key
    return this.providerHasAuth(model.provider);
  }

  /** Does this model's provider use a stored OAuth credential (a subscription)? */
  isUsingOAuth(model: AnyModel): boolean {
    return this.authStorage.get(model.provider)?.type === "oauth";
  }

  /** The provider's configured `apiKey` (models.json or plugin), resolved now. */
  private async configuredApiKey(provider: string): Promise<string | undefined> {
    const cfg = this.requestConfig(provider);
    if (cfg?.apiKey === undefined) return undefined;
    return resolveConfigValue(cfg.apiKey, {
      cache: false,
      onError: (m) => this.report({ level: "warning", source: cfg.source, message: `API key for provider "${provider}": ${m}` }),
    });
  }

  /** The key for a provider: --api-key → auth.json → environment → models.json / plugin apiKey. */
  async getApiKeyForProvider(provider: string): Promise<string | undefined> {
    const fromAuth = await this.authStorage.getApiKey(provider, { includeFallback: false });
    if (fromAuth !== undefined) return fromAuth;
    return this.configuredApiKey(provider);
  }

  /** The key for a model (undefined when none is configured or a command failed). */
  async getApiKey(model: AnyModel): Promise<string | undefined> {
    const r = await this.getApiKeyAndHeaders(model);
    return r.ok ? r.apiKey : undefined;
  }

  /** Key and request headers (provider and model headers resolved; Authorization when authHeader). */
  async getApiKeyAndHeaders(model: AnyModel): Promise<ApiKeyAndHeaders> {
    try {
      const cfg = this.requestConfig(model.provider);
      let apiKey = await this.authStorage.getApiKey(model.provider, { includeFallback: false });
      if (apiKey === undefined && cfg?.apiKey !== undefined) {
        apiKey = await this.configuredApiKey(model.provider);
        if (apiKey === undefined) {
          const how = isCommandValue(cfg.apiKey) ? ` from command: ${cfg.apiKey.slice(1)}` : "";
          return { ok: false, error: `cannot resolve the API key for provider "${model.provider}"${how}` };
        }
      }
      const providerHeaders = await resolveHeaders(cfg?.headers, `provider "${model.provider}"`, { cache: false });
      const modelHeaders = await resolveHeaders(this.modelHeaders(model.provider, model.id), `model "${model.provider}/${model.id}"`, { cache: false });
      let headers: Record<string, string> | undefined =
        model.headers || providerHeaders || modelHeaders ? { ...model.headers, ...providerHeaders, ...modelHeaders } : undefined;
      if (cfg?.authHeader) {
        if (!apiKey) return { ok: false, error: `no API key found for "${model.provider}"` };
        headers = { ...headers, Authorization: `Bearer ${apiKey}` };
      }
      return { ok: true, apiKey, headers: headers && Object.keys(headers).length ? headers : undefined };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  // ---- streaming ----

  /** The stream function for a model: its provider's own streamSimple, else the API's provider. */
  resolveStream(model: AnyModel): ApiProvider["stream"] | undefined {
    const own = this.pluginProvider(model.provider)?.streamSimple;
    const ownApi = this.pluginProvider(model.provider)?.api;
    if (own && (!ownApi || ownApi === model.api)) return own;
    // A provider registered with a custom API + streamSimple serves that API for every model.
    for (const p of this.pluginProviders()) if (p.streamSimple && p.api === model.api) return p.streamSimple;
    return this.providers?.get(model.api)?.stream;
  }

  // ---- dynamic providers (SDK hosts and tests without a kernel; extensions go through kernel.models) ----

  /**
   * Register a provider config (the reference's registerProvider). Returns an unregister
   * function; throws on an invalid config.
   */
  registerProvider(config: ProviderModels & { oauth?: Omit<OAuthProvider, "id"> }, source = "sdk"): () => void {
    const { oauth, ...models } = config;
    if (models.streamSimple && !models.api) throw new Error(`provider ${config.name}: "api" is required when registering streamSimple`);
    for (const def of models.models ?? []) {
      if (!def.api && !models.api) throw new Error(`provider ${config.name}, model ${def.id}: no "api" specified`);
    }
    this.ownRegistrations.get(config.name)?.();
    const undoModels = this.registry.register(config.name, models, source, { override: true });
    const undoOAuth = oauth ? this.authStorage.registerOAuthProvider({ ...oauth, id: config.name }) : undefined;
    const undo = () => {
      undoModels?.();
      undoOAuth?.();
      if (this.ownRegistrations.get(config.name) === undo) this.ownRegistrations.delete(config.name);
      this.invalidate();
    };
    this.ownRegistrations.set(config.name, undo);
    this.invalidate();
    return undo;
  }

  unregisterProvider(name: string): void {
    this.ownRegistrations.get(name)?.();
  }
}

// ---- helpers -----------------------------------------------------------------------------------

function upsert(models: AnyModel[], m: AnyModel): void {
  const i = models.findIndex((x) => x.provider === m.provider && x.id === m.id);
  if (i >= 0) models[i] = m;
  else models.push(m);
}

function compatOf(compat: Record<string, unknown> | undefined): { compat?: any } {
  return compat === undefined ? {} : { compat };
}

function pluginCompat(p: ProviderModels): Record<string, unknown> | undefined {
  const c = (p as { compat?: unknown }).compat;
  return isObj(c) ? c : undefined;
}

/** A model from a models.json or plugin definition, with the reference's defaults. */
function customModel(provider: string, def: ModelDefinition, api: string, baseUrl: string, providerCompat?: Record<string, unknown>): AnyModel {
  const m: AnyModel = {
    id: def.id,
    name: def.name ?? def.id,
    api,
    provider,
    baseUrl,
    reasoning: def.reasoning ?? CUSTOM_MODEL_DEFAULTS.reasoning,
    input: def.input ?? [...CUSTOM_MODEL_DEFAULTS.input],
    cost: def.cost ?? { ...CUSTOM_MODEL_DEFAULTS.cost },
    contextWindow: def.contextWindow ?? CUSTOM_MODEL_DEFAULTS.contextWindow,
    maxTokens: def.maxTokens ?? CUSTOM_MODEL_DEFAULTS.maxTokens,
    ...compatOf(mergeCompat(providerCompat, def.compat)),
  };
  if (def.thinkingLevelMap) m.thinkingLevelMap = def.thinkingLevelMap as AnyModel["thinkingLevelMap"];
  return m;
}

/** Merge compat objects; the routing sub-objects merge one level deeper (as the reference does). */
function mergeCompat(base: unknown, over: unknown): Record<string, unknown> | undefined {
  if (!isObj(over)) return isObj(base) ? base : undefined;
  const b = isObj(base) ? base : {};
  const merged: Obj = { ...b, ...over };
  for (const k of ["openRouterRouting", "vercelGatewayRouting"]) {
    if (isObj(b[k]) || isObj(over[k])) merged[k] = { ...(isObj(b[k]) ? b[k] : {}), ...(isObj(over[k]) ? over[k] : {}) };
  }
  return merged;
}

function applyModelOverride(model: AnyModel, o: ModelOverride): AnyModel {
  const r: AnyModel = { ...model };
  if (o.name !== undefined) r.name = o.name;
  if (o.reasoning !== undefined) r.reasoning = o.reasoning;
  if (o.thinkingLevelMap !== undefined) r.thinkingLevelMap = { ...model.thinkingLevelMap, ...o.thinkingLevelMap } as AnyModel["thinkingLevelMap"];
  if (o.input !== undefined) r.input = o.input;
  if (o.contextWindow !== undefined) r.contextWindow = o.contextWindow;
  if (o.maxTokens !== undefined) r.maxTokens = o.maxTokens;
  if (o.cost) {
    r.cost = {
      input: o.cost.input ?? model.cost.input,
      output: o.cost.output ?? model.cost.output,
      cacheRead: o.cost.cacheRead ?? model.cost.cacheRead,
      cacheWrite: o.cost.cacheWrite ?? model.cost.cacheWrite,
    };
  }
  const compat = mergeCompat(model.compat, o.compat);
  if (compat !== undefined) (r as { compat?: unknown }).compat = compat;
  return r;
}

/**
 * Remove `//` and `/* *\/` comments and trailing commas, replacing them with spaces so that
 * JSON.parse error positions still point into the original text.
 */
export function stripJsonComments(input: string): string {
  let out = "";
  let i = 0;
  const n = input.length;
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  while (i < n) {
    const c = input[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < n && input[j] !== '"') j += input[j] === "\\" ? 2 : 1;
      out += input.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && input[i + 1] === "/") {
      let j = input.indexOf("\n", i);
      if (j < 0) j = n;
      out += blank(input.slice(i, j));
      i = j;
    } else if (c === "/" && input[i + 1] === "*") {
      let j = input.indexOf("*/", i + 2);
      j = j < 0 ? n : j + 2;
      out += blank(input.slice(i, j));
      i = j;
    } else if (c === ",") {
      // trailing comma: only whitespace/comments until } or ]
      let j = i + 1;
      let k = j;
      for (;;) {
        while (k < n && /\s/.test(input[k]!)) k++;
        if (input[k] === "/" && input[k + 1] === "/") {
          const e = input.indexOf("\n", k);
          k = e < 0 ? n : e;
        } else if (input[k] === "/" && input[k + 1] === "*") {
          const e = input.indexOf("*/", k + 2);
          k = e < 0 ? n : e + 2;
        } else break;
      }
      out += input[k] === "}" || input[k] === "]" ? " " : ",";
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
