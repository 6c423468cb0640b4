/**
 * The SDK for Node hosts: agent sessions in your own process, with the same defaults as the CLI
 * (the cwd, the stored settings and keys of the agent dir, discovered extensions, skills, prompt
 * templates and context files) and without its terminal: nothing here writes to stdout, and no
 * mode is picked. See docs/sdk.md.
 *
 *   createAgentSessionServices(options)     one kernel for a cwd + agent dir: settings, plugins,
 *                                           extensions (loaded, not bound), auth, model registry
 *   createAgentSessionFromServices(options) the session runtime on those services
 *   createAgentSession(options)             both in one call
 *   createAgentSessionRuntime(options)      the same, returning the runtime
 *
 * Binding. A session runtime made here is not bound to its kernel until the host calls
 * `runtime.bindExtensions()` (or `session.bindExtensions()`): only then is session_start emitted
 * (extensions' start-up handlers run, MCP servers connect, resources load) and do extension
 * actions that need the live session work; before that they throw "Extension runtime not
 * initialized". Prompting works either way. Later session switches announce themselves.
 */
import { sessionCheckpoints, type SessionCheckpoints, type SessionLike } from "../plugins/checkpoints/service.js";
import { join, resolve } from "node:path";
import { defineApp, expandHome, resolveAgentDir, type AppConfig } from "../core/kernel/config.js";
import type { Kernel } from "../core/kernel/kernel.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import { SettingsManager, type Settings } from "../core/kernel/settings.js";
import { AgentSession, type AgentSessionOptions, type SessionMode } from "../core/engine/agent-session.js";
import type { InputSource } from "../core/engine/run-controller.js";
import type { SessionListener } from "../core/engine/session-events.js";
import { AgentSessionRuntime, type SessionFactory } from "../core/engine/runtime.js";
import { SessionManager } from "../core/stores/session/session-manager.js";
import { sessionDirForCwd } from "../core/stores/session/session-entries.js";
import { AuthStorage } from "../core/stores/models/auth-storage.js";
import { ModelRegistry } from "../core/stores/models/model-registry.js";
import { parseModelList, resolveModelScopeFromRegistry } from "../core/stores/models/model-resolver.js";
import type { SessionStartReason } from "../core/kernel/hooks.js";
import type { AnyModel, Diagnostic, ThinkingLevel, ToolDefinition } from "../core/kernel/types.js";
import type { ExtensionUI } from "../core/kernel/ui.js";
import type { ExtensionFactory, ToolDefinition as ExtensionToolDefinition } from "../plugins/extensions/types.js";
import type { ParsedArgs } from "./args.js";
import { builtinPlugins } from "./builtins.js";
import { setupKernel } from "./kernel-setup.js";
import { packageInfo } from "./package-info.js";
import { createSessionFactory, resolveActiveTools, resolveSessionDir, resolveStartModel, watchStore, type ScopedModel } from "./session-setup.js";
import { sessionSetupForLoader, type ResourceLoader } from "./pi-package/resource-loader.js"; // pi 1.6 resourceLoader
import type { ModelRuntimeSource } from "./pi-package/model-runtime.js"; // pi 1.6 modelRuntime

// ---- options ---------------------------------------------------------------------------------------

/** A tool a host adds: pi's ToolDefinition (defineTool(), the tool factories) or the kernel's. */
export type HostTool = ToolDefinition | ExtensionToolDefinition<any, any>;

/** Which app the services act as: its name decides the config folders (default: pi's). */
export interface AppIdentity {
  /** Default "pi". */
  name?: string;
  /** Default: this package's version. */
  version?: string;
  /** Project config folder; default `.<name>`. */
  configDir?: string;
  /** Environment variable naming the agent dir; default `<NAME>_CODING_AGENT_DIR`. */
  agentDirEnv?: string;
}

/** What gets discovered and loaded (the CLI's -e, --no-extensions, --skill, … flags). */
export interface ResourceOptions {
  /** More extensions to load first (paths, `npm:` or `git:` sources), like `-e`. */
  extensions?: string[];
  /** Do not discover extensions (the ones listed above and inline factories still load). */
  noExtensions?: boolean;
  skills?: string[];
  noSkills?: boolean;
  promptTemplates?: string[];
  noPromptTemplates?: boolean;
  themes?: string[];
  noThemes?: boolean;
  /** Do not load AGENTS.md / CLAUDE.md. */
  noContextFiles?: boolean;
}

export interface CreateAgentSessionServicesOptions {
  /** Working directory: project discovery, tools, session naming. Default process.cwd(). */
  cwd?: string;
  /** The agent dir (settings.json, auth.json, models.json, sessions/, extensions/). Default `$<NAME>_CODING_AGENT_DIR`, else `~/<configDir>/agent`. */
  agentDir?: string;
  /** Environment used to find the agent dir. Default process.env. */
  env?: NodeJS.ProcessEnv;
  app?: AppIdentity;
  /**
   * A SettingsManager used as is (e.g. `await SettingsManager.load({ agentDir, cwd })` with
   * `setOverride()`s), or plain values used instead of the stored settings (in memory: nothing is
   * read or written). Default: the stored settings (`<agentDir>/settings.json` + the project's).
   */
  settings?: SettingsManager | Partial<Settings> | Record<string, unknown>;
  /** The reference's name for `settings` (a SettingsManager). */
  settingsManager?: SettingsManager;
  /** Credentials. Default `AuthStorage.create(<agentDir>/auth.json)` (stored keys, then environment variables). */
  authStorage?: AuthStorage;
  /**
   * Where models come from. The services always build their registry on their own kernel (so
   * plugin and extension providers are in it); a registry given here lends its auth storage and
   * its models.json path. Use `services.modelRegistry` to look models up.
   */
  modelRegistry?: ModelRegistry;
  /** Kernel plugins: a list, or a function of the built-in list (e.g. to swap one). Default builtinPlugins(). */
  plugins?: PluginManifest[] | ((builtins: PluginManifest[]) => PluginManifest[]);
  /** pi extensions defined in code, loaded after the discovered ones. */
  extensionFactories?: ExtensionFactory[];
  resources?: ResourceOptions;
  /** Values of plugin and extension flags (what `--plan` would set: `{ plan: true }`). */
  flags?: Record<string, unknown>;
  /** Trust the project for this process (like `--trust`): its extensions, plugins and `.ts` config may run. */
  trustProject?: boolean;
  /** Load the plugins the `plugins` setting names (default true). */
  userPlugins?: boolean;
  /**
   * (pi 1.6) Where resources come from: a DefaultResourceLoader (after `reload()` the session runs
   * on its kernel, so its extensions load once) or any ResourceLoader object (its getters decide
   * the system prompt, skills, prompt templates and context files; its extensions load by path).
   */
  resourceLoader?: ResourceLoader;
  /** (pi 1.6) Models and credentials: a ModelRuntime (its auth storage, models.json and registered providers). */
  modelRuntime?: ModelRuntimeSource;
}

/** Everything a session needs for one cwd + agent dir, built once: one kernel. */
export interface AgentSessionServices {
  readonly cwd: string;
  readonly agentDir: string;
  readonly app: AppConfig;
  readonly kernel: Kernel;
  readonly settingsManager: SettingsManager;
  readonly authStorage: AuthStorage;
  readonly modelRegistry: ModelRegistry;
  /** Everything reported so far and later (settings, plugins, extensions, sessions); nothing is printed. */
  readonly diagnostics: readonly Diagnostic[];
  /** The extensions that loaded, and those that failed. */
  readonly extensionsResult: ExtensionsResult;
}

export interface ExtensionsResult {
  extensions: Array<{ path: string; origin: string }>;
  errors: Array<{ path: string; error: string }>;
}

export interface SessionOptions {
  /** The first session's store. Default `SessionManager.create(cwd, <sessions folder of cwd>)` (a new, saved session). */
  sessionManager?: SessionManager;
  /** A model, or a pattern (`provider/id`, `id`, a glob; `:level` sets thinking). Default: the resumed session's, else settings, else the first provider with a key. */
  model?: AnyModel | string;
  /** Default: the model pattern's (`id:high`), else `defaultThinkingLevel`, else "medium" — clamped to what the model supports. */
  thinkingLevel?: ThinkingLevel;
  /** Models to cycle through (models, or patterns). Default: the `enabledModels` setting. */
  scopedModels?: Array<{ model: AnyModel | string; thinkingLevel?: ThinkingLevel }>;
  /**
   * Exactly these tools are active: names (built-in, plugin, extension or custom ones) or tool
   * definitions (registered first, replacing a built-in of the same name). Default: read, bash,
   * edit, write and every tool a plugin, an extension or `customTools` adds.
   */
  tools?: Array<string | HostTool>;
  /** Without `tools`: "builtin" starts without the built-in set, "all" without any tool. */
  noTools?: "all" | "builtin";
  /** More tools (a built-in of the same name is replaced); active unless `tools` leaves them out. */
  customTools?: HostTool[];
  /** Replace the head of the system prompt (text). */
  systemPrompt?: string;
  /** Append to the system prompt. */
  appendSystemPrompt?: string;
}

export interface CreateAgentSessionFromServicesOptions extends SessionOptions {
  services: AgentSessionServices;
}

export interface CreateAgentSessionOptions extends CreateAgentSessionServicesOptions, SessionOptions {}

export interface CreateAgentSessionResult {
  /** The current session (`runtime.session` changes when the runtime switches sessions). */
  session: SdkAgentSession;
  runtime: SdkSessionRuntime;
  services: AgentSessionServices;
  extensionsResult: ExtensionsResult;
  /** Set when a resumed session's model could not be restored. */
  modelFallbackMessage?: string;
  diagnostics: readonly Diagnostic[];
}

/** What the host hands extensions when it binds them. */
export interface ExtensionBindings {
  /** The UI behind `ctx.ui` (dialogs, notify, status); without one, `ctx.hasUI` is false and dialogs answer with their defaults. */
  uiContext?: ExtensionUI;
  /** Called for every error an extension or plugin causes (a failing handler, a failed load). */
  onError?: (error: ExtensionError) => void;
  /** What `ctx.shutdown()` does (default: nothing). */
  shutdownHandler?: () => void | Promise<void>;
}

export interface ExtensionError {
  /** The extension's path (or plugin name) the error is attributed to. */
  extensionPath: string;
  /** The hook or event it happened in ("" when none). */
  event: string;
  error: string;
}

// ---- sessions and the runtime ---------------------------------------------------------------------

interface SessionHost {
  runtime(): SdkSessionRuntime | undefined;
  traits(): SessionTraits;
}
/** What a session reports about the mode running it (a mode runner sets them; "print" until then). */
export interface SessionTraits {
  mode: SessionMode;
  hasUI: boolean;
  inputSource: InputSource;
}
// pi reports "print" for a session no mode runner runs (its ExtensionMode has no "sdk").
const SDK_TRAITS: SessionTraits = { mode: "print", hasUI: false, inputSource: "sdk" };

/**
 * The sessions the SDK builds: an AgentSession that can bind extensions (as pi's
 * `session.bindExtensions()`), and whose mode follows the runtime (a mode runner sets it).
 */
export class SdkAgentSession extends AgentSession {
  constructor(
    options: AgentSessionOptions,
    private readonly host: SessionHost,
  ) {
    super(options);
    for (const key of ["mode", "hasUI", "inputSource"] as const) {
      Object.defineProperty(this, key, { get: () => host.traits()[key], configurable: true, enumerable: true });
    }
  }

  /**
   * Listeners get every event in order but are not waited for (pi's `session.subscribe`): a slow
   * listener does not hold the run up. `session.agent.subscribe` listeners are awaited.
   */
  override subscribe(listener: SessionListener): () => void {
    return this.agent.subscribe((event) => {
      try {
        const r = listener(event);
        if (r && typeof (r as Promise<void>).then === "function") (r as Promise<void>).then(undefined, (error) => this.reportListenerError(event.type, error));
      } catch (error) {
        this.reportListenerError(event.type, error);
      }
    });
  }
  private reportListenerError(type: string, error: unknown): void {
    this.kernel.diagnostics.report({ level: "error", source: "subscriber", hook: type, message: "session listener failed", error });
  }

  /** Checkpoints of the project's files along this session's tree (docs/checkpoints.md); undefined without the checkpoints plugin. */
  get checkpoints(): SessionCheckpoints | undefined {
    const service = this.kernel.service("checkpoints");
    return service && sessionCheckpoints(service, this as unknown as SessionLike);
  }

  /** Bind extensions to the runtime holding this session (see SdkSessionRuntime.bindExtensions). */
  async bindExtensions(bindings: ExtensionBindings = {}): Promise<void> {
    const rt = this.host.runtime();
    if (!rt) throw new Error("bindExtensions: this session has no runtime yet");
    if (rt.session !== this) throw new Error("bindExtensions: this session was replaced; bind runtime.session instead");
    await rt.bindExtensions(bindings);
  }
}

/** Services whose kernel a live runtime holds (a kernel binds one runtime at a time). */
const runtimes = new WeakMap<AgentSessionServices, SdkSessionRuntime>();

/**
 * An AgentSessionRuntime made by the SDK: it starts unbound (see bindExtensions) and knows its
 * services. newSession / switchSession / fork / clone / importSession replace `session`;
 * subscribe again through onRebind().
 */
export class SdkSessionRuntime extends AgentSessionRuntime {
  readonly services: AgentSessionServices;
  readonly modelFallbackMessage?: string;
  private traits: SessionTraits = SDK_TRAITS;
  private readonly undoBindings = new Map<keyof ExtensionBindings, () => void>();

  constructor(services: AgentSessionServices, factory: SessionFactory, initial: AgentSession, opts: { reason?: SessionStartReason; modelFallbackMessage?: string } = {}) {
    super(services.kernel, factory, initial, { deferStart: true, reason: opts.reason });
    this.services = services;
    this.modelFallbackMessage = opts.modelFallbackMessage;
  }

  /** The current session (replaced by newSession, switchSession, fork, clone, importSession). */
  override get session(): SdkAgentSession {
    return super.session as SdkAgentSession;
  }

  /** The services' diagnostics (nothing is printed). */
  get diagnostics(): readonly Diagnostic[] {
    return this.services.diagnostics;
  }

  /** Whether bindExtensions() ran (the kernel is bound; session_start was emitted). */
  get isBound(): boolean {
    return this.isStarted;
  }

  /** The mode sessions report (`ctx.mode`); "print" (as pi) unless a mode runner set its own. */
  get mode(): SessionMode {
    return this.traits.mode;
  }
  get sessionTraits(): SessionTraits {
    return this.traits;
  }
  /** Set by a mode runner: the mode's own name (and whether it has a UI, where input comes from). */
  setMode(mode: SessionMode | SessionTraits): void {
    this.traits = typeof mode === "string" ? { ...SDK_TRAITS, mode } : mode;
  }

  /**
   * Bind the extensions to this runtime. The first call binds the kernel and emits session_start
   * for the current session: extensions' start-up handlers run, MCP servers start connecting and
   * resources load; from then on extension actions (ctx.sessionManager, pi.sendMessage, …) work
   * and later session switches announce themselves. Later calls only replace the bindings.
   */
  async bindExtensions(bindings: ExtensionBindings = {}): Promise<void> {
    const kernel = this.kernel;
    const replace = (kind: keyof ExtensionBindings, undo: () => void) => {
      this.undoBindings.get(kind)?.();
      this.undoBindings.set(kind, undo);
    };
    if (bindings.uiContext) replace("uiContext", kernel.provide("ui", bindings.uiContext, "sdk"));
    if (bindings.shutdownHandler) replace("shutdownHandler", kernel.provide("shutdown", bindings.shutdownHandler, "sdk"));
    if (bindings.onError) {
      const onError = bindings.onError;
      replace(
        "onError",
        kernel.diagnostics.subscribe((d) => {
          if (d.level !== "error") return;
          const detail = d.error instanceof Error ? d.error.message : d.error !== undefined ? String(d.error) : "";
          onError({ extensionPath: d.source, event: d.hook ?? "", error: detail && !d.message.includes(detail) ? `${d.message}: ${detail}` : d.message });
        }),
      );
    }
    await this.start();
  }

  /** pi's name for importSession(). */
  importFromJsonl(path: string): Promise<{ cancelled: boolean }> {
    return this.importSession(path);
  }

  /** pi's form of onRebind(): one callback, replaced by the next call. */
  setRebindSession(fn?: (session: AgentSession) => void | Promise<void>): void {
    this.rebindUndo?.();
    this.rebindUndo = fn ? this.onRebind(fn) : undefined;
  }
  private rebindUndo: (() => void) | undefined;

  /** Abort, session_shutdown {reason: "exit"}, dispose; the services may then hold a new runtime. */
  override async dispose(): Promise<void> {
    try {
      await super.dispose();
    } finally {
      for (const undo of this.undoBindings.values()) undo();
      this.undoBindings.clear();
      if (runtimes.get(this.services) === this) runtimes.delete(this.services);
    }
  }
}

// ---- services ---------------------------------------------------------------------------------------

function isSettingsManager(v: unknown): v is SettingsManager {
  return v instanceof SettingsManager;
}

export async function createAgentSessionServices(options: CreateAgentSessionServicesOptions = {}): Promise<AgentSessionServices> {
  const id = options.app ?? {};
  if (id.name !== undefined && (typeof id.name !== "string" || !/^[a-z0-9][a-z0-9._-]*$/i.test(id.name))) {
    throw new TypeError(`createAgentSessionServices: app.name must be a word of letters, digits, ".", "_" or "-" (got ${JSON.stringify(id.name)})`);
  }
  const app = defineApp(id.name ?? "pi", id.version ?? packageInfo().version, id.configDir);
  if (id.agentDirEnv) app.agentDirEnv = id.agentDirEnv;
  let plugins = typeof options.plugins === "function" ? options.plugins(builtinPlugins()) : (options.plugins ?? builtinPlugins());
  if (!Array.isArray(plugins)) throw new TypeError("createAgentSessionServices: plugins must be a list of plugin manifests (or a function returning one)");
  // pi 1.6 resourceLoader: its kernel, or plugins and flags that answer through it
  const fromLoader = options.resourceLoader
    ? sessionSetupForLoader(options.resourceLoader, { plugins, settings: options.settingsManager ?? (options.settings as SettingsManager | undefined), cwd: options.cwd, agentDir: options.agentDir })
    : undefined;
  if (fromLoader) plugins = fromLoader.plugins;
  const cwd = resolve(expandHome(options.cwd ?? fromLoader?.cwd ?? process.cwd()));
  const agentDir = resolve(expandHome(options.agentDir ?? fromLoader?.agentDir ?? resolveAgentDir(app, options.env ?? process.env)));

  const given = options.settingsManager ?? options.settings;
  if (given !== undefined && (typeof given !== "object" || given === null || Array.isArray(given))) {
    throw new TypeError("createAgentSessionServices: settings must be a SettingsManager or an object of setting values");
  }
  const settings = isSettingsManager(given) ? given : given ? SettingsManager.inMemory(given as Partial<Settings>) : undefined;

  const r = options.resources ?? {};
  const flags: Record<string, unknown> = { ...fromLoader?.flags, ...options.flags };
  if (r.extensions?.length) flags.extension = [...r.extensions];
  if (r.noExtensions) flags["no-extensions"] = true;
  if (r.skills?.length) flags.skill = [...r.skills];
  if (r.noSkills) flags["no-skills"] = true;
  if (r.promptTemplates?.length) flags["prompt-template"] = [...r.promptTemplates];
  if (r.noPromptTemplates) flags["no-prompt-templates"] = true;
  if (r.themes?.length) flags.theme = [...r.themes];
  if (r.noThemes) flags["no-themes"] = true;
  if (r.noContextFiles) flags["no-context-files"] = true;
  if (options.trustProject) flags.trust = true;
  const argv: ParsedArgs = { flags, positionals: [], unknown: [] };

  const diagnostics: Diagnostic[] = [];
  const onKernel = (k: Kernel) => void k.diagnostics.subscribe((d) => void diagnostics.push(d), true);
  const extensionFactories = [...(fromLoader?.extensionFactories ?? []), ...(options.extensionFactories ?? [])];
  const { kernel } = fromLoader?.kernel
    ? (onKernel(fromLoader.kernel), { kernel: fromLoader.kernel })
    : await setupKernel({
        app,
        cwd,
        agentDir,
        argv,
        settings,
        plugins,
        extensionFactories: extensionFactories.length ? extensionFactories : undefined,
        userPlugins: options.userPlugins,
        onKernel,
      });

  const report = (d: Diagnostic) => kernel.diagnostics.report(d);
  const runtimeSource = options.modelRuntime;
  const authStorage = options.authStorage ?? runtimeSource?.authStorage ?? options.modelRegistry?.authStorage ?? AuthStorage.create(join(agentDir, "auth.json"), { report });
  const modelRegistry = new ModelRegistry({
    authStorage,
    modelsJsonPath: runtimeSource ? runtimeSource.modelsPath : options.modelRegistry ? options.modelRegistry.modelsJsonPath : join(agentDir, "models.json"),
    models: kernel.models,
    providers: kernel.providers,
    report,
  }).withVirtualModelsOf(kernel);
  kernel.provide("model-registry", modelRegistry, "sdk");
  for (const config of runtimeSource?.registeredProviderConfigs().values() ?? []) modelRegistry.registerProvider(config, "sdk"); // a ModelRuntime's providers

  const host = kernel.service("extensions");
  const extensionsResult: ExtensionsResult = {
    extensions: (host?.list() ?? []).map((e) => ({ path: e.name, origin: e.origin })),
    errors: diagnostics
      .filter((d) => d.level === "error" && /^(failed to load extension|extension not found)/.test(d.message))
      .map((d) => ({ path: d.source, error: d.message })),
  };

  return {
    cwd,
    agentDir,
    app,
    kernel,
    settingsManager: kernel.settings,
    authStorage,
    modelRegistry,
    diagnostics,
    extensionsResult,
  };
}

// ---- sessions ---------------------------------------------------------------------------------------

async function toScoped(services: AgentSessionServices, given: SessionOptions["scopedModels"]): Promise<ScopedModel[]> {
  const out: ScopedModel[] = [];
  // Default: the enabledModels setting (as the CLI without --models).
  const list = given ?? parseModelList(services.settingsManager.get().enabledModels).map((model) => ({ model, thinkingLevel: undefined }));
  for (const entry of list) {
    if (typeof entry.model === "object" && entry.model) {
      out.push({ model: entry.model, thinkingLevel: entry.thinkingLevel });
      continue;
    }
    const r = await resolveModelScopeFromRegistry([String(entry.model)], services.modelRegistry);
    for (const w of r.warnings) services.kernel.diagnostics.report({ level: "warning", source: "scopedModels", message: w });
    for (const s of r.scoped as ScopedModel[]) out.push({ model: s.model, thinkingLevel: entry.thinkingLevel ?? s.thinkingLevel });
  }
  return out;
}

function checkTool(t: unknown, where: string): ToolDefinition {
  const tool = t as ToolDefinition;
  if (!tool || typeof tool !== "object" || typeof tool.name !== "string" || !tool.name || typeof tool.execute !== "function") {
    throw new TypeError(`${where}: a tool needs a name and an execute() function (got ${tool && typeof tool === "object" ? `"${String(tool.name)}"` : typeof tool})`);
  }
  return tool;
}

/**
 * The session runtime on existing services. A services object holds one live runtime at a time
 * (its kernel binds one); dispose it before making another, or create more services for
 * independent sessions side by side.
 */
export async function createAgentSessionFromServices(options: CreateAgentSessionFromServicesOptions): Promise<CreateAgentSessionResult> {
  const services = options.services;
  if (!services || !services.kernel) throw new TypeError("createAgentSessionFromServices: `services` (from createAgentSessionServices) is required");
  if (runtimes.has(services)) {
    throw new Error("createAgentSessionFromServices: these services already hold a live session runtime; dispose it first, switch sessions with runtime.newSession()/switchSession(), or create other services for an independent session");
  }
  const { kernel, cwd, modelRegistry: registry } = services;
  if (!SessionManager.getDefaultRoot()) SessionManager.setDefaultRoot(join(services.agentDir, "sessions"));

  // Host tools: registered before the tools are chosen, so they are active by default.
  const scope = kernel.scope("sdk");
  const toolNames: string[] | undefined = options.tools?.map((t) => (typeof t === "string" ? t : checkTool(t, "tools").name));
  for (const t of [...(options.customTools ?? []).map((c) => checkTool(c, "customTools")), ...(options.tools ?? []).filter((t) => typeof t !== "string").map((t) => checkTool(t, "tools"))]) {
    scope.registerTool(t, { override: true });
  }

  let store = options.sessionManager;
  if (store !== undefined && !(store instanceof SessionManager)) throw new TypeError("sessionManager must be a SessionManager (SessionManager.create / open / inMemory / continueRecent)");
  if (!store) {
    const dir = (await resolveSessionDir(kernel, cwd)) ?? sessionDirForCwd(cwd, join(services.agentDir, "sessions"));
    store = SessionManager.create(cwd, dir);
  }
  watchStore(kernel, store);

  const scoped = await toScoped(services, options.scopedModels);
  const start = await resolveStartModel({ kernel, registry, store, model: options.model, thinkingLevel: options.thinkingLevel, scoped, source: { model: "model", thinking: "thinkingLevel" } });
  const activeTools = resolveActiveTools(kernel, { names: toolNames, noTools: options.noTools, source: "tools" });

  let runtime: SdkSessionRuntime | undefined;
  const sessionHost: SessionHost = { runtime: () => runtime, traits: () => runtime?.sessionTraits ?? SDK_TRAITS };
  const factory = createSessionFactory({
    kernel,
    registry,
    mode: "sdk",
    model: start.model,
    thinkingLevel: start.thinkingLevel,
    activeTools,
    customSystemPrompt: options.systemPrompt,
    appendSystemPrompt: options.appendSystemPrompt,
    scopedModels: scoped,
    construct: (o) => new SdkAgentSession(o, sessionHost),
  });
  const session = await factory({ sessionManager: store, cwd, reason: "startup" });
  await session.getSystemPrompt().catch(() => undefined); // session.systemPrompt is defined from the start
  runtime = new SdkSessionRuntime(services, factory, session, { modelFallbackMessage: start.fallbackMessage });
  runtimes.set(services, runtime);
  return {
    session: session as SdkAgentSession,
    runtime,
    services,
    extensionsResult: services.extensionsResult,
    modelFallbackMessage: start.fallbackMessage,
    diagnostics: services.diagnostics,
  };
}

/** pi's runtime factory: builds a session for a cwd and session manager (CreateAgentSessionRuntimeFactory). */
export type PiRuntimeFactory = (options: { cwd: string; agentDir?: string; sessionManager?: SessionManager; sessionStartEvent?: unknown }) => Promise<unknown>;

/** createAgentSessionServices + createAgentSessionFromServices. */
export async function createAgentSession(options: CreateAgentSessionOptions = {}): Promise<CreateAgentSessionResult> {
  const services = await createAgentSessionServices(options);
  return createAgentSessionFromServices({ ...options, services });
}

/**
 * The session runtime for hosts that switch sessions: from options (as createAgentSession) or
 * from existing services (`{ services, ...sessionOptions }`).
 */
export async function createAgentSessionRuntime(
  options: CreateAgentSessionOptions | CreateAgentSessionFromServicesOptions | PiRuntimeFactory = {},
  factoryOptions?: { cwd?: string; agentDir?: string; sessionManager?: SessionManager },
): Promise<SdkSessionRuntime> {
  if (typeof options === "function") {
    // pi's form: createAgentSessionRuntime(factory, { cwd, agentDir, sessionManager }). The factory
    // builds the first session; this runtime keeps that kernel and builds every later session itself.
    const first = (await options({ cwd: resolve(factoryOptions?.cwd ?? process.cwd()), agentDir: factoryOptions?.agentDir, sessionManager: factoryOptions?.sessionManager, sessionStartEvent: undefined })) as Partial<CreateAgentSessionResult> | undefined;
    if (!first?.runtime || !(first.runtime instanceof SdkSessionRuntime)) {
      throw new TypeError("createAgentSessionRuntime(factory, …): the factory must return what createAgentSessionFromServices() returns (spread it into the result, as pi's example does)");
    }
    return first.runtime;
  }
  const r = "services" in options && options.services ? await createAgentSessionFromServices(options as CreateAgentSessionFromServicesOptions) : await createAgentSession(options);
  return r.runtime;
}
