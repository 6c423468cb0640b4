/**
 * A kernel for tests: chosen plugins plus the faux provider with a script, an in-memory
 * session store and an AgentSession on the faux model. No files outside a temp folder.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kernel } from "../../core/kernel/kernel.js";
import { PluginHost } from "../../core/kernel/plugin-host.js";
import type { PluginManifest } from "../../core/kernel/plugin.js";
import { SettingsManager, type Settings } from "../../core/kernel/settings.js";
import { defineApp } from "../../core/kernel/config.js";
import { AgentSession, type SessionMode } from "../../core/engine/agent-session.js";
import { SessionManager } from "../../core/stores/session/session-manager.js";
import { AuthStorage } from "../../core/stores/models/auth-storage.js";
import { ModelRegistry } from "../../core/stores/models/model-registry.js";
import { FauxModel, createFauxPlugin, type FauxStep } from "../../plugins/faux/index.js";
import { modelSource } from "../../sdk/session-setup.js";
import type { AgentSessionEvent, ToolDefinition } from "../../core/kernel/types.js";
import { AgentSessionRuntime, type SessionBuildInput, type SessionFactory } from "../../core/engine/runtime.js";
import type { RuntimeHandle } from "../../core/kernel/contracts.js";

export interface TestKernelOptions {
  plugins?: PluginManifest[];
  steps?: FauxStep[];
  settings?: Partial<Settings>;
  tools?: ToolDefinition[];
  activeTools?: string[];
  mode?: SessionMode;
  persist?: boolean;
  /**
   * Build the session through an AgentSessionRuntime (bound to the kernel; `runtime` in the
   * result; `events` then follows every session the runtime switches to). A function wraps the
   * default factory (to make a build fail, for instance).
   */
  runtime?: boolean | ((input: SessionBuildInput, build: SessionFactory) => Promise<AgentSession>);
}

export async function createTestKernel(opts: TestKernelOptions = {}) {
  const root = mkdtempSync(join(tmpdir(), "pi-test-kernel-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const settings = SettingsManager.inMemory({ retry: { enabled: true, maxRetries: 3, baseDelayMs: 1, maxDelayMs: 10 }, ...opts.settings } as Partial<Settings>);
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0-test"), cwd, agentDir, settings });
  const faux = new FauxModel({ steps: opts.steps ?? [] });
  const host = new PluginHost(kernel);
  await host.load([createFauxPlugin(faux), ...(opts.plugins ?? [])].map((manifest) => ({ manifest, origin: "test", builtin: true })));
  for (const t of opts.tools ?? []) kernel.scope("test").registerTool(t);
  const registry = ModelRegistry.forKernel(kernel, { authStorage: AuthStorage.inMemory() });
  const model = registry.find("faux", "faux-1")!;
  SessionManager.setDefaultRoot(join(agentDir, "sessions"));
  const sessionManager = opts.persist ? SessionManager.create(cwd) : SessionManager.inMemory(cwd);
  const events: AgentSessionEvent[] = [];
  let session: AgentSession;
  let runtime: AgentSessionRuntime | undefined;
  if (opts.runtime) {
    const build: SessionFactory = async (input) =>
      new AgentSession({
        kernel,
        sessionManager: input.sessionManager,
        models: modelSource(registry),
        cwd: input.cwd,
        mode: opts.mode ?? "sdk",
        model: input.previous?.model ?? model,
        thinkingLevel: input.previous?.thinkingLevel,
        activeTools: input.previous?.getActiveToolNames() ?? opts.activeTools ?? kernel.tools.names(),
      });
    const wrap = opts.runtime;
    const factory: SessionFactory = typeof wrap === "function" ? (input) => wrap(input, build) : build;
    runtime = await AgentSessionRuntime.create(kernel, factory, sessionManager, { cwd });
    runtime.onRebind((s) => void s.subscribe((e) => void events.push(e)));
    session = runtime.session;
  } else {
    session = new AgentSession({
      kernel,
      sessionManager,
      models: modelSource(registry),
      cwd,
      mode: opts.mode ?? "sdk",
      model,
      activeTools: opts.activeTools ?? kernel.tools.names(),
    });
    kernel.bind({ session } as unknown as RuntimeHandle); // the one part of a runtime these tests use
  }
  session.subscribe((e) => void events.push(e));
  return {
    kernel,
    host,
    faux,
    session,
    runtime,
    registry,
    events,
    cwd,
    agentDir,
    types: () => events.map((e) => e.type),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A tool for tests: records calls, waits `ms`, answers `name:arg`. */
export function echoTool(name = "echo", ms = 0, log: string[] = []): ToolDefinition {
  return {
    name,
    description: `echo tool ${name}`,
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(_id, params: { text: string }, signal) {
      log.push(`start ${name}:${params.text}`);
      if (ms) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, ms);
          signal?.addEventListener("abort", () => {
            clearTimeout(t);
            reject(new Error("aborted"));
          });
        });
      }
      log.push(`end ${name}:${params.text}`);
      return { content: [{ type: "text", text: `${name}:${params.text}` }] };
    },
  };
}
