/**
 * A test harness for extension authors: a real kernel (built-in tools, permission gate,
 * extensions) with the scripted faux model, an in-memory session, and the extensions under
 * test loaded exactly as `pi -e` would load them. Nothing touches the user's agent folder.
 *
 *   const h = await createExtensionHarness({ extensions: ["./src/index.ts"], steps: [...] });
 *   await h.prompt("hello");
 *   h.lastAssistantText(); h.toolResults(); h.diagnostics;
 *   await h.dispose();
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineApp } from "../core/kernel/config.js";
import { Kernel } from "../core/kernel/kernel.js";
import { PluginHost } from "../core/kernel/plugin-host.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import { SettingsManager, type Settings } from "../core/kernel/settings.js";
import { AgentSession, type SessionMode } from "../core/engine/agent-session.js";
import { AgentSessionRuntime } from "../core/engine/runtime.js";
import { SessionManager } from "../core/stores/session/session-manager.js";
import { AuthStorage } from "../core/stores/models/auth-storage.js";
import { ModelRegistry } from "../core/stores/models/model-registry.js";
import type { ExtensionUI } from "../core/kernel/ui.js";
import type { AgentSessionEvent, AssistantMessage, Diagnostic, ToolResultMessage } from "../core/kernel/types.js";
import { messageText } from "../core/engine/agent/messages.js";
import { FauxModel, createFauxPlugin, type FauxStep } from "../plugins/faux/index.js";
import tools, { DEFAULT_ACTIVE_TOOLS } from "../plugins/tools/index.js";
import trust from "../plugins/trust/index.js";
import permissionGate from "../plugins/permission-gate/index.js";
import extensions from "../plugins/extensions/index.js";
import type { ExtensionFactory } from "../plugins/extensions/types.js";
import { modelSource } from "./session-setup.js";

export interface ExtensionHarnessOptions {
  /** Extension files (paths relative to the process's cwd, or file URLs) or inline factories. */
  extensions?: Array<string | URL | ExtensionFactory>;
  /** The faux model's script (see plugins/faux): strings, responses, or functions. */
  steps?: FauxStep[];
  /** Working folder of the session (default: a fresh temp folder). */
  cwd?: string;
  /** Settings (in memory). */
  settings?: Partial<Settings>;
  /** Values of CLI flags, e.g. { plan: true } for an extension's --plan. */
  flags?: Record<string, unknown>;
  /** A UI for dialogs (default: none, as in print mode). */
  ui?: ExtensionUI;
  /** Session mode (default "sdk"). */
  mode?: SessionMode;
  /** More kernel plugins. */
  plugins?: PluginManifest[];
}

export interface ExtensionHarness {
  kernel: Kernel;
  runtime: AgentSessionRuntime;
  readonly session: AgentSession;
  faux: FauxModel;
  cwd: string;
  /** Every session event, in order. */
  events: AgentSessionEvent[];
  /** Everything reported: extension load errors, handler failures, permission-gate blocks. */
  diagnostics: Diagnostic[];
  prompt(text: string): Promise<void>;
  lastAssistantText(): string | undefined;
  toolResults(): ToolResultMessage[];
  dispose(): Promise<void>;
}

function toPath(p: string | URL): string {
  if (p instanceof URL) return fileURLToPath(p);
  if (p.startsWith("file:")) return fileURLToPath(p);
  return isAbsolute(p) ? p : resolve(process.cwd(), p);
}

export async function createExtensionHarness(opts: ExtensionHarnessOptions = {}): Promise<ExtensionHarness> {
  const root = mkdtempSync(join(tmpdir(), "pi-ext-harness-"));
  const agentDir = join(root, "agent");
  const cwd = opts.cwd ?? join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  let disposed = false;
  try {
    const settings = SettingsManager.inMemory({ retry: { enabled: false, maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 }, ...opts.settings } as Partial<Settings>);
    const kernel = new Kernel({ app: defineApp("pi", "0.0.0-harness"), cwd, agentDir, settings });
    const diagnostics: Diagnostic[] = [];
    kernel.diagnostics.subscribe((d) => diagnostics.push(d), true);

    const paths = (opts.extensions ?? []).filter((e): e is string | URL => typeof e !== "function").map(toPath);
    const factories = (opts.extensions ?? []).filter((e): e is ExtensionFactory => typeof e === "function");
    kernel.provide("argv", { flags: { "no-extensions": true, extension: paths, ...opts.flags }, positionals: [], unknown: [] }, "harness");
    if (factories.length) kernel.provide("extension-factories", factories, "harness");
    if (opts.ui) kernel.provide("ui", opts.ui, "harness");

    const faux = new FauxModel({ steps: opts.steps ?? [] });
    const host = new PluginHost(kernel);
    await host.load([createFauxPlugin(faux), tools, trust, permissionGate, extensions, ...(opts.plugins ?? [])].map((manifest) => ({ manifest, origin: "harness", builtin: true })));
    await kernel.hooks.kernel_ready.promise({ type: "kernel_ready" });

    const registry = ModelRegistry.forKernel(kernel, { authStorage: AuthStorage.inMemory() });
    kernel.provide("model-registry", registry, "harness");
    const model = registry.find("faux", "faux-1");
    const active = [...DEFAULT_ACTIVE_TOOLS, ...kernel.tools.describe().filter((t) => t.source !== "tools").map((t) => t.name)];
    const mode = opts.mode ?? "sdk";
    const runtime = await AgentSessionRuntime.create(
      kernel,
      async ({ sessionManager, cwd: sessionCwd, previous }) =>
        new AgentSession({
          kernel,
          sessionManager,
          models: modelSource(registry),
          cwd: sessionCwd,
          mode,
          model: previous?.model ?? model,
          activeTools: previous ? previous.getActiveToolNames() : active,
        }),
      SessionManager.inMemory(cwd),
      { cwd },
    );
    const events: AgentSessionEvent[] = [];
    let unsubscribe = runtime.session.subscribe((e) => void events.push(e));
    runtime.onRebind((s) => {
      unsubscribe();
      unsubscribe = s.subscribe((e) => void events.push(e));
    });

    return {
      kernel,
      runtime,
      get session() {
        return runtime.session;
      },
      faux,
      cwd,
      events,
      diagnostics,
      async prompt(text) {
        await runtime.session.prompt(text);
      },
      lastAssistantText() {
        const last = [...runtime.session.messages].reverse().find((m) => (m as { role: string }).role === "assistant") as AssistantMessage | undefined;
        return last ? messageText(last) : undefined;
      },
      toolResults() {
        return runtime.session.messages.filter((m) => (m as { role: string }).role === "toolResult") as ToolResultMessage[];
      },
      async dispose() {
        if (disposed) return;
        disposed = true;
        try {
          await runtime.dispose();
        } finally {
          unsubscribe();
          rmSync(root, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
