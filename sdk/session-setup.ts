/**
 * From parsed argv to an AgentSessionRuntime: session storage (new | -c | --session | --fork |
 * --no-session | --session-dir), auth and models (--model, --provider, --api-key, --thinking,
 * --models), active tools (--tools, --no-tools) and the system prompt flags. The same factory
 * builds every later session (/new, resume, fork, clone, import).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Kernel } from "../core/kernel/kernel.js";
import { BUILTIN_EXTENSION_TOOLS } from "./builtin-tool-extensions.js";
import { expandHome } from "../core/kernel/config.js";
import { AgentSession, type AgentSessionOptions } from "../core/engine/agent-session.js";
import { AgentSessionRuntime, type SessionBuildInput, type SessionFactory } from "../core/engine/runtime.js";
import { SessionManager } from "../core/stores/session/session-manager.js";
import { addEnvSecrets, addProcessSecrets } from "../core/kernel/redact.js";
import type { ModelSource } from "../core/engine/model-source.js";
import { AuthStorage } from "../core/stores/models/auth-storage.js";
import { ModelRegistry } from "../core/stores/models/model-registry.js";
import { virtualSelection } from "../core/stores/models/virtual-models.js";
import { DEFAULT_THINKING_LEVEL, findInitialModel, isThinkingLevel, parseModelList, parseThinkingLevel, resolveModelScopeFromRegistry } from "../core/stores/models/model-resolver.js";
import type { AnyModel, ThinkingLevel } from "../core/kernel/types.js";
import { THINKING_FLAG_LEVELS, type ParsedArgs } from "./args.js";
import { readTextOrFile } from "./file-args.js";
import { listFlag, selectTools, ToolSelectionError } from "../core/kernel/tool-selection.js";
import type { ModeDefinition } from "../core/kernel/kernel.js";
import { sessionTraitsOf } from "../core/kernel/modes.js";

export class SessionSetupError extends Error {}

// The kernel service "session-picker" (the TUI provides it): shows the
// sessions and resolves with the chosen file, or undefined when cancelled. For -r the
// interactive mode opens it at start-up and switches to the choice (runtime.switchSession);
// here -r is only checked.
export type SessionPicker = () => Promise<string | undefined>;

export { DEFAULT_ACTIVE_TOOLS } from "../core/kernel/services.js";
import { DEFAULT_ACTIVE_TOOLS } from "../core/kernel/services.js";
import { modelThinkingLevel } from "../core/kernel/settings-compat.js";

/** ModelRegistry seen through the narrow interface AgentSession uses. */
export function modelSource(registry: ModelRegistry): ModelSource {
  return {
    getApiKey: (m) => registry.getApiKey(m),
    getApiKeyAndHeaders: (m) => registry.getApiKeyAndHeaders(m),
    isKeyless: (m) => registry.isKeyless(m.provider),
    getAvailable: async () => (await registry.getAvailable()).filter((m) => !registry.isKeyless(m.provider) || m.provider !== "faux"),
    find: (p, id) => registry.find(p, id),
    envVarNames: async (provider) => [`${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`],
  };
}

export interface SessionSetupOptions {
  kernel: Kernel;
  parsed: ParsedArgs;
  cwd: string;
  /** The chosen mode (its definition, or the name of a registered mode). */
  mode: ModeDefinition | string;
}

/** The registered mode of that name, or a UI-less stand-in named after it (a mode not in this kernel). */
function modeDefinition(kernel: Kernel, mode: ModeDefinition | string): ModeDefinition {
  if (typeof mode !== "string") return mode;
  return kernel.modes.get(mode) ?? { name: mode, run: async () => 1 };
}

/** Find a session by path, or by id prefix in this folder's sessions and then in all. */
async function findSession(ref: string, cwd: string, sessionDir: string | undefined): Promise<string> {
  if (ref.includes("/") || ref.includes("\\") || ref.endsWith(".jsonl")) {
    const p = resolve(cwd, expandHome(ref));
    if (!existsSync(p)) throw new SessionSetupError(`session file not found: ${p}`);
    return p;
  }
  const local = await SessionManager.list(cwd, sessionDir);
  let hits = local.filter((s) => s.id.startsWith(ref));
  if (!hits.length) hits = (await SessionManager.listAll()).filter((s) => s.id.startsWith(ref));
  if (!hits.length) throw new SessionSetupError(`no session with id starting "${ref}" (looked in this folder's sessions, then all)`);
  if (hits.length > 1 && !hits.every((h) => h.path === hits[0]!.path)) {
    throw new SessionSetupError(`session id prefix "${ref}" is ambiguous: ${hits.slice(0, 5).map((h) => h.id).join(", ")}`);
  }
  return hits[0]!.path;
}

const toolList = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : undefined);

export async function createSessionRuntime(opts: SessionSetupOptions): Promise<AgentSessionRuntime> {
  const { kernel, parsed, cwd } = opts;
  const f = parsed.flags;
  const settings = kernel.settings.get();
  SessionManager.setDefaultRoot(join(kernel.agentDir, "sessions"));

  // Where session files go: --session-dir beats the session_directory hook beats the setting.
  // PI_CODING_AGENT_SESSION_DIR (the app's agent-dir variable with _SESSION_DIR) stands for --session-dir.
  const sessionDirEnv = process.env[kernel.app.agentDirEnv.replace(/_DIR$/, "_SESSION_DIR")]?.trim();
  const sessionDir = await resolveSessionDir(kernel, cwd, f["session-dir"] !== undefined ? String(f["session-dir"]) : sessionDirEnv ? expandHome(sessionDirEnv) : undefined);
  // pi 1.6: a provider alone does not choose a model.
  if (f.provider !== undefined && f.model === undefined) {
    throw new SessionSetupError(`--provider requires --model (for example: --provider ${String(f.provider)} --model <pattern>)`);
  }

  // Models and keys.
  const auth = AuthStorage.create(join(kernel.agentDir, "auth.json"), { report: (d) => kernel.diagnostics.report(d) });
  seedProcessSecrets(kernel, auth.getAll(), cwd); // every known credential is redacted
  const registry = ModelRegistry.forKernel(kernel, { authStorage: auth });
  kernel.provide("model-registry", registry, "cli");

  // The initial session store.
  let store: SessionManager;
  const noSession = !!f["no-session"];
  // --fork starts from a given session: it cannot be combined with another choice.
  if (f.fork !== undefined) {
    const clash = [f.session !== undefined && "--session", f.continue && "--continue", f.resume && "--resume", noSession && "--no-session"].filter(Boolean);
    if (clash.length) throw new SessionSetupError(`--fork cannot be combined with ${clash.join(", ")}`);
  }
  if (f.resume && (f.session !== undefined || f.continue)) {
    throw new SessionSetupError(`--resume cannot be combined with ${f.session !== undefined ? "--session" : "--continue"}`);
  }
  // --session-id: this folder's session with that id, else a new one with it.
  const sessionId = f["session-id"] !== undefined ? String(f["session-id"]) : undefined;
  if (sessionId !== undefined) {
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(sessionId)) {
      throw new SessionSetupError(`--session-id "${sessionId}": ids use letters, numbers, ".", "_" and "-", and start and end with a letter or number`);
    }
    const clash = [f.session !== undefined && "--session", f.continue && "--continue", f.resume && "--resume"].filter(Boolean);
    if (clash.length) throw new SessionSetupError(`--session-id cannot be combined with ${clash.join(", ")}`);
  }
  const existingWithId = async (id: string) => (await SessionManager.list(cwd, sessionDir)).find((s) => s.id === id);
  if (noSession) store = SessionManager.inMemory(cwd);
  else if (f.fork !== undefined && sessionId !== undefined) {
    // --fork with --session-id: the fork gets that id (a new one: an existing id is refused).
    if (await existingWithId(sessionId)) throw new SessionSetupError(`--session-id ${sessionId}: a session with that id already exists; --fork makes a new one`);
    store = SessionManager.forkFrom(await findSession(String(f.fork), cwd, sessionDir), cwd, sessionDir, { id: sessionId });
  }
  else if (sessionId !== undefined) {
    const existing = await existingWithId(sessionId);
    if (existing) store = SessionManager.open(existing.path, sessionDir);
    else {
      store = SessionManager.create(cwd, sessionDir);
      store.newSession({ id: sessionId });
    }
  }
  else if (f.fork !== undefined) store = SessionManager.forkFrom(await findSession(String(f.fork), cwd, sessionDir), cwd, sessionDir);
  else if (f.session !== undefined) {
    const file = await findSession(String(f.session), cwd, sessionDir);
    try {
      store = SessionManager.open(file, sessionDir);
    } catch (error) {
      // A file that is not a session (or cannot be read) is refused and left as it is.
      throw new SessionSetupError(`--session ${String(f.session)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  else if (f.resume) {
    checkResume(kernel, modeDefinition(kernel, opts.mode));
    store = SessionManager.create(cwd, sessionDir);
  }
  else if (f.continue) store = SessionManager.continueRecent(cwd, sessionDir);
  else store = SessionManager.create(cwd, sessionDir);
  watchStore(kernel, store);
  // --name / -n: the session's display name.
  if (f.name !== undefined && String(f.name).trim()) store.appendSessionInfo(String(f.name));

  // Scoped models (--models or enabledModels).
  const patterns = parseModelList((f.models as string | undefined) ?? settings.enabledModels);
  let scoped: ScopedModel[] = [];
  if (patterns.length) {
    const r = await resolveModelScopeFromRegistry(patterns, registry);
    for (const w of r.warnings) kernel.diagnostics.report({ level: "warning", source: "--models", message: w });
    scoped = r.scoped as ScopedModel[];
  }

  // The model: --model, else the resumed session's, else settings and provider defaults.
  const start = await resolveStartModel({
    kernel,
    registry,
    store,
    model: f.model as string | undefined,
    provider: f.provider as string | undefined,
    thinkingLevel: f.thinking !== undefined ? thinkingFlag(String(f.thinking)) : undefined,
    scoped,
    keepRestoredWithoutAuth: f["api-key"] !== undefined,
    source: { model: "--model", thinking: "--thinking" },
  });
  const model = start.model;
  if (f["api-key"] !== undefined) {
    if (!model) throw new SessionSetupError("--api-key needs a model: pass --model <provider/id> too");
    auth.setRuntimeApiKey(model.provider, String(f["api-key"]));
  }

  // Tools.
  // --tools patterns and +/- entries, --exclude-tools, -nt, -nbt, defaultTools.
  let activeTools: string[];
  try {
    // pi 1.6's built-in codemode and tool_search: registered inactive; absent when their built-in extension is off.
    const enabledBuiltins = kernel.service("builtin-extensions-enabled");
    const builtinTools = Object.entries(BUILTIN_EXTENSION_TOOLS).filter(([, ext]) => !enabledBuiltins || enabledBuiltins.has(ext)).map(([tool]) => tool);
    const sel = selectTools({
      tools: kernel.tools
        .describe()
        .filter((t) => !(t.name in BUILTIN_EXTENSION_TOOLS) || builtinTools.includes(t.name) || !t.source.startsWith("<inline:"))
        .map((t) => ({ name: t.name, source: t.source })),
      inactiveByDefault: builtinTools,
      builtinDefaults: [...(kernel.service("default-active-tools") ?? DEFAULT_ACTIVE_TOOLS)],
      // The user's list, then the project's on top of it (pi 1.6).
      defaultTools: toolList(kernel.settings.getGlobal().defaultTools),
      projectDefaultTools: toolList(kernel.settings.getProjectApplied().defaultTools),
      allow: listFlag(f.tools),
      exclude: listFlag(f["exclude-tools"]),
      noTools: !!f["no-tools"],
      noBuiltinTools: !!f["no-builtin-tools"],
    });
    for (const w of sel.warnings) kernel.diagnostics.report({ level: "warning", source: "tools", message: w });
    activeTools = sel.active;
  } catch (e) {
    if (e instanceof ToolSelectionError) throw new SessionSetupError(e.message);
    throw e;
  }

  // One factory builds the first session and every later one (/new,
  // resume, fork, clone, import); the runtime opens or creates the store.
  const factory = createSessionFactory({
    kernel,
    registry,
    ...sessionTraitsOf(modeDefinition(kernel, opts.mode)),
    model,
    thinkingLevel: start.thinkingLevel,
    activeTools,
    customSystemPrompt: readTextOrFile(f["system-prompt"] as string | undefined, cwd),
    appendSystemPrompt: appendPrompts(f["append-system-prompt"], cwd),
    scopedModels: scoped,
  });
  return AgentSessionRuntime.create(kernel, factory, store, { cwd });
}

/** `--thinking <level>`: a level name is kept as given (clamped per model later); any other text is returned for the warning. */
export function thinkingFlag(v: string): string {
  return parseThinkingLevel(v) ?? v;
}

/** Repeated `--append-system-prompt` values (text or files), joined by blank lines. */
function appendPrompts(v: unknown, cwd: string): string | undefined {
  if (v === undefined) return undefined;
  const parts = ([] as unknown[]).concat(v).map((x) => readTextOrFile(String(x), cwd)).filter((x): x is string => !!x);
  return parts.length ? parts.join("\n\n") : undefined;
}

// ---- the steps the CLI and the SDK (sdk/sdk.ts) share -----------------------------

export type ScopedModel = { model: AnyModel; thinkingLevel?: ThinkingLevel };

/** Report a store's diagnostics (so far and later) to the kernel. */
export function watchStore(kernel: Kernel, store: SessionManager): void {
  for (const d of store.getDiagnostics()) kernel.diagnostics.report(d);
  store.onDiagnostic((d) => kernel.diagnostics.report(d));
}

/**
 * The folder session files of `cwd` go to: `explicit` (--session-dir), else what a
 * session_directory handler answers, else the `sessionDir` setting; undefined = the default
 * (`<agentDir>/sessions/--<cwd>--`).
 */
export async function resolveSessionDir(kernel: Kernel, cwd: string, explicit?: string): Promise<string | undefined> {
  if (explicit !== undefined) return resolve(cwd, expandHome(explicit));
  if (kernel.hooks.session_directory.isUsed()) {
    const r = await kernel.hooks.session_directory.promise({ type: "session_directory", cwd });
    if (r?.sessionDir) return resolve(cwd, expandHome(r.sessionDir));
  }
  const setting = kernel.settings.get().sessionDir;
  return setting ? resolve(cwd, expandHome(setting)) : undefined;
}

export interface StartModelOptions {
  kernel: Kernel;
  registry: ModelRegistry;
  /** The session store the first session opens (a resumed one brings its model back). */
  store: SessionManager;
  /** An explicit choice: a model, or a pattern (`provider/id`, `id`, a glob; `:level` sets thinking). */
  model?: AnyModel | string;
  provider?: string;
  /** An explicit thinking level (checked; an unknown one is a warning). */
  thinkingLevel?: string;
  scoped?: ScopedModel[];
  /** Keep a restored model whose provider has no stored key (a key is given for this run). */
  keepRestoredWithoutAuth?: boolean;
  /** Names for diagnostics, e.g. {model: "--model", thinking: "--thinking"}. */
  source?: { model: string; thinking: string };
}

export interface StartModel {
  model?: AnyModel;
  thinkingLevel?: ThinkingLevel;
  /** Set when a resumed session's model could not be restored. */
  fallbackMessage?: string;
}

/**
 * The first session's model and thinking level: the explicit choice, else the resumed session's
 * (when its provider has a key), else settings (defaultProvider/defaultModel/defaultThinkingLevel),
 * else the first scoped model, else a provider default with a key. The faux provider is never
 * picked implicitly.
 */
/**
 * The branch's latest entry of a type (model_change, thinking_level_change), as a list of at most
 * one entry, walking up from the leaf and stopping there (building the whole branch of a
 * 10,000-entry session for this cost ~9 ms of its start-up). Guarded against a cyclic parent chain.
 */
function latestEntry(store: SessionManager, type: string): Array<{ type: string; thinkingLevel?: unknown }> {
  let id = store.getLeafId();
  for (let steps = store.getEntries().length; id && steps >= 0; steps--) {
    const e = store.getEntry(id);
    if (!e) break;
    if (e.type === type) return [e as { type: string; thinkingLevel?: unknown }];
    id = e.parentId;
  }
  return [];
}

export async function resolveStartModel(o: StartModelOptions): Promise<StartModel> {
  const { kernel, registry } = o;
  const settings = kernel.settings.get();
  const src = o.source ?? { model: "model", thinking: "thinkingLevel" };
  const scoped = o.scoped ?? [];
  const restored = o.store.buildSessionContext();
  const continuing = restored.messages.length > 0;
  const virtual = continuing ? virtualSelection(latestEntry(o.store, "model_change"), (p, id) => registry.find(p, id)) : undefined; // (pi 1.6 resumes a virtual selection)
  if (virtual) restored.model = { provider: virtual.provider, modelId: virtual.id };
  let model: AnyModel | undefined;
  let thinking: ThinkingLevel | undefined;
  let fallbackMessage: string | undefined;
  const defaultThinking = parseThinkingLevel(String(settings.defaultThinkingLevel));
  // (1.6 compat) modelThinkingLevels["provider/id"] beats defaultThinkingLevel.
  const perModel = (m: AnyModel): ThinkingLevel | undefined => modelThinkingLevel(settings, m.provider, m.id) as ThinkingLevel | undefined;
  if (typeof o.model === "object" && o.model) {
    model = o.model;
    thinking = perModel(model) ?? defaultThinking ?? DEFAULT_THINKING_LEVEL;
  } else if (!o.model && continuing && restored.model) {
    model = registry.find(restored.model.provider, restored.model.modelId);
    if (model && !(await registry.hasConfiguredAuth(model)) && !o.keepRestoredWithoutAuth) model = undefined;
    if (restored.thinkingLevel && isThinkingLevel(String(restored.thinkingLevel))) thinking = restored.thinkingLevel as ThinkingLevel;
    if (!model) fallbackMessage = `could not restore the session's model ${restored.model.provider}/${restored.model.modelId}`;
  }
  if (!model) {
    // A continued session keeps the level it recorded on another model too, clamped later (1.6).
    const recorded = continuing ? latestEntry(o.store, "thinking_level_change")[0]?.thinkingLevel : undefined;
    const init = await findInitialModel({
      modelRegistry: registry,
      cliProvider: o.provider,
      cliModel: typeof o.model === "string" ? o.model : undefined,
      scopedModels: scoped as never,
      isContinuing: continuing,
      defaultProvider: settings.defaultProvider,
      defaultModel: settings.defaultModel,
      defaultThinkingLevel: defaultThinking,
      modelThinkingLevel: perModel,
      sessionThinkingLevel: thinking ?? (typeof recorded === "string" && isThinkingLevel(recorded) ? recorded : undefined),
    });
    if (init.warning) kernel.diagnostics.report({ level: "warning", source: src.model, message: init.warning });
    if (init.error) throw new SessionSetupError(init.error);
    model = init.model;
    // The faux provider is never picked implicitly.
    const explicit = !!o.model || (settings.defaultProvider === model?.provider && !!settings.defaultModel);
    if (model && registry.isKeyless(model.provider) && model.provider === "faux" && !explicit && !scoped.length) model = undefined;
    thinking ??= init.thinkingLevel;
    if (fallbackMessage) fallbackMessage += model ? `; using ${model.provider}/${model.id}` : "; no model is available";
  }
  if (o.thinkingLevel !== undefined) {
    if (isThinkingLevel(o.thinkingLevel)) thinking = o.thinkingLevel;
    else kernel.diagnostics.report({ level: "warning", source: src.thinking, message: `invalid thinking level "${o.thinkingLevel}" ignored; valid values: ${THINKING_FLAG_LEVELS.join(", ")}` });
  }
  return { model, thinkingLevel: thinking, fallbackMessage };
}

/**
 * The tools a first session starts with. `names` picks exactly (unknown ones are a warning);
 * otherwise the default set (service "default-active-tools") plus every tool a plugin, an
 * extension or the host added — `noTools: "builtin"` drops the default set, "all" everything.
 */
export function resolveActiveTools(kernel: Kernel, o: { names?: string[]; noTools?: "all" | "builtin"; source?: string } = {}): string[] {
  if (o.names) {
    for (const n of o.names) {
      if (!kernel.tools.has(n)) kernel.diagnostics.report({ level: "warning", source: o.source ?? "tools", message: `unknown tool "${n}" ignored (known: ${kernel.tools.names().join(", ")})` });
    }
    return [...new Set(o.names.filter((n) => kernel.tools.has(n)))];
  }
  if (o.noTools === "all") return [];
  // The built-in set as defaultTools (user, then project) decides; tools that plugins, extensions
  // and hosts add beyond it are active too.
  const sel = selectTools({
    tools: kernel.tools.describe().map((t) => ({ name: t.name, source: t.source })),
    builtinDefaults: [...(kernel.service("default-active-tools") ?? DEFAULT_ACTIVE_TOOLS)],
    defaultTools: toolList(kernel.settings.getGlobal().defaultTools),
    projectDefaultTools: toolList(kernel.settings.getProjectApplied().defaultTools),
    noBuiltinTools: o.noTools === "builtin",
  });
  for (const w of sel.warnings) kernel.diagnostics.report({ level: "warning", source: o.source ?? "tools", message: w });
  return sel.active;
}

export interface SessionFactorySpec
  extends Pick<AgentSessionOptions, "mode" | "hasUI" | "inputSource" | "model" | "thinkingLevel" | "activeTools" | "customSystemPrompt" | "appendSystemPrompt" | "scopedModels"> {
  kernel: Kernel;
  registry: ModelRegistry;
  /** Builds the session object (default `new AgentSession(options)`); the SDK builds its subclass. */
  construct?: (options: AgentSessionOptions) => AgentSession;
}

/**
 * The factory an AgentSessionRuntime builds every session with. A new session carries the
 * previous one's model, thinking level, tools and queue modes over; a resumed or forked one
 * comes back with its own model and thinking level; an empty new store starts with the model
 * and thinking level entries, like the reference's.
 */
export function createSessionFactory(spec: SessionFactorySpec): SessionFactory {
  const { kernel, registry } = spec;
  const models = modelSource(registry);
  const construct = spec.construct ?? ((o: AgentSessionOptions) => new AgentSession(o));
  return async ({ sessionManager: sm, cwd: sessionCwd, previous }: SessionBuildInput): Promise<AgentSession> => {
    if (previous) sm.onDiagnostic((d) => kernel.diagnostics.report(d));
    const ctx = sm.buildSessionContext();
    const hasMessages = ctx.messages.length > 0;
    const virtual = previous && hasMessages ? virtualSelection(sm.getBranch(), (p, id) => registry.find(p, id)) : undefined; // (pi 1.6 resumes a virtual selection)
    if (virtual) ctx.model = { provider: virtual.provider, modelId: virtual.id };
    let sessionModel = previous ? previous.model : spec.model;
    let sessionThinking = previous ? previous.thinkingLevel : spec.thinkingLevel;
    if (previous && hasMessages) {
      // A resumed or forked session comes back with its own model and thinking level.
      const m = ctx.model ? registry.find(ctx.model.provider, ctx.model.modelId) : undefined;
      if (m && (registry.isKeyless(m.provider) || (await registry.hasConfiguredAuth(m)))) sessionModel = m;
      else if (ctx.model) kernel.diagnostics.report({ level: "warning", source: "session", message: `could not restore the model ${ctx.model.provider}/${ctx.model.modelId}${m ? " (no API key)" : ""}; keeping ${sessionModel ? `${sessionModel.provider}/${sessionModel.id}` : "none"}` });
      if (ctx.thinkingLevel && isThinkingLevel(String(ctx.thinkingLevel)) && sm.getBranch().some((e) => e.type === "thinking_level_change")) {
        sessionThinking = ctx.thinkingLevel as ThinkingLevel;
      }
    }
    const session = construct({
      kernel,
      sessionManager: sm,
      models,
      cwd: sessionCwd,
      mode: spec.mode,
      hasUI: spec.hasUI,
      inputSource: spec.inputSource,
      model: sessionModel,
      thinkingLevel: sessionThinking,
      activeTools: previous ? previous.getActiveToolNames() : spec.activeTools,
      customSystemPrompt: spec.customSystemPrompt,
      appendSystemPrompt: spec.appendSystemPrompt,
      scopedModels: spec.scopedModels ?? [],
      initialContext: ctx,
    });
    if (previous) {
      session.steeringMode = previous.steeringMode;
      session.followUpMode = previous.followUpMode;
      session.autoRetryEnabled = previous.autoRetryEnabled;
      session.autoCompactionEnabled = previous.autoCompactionEnabled;
    }
    if (!hasMessages && session.model && sm.getEntries().length === 0) {
      // Record the starting model and thinking level like the reference does, so a resume restores them.
      sm.appendModelChange(session.model.provider, session.model.id);
      sm.appendThinkingLevelChange(session.thinkingLevel);
    }
    return session;
  };
}

/** -r: the interactive mode shows the picker the TUI provides; anywhere else a clear error. */
function checkResume(kernel: Kernel, mode: ModeDefinition): void {
  const alternatives = "pass --session <path|id> to open a session, or -c to continue the latest one";
  if (!mode.hasUI) {
    throw new SessionSetupError(`--resume (-r) opens an interactive session picker, which the ${mode.name} mode does not have; ${alternatives}`);
  }
  if (!kernel.hasService("session-picker")) {
    throw new SessionSetupError(`--resume (-r) needs a session picker, and no installed plugin provides one; ${alternatives}`);
  }
}

// ---- every credential the CLI knows is redacted (security hardening) ------------------
/** auth.json (all providers), credential-looking environment variables, models.json keys and headers, MCP server headers and env. */
function seedProcessSecrets(kernel: Kernel, authData: unknown, cwd: string): void {
  addProcessSecrets(authData);
  addEnvSecrets(process.env);
  const readJson = (file: string): unknown => {
    try {
      return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
    } catch {
      return undefined;
    }
  };
  addProcessSecrets((readJson(join(kernel.agentDir, "models.json")) as { providers?: unknown } | undefined)?.providers);
  const servers = [kernel.settings.getGlobal().mcpServers, kernel.settings.getProject().mcpServers, (readJson(join(cwd, ".mcp.json")) as { mcpServers?: unknown } | undefined)?.mcpServers];
  for (const group of servers) {
    if (!group || typeof group !== "object") continue;
    for (const server of Object.values(group as Record<string, unknown>)) {
      const s = server as { headers?: unknown; env?: unknown } | null;
      addProcessSecrets(s?.headers, true);
      addProcessSecrets(s?.env, true);
    }
  }
}
