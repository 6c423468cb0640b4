/**
 * The `ctx` handed to extension handlers, tools, commands and shortcuts. It reads the live
 * session on every access (so a ctx captured before `/new` sees the new session), and it
 * works before binding too: session-bound calls then throw "Extension runtime not initialized".
 */
import { type Kernel, createNoopUI, type ExtensionUI, chosenSessionMode } from "../../core/kernel/index.js";
import type { AgentSession, AgentSessionRuntime } from "../../core/engine/index.js";
import { plainTheme } from "./helpers.js";
import { modeFromFlags } from "./trust-event.js";
import { extensionModelRegistry } from "./model-registry-view.js";
import { buildContextEntries, buildSessionProjection, type SessionEntry } from "../../core/stores/index.js";
import type {
  CompactOptions,
  ExtensionCommandContext,
  ExtensionContext,
  ReplacedSessionContext,
} from "./types.js";

export const NOT_INITIALIZED = "Extension runtime not initialized. Action methods cannot be called during extension loading.";

/** What the context needs from the host. */
export interface ContextHost {
  readonly kernel: Kernel;
  session(): AgentSession | undefined;
  runtime(): AgentSessionRuntime | undefined;
  isIdle(): boolean;
  systemPrompt(): string;
  /** The parts the system prompt is built from (pi's BuildSystemPromptOptions). */
  systemPromptOptions(): Record<string, unknown>;
  reload(): Promise<void>;
  sendMessage(message: any, options?: any): Promise<void>;
  sendUserMessage(content: any, options?: any): Promise<void>;
}

const READONLY_METHODS = [
  "getCwd",
  "getSessionDir",
  "getSessionId",
  "getSessionFile",
  "getLeafId",
  "getLeafEntry",
  "getEntry",
  "getLabel",
  "getBranch",
  "getHeader",
  "getEntries",
  "getTree",
  "getSessionName",
  "getChildren",
] as const;

/** A read-only view of the current session's SessionManager (reads only, no appends). */
export function readonlySessionManager(current: () => unknown): ExtensionContext["sessionManager"] {
  const view: Record<string, unknown> = {};
  for (const m of READONLY_METHODS) {
    view[m] = (...args: unknown[]) => {
      const sm = current() as Record<string, unknown> | undefined;
      if (!sm) throw new Error(NOT_INITIALIZED);
      const fn = sm[m];
      if (typeof fn !== "function") throw new Error(`sessionManager.${m}() is not available for this session store`);
      return (fn as (...a: unknown[]) => unknown).apply(sm, args);
    };
  }
  // pi 1.6: the branch's context entries and its projection, built from getBranch()
  const branch = (): SessionEntry[] => (view.getBranch as () => SessionEntry[])();
  view.buildContextEntries = () => buildContextEntries(branch());
  view.buildSessionProjection = () => buildSessionProjection(branch());
  return view as unknown as ExtensionContext["sessionManager"];
}

const themed = new WeakMap<object, ExtensionUI>();

/** The UI with a theme that is never undefined (a plain one where the mode draws nothing). */
export function withTheme(ui: ExtensionUI): ExtensionUI {
  if (ui.theme) return ui;
  let w = themed.get(ui);
  if (!w) {
    w = new Proxy(ui, {
      get(target, prop, receiver) {
        if (prop === "theme") return plainTheme;
        return Reflect.get(target, prop, receiver);
      },
    });
    themed.set(ui, w);
  }
  return w;
}

export class UiSource {
  private readonly noop = new Map<string, ExtensionUI>();
  private readonly completed = new WeakMap<object, ExtensionUI>();
  constructor(private readonly kernel: Kernel) {}
  /** The mode's UI, or a no-op one whose unsupported calls are reported once under `owner`. */
  get(owner: string): ExtensionUI {
    const ui = this.kernel.service("ui");
    if (ui) {
      let c = this.completed.get(ui);
      if (!c) this.completed.set(ui, (c = completeUi(this.kernel, withTheme(ui))));
      return c;
    }
    let n = this.noop.get(owner);
    if (!n) {
      n = withTheme(createNoopUI((d) => this.kernel.diagnostics.report(d), owner));
      this.noop.set(owner, n);
    }
    return n;
  }
  hasUI(): boolean {
    const ui = this.kernel.service("ui");
    return !!ui && ui.kind !== "none";
  }
}

const PROMPTS = new Set(["select", "confirm", "input", "editor", "custom"]);

/**
 * The mode's UI as pi 1.6 extensions see it: methods a mode does not implement (yet) answer
 * like the no-op UI instead of throwing, and a blocking dialog is announced with the
 * ui_prompt_start / ui_prompt_end hooks.
 */
function completeUi(kernel: Kernel, ui: ExtensionUI): ExtensionUI {
  const fallback = createNoopUI(undefined);
  return new Proxy(ui, {
    get(target, prop, receiver) {
      const own = Reflect.get(target, prop, receiver);
      if (typeof prop !== "string") return own;
      if (own === undefined && prop in fallback) return (fallback as unknown as Record<string, unknown>)[prop];
      if (typeof own !== "function" || !PROMPTS.has(prop)) return own;
      return async (...args: unknown[]) => {
        const title = prop === "custom" ? undefined : typeof args[0] === "string" ? args[0] : undefined;
        const ev = { reason: "ui_prompt" as const, kind: prop as "select", ...(title !== undefined ? { title } : {}) };
        await kernel.hooks.ui_prompt_start.promise({ type: "ui_prompt_start", ...ev });
        try {
          return await (own as (...a: unknown[]) => unknown).apply(target, args);
        } finally {
          await kernel.hooks.ui_prompt_end.promise({ type: "ui_prompt_end", ...ev });
        }
      };
    },
  });
}

/** The abort signal of the running turn. */
function turnSignal(session: AgentSession | undefined): AbortSignal | undefined {
  return session?.signal;
}

export function createContext(host: ContextHost, ui: UiSource, owner: string): ExtensionContext {
  const kernel = host.kernel;
  const need = (): AgentSession => {
    const s = host.session();
    if (!s) throw new Error(NOT_INITIALIZED);
    return s;
  };
  const ctx: ExtensionContext & { session?: AgentSession } = {
    get ui() {
      return ui.get(owner) as ExtensionContext["ui"];
    },
    get hasUI() {
      return ui.hasUI();
    },
    get mode() {
      // Before the session exists (project_trust at start-up): the mode chosen for this run;
      // otherwise "print" (pi has no "sdk" mode).
      return host.session()?.mode ?? chosenSessionMode(kernel) ?? modeFromFlags(kernel) ?? "print";
    },
    get cwd() {
      return host.session()?.cwd ?? kernel.cwd;
    },
    sessionManager: readonlySessionManager(() => host.session()?.sessionManager),
    get modelRegistry() {
      return extensionModelRegistry(kernel, kernel.service("model-registry"));
    },
    get model() {
      return host.session()?.model;
    },
    get signal() {
      return turnSignal(host.session());
    },
    get scopedModels() {
      return (host.session()?.scopedModels ?? []).map((m) => ({ ...m }));
    },
    get thinkingLevel() {
      return host.session()?.thinkingLevel;
    },
    isProjectTrusted: () => {
      const trust = kernel.service("project-trust");
      return trust ? trust.isTrusted(host.session()?.cwd ?? kernel.cwd) : false;
    },
    isIdle: () => host.isIdle(),
    abort: () => {
      const s = host.session();
      if (s) void s.abort();
    },
    hasPendingMessages: () => (host.session()?.pendingMessageCount ?? 0) > 0,
    shutdown: () => {
      const fn = kernel.service("shutdown");
      if (typeof fn === "function") void Promise.resolve(fn()).catch((error) => kernel.diagnostics.report({ level: "error", source: owner, message: "shutdown failed", error }));
    },
    getContextUsage: () => host.session()?.getContextUsage(),
    compact: (options: CompactOptions = {}) => {
      const s = need();
      const fn = (s as unknown as { compact?: (instructions?: string) => Promise<unknown> }).compact;
      if (typeof fn !== "function") {
        options.onError?.(new Error("compaction is not available in this build (no compaction plugin)"));
        return;
      }
      void Promise.resolve()
        .then(() => fn.call(s, options.customInstructions))
        .then(
          (r) => options.onComplete?.(r),
          (e) => (options.onError ? options.onError(e instanceof Error ? e : new Error(String(e))) : kernel.diagnostics.report({ level: "error", source: owner, message: "compaction failed", error: e })),
        );
    },
    getSystemPrompt: () => host.systemPrompt(),
  };
  // The kernel's default tool ctx carried the session; tools of other plugins may still read it.
  Object.defineProperty(ctx, "session", { get: () => host.session(), enumerable: false });
  return ctx;
}

function copy<T extends object>(base: T): T {
  return Object.defineProperties({}, Object.getOwnPropertyDescriptors(base)) as T;
}

export function createCommandContext(host: ContextHost, base: ExtensionContext): ExtensionCommandContext {
  const rt = (): AgentSessionRuntime => {
    const r = host.runtime();
    if (!r || typeof (r as { newSession?: unknown }).newSession !== "function") throw new Error("session control needs a session runtime; this host has none");
    return r;
  };
  const replaced = async (withSession?: (ctx: ReplacedSessionContext) => Promise<void>) => {
    if (!withSession) return;
    const fresh = copy(createCommandContext(host, base)) as ReplacedSessionContext;
    fresh.sendMessage = (m, o) => host.sendMessage(m, o);
    fresh.sendUserMessage = (c, o) => host.sendUserMessage(c, o);
    await withSession(fresh);
  };
  const cmd = copy(base) as ExtensionCommandContext;
  Object.assign(cmd, {
    getSystemPromptOptions: () => host.systemPromptOptions(),
    waitForIdle: async () => {
      await host.session()?.waitForIdle();
    },
    newSession: async (options: Parameters<ExtensionCommandContext["newSession"]>[0] = {}) => {
      const r = await rt().newSession({ parentSession: options.parentSession, setup: options.setup as never });
      if (!r.cancelled) await replaced(options.withSession);
      return r;
    },
    fork: async (entryId: string, options: Parameters<ExtensionCommandContext["fork"]>[1] = {}) => {
      const r = await rt().fork(entryId, { position: options.position ?? "before" });
      if (!r.cancelled) await replaced(options.withSession);
      return r;
    },
    navigateTree: async (targetId: string, options?: Parameters<ExtensionCommandContext["navigateTree"]>[1]) => {
      const s = host.session();
      if (!s) throw new Error(NOT_INITIALIZED);
      const r = await s.navigateTree(targetId, options);
      return { cancelled: r.cancelled };
    },
    switchSession: async (sessionPath: string, options: { withSession?: (ctx: ReplacedSessionContext) => Promise<void> } = {}) => {
      const r = await rt().switchSession(sessionPath);
      if (!r.cancelled) await replaced(options.withSession);
      return r;
    },
    reload: () => host.reload(),
  });
  return cmd;
}
