/**
 * The SDK in process (sdk/sdk.ts): createAgentSession and its defaults (agent dir from the
 * environment, stored settings, discovered extensions, saved sessions), custom tools and the
 * tool allowlist, extension binding (session_start, "Extension runtime not initialized", MCP
 * connecting only once bound), session switching through the runtime, and clear errors for bad
 * input. Each test builds its own kernel on its own FauxModel in a temp folder.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Type } from "typebox";
import {
  createAgentSession,
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  createAgentSessionServices,
  SdkSessionRuntime,
  type CreateAgentSessionOptions,
  type CreateAgentSessionResult,
} from "../sdk/sdk.js";
import { runInteractiveMode, runPrintMode } from "../sdk/run-modes.js";
import { FauxModel, createFauxPlugin, type FauxStep } from "../plugins/faux/index.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import { SessionManager } from "../core/stores/session/session-manager.js";
import { SettingsManager } from "../core/kernel/settings.js";
import { createNoopUI, type ExtensionUI } from "../core/kernel/ui.js";
import type { AgentSessionEvent } from "../core/kernel/types.js";
import { defineTool } from "../plugins/extensions/helpers.js";
import type { ExtensionAPI } from "../plugins/extensions/types.js";

const roots: string[] = [];
const live: CreateAgentSessionResult[] = [];
afterEach(async () => {
  while (live.length) await live.pop()!.runtime.dispose();
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});

function folders() {
  const root = mkdtempSync(join(tmpdir(), "pi-sdk-test-"));
  roots.push(root);
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { root, agentDir, cwd };
}

/** The built-in plugins with the faux plugin serving `faux` (one FauxModel per kernel). */
const withFaux = (faux: FauxModel) => (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p));

async function open(opts: CreateAgentSessionOptions & { steps?: FauxStep[] } = {}) {
  const dirs = folders();
  const faux = new FauxModel({ steps: opts.steps ?? [] });
  const r = await createAgentSession({
    cwd: dirs.cwd,
    agentDir: dirs.agentDir,
    model: "faux/faux-1",
    sessionManager: SessionManager.inMemory(dirs.cwd),
    plugins: withFaux(faux),
    ...opts,
  });
  live.push(r);
  return { ...r, ...dirs, faux };
}

const textOf = (events: AgentSessionEvent[]) =>
  events
    .map((e) => (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta" ? e.assistantMessageEvent.delta : ""))
    .join("");

describe("createAgentSession: defaults", () => {
  it("finds the agent dir through the environment, uses its settings and keys, saves the session under <agentDir>/sessions", async () => {
    const { agentDir, cwd } = folders();
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", defaultThinkingLevel: "off" }));
    writeFileSync(join(agentDir, "auth.json"), JSON.stringify({ acme: { type: "api_key", key: "sk-stored" } }));
    const faux = new FauxModel({ steps: ["Hello from the faux model."] });
    const r = await createAgentSession({ cwd, env: { PI_CODING_AGENT_DIR: agentDir }, plugins: withFaux(faux) });
    live.push(r);
    expect(r.services.agentDir).toBe(resolve(agentDir));
    expect(r.services.cwd).toBe(resolve(cwd));
    expect(r.session.model?.provider).toBe("faux");
    expect(await r.services.authStorage.getApiKey("acme")).toBe("sk-stored");
    expect(r.session.getActiveToolNames()).toEqual(["read", "bash", "edit", "write"]);

    const events: AgentSessionEvent[] = [];
    r.session.subscribe((e) => void events.push(e));
    await r.session.prompt("hi");
    expect(textOf(events)).toBe("Hello from the faux model.");
    expect(r.session.sessionFile?.startsWith(join(resolve(agentDir), "sessions"))).toBe(true);
    expect(existsSync(r.session.sessionFile!)).toBe(true);
    expect(r.diagnostics.filter((d) => d.level === "error")).toEqual([]);
  });

  it("a custom app name decides the folders: .<name>/ in the project, $<NAME>_CODING_AGENT_DIR", async () => {
    const { agentDir, cwd } = folders();
    mkdirSync(join(cwd, ".mycli"));
    writeFileSync(join(cwd, ".mycli", "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-2" }));
    const faux = new FauxModel({ models: [{ id: "faux-1" }, { id: "faux-2" }] });
    // The project's model choice applies in a trusted project only.
    const r = await createAgentSession({ cwd, app: { name: "mycli" }, env: { MYCLI_CODING_AGENT_DIR: agentDir, PI_CODING_AGENT_DIR: "/nonexistent" }, plugins: withFaux(faux), trustProject: true });
    live.push(r);
    expect(r.services.agentDir).toBe(resolve(agentDir));
    expect(r.services.app.configDir).toBe(".mycli");
    expect(r.session.model?.id).toBe("faux-2");
  });

  it("settings: plain values replace the stored ones (in memory, nothing written); a SettingsManager is used as is", async () => {
    const { agentDir, cwd } = folders();
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", steeringMode: "all" }));
    const faux = new FauxModel();
    const a = await createAgentSession({ cwd, agentDir, settings: { followUpMode: "all" }, model: "faux/faux-1", sessionManager: SessionManager.inMemory(cwd), plugins: withFaux(faux) });
    live.push(a);
    expect(a.session.followUpMode).toBe("all");
    expect(a.session.steeringMode).toBe("one-at-a-time");
    a.services.settingsManager.update({ steeringMode: "all" });
    expect(a.services.settingsManager.get().steeringMode).toBe("all");
    expect(JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"))).toEqual({ defaultProvider: "faux", defaultModel: "faux-1", steeringMode: "all" });
    await a.runtime.dispose();
    live.pop();

    const stored = await SettingsManager.load({ agentDir, cwd });
    stored.setOverride("followUpMode", "all");
    const b = await createAgentSession({ cwd, agentDir, settingsManager: stored, sessionManager: SessionManager.inMemory(cwd), plugins: withFaux(faux) });
    live.push(b);
    expect(b.session.model?.id).toBe("faux-1");
    expect(b.session.steeringMode).toBe("all");
    expect(b.session.followUpMode).toBe("all");
  });
});

describe("tools", () => {
  const stamp = defineTool({
    name: "stamp",
    label: "Stamp",
    description: "Stamp a text",
    parameters: Type.Object({ text: Type.String() }),
    async execute(_id, params: { text: string }) {
      return { content: [{ type: "text" as const, text: `[stamped] ${params.text}` }], details: {} };
    },
  });

  it("customTools are registered and active; the model's call reaches them", async () => {
    const r = await open({ customTools: [stamp], steps: [{ toolCalls: [{ name: "stamp", arguments: { text: "ok" } }] }, "Stamped."] });
    expect(r.session.getActiveToolNames()).toEqual(["read", "bash", "edit", "write", "stamp"]);
    await r.session.prompt("stamp ok");
    const result = r.session.messages.find((m: any) => m.role === "toolResult") as any;
    expect(result.content[0].text).toBe("[stamped] ok");
    expect(r.session.getLastAssistantText()).toBe("Stamped.");
  });

  it("tools is an exact allowlist of names or definitions; unknown names are a warning; noTools", async () => {
    const r = await open({ tools: ["read", stamp, "nope"] });
    expect(r.session.getActiveToolNames()).toEqual(["read", "stamp"]);
    expect(r.diagnostics.some((d) => d.level === "warning" && /unknown tool "nope"/.test(d.message))).toBe(true);
    const b = await open({ noTools: "builtin", customTools: [stamp] });
    expect(b.session.getActiveToolNames()).toEqual(["stamp"]);
    const c = await open({ noTools: "all", customTools: [stamp] });
    expect(c.session.getActiveToolNames()).toEqual([]);
  });

  it("a tool without execute is refused with a message naming it", async () => {
    await expect(open({ customTools: [{ name: "broken", description: "x", parameters: {} } as any] })).rejects.toThrow('customTools: a tool needs a name and an execute() function (got "broken")');
  });
});

describe("binding extensions", () => {
  it("before bindExtensions: no session_start, extension actions throw; after: session_start once, actions work, ui and errors are bound", async () => {
    const seen: string[] = [];
    let earlyError = "";
    let api!: ExtensionAPI;
    const ext = (pi: ExtensionAPI) => {
      api = pi;
      pi.on("session_start", (e, ctx) => {
        seen.push(`start:${e.reason}:${ctx.hasUI}`);
        ctx.ui.notify("started", "info");
      });
      pi.on("agent_end", () => {
        if (seen.includes("throw")) throw new Error("handler broke");
      });
    };
    const r = await open({ extensionFactories: [ext], steps: ["one", "two", "three"] });
    expect(r.extensionsResult.extensions).toEqual([{ path: "<inline:1>", origin: "inline" }]);
    expect(r.runtime.isBound).toBe(false);
    try {
      api.sendMessage({ customType: "x", content: "early", display: false });
    } catch (e) {
      earlyError = (e as Error).message;
    }
    expect(earlyError).toMatch(/^Extension runtime not initialized/);
    // Prompting works unbound; extensions see no session_start.
    await r.session.prompt("first");
    expect(seen).toEqual([]);

    const notes: string[] = [];
    const ui: ExtensionUI = { ...createNoopUI(), kind: "rpc", notify: (m: string) => void notes.push(m) };
    const errors: string[] = [];
    await r.session.bindExtensions({ uiContext: ui, onError: (e) => errors.push(`${e.extensionPath} ${e.event}: ${e.error}`) });
    expect(r.runtime.isBound).toBe(true);
    expect(seen).toEqual(["start:startup:true"]);
    expect(notes).toEqual(["started"]);
    await r.runtime.bindExtensions();
    expect(seen).toEqual(["start:startup:true"]);

    api.appendEntry("marker", { n: 1 });
    expect((r.session.sessionManager as SessionManager).getEntries().some((e: any) => e.type === "custom" && e.customType === "marker")).toBe(true);
    seen.push("throw");
    await r.session.prompt("second");
    expect(errors).toEqual(["<inline:1> agent_end: handler failed: handler broke"]);
    // New bindings replace the old ones.
    const later: string[] = [];
    await r.runtime.bindExtensions({ onError: (e) => void later.push(e.event) });
    await r.session.prompt("third");
    expect([errors.length, later]).toEqual([1, ["agent_end"]]);
    expect(seen.filter((x) => x.startsWith("start:"))).toHaveLength(1);
  });

  it("switching sessions before binding announces nothing; after binding, each switch emits session_start and rebinds", async () => {
    const starts: string[] = [];
    const r = await open({ extensionFactories: [(pi: ExtensionAPI) => void pi.on("session_start", (e) => void starts.push(e.reason))], steps: ["a", "b"] });
    const first = r.session;
    await r.runtime.newSession();
    expect(r.runtime.session).not.toBe(first);
    expect(starts).toEqual([]);
    await expect(first.bindExtensions()).rejects.toThrow("this session was replaced; bind runtime.session instead");
    await r.runtime.session.bindExtensions();
    expect(starts).toEqual(["new"]);

    const events: string[] = [];
    let unsubscribe = r.runtime.session.subscribe((e) => void events.push(`1:${e.type}`));
    r.runtime.onRebind((s) => {
      unsubscribe();
      unsubscribe = s.subscribe((e) => void events.push(`2:${e.type}`));
    });
    await r.runtime.newSession();
    expect(starts).toEqual(["new", "new"]);
    await r.runtime.session.prompt("after the switch");
    expect(events.filter((e) => e.startsWith("2:agent_end"))).toHaveLength(1);
    expect(events.filter((e) => e.startsWith("1:"))).toEqual([]);
    expect(r.runtime.session.mode).toBe("print");
  });

  it("MCP servers connect only once the host binds", async () => {
    const stdio = { command: process.execPath, args: [resolve("tests/fixtures/mcp/stdio-server.mjs")] };
    const r = await open({ settings: { mcpServers: { demo: stdio }, mcp: { connectTimeoutMs: 120_000, toolMode: "auto" } } });
    const mcp = r.services.kernel.service("mcp")!;
    expect(mcp.list()).toEqual([]);
    expect(r.session.getActiveToolNames().some((n) => n.startsWith("mcp__"))).toBe(false);
    await r.runtime.bindExtensions();
    await mcp.whenSettled();
    expect(mcp.list().map((s) => [s.name, s.status])).toEqual([["demo", "connected"]]);
    expect(r.session.getActiveToolNames()).toContain("mcp__demo__echo");
  });
});

describe("services and runtimes", () => {
  it("one services object holds one live runtime; after dispose it can hold another", async () => {
    const { agentDir, cwd } = folders();
    const faux = new FauxModel({ steps: ["x"] });
    const services = await createAgentSessionServices({ cwd, agentDir, plugins: withFaux(faux) });
    const a = await createAgentSessionFromServices({ services, model: "faux/faux-1", sessionManager: SessionManager.inMemory(cwd) });
    await expect(createAgentSessionFromServices({ services })).rejects.toThrow(/already hold a live session runtime/);
    await a.runtime.dispose();
    const rt = await createAgentSessionRuntime({ services, model: "faux/faux-1", sessionManager: SessionManager.inMemory(cwd) });
    expect(rt).toBeInstanceOf(SdkSessionRuntime);
    expect(rt.session.model?.id).toBe("faux-1");
    await rt.dispose();
  });

  it("a resumed session's model comes back; one that cannot be restored gives modelFallbackMessage", async () => {
    const { agentDir, cwd } = folders();
    const dir = join(agentDir, "s");
    const sm = SessionManager.create(cwd, dir);
    sm.appendModelChange("acme", "gone-model");
    sm.appendMessage({ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 } as any);
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hello" }], api: "x", provider: "acme", model: "gone-model", usage: {} as any, stopReason: "stop", timestamp: 2 } as any);
    const file = sm.getSessionFile()!;
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
    const r = await createAgentSession({ cwd, agentDir, sessionManager: SessionManager.open(file), plugins: withFaux(new FauxModel()) });
    live.push(r);
    expect(r.session.messages).toHaveLength(2);
    expect(r.session.model?.id).toBe("faux-1");
    expect(r.modelFallbackMessage).toBe("could not restore the session's model acme/gone-model; using faux/faux-1");
    await r.runtime.dispose();
    live.pop();

    const faux2 = new FauxModel({ models: [{ id: "faux-1" }, { id: "faux-2", reasoning: true }] });
    const sm2 = SessionManager.create(cwd, dir);
    sm2.appendModelChange("faux", "faux-2");
    sm2.appendThinkingLevelChange("high");
    sm2.appendMessage({ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 } as any);
    sm2.appendMessage({ role: "assistant", content: [{ type: "text", text: "hello" }], api: "faux", provider: "faux", model: "faux-2", usage: {} as any, stopReason: "stop", timestamp: 2 } as any);
    const back = await createAgentSession({ cwd, agentDir, sessionManager: SessionManager.open(sm2.getSessionFile()!), plugins: withFaux(faux2) });
    live.push(back);
    expect([back.session.model?.id, back.session.thinkingLevel, back.modelFallbackMessage]).toEqual(["faux-2", "high", undefined]);
  });

  it("never takes stdout over nor picks a mode; a runner whose mode plugin is missing says so", async () => {
    const write = process.stdout.write;
    const r = await open({ steps: ["x"], plugins: (b: PluginManifest[]) => b.filter((p) => p.name !== "mode-interactive") });
    await r.runtime.bindExtensions();
    await r.session.prompt("hi");
    expect(process.stdout.write).toBe(write);
    expect(r.session.mode).toBe("print");
    expect(r.services.kernel.hasService("ui")).toBe(false);
    await expect(runInteractiveMode(r.runtime)).rejects.toThrow("the interactive mode is not installed: its plugin is not among this runtime's plugins");
  });

  it("bad input: clear errors naming the option", async () => {
    const { agentDir, cwd } = folders();
    await expect(createAgentSession({ cwd, agentDir, settings: 5 as any })).rejects.toThrow("settings must be a SettingsManager or an object of setting values");
    await expect(createAgentSession({ cwd, agentDir, plugins: (() => "x") as any })).rejects.toThrow("plugins must be a list of plugin manifests");
    await expect(createAgentSession({ cwd, agentDir, app: { name: "bad name" } })).rejects.toThrow("app.name must be a word");
    await expect(createAgentSessionRuntime((() => undefined) as any)).rejects.toThrow("the factory must return what createAgentSessionFromServices() returns");
    await expect(createAgentSessionFromServices({} as any)).rejects.toThrow("`services` (from createAgentSessionServices) is required");
    await expect(createAgentSession({ cwd, agentDir, sessionManager: {} as any, plugins: withFaux(new FauxModel()) })).rejects.toThrow("sessionManager must be a SessionManager");
    await expect(createAgentSession({ cwd, agentDir, model: "nope/none", plugins: withFaux(new FauxModel()) })).rejects.toThrow(/nope\/none/);
    const r = await open();
    await expect(runPrintMode(r.runtime, { mode: "xml" as any })).rejects.toThrow('runPrintMode: mode must be "text" or "json" (got "xml")');
    expect(readdirSync(cwd)).toEqual([]);
  });
});
