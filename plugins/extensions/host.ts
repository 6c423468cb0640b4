/**
 * The extension host: finds pi extensions, loads them through the kernel's jiti loader, gives
 * each one a PluginApi scope named after its path (every tap and registration is attributed
 * to it and undone by /reload), and binds them to the live session.
 *
 * Load order (first registration of a tool, command or flag name wins): `-e` extensions, then
 * the project's `.pi/extensions/` (trusted projects only), `<agentDir>/extensions/`, the
 * `extensions` setting (global, then project — trusted only), package extensions (service
 * "package-extensions"), and inline factories of custom CLIs (service "extension-factories").
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type Kernel, type PluginApi, createLoader, type ModuleLoader, PluginHost, type ImageContent, type TextContent, type ToolDefinition as KernelTool } from "../../core/kernel/index.js";
import type { AgentSession, AgentSessionRuntime } from "../../core/engine/index.js";
import { SharedEventBus } from "./event-bus.js";
import { createCommandContext, createContext, NOT_INITIALIZED, UiSource, type ContextHost } from "./context.js";
import { createExtensionApi, STALE_MESSAGE } from "./api.js";
import type { LoadedExtension } from "./loaded-extension.js";

export type { LoadedExtension };
import type { EventHost } from "./events.js";
import { askProjectTrust, projectTrustPending } from "./trust-event.js";
import { toolContext } from "./tool-context.js";
import { discoverInFolder, entriesOfFolder, expandPath, realKey, resolveFrom, type ExtensionCandidate, type ExtensionOrigin } from "./discovery.js";
import type { ExtensionCommandContext, ExtensionContext, ProviderConfig, SlashCommandInfo, SourceInfo, ToolDefinition, ToolInfo } from "./types.js";

function untrustedMessage(kernel: Kernel, what: string): string {
  return (
    `project ${kernel.cwd} is not trusted, so its ${what} did not load. Trust it with --trust (this run), ` +
    `by answering the trust prompt in the interactive UI, or by adding it to "trustedProjects" in ${join(kernel.agentDir, "settings.json")}`
  );
}

export interface ExtensionSummary {
  name: string;
  origin: ExtensionOrigin;
}

/** Kernel service "resolve-package-source" (packages plugin): `-e npm:…` / `git:…` → the package folder for this run. */
export type ResolvePackageSource = (source: string) => Promise<string>;
/** Kernel service "package-resources" (packages plugin): resources of installed packages (project ones only when trusted). */
export type PackageResources = (opts?: { reload?: boolean }) => Promise<{ extensions: string[] }>;

type Factory = (pi: any) => unknown;

function pickFactory(mod: unknown): Factory | undefined {
  if (typeof mod === "function") return mod as Factory;
  const d = (mod as { default?: unknown } | undefined)?.default;
  if (typeof d === "function") return d as Factory;
  const dd = (d as { default?: unknown } | undefined)?.default;
  if (typeof dd === "function") return dd as Factory;
  return undefined;
}

function pluginManifestOf(mod: unknown): { name: string; setup: unknown; kernel: string } | undefined {
  const d = (mod as { default?: unknown } | undefined)?.default ?? mod;
  if (d && typeof d === "object" && typeof (d as { setup?: unknown }).setup === "function" && typeof (d as { kernel?: unknown }).kernel === "string") {
    return d as { name: string; setup: unknown; kernel: string };
  }
  return undefined;
}

/**
 * The package entry extensions import (`@mariozechner/pi-coding-agent` → our sdk), when built: the
 * bundle's index when this code runs from the bundle (dist/bundle/chunks/; the package ships no
 * other JavaScript), else dist/sdk/index.js.
 */
function defaultHostAliases(kernel: Kernel): Record<string, string> {
  const here = fileURLToPath(import.meta.url);
  const entry = fileURLToPath(new URL(/[\\/]dist[\\/]bundle[\\/]/.test(here) ? "../index.js" : "../../sdk/index.js", import.meta.url));
  if (!existsSync(entry)) return {};
  const out: Record<string, string> = {};
  for (const n of kernel.app.hostPackageNames) out[n] = entry;
  return out;
}

export class ExtensionHost implements ContextHost {
  readonly extensions: LoadedExtension[] = [];
  readonly bus: SharedEventBus;
  private readonly ui: UiSource;
  private readonly prompts = new WeakMap<object, string>();
  private beforeAgentStart: { systemPrompt: string } | undefined;
  private switching: { reason: string } | undefined;
  private readonly pendingOAuth: Array<{ ext: LoadedExtension; name: string; oauth: NonNullable<ProviderConfig["oauth"]> }> = [];
  private readonly unknownEvents = new Set<string>();
  private readonly runs = new Set<Promise<unknown>>();
  private inline = 0;
  private reloading: Promise<void> | undefined;
  private ownLoader: ModuleLoader | undefined;
  private genericCtx: ExtensionContext | undefined;
  /** Tool name → source before any extension loaded (to tell overrides of built-ins apart). */
  readonly baseToolSources = new Map<string, string>();

  constructor(
    readonly kernel: Kernel,
    private readonly plugin: PluginApi,
  ) {
    this.bus = new SharedEventBus((channel, owner, error) =>
      kernel.diagnostics.report({ level: "error", source: owner, hook: `events:${channel}`, message: "event bus handler failed", error }),
    );
    this.ui = new UiSource(kernel);
    this.installHostTaps();
  }

  // ---- binding -----------------------------------------------------------------------------------

  runtime(): AgentSessionRuntime | undefined {
    if (!this.kernel.isBound) return undefined;
    return this.kernel.bound("extensions");
  }

  session(): AgentSession | undefined {
    return this.runtime()?.session;
  }

  private installHostTaps(): void {
    const p = this.plugin;
    p.on(
      "session_start",
      async () => {
        this.switching = undefined;
        const s = this.session();
        if (!s) return;
        s.contextFactory = () => this.context(undefined);
        this.flushOAuth();
        try {
          this.prompts.set(s, await s.getSystemPrompt());
        } catch {
          /* reported when a run needs it */
        }
      },
      { stage: -1000 },
    );
    p.on(
      "session_before_switch",
      (e) => {
        this.switching = { reason: e.reason };
        return undefined;
      },
      { stage: -1000 },
    );
    p.on(
      "session_before_fork",
      (e) => {
        this.switching = { reason: (e as { position?: string }).position === "at" ? "clone" : "fork" };
        return undefined;
      },
      { stage: -1000 },
    );
    p.on(
      "before_agent_start",
      (e) => {
        this.beforeAgentStart = e;
        return e;
      },
      { stage: -1000 },
    );
    p.on(
      "agent_start",
      () => {
        this.ended = false;
      },
      { stage: -1000 },
    );
    p.on(
      "agent_end",
      () => {
        this.ended = true;
      },
      { stage: -1000 },
    );
    p.on("agent_end", () => this.flushEnded(), { stage: 1000 });
    p.on(
      "before_agent_start",
      (e) => {
        const s = this.session();
        if (s) this.prompts.set(s, e.systemPrompt);
        this.beforeAgentStart = undefined;
        return e;
      },
      { stage: 1000 },
    );
  }

  systemPrompt(): string {
    if (this.beforeAgentStart) return this.beforeAgentStart.systemPrompt;
    const s = this.session();
    return (s && this.prompts.get(s)) ?? "";
  }

  refreshSystemPrompt(): void {
    const s = this.session();
    if (!s) return;
    void s.getSystemPrompt().then(
      (p) => this.prompts.set(s, p),
      () => undefined,
    );
  }

  // ---- contexts ------------------------------------------------------------------------------------

  /** The ctx for one extension's handlers and tools (or a generic one for other tools). */
  context(ext: LoadedExtension | undefined): ExtensionContext {
    if (!ext) return (this.genericCtx ??= createContext(this, this.ui, "extension"));
    return (ext.ctx ??= createContext(this, this.ui, ext.name));
  }

  commandContext(ext: LoadedExtension | undefined): ExtensionCommandContext {
    return createCommandContext(this, this.context(ext));
  }

  /** The parts of the system prompt (pi's BuildSystemPromptOptions). */
  systemPromptOptions(): Record<string, unknown> {
    const s = this.session();
    return {
      cwd: s?.cwd ?? this.kernel.cwd,
      selectedTools: s?.getActiveToolNames() ?? [],
      customPrompt: s?.customSystemPrompt,
      appendSystemPrompt: s?.appendSystemPrompt,
      toolSnippets: Object.fromEntries((s?.getActiveTools() ?? []).filter((t) => t.promptSnippet).map((t) => [t.name, t.promptSnippet])),
      promptGuidelines: (s?.getActiveTools() ?? []).flatMap((t) => t.promptGuidelines ?? []),
    };
  }

  eventHost(ext: LoadedExtension): EventHost {
    return {
      ctx: () => this.context(ext),
      pendingSwitch: () => this.switching,
      systemPromptOptions: () => this.systemPromptOptions(),
      unknownEvent: (name) => {
        const key = `${ext.name}\0${name}`;
        if (this.unknownEvents.has(key)) return;
        this.unknownEvents.add(key);
        this.kernel.diagnostics.report({ level: "info", source: ext.name, hook: name, message: `this host never emits "${name}"; the handler will not run` });
      },
    };
  }

  // ---- actions shared by the API ---------------------------------------------------------------

  private track<T>(p: Promise<T>): Promise<T> {
    this.runs.add(p);
    const done = () => this.runs.delete(p);
    p.then(done, done);
    return p;
  }

  /**
   * True from the agent_end event until the run returns: the loop is done, so (as in pi, where
   * agent_end handlers run once the agent is idle) actions behave as if the agent were idle.
   */
  private ended = false;
  private endedMessages: Array<{ message: any; options: any; done: () => void; fail: (e: unknown) => void }> = [];

  /** Whether the agent counts as idle for extensions (not streaming, or past agent_end). */
  isIdle(): boolean {
    const s = this.session();
    return !s || !s.isStreaming || this.ended;
  }

  async sendMessage(message: any, options: any = {}): Promise<void> {
    const s = this.session();
    if (!s) throw new Error(NOT_INITIALIZED);
    if (this.ended && s.isStreaming && options.deliverAs !== "nextTurn") {
      // Sent from an agent_end handler: delivered once every handler ran (see flushEnded).
      return new Promise((done, fail) => this.endedMessages.push({ message, options, done, fail }));
    }
    await this.track(s.sendCustomMessage(message, options));
  }

  /**
   * After the last agent_end handler: messages sent with triggerTurn start one more run (all of
   * them, in order); without it they are only added to the conversation, once the run is over.
   */
  private async flushEnded(): Promise<void> {
    this.ended = false;
    const list = this.endedMessages.splice(0);
    const s = this.session();
    if (!list.length || !s) return;
    const settle = (p: Promise<unknown>, m: (typeof list)[number]) => p.then(m.done, m.fail);
    if (list.some((m) => m.options?.triggerTurn)) {
      // Still inside the run: queued messages make the session continue once this run returns.
      for (const m of list) await settle(s.sendCustomMessage(m.message, { deliverAs: m.options?.deliverAs === "followUp" ? "followUp" : "steer" }), m);
      return;
    }
    void this.track(
      s.waitForIdle().then(async () => {
        for (const m of list) await settle(s.sendCustomMessage(m.message, {}), m);
      }),
    );
  }

  async sendUserMessage(content: string | (TextContent | ImageContent)[], options: { deliverAs?: "steer" | "followUp" } = {}): Promise<void> {
    const s = this.session();
    if (!s) throw new Error(NOT_INITIALIZED);
    let text: string;
    let images: ImageContent[] | undefined;
    if (typeof content === "string") text = content;
    else if (Array.isArray(content)) {
      text = content.filter((c) => c?.type === "text").map((c) => (c as TextContent).text).join("\n");
      const imgs = content.filter((c) => c?.type === "image") as ImageContent[];
      if (imgs.length) images = imgs;
    } else throw new TypeError("sendUserMessage: content must be a string or an array of text and image parts");
    let deliverAs = options.deliverAs;
    if (s.isStreaming && !deliverAs) {
      // From an agent_end handler the run is over: the message starts the next one.
      if (this.ended) deliverAs = "followUp";
      else throw new Error('sendUserMessage: the agent is busy with a run; pass {deliverAs: "steer"} or {deliverAs: "followUp"} to queue the message');
    }
    await this.track(s.prompt(text, { images, source: "extension", expandPromptTemplates: false, streamingBehavior: deliverAs }));
  }

  /**
   * Run an extension command. In modes without an ongoing UI (print, json, SDK), runs the
   * command started with sendUserMessage/sendMessage finish before the command does, so the
   * caller sees their answer.
   */
  async runCommand(ext: LoadedExtension, handler: (args: string, ctx: ExtensionCommandContext) => unknown, args: string): Promise<void> {
    const before = new Set(this.runs);
    await handler(args, this.commandContext(ext));
    const mode = this.session()?.mode;
    if (mode === "tui" || mode === "rpc") return;
    const started = [...this.runs].filter((p) => !before.has(p));
    if (started.length) await Promise.allSettled(started);
  }

  registerTool(ext: LoadedExtension, tool: ToolDefinition<any, any>): void {
    if (!tool || typeof tool !== "object" || typeof tool.name !== "string" || !tool.name || typeof tool.execute !== "function") {
      throw new TypeError(`registerTool: a tool needs a name and an execute() function (extension ${ext.name})`);
    }
    const current = this.kernel.tools.describe().find((t) => t.name === tool.name);
    // An extension tool replaces a built-in (or plugin) tool of the same name; between
    // extensions the first registration wins.
    const override = !!current && !this.isExtensionSource(current.source);
    const wrapped: KernelTool = {
      ...(tool as unknown as KernelTool),
      execute: (id, params, signal, onUpdate, callCtx) => tool.execute.call(tool, id, params, signal, onUpdate, toolContext(this.context(ext), callCtx)),
    };
    const undo = ext.scope.registerTool(wrapped, { override });
    if (!undo) return;
    const s = this.session();
    // pi 1.6: a tool with `codemode`, `deferred` or `hidden` exposure is not activated on registration.
    const declared = tool.exposure === undefined || tool.exposure === "direct";
    if (s && declared && !s.getActiveToolNames().includes(tool.name)) {
      s.setActiveTools([...s.getActiveToolNames(), tool.name]);
      this.refreshSystemPrompt();
    }
  }

  registerProvider(ext: LoadedExtension, name: string, config: ProviderConfig): void {
    if (typeof name !== "string" || !name.trim()) throw new TypeError("registerProvider: the provider needs a name");
    if (!config || typeof config !== "object") throw new TypeError(`registerProvider("${name}"): config must be an object`);
    const { oauth, ...rest } = config;
    const existing = this.kernel.models.get(name);
    const merged = { ...(existing && !rest.models ? existing : {}), ...rest, name } as Parameters<PluginApi["registerModels"]>[0];
    if (rest.streamSimple && typeof rest.streamSimple !== "function") throw new TypeError(`registerProvider("${name}"): streamSimple must be a function`);
    if (merged.streamSimple && !merged.api) throw new Error(`registerProvider("${name}"): "api" is required with streamSimple`);
    for (const m of merged.models ?? []) {
      if (!m || typeof m.id !== "string") throw new TypeError(`registerProvider("${name}"): every model needs an id`);
      if (!m.api && !merged.api) throw new Error(`registerProvider("${name}"): model "${m.id}" has no "api" (set it on the provider or the model)`);
    }
    ext.providers.get(name)?.();
    const undoModels = ext.scope.registerModels(merged, { override: true });
    let undoOAuth: (() => void) | undefined;
    const pending = oauth ? { ext, name, oauth } : undefined;
    if (pending) {
      const registry = this.kernel.service("model-registry");
      if (registry?.authStorage) undoOAuth = registry.authStorage.registerOAuthProvider({ ...oauth, id: name } as never);
      else this.pendingOAuth.push(pending);
    }
    ext.providers.set(name, () => {
      undoModels?.();
      undoOAuth?.();
      const i = pending ? this.pendingOAuth.indexOf(pending) : -1;
      if (i >= 0) this.pendingOAuth.splice(i, 1);
    });
  }

  private flushOAuth(): void {
    const registry = this.kernel.service("model-registry");
    if (!registry?.authStorage) return;
    for (const p of this.pendingOAuth.splice(0)) {
      try {
        const undo = registry.authStorage.registerOAuthProvider({ ...p.oauth, id: p.name });
        p.ext.disposers.push(undo);
      } catch (error) {
        this.kernel.diagnostics.report({ level: "error", source: p.ext.name, message: `registerProvider("${p.name}"): OAuth registration failed`, error });
      }
    }
  }

  isExtensionSource(source: string): boolean {
    return this.extensions.some((e) => e.name === source);
  }

  sourceInfo(source: string): SourceInfo {
    const ext = this.extensions.find((e) => e.name === source);
    if (!ext) return { path: `<${source}>`, source: source === "tools" ? "builtin" : source, scope: "temporary", origin: "top-level" };
    const scope = ext.origin === "project" || ext.origin === "project-settings" ? "project" : ext.origin === "cli" || ext.origin === "inline" ? "temporary" : "user";
    return { path: ext.path, source: ext.origin === "inline" ? "inline" : "local", scope, origin: ext.origin === "package" ? "package" : "top-level" };
  }

  allTools(): ToolInfo[] {
    return this.kernel.tools.describe().map((d) => {
      const tool = this.kernel.tools.get(d.name);
      return {
        name: d.name,
        description: d.description,
        parameters: tool?.parameters as ToolInfo["parameters"],
        ...(tool?.exposure ? { exposure: tool.exposure } : {}),
        sourceInfo: this.sourceInfo(d.source),
      };
    });
  }

  commandInfos(): SlashCommandInfo[] {
    const out: SlashCommandInfo[] = [];
    for (const kind of ["extension", "prompt", "skill"] as const) {
      for (const e of this.kernel.commands.list()) {
        if (e.value.source !== kind) continue;
        const info = this.sourceInfo(e.source);
        if (e.value.path) info.path = e.value.path;
        out.push({ name: e.name, description: e.value.description, source: kind, sourceInfo: info });
      }
    }
    return out;
  }

  // ---- loading -------------------------------------------------------------------------------------

  private loader(): ModuleLoader {
    const fromCli = this.kernel.service("loader");
    if (fromCli) return fromCli;
    this.ownLoader ??= createLoader({ hostAliases: defaultHostAliases(this.kernel), cacheDir: join(this.kernel.agentDir, "cache", "jiti") });
    return this.ownLoader;
  }

  private report(level: "error" | "warning" | "info", source: string, message: string, error?: unknown): void {
    this.kernel.diagnostics.report({ level, source, message, error });
  }

  /**
   * The extensions to load, in order, with duplicates (same real file) dropped. `phase` "pre"
   * gives only those that do not come with the project (-e, the user's folder, the global
   * setting: they answer project_trust), "post" the rest, "all" both in the usual order.
   */
  async discover(reloading = false, phase: "all" | "pre" | "post" = "all"): Promise<ExtensionCandidate[]> {
    const k = this.kernel;
    const pre = phase !== "post";
    const post = phase !== "pre";
    const argv = k.service("argv")?.flags ?? {};
    const out: ExtensionCandidate[] = [];
    const seen = new Set<string>();
    const add = (paths: string[], origin: ExtensionOrigin) => {
      for (const p of paths) {
        const key = realKey(p);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ path: p, origin });
      }
    };
    const addSpec = async (spec: string, base: string, origin: ExtensionOrigin, from: string) => {
      if (/^(npm|git|https?|ssh):/.test(spec) || spec.startsWith("git@")) {
        const resolvePkg = k.service("resolve-package-source");
        if (typeof resolvePkg !== "function") {
          this.report("error", spec, `${from}: npm:, git: and URL sources need the packages plugin, which is not installed`);
          return;
        }
        try {
          const root = await resolvePkg(spec);
          const entries = entriesOfFolder(root) ?? discoverInFolder(join(root, "extensions"));
          if (!entries.length) this.report("warning", spec, `${from}: the package at ${root} has no extensions`);
          add(entries, origin);
        } catch (error) {
          this.report("error", spec, `${from}: cannot install or resolve the package: ${error instanceof Error ? error.message : String(error)}`, error);
        }
        return;
      }
      const p = resolveFrom(base, spec);
      const paths = expandPath(p);
      if (!paths) this.report("error", p, `extension not found (${from})`);
      else if (!paths.length) this.report("warning", p, `no extensions in this folder (${from})`);
      else add(paths, origin);
    };

    // 1. -e: first, so their tools, commands and flags win conflicts.
    const cli = ([] as unknown[]).concat(argv.extension ?? []).map(String).filter(Boolean);
    if (pre) for (const spec of cli) await addSpec(spec, k.cwd, "cli", `-e ${spec}`);

    if (argv["no-extensions"] !== true) {
      const trust = k.service("project-trust");
      const trusted = trust ? trust.isTrusted(k.cwd) : false;
      const skipped: string[] = [];
      const projectDir = join(k.cwd, k.app.configDir);

      // 2. the project's own folder
      const project = post ? discoverInFolder(join(projectDir, "extensions")) : [];
      if (trusted) add(project, "project");
      else skipped.push(...project);

      // 3. the user's folder
      if (pre) add(discoverInFolder(join(k.agentDir, "extensions")), "global");

      // 4. the extensions setting: global layer relative to the agent dir, project layer to .pi/
      const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && !!x.trim() && !/^[+!-]?builtin:/.test(x.trim())) : []); // builtin:<name> entries: core/kernel/builtin-extensions.ts
      if (pre) for (const spec of list(k.settings.getGlobal().extensions)) await addSpec(spec, k.agentDir, "settings", `setting "extensions" in ${join(k.agentDir, "settings.json")}`);
      const projectSpecs = post ? list(k.settings.getProject().extensions) : [];
      if (trusted) for (const spec of projectSpecs) await addSpec(spec, projectDir, "project-settings", `setting "extensions" in ${k.settings.projectPath() ?? projectDir}`);
      else skipped.push(...projectSpecs.map((s) => resolveFrom(projectDir, s)));

      // 5. packages (the packages plugin leaves out an untrusted project's packages itself)
      const pkgs = k.service("package-resources");
      if (post && typeof pkgs === "function") {
        try {
          add((await pkgs({ reload: reloading }))?.extensions ?? [], "package");
        } catch (error) {
          this.report("error", "packages", "cannot list the extensions of installed packages", error);
        }
      }

      if (skipped.length) {
        const rel = skipped.map((p) => (p.startsWith(k.cwd) ? relative(k.cwd, p) : p));
        this.report("warning", projectDir, untrustedMessage(k, `extensions (${rel.join(", ")})`));
        for (const p of skipped) trust?.noteSkipped({ kind: "extension", path: p });
      }
    }

    // 6. inline factories of a custom CLI
    const factories = post ? (k.service("extension-factories") ?? []) : [];
    for (const f of factories) {
      if (typeof f !== "function") {
        this.report("error", "extension-factories", "an inline extension factory is not a function; skipped");
        continue;
      }
      out.push({ path: `<inline:${++this.inline}>`, origin: "inline", factory: f });
    }
    return out;
  }

  async loadAll(reloading = false): Promise<void> {
    if (!this.baseToolSources.size) for (const d of this.kernel.tools.describe()) this.baseToolSources.set(d.name, d.source);
    // pi 1.6 project_trust: the extensions that do not come with the project load first and decide
    if (!reloading && projectTrustPending(this.kernel)) {
      const first = await this.discover(false, "pre");
      for (const c of first) await this.loadOne(c);
      await askProjectTrust(this.kernel);
      const done = new Set(first.map((c) => realKey(c.path)));
      for (const c of await this.discover(false, "post")) if (!done.has(realKey(c.path))) await this.loadOne(c);
      return;
    }
    for (const c of await this.discover(reloading)) await this.loadOne(c);
  }

  /** Load one extension; a failure is a diagnostic naming the file, and everything it registered is undone. */
  async loadOne(c: ExtensionCandidate): Promise<LoadedExtension | undefined> {
    const timing = this.kernel.service("timing");
    const t0 = performance.now();
    const ext: LoadedExtension = {
      name: c.path,
      path: c.path,
      origin: c.origin,
      scope: this.kernel.scope(c.path),
      flags: new Map(),
      disposers: [],
      providers: new Map(),
      stale: false,
    };
    try {
      let factory = c.factory as Factory | undefined;
      if (!factory) {
        const mod = await this.loader().import(c.path);
        const manifest = pluginManifestOf(mod);
        if (manifest && !pickFactory(mod)) {
          // A native kernel plugin given to -e: load it as one.
          await new PluginHost(this.kernel).load([{ manifest, origin: c.path }]);
          return undefined;
        }
        factory = pickFactory(mod);
        if (!factory) throw new Error(`${c.path} does not export a valid factory function (expected: export default function (pi) { … })`);
      }
      this.extensions.push(ext);
      await factory(createExtensionApi(this, ext));
      return ext;
    } catch (error) {
      this.unload(ext);
      const msg = error instanceof Error ? error.message : String(error);
      this.report("error", c.path, `failed to load extension: ${msg}`, error);
      return undefined;
    } finally {
      timing?.record(`extension ${c.path}`, performance.now() - t0);
    }
  }

  private unload(ext: LoadedExtension): void {
    ext.stale = true;
    for (const undo of ext.providers.values()) {
      try {
        undo();
      } catch {
        /* keep going */
      }
    }
    ext.providers.clear();
    while (ext.disposers.length) {
      try {
        ext.disposers.pop()!();
      } catch {
        /* keep going */
      }
    }
    ext.scope.dispose();
    const i = this.extensions.indexOf(ext);
    if (i >= 0) this.extensions.splice(i, 1);
  }

  /**
   * /reload: session_shutdown {reason: "reload"}, unload every extension, load them again from
   * disk, session_start {reason: "reload"}.
   */
  reload(): Promise<void> {
    if (this.reloading) return this.reloading;
    this.reloading = (async () => {
      const hooks = this.kernel.hooks;
      try {
        if (this.session() && hooks.session_shutdown.isUsed()) await hooks.session_shutdown.promise({ type: "session_shutdown", reason: "reload" });
        for (const ext of [...this.extensions]) this.unload(ext);
        this.inline = 0;
        await this.loadAll(true);
        if (this.session() && hooks.session_start.isUsed()) await hooks.session_start.promise({ type: "session_start", reason: "reload" });
        this.refreshSystemPrompt();
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  list(): ExtensionSummary[] {
    return this.extensions.map((e) => ({ name: e.name, origin: e.origin }));
  }
}

export { STALE_MESSAGE };
