/**
 * From parsed argv to an AgentSessionRuntime: session storage (new | -c | --session | --fork |
 * --no-session | --session-dir), auth and models (--model, --provider, --api-key, --thinking,
 * --models), active tools (--tools, --no-tools) and the system prompt flags. The same factory
 * builds every later session (/new, resume, fork, clone, import).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Kernel } from "../core/kernel.js";
import { expandHome } from "../core/config.js";
import { AgentSession, type SessionMode } from "../core/session/agent-session.js";
import { AgentSessionRuntime, type SessionBuildInput } from "../core/session/runtime.js";
import { SessionManager } from "../core/session/session-manager.js";
import type { ModelSource } from "../core/session/model-source.js";
import { AuthStorage } from "../core/models/auth-storage.js";
import { ModelRegistry } from "../core/models/model-registry.js";
import { findInitialModel, isThinkingLevel, parseModelList, resolveModelScopeFromRegistry } from "../core/models/model-resolver.js";
import type { AnyModel, ThinkingLevel } from "../core/types.js";
import type { ParsedArgs } from "./args.js";
import { readTextOrFile } from "./file-args.js";

export class SessionSetupError extends Error {}

// (added for sessions) The kernel service "session-picker" (the TUI provides it): shows the
// sessions and resolves with the chosen file, or undefined when cancelled. For -r the
// interactive mode opens it at start-up and switches to the choice (runtime.switchSession);
// here -r is only checked.
export type SessionPicker = () => Promise<string | undefined>;

export const DEFAULT_ACTIVE_TOOLS = ["read", "bash", "edit", "write"];

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
  mode: string;
}

function sessionModeOf(mode: string): SessionMode {
  if (mode === "interactive" || mode === "tui") return "tui";
  if (mode === "rpc" || mode === "json" || mode === "print") return mode;
  return "print";
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

export async function createSessionRuntime(opts: SessionSetupOptions): Promise<AgentSessionRuntime> {
  const { kernel, parsed, cwd } = opts;
  const f = parsed.flags;
  const settings = kernel.settings.get();
  SessionManager.setDefaultRoot(join(kernel.agentDir, "sessions"));

  // Where session files go: --session-dir beats the session_directory hook beats the setting.
  let sessionDir: string | undefined = f["session-dir"] !== undefined ? resolve(cwd, expandHome(String(f["session-dir"]))) : undefined;
  if (!sessionDir && kernel.hooks.session_directory.isUsed()) {
    const r = await kernel.hooks.session_directory.promise({ type: "session_directory", cwd });
    if (r?.sessionDir) sessionDir = resolve(cwd, expandHome(r.sessionDir));
  }
  if (!sessionDir && settings.sessionDir) sessionDir = resolve(cwd, expandHome(settings.sessionDir));

  // Models and keys.
  const auth = AuthStorage.create(join(kernel.agentDir, "auth.json"), { report: (d) => kernel.diagnostics.report(d) });
  const registry = ModelRegistry.forKernel(kernel, { authStorage: auth });
  kernel.provide("model-registry", registry, "cli");
  const models = modelSource(registry);

  // The initial session store.
  let store: SessionManager;
  const noSession = !!f["no-session"];
  // (added for sessions) --fork starts from a given session: it cannot be combined with another choice.
  if (f.fork !== undefined) {
    const clash = [f.session !== undefined && "--session", f.continue && "--continue", f.resume && "--resume", noSession && "--no-session"].filter(Boolean);
    if (clash.length) throw new SessionSetupError(`--fork cannot be combined with ${clash.join(", ")}`);
  }
  if (f.resume && (f.session !== undefined || f.continue)) {
    throw new SessionSetupError(`--resume cannot be combined with ${f.session !== undefined ? "--session" : "--continue"}`);
  }
  if (noSession) store = SessionManager.inMemory(cwd);
  else if (f.fork !== undefined) store = SessionManager.forkFrom(await findSession(String(f.fork), cwd, sessionDir), cwd, sessionDir);
  else if (f.session !== undefined) store = SessionManager.open(await findSession(String(f.session), cwd, sessionDir), sessionDir);
  else if (f.resume) {
    checkResume(kernel, opts.mode);
    store = SessionManager.create(cwd, sessionDir);
  }
  else if (f.continue) store = SessionManager.continueRecent(cwd, sessionDir);
  else store = SessionManager.create(cwd, sessionDir);
  for (const d of store.getDiagnostics()) kernel.diagnostics.report(d);
  store.onDiagnostic((d) => kernel.diagnostics.report(d));

  // Scoped models (--models or enabledModels).
  const patterns = parseModelList((f.models as string | undefined) ?? settings.enabledModels);
  let scoped: Array<{ model: AnyModel; thinkingLevel?: ThinkingLevel }> = [];
  if (patterns.length) {
    const r = await resolveModelScopeFromRegistry(patterns, registry);
    for (const w of r.warnings) kernel.diagnostics.report({ level: "warning", source: "--models", message: w });
    scoped = r.scoped as typeof scoped;
  }

  // The model: --model, else the resumed session's, else settings and provider defaults.
  const restored = store.buildSessionContext();
  const continuing = restored.messages.length > 0;
  let model: AnyModel | undefined;
  let thinking: ThinkingLevel | undefined;
  if (!f.model && continuing && restored.model) {
    model = registry.find(restored.model.provider, restored.model.modelId);
    if (model && !(await registry.hasConfiguredAuth(model)) && f["api-key"] === undefined) model = undefined;
    if (restored.thinkingLevel && isThinkingLevel(String(restored.thinkingLevel))) thinking = restored.thinkingLevel as ThinkingLevel;
  }
  if (!model) {
    const init = await findInitialModel({
      modelRegistry: registry,
      cliProvider: f.provider as string | undefined,
      cliModel: f.model as string | undefined,
      scopedModels: scoped as never,
      isContinuing: continuing,
      defaultProvider: settings.defaultProvider,
      defaultModel: settings.defaultModel,
      defaultThinkingLevel: isThinkingLevel(String(settings.defaultThinkingLevel)) ? (settings.defaultThinkingLevel as ThinkingLevel) : undefined,
    });
    if (init.warning) kernel.diagnostics.report({ level: "warning", source: "--model", message: init.warning });
    if (init.error) throw new SessionSetupError(init.error);
    model = init.model;
    // The faux provider is never picked implicitly.
    const explicit = !!f.model || (settings.defaultProvider === model?.provider && !!settings.defaultModel);
    if (model && registry.isKeyless(model.provider) && model.provider === "faux" && !explicit && !scoped.length) model = undefined;
    thinking ??= init.thinkingLevel;
  }
  if (f.thinking !== undefined) {
    const t = String(f.thinking);
    if (isThinkingLevel(t)) thinking = t;
    else kernel.diagnostics.report({ level: "warning", source: "--thinking", message: `unknown thinking level "${t}" ignored (off, minimal, low, medium, high, xhigh)` });
  }
  if (f["api-key"] !== undefined) {
    if (!model) throw new SessionSetupError("--api-key needs a model: pass --model <provider/id> too");
    auth.setRuntimeApiKey(model.provider, String(f["api-key"]));
  }

  // Tools.
  const defaults = kernel.service<string[]>("default-active-tools") ?? DEFAULT_ACTIVE_TOOLS;
  let activeTools: string[] = f["no-tools"] ? [] : [...defaults];
  if (f.tools !== undefined) {
    const named = String(f.tools).split(",").map((s) => s.trim()).filter(Boolean);
    for (const n of named) {
      if (!kernel.tools.has(n)) kernel.diagnostics.report({ level: "warning", source: "--tools", message: `unknown tool "${n}" ignored (known: ${kernel.tools.names().join(", ")})` });
    }
    activeTools = f["no-tools"] ? named : named;
  }
  activeTools = activeTools.filter((n) => kernel.tools.has(n));
  // Tools that plugins and extensions add beyond the built-in set are active too (unless --tools picks).
  if (f.tools === undefined) {
    for (const t of kernel.tools.describe()) if (t.source !== "tools" && !activeTools.includes(t.name)) activeTools.push(t.name);
  }

  const customSystemPrompt = readTextOrFile(f["system-prompt"] as string | undefined, cwd);
  const appendSystemPrompt = readTextOrFile(f["append-system-prompt"] as string | undefined, cwd);
  const sessionMode = sessionModeOf(opts.mode);

  // (changed for sessions) One factory builds the first session and every later one (/new,
  // resume, fork, clone, import); the runtime opens or creates the store.
  const factory = async ({ sessionManager: sm, cwd: sessionCwd, previous }: SessionBuildInput): Promise<AgentSession> => {
    if (previous) sm.onDiagnostic((d) => kernel.diagnostics.report(d));
    const ctx = sm.buildSessionContext();
    const hasMessages = ctx.messages.length > 0;
    let sessionModel = previous ? previous.model : model;
    let sessionThinking = previous ? previous.thinkingLevel : thinking;
    if (previous && hasMessages) {
      // A resumed or forked session comes back with its own model and thinking level.
      const m = ctx.model ? registry.find(ctx.model.provider, ctx.model.modelId) : undefined;
      if (m && (registry.isKeyless(m.provider) || (await registry.hasConfiguredAuth(m)))) sessionModel = m;
      else if (ctx.model) kernel.diagnostics.report({ level: "warning", source: "session", message: `could not restore the model ${ctx.model.provider}/${ctx.model.modelId}${m ? " (no API key)" : ""}; keeping ${sessionModel ? `${sessionModel.provider}/${sessionModel.id}` : "none"}` });
      if (ctx.thinkingLevel && isThinkingLevel(String(ctx.thinkingLevel)) && sm.getBranch().some((e) => e.type === "thinking_level_change")) {
        sessionThinking = ctx.thinkingLevel as ThinkingLevel;
      }
    }
    const session = new AgentSession({
      kernel,
      sessionManager: sm,
      models,
      cwd: sessionCwd,
      mode: sessionMode,
      model: sessionModel,
      thinkingLevel: sessionThinking,
      activeTools: previous ? previous.getActiveToolNames() : activeTools,
      customSystemPrompt,
      appendSystemPrompt,
      scopedModels: scoped,
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
  return AgentSessionRuntime.create(kernel, factory, store, { cwd });
}

/** -r: the interactive mode shows the picker the TUI provides; anywhere else a clear error. (added for sessions) */
function checkResume(kernel: Kernel, mode: string): void {
  const alternatives = "pass --session <path|id> to open a session, or -c to continue the latest one";
  if (mode !== "interactive" && mode !== "tui") {
    throw new SessionSetupError(`--resume (-r) opens an interactive session picker, which the ${mode} mode does not have; ${alternatives}`);
  }
  if (!kernel.hasService("session-picker")) {
    throw new SessionSetupError(`--resume (-r) needs a session picker, and no installed plugin provides one; ${alternatives}`);
  }
}
