/**
 * The kernel: the hook table, the registries, diagnostics, settings and services.
 *
 * Plugins get a `PluginApi` (a view of the kernel scoped to the plugin's name) so every tap
 * and registration is attributed and can be undone if the plugin fails.
 */
import { createHooks, tapHook, type HookHandler, type HookName, type Hooks } from "./hooks.js";
import { Registry, type RegisterOptions } from "./registry.js";
import { ToolRegistry, type ToolWrapper } from "./tool-registry.js";
import { OrderedRegistry } from "./ordered-registry.js";
import { KERNEL_API_VERSION } from "./api-version.js";
import { redactDiagnostic } from "./redact.js";
import { PluginTeardowns } from "./plugin-teardown.js";
import type { AnyModel, Diagnostic, ImageContent, ToolDefinition } from "./types.js";
import type { AssistantMessage, AssistantMessageEvent, Context, SimpleStreamOptions } from "@mariozechner/pi-ai";
import type { SettingsManager } from "./settings.js";
import type { AppConfig } from "./config.js";
import type { KernelServices, ServiceName } from "./services.js";
import type { CommandContext, RuntimeHandle } from "./contracts.js";

// ---- registry value types ---------------------------------------------------------------------

/** An async iterable of streaming events whose `result()` is the final message (pi-ai's shape). */
export interface AssistantStream extends AsyncIterable<AssistantMessageEvent> {
  result(): Promise<AssistantMessage>;
}
export type StreamFn = (model: AnyModel, context: Context, options?: SimpleStreamOptions) => AssistantStream;

/** Streaming for one wire API ("openai-completions", "anthropic-messages", a custom one). */
export interface ApiProvider {
  api: string;
  /** May load its implementation lazily; called once per request. */
  stream: StreamFn | ((...a: Parameters<StreamFn>) => Promise<AssistantStream>);
  /** Load the implementation ahead of the first request (called when the process is idle). */
  preload?(): Promise<void>;
}

export interface ModelDefinition {
  id: string;
  name?: string;
  api?: string;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  contextWindow?: number;
  maxTokens?: number;
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  baseUrl?: string;
  thinkingLevelMap?: Record<string, string | null>;
}

/** A provider's models as models.json or registerProvider() describe them. */
export interface ProviderModels {
  name: string;
  baseUrl?: string;
  api?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  authHeader?: boolean;
  models?: ModelDefinition[];
  /** Applied to catalog models of this provider (models.json "modelOverrides"). */
  modelOverrides?: Record<string, Partial<ModelDefinition>>;
  /** A custom stream function for this provider's API (registerProvider with streamSimple). */
  streamSimple?: StreamFn;
  /** The provider needs no key (a local or scripted one): its models are always available. */
  keyless?: boolean;
}

export interface SlashCommand {
  name: string;
  description?: string;
  source?: "builtin" | "extension" | "prompt" | "skill" | "plugin";
  location?: "user" | "project" | "path";
  path?: string;
  handler(args: string, ctx: CommandContext): unknown | Promise<unknown>;
  getArgumentCompletions?(prefix: string): unknown;
}

export interface SubcommandContext {
  kernel: Kernel;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
export interface Subcommand {
  name: string;
  description: string;
  usage?: string;
  aliases?: string[];
  /** Text for `<app> <name> --help` (default: usage and description). */
  help?: string | (() => string);
  /** Returns the exit code. */
  run(args: string[], ctx: SubcommandContext): Promise<number | void> | number | void;
}

export interface CliFlag {
  name: string;
  description: string;
  type: "boolean" | "string" | "number" | "array";
  alias?: string | string[];
  default?: unknown;
  choices?: string[];
  hidden?: boolean;
  /** Shown as the value placeholder in help. */
  placeholder?: string;
  /** Help section. */
  group?: string;
  /**
   * The flag answers and exits: when it is given (not false), the CLI runs this before any
   * session and prints what it returns. A throw is a usage error ("--name: message").
   */
  action?: (value: unknown, ctx: FlagActionContext) => string | Promise<string>;
}
export interface FlagActionContext {
  kernel: Kernel;
  cwd: string;
  /** The positional words of the command line. */
  positionals: string[];
}

export interface ModeContext {
  kernel: Kernel;
  argv: Record<string, unknown>;
  /** Messages from the command line (first one already merged with @file text and stdin). */
  messages: string[];
  images: ImageContent[];
  /** The session runtime: the current session, switching (/new, resume, fork), rebind. */
  runtime: RuntimeHandle;
}

/** What a mode's claim is decided on (core/kernel/modes.ts). */
export interface ModeClaimInput {
  /** Parsed flags (pass 2). */
  flags: Record<string, unknown>;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  /** Text was piped on stdin (it became the first message). */
  pipedInput: boolean;
}

/**
 * A run mode, as its plugin registers it in the mode registry (core/kernel/modes.ts resolves it).
 * `--mode <value>` picks the mode listing that value; without --mode, the modes whose
 * `claims()` accept the run compete by `priority`.
 */
export interface ModeDefinition {
  name: string;
  description?: string;
  /** The `--mode` values that choose this mode (default: its name). */
  modeFlag?: string[];
  /** Whether this mode claims a run given without --mode (argv, TTYs, piped input). */
  claims?(input: ModeClaimInput): boolean;
  /** Among modes that claim a run, the highest priority wins (default 0). */
  priority?: number;
  /** Whether the mode shows a UI a person answers (dialogs, the session picker, /model). */
  hasUI?: boolean;
  /** Where its input comes from: the `source` of the input hook. */
  input?: "interactive" | "rpc" | "print" | "sdk";
  /** The mode reads stdin itself (a protocol): piped text is not a message, @file arguments are refused. */
  ownsStdin?: boolean;
  /** The name sessions record (`ctx.mode`); default: the mode's name. */
  sessionMode?: string;
  /**
   * Called once when the mode is chosen, before the session is built: provide the "ui" (and
   * "shutdown") service, open the output, so session_start handlers already reach the user.
   */
  prepare?(kernel: Kernel): void;
  /** Returns the exit code. */
  run(ctx: ModeContext): Promise<number>;
}

export interface MessageRenderer {
  customType: string;
  render: (...args: any[]) => unknown;
}
/**
 * Chooses the renderers for calls to a tool: returns them for `toolName`, or `next()` (the
 * resolvers registered after this one, then the tool's own renderers).
 */
export type ToolRendererResolver = (toolName: string, next: () => unknown) => unknown;
/** Draws custom session entries of one `customType` in the transcript. */
export interface EntryRenderer {
  customType: string;
  render: (entry: unknown, options: unknown, theme: unknown) => unknown;
}
export interface RegisteredMarkdownTransformer {
  transform: (markdown: string, context: unknown) => unknown;
  options?: unknown;
}
export interface Shortcut {
  key: string;
  description?: string;
  handler: (ctx: CommandContext) => unknown;
}

// ---- diagnostics ------------------------------------------------------------------------------

export class DiagnosticLog {
  private readonly items: Diagnostic[] = [];
  private readonly listeners = new Set<(d: Diagnostic) => void>();

  report(d: Diagnostic): void {
    d = redactDiagnostic(d); // a credential the CLI knows never reaches a diagnostic
    this.items.push(d);
    for (const l of this.listeners) {
      try {
        l(d);
      } catch {
        /* a failing listener must not hide the diagnostic from others */
      }
    }
  }
  list(): readonly Diagnostic[] {
    return this.items;
  }
  /** Subscribe; `replay` first delivers what was reported already. */
  subscribe(fn: (d: Diagnostic) => void, replay = false): () => void {
    if (replay) for (const d of this.items) fn(d);
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.hook ? `${d.source} (${d.hook})` : d.source;
  const err = d.error instanceof Error ? `: ${d.error.message}` : d.error !== undefined ? `: ${String(d.error)}` : "";
  return `${d.level}: ${where}: ${d.message}${err}`;
}

// ---- the kernel -------------------------------------------------------------------------------

export interface KernelOptions {
  app: AppConfig;
  cwd: string;
  agentDir: string;
  settings: SettingsManager;
}

export class Kernel {
  readonly apiVersion = KERNEL_API_VERSION;
  readonly diagnostics = new DiagnosticLog();
  readonly hooks: Readonly<Hooks>;

  readonly tools: ToolRegistry;
  readonly providers: Registry<ApiProvider>;
  readonly models: Registry<ProviderModels>;
  readonly commands: Registry<SlashCommand>;
  readonly subcommands: Registry<Subcommand>;
  readonly flags: Registry<CliFlag>;
  readonly modes: Registry<ModeDefinition>;
  readonly messageRenderers: Registry<MessageRenderer>;
  /** Tool renderer resolvers, in registration order (the first is asked first). */
  readonly toolRenderers = new OrderedRegistry<ToolRendererResolver>("tool renderer");
  /** Entry renderers, in registration order (for a custom type, the last one registered draws). */
  readonly entryRenderers = new OrderedRegistry<EntryRenderer>("entry renderer");
  readonly markdownTransformers = new OrderedRegistry<RegisteredMarkdownTransformer>("markdown transformer");
  readonly shortcuts: Registry<Shortcut>;

  readonly app: AppConfig;
  readonly cwd: string;
  readonly agentDir: string;
  readonly settings: SettingsManager;

  private readonly services = new Map<string, { value: unknown; source: string }>();
  private binding: RuntimeHandle | undefined;
  /** Plugins' teardown steps (manifest `teardown`, `api.onClose`), run by dispose(). */
  readonly teardowns: PluginTeardowns;

  constructor(opts: KernelOptions) {
    this.app = opts.app;
    this.cwd = opts.cwd;
    this.agentDir = opts.agentDir;
    this.settings = opts.settings;
    const report = (d: Diagnostic) => this.diagnostics.report(d);
    this.hooks = createHooks(({ plugin, hook, error }) =>
      report({ level: "error", source: plugin, hook, message: `handler failed`, error }),
    );
    this.tools = new ToolRegistry(report);
    this.providers = new Registry("provider API", report);
    this.models = new Registry("model provider", report);
    this.commands = new Registry("slash command", report);
    this.subcommands = new Registry("subcommand", report);
    this.flags = new Registry("CLI flag", report);
    this.modes = new Registry("mode", report);
    this.messageRenderers = new Registry("message renderer", report);
    this.shortcuts = new Registry("shortcut", report);
    this.teardowns = new PluginTeardowns(report);
  }

  /** Run the plugins' teardown steps in reverse order; resolves with the failures (also reported). */
  dispose(timeoutMs?: number): Promise<Diagnostic[]> {
    return this.teardowns.run(timeoutMs);
  }

  /** A view of the kernel for one plugin or extension; everything it registers is attributed to `source`. */
  scope(source: string): PluginApi {
    return new PluginApi(this, source);
  }

  // ---- services: values plugins provide to each other, typed by key (core/kernel/services.ts) ----

  provide<K extends ServiceName>(name: K, value: KernelServices[K], source: string): () => void {
    const existing = this.services.get(name);
    if (existing && existing.source !== source) {
      this.diagnostics.report({
        level: "warning",
        source,
        message: `service "${name}" from ${source} replaces the one from ${existing.source}`,
      });
    }
    const entry = { value, source };
    this.services.set(name, entry);
    return () => {
      if (this.services.get(name) === entry) this.services.delete(name);
    };
  }
  service<K extends ServiceName>(name: K): KernelServices[K] | undefined {
    return this.services.get(name)?.value as KernelServices[K] | undefined;
  }
  hasService(name: ServiceName): boolean {
    return this.services.has(name);
  }

  // ---- binding: the live session runtime ----

  bind(runtime: RuntimeHandle): void {
    this.binding = runtime;
  }
  get isBound(): boolean {
    return this.binding !== undefined;
  }
  /** The bound session runtime; throws an error naming `action` before binding. */
  bound(action: string): RuntimeHandle {
    if (this.binding === undefined) {
      throw new Error(`${action} needs a live session; it cannot run during setup (the kernel is not bound yet)`);
    }
    return this.binding;
  }
}

/**
 * A plugin's (or an extension's) view of the kernel. It records what it registers so the host
 * can undo it all when setup fails or an extension is reloaded.
 */
export class PluginApi {
  private readonly disposers: Array<() => void> = [];

  constructor(
    readonly kernel: Kernel,
    readonly name: string,
  ) {}

  get hooks(): Readonly<Hooks> {
    return this.kernel.hooks;
  }

  private keep(d: (() => void) | undefined): (() => void) | undefined {
    if (d) this.disposers.push(d);
    return d;
  }

  /** Tap a hook; the tap is named after this plugin (errors are attributed to it). */
  on<N extends HookName>(hook: N, handler: HookHandler<N>, opts: { stage?: number } = {}): () => void {
    return this.keep(tapHook(this.kernel.hooks as Hooks, hook, { name: this.name, stage: opts.stage }, handler))!;
  }

  registerTool(tool: ToolDefinition, opts?: RegisterOptions) {
    return this.keep(this.kernel.tools.register(tool, this.name, opts));
  }
  wrapTool(name: string, wrapper: ToolWrapper) {
    return this.keep(this.kernel.tools.wrap(name, wrapper, this.name));
  }
  registerApiProvider(p: ApiProvider, opts?: RegisterOptions) {
    return this.keep(this.kernel.providers.register(p.api, p, this.name, opts));
  }
  registerModels(p: ProviderModels, opts?: RegisterOptions) {
    return this.keep(this.kernel.models.register(p.name, p, this.name, opts));
  }
  registerCommand(c: SlashCommand, opts?: RegisterOptions) {
    return this.keep(this.kernel.commands.register(c.name, c, this.name, opts));
  }
  registerSubcommand(c: Subcommand) {
    const d = this.keep(this.kernel.subcommands.register(c.name, c, this.name));
    for (const a of c.aliases ?? []) this.keep(this.kernel.subcommands.register(a, c, this.name));
    return d;
  }
  registerFlag(f: CliFlag) {
    return this.keep(this.kernel.flags.register(f.name, f, this.name));
  }
  registerMode(m: ModeDefinition) {
    return this.keep(this.kernel.modes.register(m.name, m, this.name));
  }
  registerMessageRenderer(r: MessageRenderer) {
    return this.keep(this.kernel.messageRenderers.register(r.customType, r, this.name));
  }
  registerToolRenderer(resolve: ToolRendererResolver) {
    return this.keep(this.kernel.toolRenderers.add(resolve, this.name))!;
  }
  registerEntryRenderer(r: EntryRenderer) {
    return this.keep(this.kernel.entryRenderers.add(r, this.name))!;
  }
  registerMarkdownTransformer(t: RegisteredMarkdownTransformer) {
    return this.keep(this.kernel.markdownTransformers.add(t, this.name))!;
  }
  registerShortcut(s: Shortcut) {
    return this.keep(this.kernel.shortcuts.register(s.key, s, this.name));
  }
  provide<K extends ServiceName>(service: K, value: KernelServices[K]) {
    return this.keep(this.kernel.provide(service, value, this.name));
  }
  service<K extends ServiceName>(service: K): KernelServices[K] | undefined {
    return this.kernel.service(service);
  }
  /** Run `fn` when the kernel is disposed (reverse order of registration; failures are reported with this name). */
  onClose(fn: () => void | Promise<void>): () => void {
    return this.keep(this.kernel.teardowns.add(this.name, fn))!;
  }
  report(level: Diagnostic["level"], message: string, error?: unknown, hook?: string): void {
    this.kernel.diagnostics.report({ level, source: this.name, message, error, hook });
  }

  /** Undo every tap and registration made through this view. */
  dispose(): void {
    while (this.disposers.length) {
      try {
        this.disposers.pop()!();
      } catch {
        /* keep undoing the rest */
      }
    }
  }
}
