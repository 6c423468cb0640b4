/**
 * pi 1.6's extension-runner exports over this project's extension host: `createExtensionRuntime`,
 * `discoverAndLoadExtensions`, `ExtensionRunner`, `wrapRegisteredTool(s)`.
 *
 * Here extensions load into a kernel (plugins/extensions: discovery, jiti loader, the `pi` API
 * adapter) and their handlers are taps on its hooks. So `discoverAndLoadExtensions()` loads them
 * into a kernel of its own and describes what each one registered as 1.6's `Extension` records
 * (handlers, tools, commands, flags, shortcuts, message renderers); the result's `runtime` holds
 * that kernel, and an `ExtensionRunner` made from it emits events through the kernel's hooks —
 * the same path a session uses. Handlers see the host's `ctx` (cwd, ui, modelRegistry; session
 * actions need a session: use createAgentSession for a whole agent). The runner's own contexts
 * (createContext, createToolContext, createCommandContext) are built from bindCore's actions.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { defineApp } from "../../core/kernel/config.js";
import type { Kernel } from "../../core/kernel/kernel.js";
import type { CommandContext } from "../../core/kernel/contracts.js";
import type { PluginManifest } from "../../core/kernel/plugin.js";
import type { ToolCallScope } from "../../core/engine/agent/loop.js";
import type { Diagnostic } from "../../core/kernel/types.js";
import { NOT_INITIALIZED } from "../../plugins/extensions/context.js";
import { getAgentDir } from "../../plugins/extensions/helpers.js";
import type { ExtensionHost } from "../../plugins/extensions/host.js";
import extensionsPlugin from "../../plugins/extensions/index.js";
import packagesPlugin from "../../plugins/packages/index.js";
import providersPlugin from "../../plugins/providers/index.js";
import trustPlugin from "../../plugins/trust/index.js";
import { setupKernel } from "../kernel-setup.js";
import { packageInfo } from "../package-info.js";

/** The kernel an extension runtime (and the extensions described from it) belongs to. */
export const RUNTIME_KERNEL: unique symbol = Symbol.for("pi-kernel.pi-package.runtime-kernel") as never;
/** An inline extension's factory (so a session can load it again). */
export const EXTENSION_FACTORY: unique symbol = Symbol.for("pi-kernel.pi-package.extension-factory") as never;

type AnyFn = (...args: any[]) => any;

export interface SourceInfo {
  path: string;
  source: string;
  scope: "user" | "project" | "temporary";
  origin: "package" | "top-level";
  baseDir?: string;
}
export interface RegisteredTool {
  definition: { name: string; label?: string; description: string; parameters?: unknown; execute: AnyFn; [k: string]: unknown };
  sourceInfo: SourceInfo;
}
export interface RegisteredCommand {
  name: string;
  sourceInfo: SourceInfo;
  description?: string;
  getArgumentCompletions?: AnyFn;
  handler: (args: string, ctx?: unknown) => Promise<void>;
}
export interface ResolvedCommand extends RegisteredCommand {
  invocationName: string;
}
export interface ExtensionFlag {
  name: string;
  description?: string;
  type: "boolean" | "string";
  default?: boolean | string;
  extensionPath: string;
}
export interface ExtensionShortcut {
  shortcut: string;
  description?: string;
  handler: AnyFn;
  extensionPath: string;
}
/** One loaded extension and what it registered. */
export interface Extension {
  path: string;
  resolvedPath: string;
  sourceInfo: SourceInfo;
  handlers: Map<string, AnyFn[]>;
  tools: Map<string, RegisteredTool>;
  messageRenderers: Map<string, AnyFn>;
  commands: Map<string, RegisteredCommand>;
  flags: Map<string, ExtensionFlag>;
  shortcuts: Map<string, ExtensionShortcut>;
  [RUNTIME_KERNEL]?: Kernel;
  [EXTENSION_FACTORY]?: AnyFn;
}
export interface ExtensionError {
  extensionPath: string;
  event: string;
  error: string;
  stack?: string;
}

const ACTIONS = [
  "sendMessage", "sendUserMessage", "appendEntry", "setSessionName", "getSessionName", "setLabel", "getActiveTools", "getAllTools",
  "getSettings", "setActiveTools", "refreshTools", "getCommands", "setModel", "getThinkingLevel", "setThinkingLevel",
] as const;
type ActionName = (typeof ACTIONS)[number];

export interface ExtensionRuntime extends Record<ActionName, AnyFn> {
  flagValues: Map<string, boolean | string>;
  pendingProviderRegistrations: Array<{ name: string; config: unknown; extensionPath: string }>;
  pendingNativeProviderRegistrations: Array<{ provider: unknown; extensionPath: string }>;
  pendingVirtualModelRegistrations: Array<{ definition: unknown; extensionPath: string }>;
  createContext: () => unknown;
  assertActive: () => void;
  invalidate: (message?: string) => void;
  trackEventBusSubscription: (unsubscribe: () => void) => () => void;
  reportError: (error: ExtensionError) => void;
  registerProvider: (name: string, config: unknown, extensionPath?: string) => void;
  registerNativeProvider: (provider: unknown, extensionPath?: string) => void;
  unregisterProvider: (name: string, extensionPath?: string) => void;
  [RUNTIME_KERNEL]?: Kernel;
}

export interface LoadExtensionsResult {
  extensions: Extension[];
  errors: Array<{ path: string; error: string }>;
  warnings?: Array<{ path: string; warning: string }>;
  runtime: ExtensionRuntime;
}

/**
 * A runtime whose actions throw "Extension runtime not initialized" until a runner binds them;
 * provider registrations made before that are queued. For hosts that list no extensions
 * (`getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() })`).
 */
export function createExtensionRuntime(): ExtensionRuntime {
  let stale: string | undefined;
  const subscriptions = new Set<() => void>();
  const runtime = {
    flagValues: new Map<string, boolean | string>(),
    pendingProviderRegistrations: [] as ExtensionRuntime["pendingProviderRegistrations"],
    pendingNativeProviderRegistrations: [] as ExtensionRuntime["pendingNativeProviderRegistrations"],
    pendingVirtualModelRegistrations: [] as ExtensionRuntime["pendingVirtualModelRegistrations"],
    createContext: () => {
      throw new Error(NOT_INITIALIZED);
    },
    assertActive: () => {
      if (stale !== undefined) throw new Error(stale);
    },
    invalidate: (message?: string) => {
      stale = message ?? "This extension runtime was replaced; its extensions can no longer be used.";
      for (const off of subscriptions) off();
      subscriptions.clear();
    },
    trackEventBusSubscription: (unsubscribe: () => void) => {
      subscriptions.add(unsubscribe);
      return () => {
        subscriptions.delete(unsubscribe);
        unsubscribe();
      };
    },
    reportError: (_error: ExtensionError) => undefined,
    registerProvider: (name: string, config: unknown, extensionPath = "<sdk>") => {
      runtime.pendingProviderRegistrations = runtime.pendingProviderRegistrations.filter((p) => p.name !== name);
      runtime.pendingProviderRegistrations.push({ name, config, extensionPath });
    },
    registerNativeProvider: (provider: unknown, extensionPath = "<sdk>") => void runtime.pendingNativeProviderRegistrations.push({ provider, extensionPath }),
    unregisterProvider: (name: string) => {
      runtime.pendingProviderRegistrations = runtime.pendingProviderRegistrations.filter((p) => p.name !== name);
    },
  } as unknown as ExtensionRuntime;
  for (const name of ACTIONS) {
    runtime[name] = () => {
      throw new Error(NOT_INITIALIZED);
    };
  }
  return runtime;
}

// ---- describing a kernel's extensions ----------------------------------------------------------

function hostOf(kernel: Kernel | undefined): ExtensionHost | undefined {
  return kernel?.service("extensions") as ExtensionHost | undefined;
}

function handlersOf(kernel: Kernel, owner: string): Map<string, AnyFn[]> {
  const out = new Map<string, AnyFn[]>();
  for (const [event, hook] of Object.entries(kernel.hooks as unknown as Record<string, { taps?: Array<{ name: string; fn: AnyFn }> }>)) {
    const taps = (hook.taps ?? []).filter((t) => t.name === owner);
    if (taps.length) out.set(event, taps.map((t) => (e: unknown) => t.fn(e)));
  }
  return out;
}

/** 1.6's Extension records for what each extension loaded into `kernel` registered. */
export function describeExtensions(kernel: Kernel): Extension[] {
  const host = hostOf(kernel);
  if (!host) return [];
  return host.extensions
    .filter((e) => !e.stale)
    .map((ext) => {
      const sourceInfo = host.sourceInfo(ext.name) as SourceInfo;
      const mine = <T>(list: Array<{ name: string; value: T; source: string }>) => list.filter((e) => e.source === ext.name);
      const tools = new Map<string, RegisteredTool>();
      for (const d of kernel.tools.describe()) {
        const definition = d.source === ext.name ? kernel.tools.get(d.name) : undefined;
        if (definition) tools.set(d.name, { definition: definition as unknown as RegisteredTool["definition"], sourceInfo });
      }
      const commands = new Map<string, RegisteredCommand>();
      for (const c of mine(kernel.commands.list())) {
        commands.set(c.name, {
          name: c.name,
          sourceInfo,
          description: c.value.description,
          getArgumentCompletions: c.value.getArgumentCompletions as AnyFn | undefined,
          handler: async (args: string, ctx?: unknown) => void (await c.value.handler(args, ctx as CommandContext)),
        });
      }
      const flags = new Map<string, ExtensionFlag>();
      for (const f of mine(kernel.flags.list())) {
        flags.set(f.name, { name: f.name, description: f.value.description, type: f.value.type === "string" ? "string" : "boolean", default: f.value.default as boolean | string | undefined, extensionPath: ext.path });
      }
      const shortcuts = new Map<string, ExtensionShortcut>();
      for (const s of mine(kernel.shortcuts.list())) shortcuts.set(s.name, { shortcut: s.value.key, description: s.value.description, handler: s.value.handler, extensionPath: ext.path });
      const messageRenderers = new Map<string, AnyFn>();
      for (const r of mine(kernel.messageRenderers.list())) messageRenderers.set(r.value.customType, r.value.render);
      let resolvedPath = ext.path;
      if (ext.origin !== "inline") {
        try {
          resolvedPath = realpathSync(ext.path);
        } catch {
          /* keep the path as given */
        }
      }
      const out: Extension = { path: ext.path, resolvedPath, sourceInfo, handlers: handlersOf(kernel, ext.name), tools, messageRenderers, commands, flags, shortcuts };
      Object.defineProperty(out, RUNTIME_KERNEL, { value: kernel, enumerable: false });
      return out;
    });
}

/** The load errors (each naming its file) and warnings of a kernel's diagnostics. */
export function extensionProblems(diagnostics: readonly Diagnostic[]): Pick<LoadExtensionsResult, "errors" | "warnings"> {
  const detail = (d: Diagnostic) => {
    const e = d.error instanceof Error ? d.error.message : d.error !== undefined ? String(d.error) : "";
    return e && !d.message.includes(e) ? `${d.message}: ${e}` : d.message;
  };
  const isLoad = (d: Diagnostic) => /extension|package/i.test(d.message) && !d.hook;
  return {
    errors: diagnostics.filter((d) => d.level === "error" && isLoad(d)).map((d) => ({ path: d.source, error: detail(d) })),
    warnings: diagnostics.filter((d) => d.level === "warning" && isLoad(d)).map((d) => ({ path: d.source, warning: detail(d) })),
  };
}

/** A LoadExtensionsResult for the extensions loaded into `kernel`. */
export function loadExtensionsResultOf(kernel: Kernel, diagnostics: readonly Diagnostic[]): LoadExtensionsResult {
  const runtime = createExtensionRuntime();
  Object.defineProperty(runtime, RUNTIME_KERNEL, { value: kernel, enumerable: false });
  const extensions = describeExtensions(kernel);
  for (const e of extensions) for (const f of e.flags.values()) if (f.default !== undefined) runtime.flagValues.set(f.name, f.default);
  return { extensions, ...extensionProblems(diagnostics), runtime };
}

/** The plugins a kernel needs to discover and load extensions (no tools, modes or MCP). */
export function extensionLoadingPlugins(): PluginManifest[] {
  return [providersPlugin, trustPlugin, packagesPlugin, extensionsPlugin];
}

/**
 * Discover and load extensions as the CLI does: `configuredPaths` first (files, folders, npm:/git:
 * sources, like `-e`), then `<agentDir>/extensions/`, the `extensions` setting, installed packages,
 * and the project's `.pi/extensions/` when the project is trusted. A file that does not load is an
 * error naming it; the others load.
 */
export async function discoverAndLoadExtensions(configuredPaths: string[], cwd: string, agentDir: string = getAgentDir(), _eventBus?: unknown): Promise<LoadExtensionsResult> {
  if (!Array.isArray(configuredPaths)) throw new TypeError("discoverAndLoadExtensions: configuredPaths must be an array of paths");
  const diagnostics: Diagnostic[] = [];
  const { kernel } = await setupKernel({
    app: defineApp("pi", packageInfo().version),
    cwd: resolve(cwd),
    agentDir: resolve(agentDir),
    argv: { flags: { extension: configuredPaths.map(String) }, positionals: [], unknown: [] },
    plugins: extensionLoadingPlugins(),
    userPlugins: false,
    onKernel: (k) => void k.diagnostics.subscribe((d) => void diagnostics.push(d), true),
  });
  return loadExtensionsResultOf(kernel, diagnostics);
}

// ---- the runner ----------------------------------------------------------------------------------

export interface ExtensionContextActions {
  getModel: () => unknown;
  getScopedModels?: () => readonly unknown[];
  isIdle: () => boolean;
  isProjectTrusted?: () => boolean;
  getSignal?: () => AbortSignal | undefined;
  abort: () => void;
  hasPendingMessages: () => boolean;
  shutdown: () => void;
  getContextUsage: () => unknown;
  compact: (options?: unknown) => void;
  getSystemPrompt: () => string;
  getSystemPromptOptions?: () => unknown;
  executeTool?: (callerId: string, name: string, args: unknown, options: unknown) => Promise<unknown>;
  getCallableTools?: () => readonly unknown[];
}

const BAIL = new Set(["session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree", "session_directory"]);

/**
 * Emits events to the extensions of a LoadExtensionsResult (through the kernel they loaded into)
 * and gives hosts their tools, commands, flags and contexts.
 */
export class ExtensionRunner {
  private readonly kernel: Kernel | undefined;
  private actions: Partial<Record<ActionName, AnyFn>> = {};
  private contextActions: Partial<ExtensionContextActions> = {};
  private commandActions: Record<string, AnyFn> = {};
  private uiContext: unknown;
  private uiUndo: (() => void) | undefined;
  private mode: string = "sdk";
  private readonly errorListeners = new Set<(e: ExtensionError) => void>();
  private stale: string | undefined;
  private readonly unsubscribe: (() => void) | undefined;

  constructor(
    private readonly extensions: Extension[],
    private readonly runtime: ExtensionRuntime,
    private readonly cwd: string,
    private readonly sessionManager: unknown,
    private readonly modelRegistry: unknown,
  ) {
    if (!Array.isArray(extensions)) throw new TypeError("ExtensionRunner: extensions must be an array (LoadExtensionsResult.extensions)");
    this.kernel = runtime?.[RUNTIME_KERNEL] ?? extensions.find((e) => e[RUNTIME_KERNEL])?.[RUNTIME_KERNEL];
    this.unsubscribe = this.kernel?.diagnostics.subscribe((d) => {
      if (d.level !== "error" || !d.hook) return;
      const error = d.error instanceof Error ? d.error.message : d.error !== undefined ? String(d.error) : d.message;
      this.emitError({ extensionPath: d.source, event: d.hook, error, ...(d.error instanceof Error && d.error.stack ? { stack: d.error.stack } : {}) });
    });
    if (runtime) runtime.reportError = (e) => this.emitError(e);
  }

  // ---- binding ----

  bindCore(actions: Partial<Record<ActionName, AnyFn>>, contextActions: Partial<ExtensionContextActions>, providerActions: { registerProvider?: (name: string, config: unknown) => void } = {}): void {
    this.actions = { ...actions };
    this.contextActions = { ...contextActions };
    for (const name of ACTIONS) if (actions[name]) this.runtime[name] = actions[name]!;
    this.runtime.createContext = () => this.createContext();
    if (providerActions.registerProvider) {
      for (const p of this.runtime.pendingProviderRegistrations.splice(0)) providerActions.registerProvider(p.name, p.config);
      this.runtime.registerProvider = (name, config) => providerActions.registerProvider!(name, config);
    }
  }
  bindCommandContext(actions: Record<string, AnyFn> = {}): void {
    this.commandActions = { ...actions };
  }
  /** The UI extensions get as `ctx.ui` (and `ctx.hasUI`), for handlers and the runner's contexts. */
  setUIContext(uiContext?: unknown, mode?: string): void {
    this.uiUndo?.();
    this.uiUndo = undefined;
    this.uiContext = uiContext;
    if (mode) this.mode = mode;
    if (uiContext && this.kernel) this.uiUndo = this.kernel.provide("ui", uiContext as never, "extension-runner");
  }
  getUIContext(): unknown {
    return this.uiContext;
  }
  hasUI(): boolean {
    return !!this.uiContext;
  }

  // ---- what the extensions registered ----

  getExtensionPaths(): string[] {
    return this.extensions.map((e) => e.path);
  }
  /** Every extension tool (the first registration of a name wins). */
  getAllRegisteredTools(): RegisteredTool[] {
    const out = new Map<string, RegisteredTool>();
    for (const e of this.extensions) for (const [name, t] of e.tools) if (!out.has(name)) out.set(name, t);
    return [...out.values()];
  }
  getToolDefinition(toolName: string): RegisteredTool["definition"] | undefined {
    return this.getAllRegisteredTools().find((t) => t.definition.name === toolName)?.definition;
  }
  getFlags(): Map<string, ExtensionFlag> {
    const out = new Map<string, ExtensionFlag>();
    for (const e of this.extensions) for (const [name, f] of e.flags) if (!out.has(name)) out.set(name, f);
    return out;
  }
  setFlagValue(name: string, value: boolean | string): void {
    this.runtime.flagValues.set(name, value);
    const argv = this.kernel?.service("argv");
    if (argv) argv.flags[name] = value;
  }
  getFlagValues(): Map<string, boolean | string> {
    return new Map(this.runtime.flagValues);
  }
  getShortcuts(): Map<string, ExtensionShortcut> {
    const out = new Map<string, ExtensionShortcut>();
    for (const e of this.extensions) for (const [k, s] of e.shortcuts) if (!out.has(k)) out.set(k, s);
    return out;
  }
  getMessageRenderer(customType: string): AnyFn | undefined {
    for (const e of this.extensions) {
      const r = e.messageRenderers.get(customType);
      if (r) return r;
    }
    return undefined;
  }
  getRegisteredCommands(): ResolvedCommand[] {
    const out: ResolvedCommand[] = [];
    for (const e of this.extensions) for (const c of e.commands.values()) if (!out.some((o) => o.name === c.name)) out.push({ ...c, invocationName: c.name });
    return out;
  }
  getCommand(name: string): ResolvedCommand | undefined {
    return this.getRegisteredCommands().find((c) => c.invocationName === name.replace(/^\//, ""));
  }
  getModelRegistry(): unknown {
    return this.modelRegistry;
  }
  getActiveTools(): string[] {
    return (this.actions.getActiveTools?.() as string[] | undefined) ?? [];
  }
  hasHandlers(eventType: string): boolean {
    return this.extensions.some((e) => (e.handlers.get(eventType)?.length ?? 0) > 0);
  }

  // ---- errors and life cycle ----

  onError(listener: (error: ExtensionError) => void): () => void {
    this.errorListeners.add(listener);
    return () => void this.errorListeners.delete(listener);
  }
  emitError(error: ExtensionError): void {
    for (const l of [...this.errorListeners]) l(error);
  }
  /** Mark the runner (and its runtime) stale: later emits throw with `message`. */
  invalidate(message?: string): void {
    this.stale = message ?? "This extension runner was replaced.";
    this.runtime.invalidate(this.stale);
    this.unsubscribe?.();
    this.uiUndo?.();
  }
  shutdown(): void {
    this.contextActions.shutdown?.();
  }

  // ---- contexts (from bindCore's actions) ----

  createContext(): Record<string, unknown> {
    const a = this.contextActions;
    const need = <K extends keyof ExtensionContextActions>(k: K): NonNullable<ExtensionContextActions[K]> => {
      const fn = a[k];
      if (!fn) throw new Error(NOT_INITIALIZED);
      return fn as NonNullable<ExtensionContextActions[K]>;
    };
    const runner = this;
    return {
      get ui() {
        return runner.uiContext;
      },
      get hasUI() {
        return runner.hasUI();
      },
      mode: this.mode,
      cwd: this.cwd,
      sessionManager: this.sessionManager,
      modelRegistry: this.modelRegistry,
      get model() {
        return a.getModel?.();
      },
      get scopedModels() {
        return a.getScopedModels?.() ?? [];
      },
      get signal() {
        return a.getSignal?.();
      },
      isProjectTrusted: () => a.isProjectTrusted?.() ?? false,
      isIdle: () => need("isIdle")(),
      abort: () => need("abort")(),
      hasPendingMessages: () => need("hasPendingMessages")(),
      shutdown: () => need("shutdown")(),
      getContextUsage: () => need("getContextUsage")(),
      compact: (options?: unknown) => need("compact")(options),
      getSystemPrompt: () => need("getSystemPrompt")(),
    };
  }

  /** The context of tool call `toolCallId`: createContext() plus `tools` and `executeTool()` (bindCore's executeTool / getCallableTools). */
  createToolContext(toolCallId: string, signal: AbortSignal | undefined): Record<string, unknown> {
    const a = this.contextActions;
    const scope: ToolCallScope = {
      get tools() {
        return (a.getCallableTools?.() ?? []) as ToolCallScope["tools"];
      },
      executeTool: async (name: string, args: unknown, options?: { signal?: AbortSignal }) => {
        if (!a.executeTool) {
          return { toolCall: { type: "toolCall", id: "", name, arguments: args ?? {} }, result: { content: [{ type: "text", text: `executeTool("${name}"): this runner has no executeTool action (bindCore)` }], details: undefined }, isError: true };
        }
        return a.executeTool(toolCallId, name, args, { signal, ...options });
      },
    } as unknown as ToolCallScope;
    const ctx = this.createContext();
    Object.defineProperty(ctx, "tools", { get: () => scope.tools, enumerable: true });
    ctx.executeTool = scope.executeTool;
    // What the kernel's wrapped extension tools read as their call scope.
    Object.defineProperty(ctx, "toolScope", { value: scope, enumerable: false });
    return ctx;
  }

  createCommandContext(): Record<string, unknown> {
    const c = this.commandActions;
    const missing = (name: string) => () => {
      throw new Error(`${name}: this runner has no command action for it (bindCommandContext)`);
    };
    return {
      ...this.createContext(),
      getSystemPromptOptions: () => this.contextActions.getSystemPromptOptions?.() ?? {},
      waitForIdle: c.waitForIdle ?? (async () => undefined),
      newSession: c.newSession ?? missing("newSession"),
      fork: c.fork ?? missing("fork"),
      navigateTree: c.navigateTree ?? missing("navigateTree"),
      switchSession: c.switchSession ?? missing("switchSession"),
      reload: c.reload ?? missing("reload"),
    };
  }

  // ---- events (through the kernel's hooks: the one event path) ----

  private hook(name: string): { promise(e: unknown): Promise<unknown>; isUsed(): boolean } | undefined {
    if (this.stale) throw new Error(this.stale);
    return (this.kernel?.hooks as Record<string, { promise(e: unknown): Promise<unknown>; isUsed(): boolean }> | undefined)?.[name];
  }

  /** Emit an event to every handler; session_before_* events answer with the first handler's `{ cancel, … }`. */
  async emit(event: { type: string; [k: string]: unknown }): Promise<any> {
    if (!event || typeof event.type !== "string") throw new TypeError("emit: the event needs a type");
    const h = this.hook(event.type);
    if (!h?.isUsed()) return undefined;
    const r = await h.promise({ ...event });
    return BAIL.has(event.type) ? r : undefined;
  }
  async emitToolCall(event: { toolCallId: string; toolName: string; input: Record<string, unknown> }): Promise<{ block?: boolean; reason?: string } | undefined> {
    const h = this.hook("tool_call");
    if (!h?.isUsed()) return undefined;
    return (await h.promise({ type: "tool_call", ...event })) as { block?: boolean; reason?: string } | undefined;
  }
  async emitToolResult(event: { toolCallId: string; toolName: string; input: Record<string, unknown>; content: unknown[]; details?: unknown; isError: boolean }): Promise<{ content?: unknown[]; details?: unknown; isError?: boolean } | undefined> {
    const h = this.hook("tool_result");
    if (!h?.isUsed()) return undefined;
    const before = { content: event.content, details: event.details, isError: event.isError };
    const out = (await h.promise({ type: "tool_result", ...event })) as typeof before;
    if (out.content === before.content && out.details === before.details && out.isError === before.isError) return undefined;
    return { content: out.content, details: out.details, isError: out.isError };
  }
  async emitUserBash(event: { command: string; excludeFromContext: boolean; cwd: string }): Promise<{ operations?: unknown; result?: unknown } | undefined> {
    const h = this.hook("user_bash");
    if (!h?.isUsed()) return undefined;
    return (await h.promise({ type: "user_bash", ...event })) as { operations?: unknown; result?: unknown } | undefined;
  }
  /** The messages after every `context` handler. */
  async emitContext(messages: unknown[]): Promise<unknown[]> {
    const h = this.hook("context");
    if (!h?.isUsed()) return messages;
    return ((await h.promise({ type: "context", messages: [...messages] })) as { messages: unknown[] }).messages;
  }
  /** The payload after every `before_provider_request` handler. */
  async emitBeforeProviderRequest(payload: unknown, model?: unknown): Promise<unknown> {
    const h = this.hook("before_provider_request");
    if (!h?.isUsed()) return payload;
    return ((await h.promise({ type: "before_provider_request", payload, model })) as { payload: unknown }).payload;
  }
  /** Transforms chain; "handled" stops. */
  async emitInput(text: string, images: unknown[] | undefined, source: string, streamingBehavior?: "steer" | "followUp"): Promise<{ action: "continue" } | { action: "handled" } | { action: "transform"; text: string; images?: unknown[] }> {
    const h = this.hook("input");
    if (!h?.isUsed()) return { action: "continue" };
    const event = { type: "input", text, images, source, ...(streamingBehavior ? { streamingBehavior } : {}) };
    const r = (await h.promise(event)) as { action?: string } | undefined;
    if (r?.action === "handled") return { action: "handled" };
    if (event.text !== text || event.images !== images) return { action: "transform", text: event.text, ...(event.images ? { images: event.images } : {}) };
    return { action: "continue" };
  }
  async emitResourcesDiscover(cwd: string, reason: "startup" | "reload"): Promise<Record<"skillPaths" | "promptPaths" | "themePaths", Array<{ path: string; extensionPath: string }>>> {
    const out = { skillPaths: [] as Array<{ path: string; extensionPath: string }>, promptPaths: [] as Array<{ path: string; extensionPath: string }>, themePaths: [] as Array<{ path: string; extensionPath: string }> };
    const h = this.hook("resources_discover");
    if (!h?.isUsed()) return out;
    const event = { type: "resources_discover", cwd, reason, results: [] as Array<Record<string, unknown> & { source: string }> };
    await h.promise(event);
    for (const r of event.results) {
      for (const k of ["skillPaths", "promptPaths", "themePaths"] as const) {
        for (const p of ([] as unknown[]).concat(r[k] ?? [])) out[k].push({ path: String(p), extensionPath: r.source });
      }
    }
    return out;
  }
}

// ---- tools ----------------------------------------------------------------------------------------

export interface WrappedAgentTool {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  execute: (toolCallId: string, params: unknown, signal?: AbortSignal, onUpdate?: AnyFn) => Promise<unknown>;
  [k: string]: unknown;
}

/** An agent tool that runs an extension tool's definition with the runner's tool context. */
export function wrapRegisteredTool(registeredTool: RegisteredTool, runner: ExtensionRunner): WrappedAgentTool {
  const def = registeredTool?.definition;
  if (!def || typeof def.name !== "string" || typeof def.execute !== "function") throw new TypeError("wrapRegisteredTool: expected a RegisteredTool ({ definition: { name, execute, … }, sourceInfo })");
  if (!(runner instanceof ExtensionRunner)) throw new TypeError(`wrapRegisteredTool("${def.name}"): the second argument must be an ExtensionRunner`);
  return {
    ...def,
    name: def.name,
    label: def.label ?? def.name,
    description: def.description,
    parameters: def.parameters,
    execute: (toolCallId, params, signal, onUpdate) => Promise.resolve(def.execute.call(def, toolCallId, params, signal, onUpdate, runner.createToolContext(toolCallId, signal))),
  };
}

export function wrapRegisteredTools(registeredTools: RegisteredTool[], runner: ExtensionRunner): WrappedAgentTool[] {
  return registeredTools.map((t) => wrapRegisteredTool(t, runner));
}
