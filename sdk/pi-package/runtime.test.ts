/**
 * The SDK runtime exports of the pi package, imported from the package entry, over this
 * project's machinery, name by name: parseArgs, ModelRuntime / CredentialSynchronizationError / resolveCliModel / resolveModelScopeWithDiagnostics,
 * DefaultResourceLoader, DefaultPackageManager, discoverAndLoadExtensions, createExtensionRuntime,
 * ExtensionRunner, wrapRegisteredTool(s). (The e2e host script is in tests/sdk-host.e2e.test.ts.)
 */
import {
  parseArgs,
  CredentialSynchronizationError,
  ModelRuntime,
  resolveCliModel,
  resolveModelScopeWithDiagnostics,
  DefaultResourceLoader,
  DefaultPackageManager,
  ExtensionRunner,
  createExtensionRuntime,
  discoverAndLoadExtensions,
  wrapRegisteredTool,
  wrapRegisteredTools,
  createAgentSession,
  type LoadExtensionsResult,
  type ResourceLoader,
} from "../index.js";
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SettingsManager } from "../../core/kernel/settings.js";
import { SessionManager } from "../../core/stores/session/session-manager.js";
import type { PluginManifest } from "../../core/kernel/plugin.js";
import { FauxModel, createFauxPlugin } from "../../plugins/faux/index.js";

let root: string;
const write = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "sdk-runtime-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(TRACE, { force: true });
});

describe("parseArgs", () => {
  it("gives 1.6's Args for a command line: flags, messages, @files, unknown flags with values", () => {
    const a = parseArgs(["-p", "--model", "openai/gpt-4o:high", "--thinking", "high", "@a.txt", "hello", "world"]);
    expect({ ...a, unknownFlags: [...a.unknownFlags] }).toEqual({ messages: ["hello", "world"], fileArgs: ["a.txt"], unknownFlags: [], diagnostics: [], print: true, model: "openai/gpt-4o:high", thinking: "high" });

    const b = parseArgs(["--models", "a,b", "--tools", "read,bash", "-e", "x.ts", "-e", "y.ts", "--no-session", "--plan", "--foo", "bar", "--mode", "json"]);
    expect([...b.unknownFlags]).toEqual([["plan", true], ["foo", "bar"]]);
    expect(b).toMatchObject({ models: ["a", "b"], tools: ["read", "bash"], extensions: ["x.ts", "y.ts"], noSession: true, mode: "json", messages: [] });
  });

  it("reports bad values as diagnostics and keeps going", () => {
    const a = parseArgs(["--thinking", "bogus", "--mode", "xml", "-c", "--session-id", "abc", "-nc", "--list-models", "--no-mcp", "--append-system-prompt", "A", "--append-system-prompt", "B", "-zz", "--", "-not-a-flag", "@f"]);
    expect(a.diagnostics).toEqual([
      { type: "error", message: "Unknown option: -zz" },
      { type: "warning", message: 'Invalid thinking level "bogus". Valid values: off, minimal, low, medium, high, xhigh, max' },
      { type: "error", message: 'Invalid mode "xml". Valid values: text, json, rpc' },
    ]);
    expect(a).toMatchObject({ continue: true, sessionId: "abc", noContextFiles: true, listModels: true, noMcp: true, appendSystemPrompt: ["A", "B"], messages: ["-not-a-flag"], fileArgs: ["f"] });
    expect(a.thinking).toBeUndefined();
    expect(a.mode).toBeUndefined();
    expect(parseArgs(["--list-models", "son", "--approve"])).toMatchObject({ listModels: "son", projectTrustOverride: true });
  });
});

describe("ModelRuntime and model resolution", () => {
  let runtime: ModelRuntime;
  beforeAll(async () => {
    const agentDir = join(root, "models-agent");
    const model = (id: string, reasoning: boolean) => ({ id, name: id, reasoning, input: ["text"], contextWindow: 1000, maxTokens: 100 });
    write(join(agentDir, "models.json"), JSON.stringify({ providers: { mock: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", models: [model("mock-model", true), model("mock-other", false)] } } }));
    runtime = await ModelRuntime.create({ agentDir });
  });

  it("finds models of models.json; available only with a key; runtime keys come and go", async () => {
    expect(runtime.getModel("mock", "mock-model")?.id).toBe("mock-model");
    expect(runtime.getModels("mock").map((m) => m.id)).toEqual(["mock-model", "mock-other"]);
    expect(runtime.getModelsOfType("image", "mock")).toEqual([]);
    expect((await runtime.getAvailable("mock")).length).toBe(0);
    expect(runtime.hasConfiguredAuth("mock")).toBe(false);
    expect(await runtime.getAuth("mock")).toBeUndefined();

    await runtime.setRuntimeApiKey("mock", "sk-runtime");
    expect((await runtime.getAvailable("mock")).map((m) => m.id)).toEqual(["mock-model", "mock-other"]);
    expect(runtime.getAvailableSnapshot().filter((m) => m.provider === "mock")).toHaveLength(2);
    expect(runtime.getProviderAuthStatus("mock")).toMatchObject({ configured: true, source: "runtime" });
    expect((await runtime.getAuth("mock"))?.auth).toMatchObject({ apiKey: "sk-runtime", baseUrl: "http://127.0.0.1:9/v1" });
    expect(await runtime.checkAuth("mock")).toMatchObject({ type: "api_key" });

    await runtime.removeRuntimeApiKey("mock");
    expect((await runtime.getAvailable("mock")).length).toBe(0);
    await expect(runtime.setRuntimeApiKey("mock", "")).rejects.toThrow(/non-empty string/);
  });

  it("registers providers of the host", async () => {
    runtime.registerProvider("host-prov", { baseUrl: "http://127.0.0.1:9", api: "openai-completions", apiKey: "k", models: [{ id: "h1", name: "h1", reasoning: false, input: ["text"], contextWindow: 10, maxTokens: 10 } as never] });
    expect(runtime.getModel("host-prov", "h1")?.provider).toBe("host-prov");
    expect(runtime.getRegisteredProviderIds()).toEqual(["host-prov"]);
    runtime.unregisterProvider("host-prov");
    expect(runtime.getModel("host-prov", "h1")).toBeUndefined();
  });

  it("resolveCliModel: provider/id, id:thinking, --provider, unknown models and providers", () => {
    expect(resolveCliModel({ cliModel: "mock/mock-model", modelRuntime: runtime })).toMatchObject({ model: { provider: "mock", id: "mock-model" }, error: undefined });
    const withLevel = resolveCliModel({ cliModel: "mock-model:high", modelRuntime: runtime });
    expect(withLevel.model?.id).toBe("mock-model");
    expect(withLevel.thinkingLevel).toBe("high");
    expect(resolveCliModel({ cliProvider: "mock", cliModel: "mock-other", modelRuntime: runtime }).model?.id).toBe("mock-other");
    const unknown = resolveCliModel({ cliModel: "no-such-model-anywhere-xyz", modelRuntime: runtime });
    expect(unknown.model).toBeUndefined();
    expect(unknown.error).toBe('Model "no-such-model-anywhere-xyz" not found. Use --list-models to see available models.');
    expect(resolveCliModel({ cliProvider: "nope", cliModel: "x", modelRuntime: runtime }).error).toMatch(/Unknown provider "nope"/);
    // 0.73.1's form: a modelRegistry
    expect(resolveCliModel({ cliModel: "mock/mock-other", modelRegistry: runtime.modelRegistry }).model?.id).toBe("mock-other");
    expect(() => resolveCliModel({ cliModel: "x" } as never)).toThrow(/modelRuntime/);
  });

  it("resolveModelScopeWithDiagnostics: scoped models and a diagnostic per pattern", async () => {
    await runtime.setRuntimeApiKey("mock", "sk");
    const r = await resolveModelScopeWithDiagnostics(["mock/*", "no-such-thing-xyz", "mock-model:high"], runtime);
    expect(r.scopedModels.map((s) => `${s.model.provider}/${s.model.id}`)).toEqual(["mock/mock-model", "mock/mock-other"]);
    expect(r.diagnostics).toEqual([{ type: "warning", code: "no-match", message: 'No models match pattern "no-such-thing-xyz"', pattern: "no-such-thing-xyz" }]);
    await runtime.removeRuntimeApiKey("mock");
  });

  it("CredentialSynchronizationError carries the provider, the operation and the cause", () => {
    const cause = new Error("disk full");
    const e = new CredentialSynchronizationError("mock", "logout", undefined, { cause });
    expect(e).toBeInstanceOf(Error);
    expect([e.name, e.providerId, e.operation, e.cause]).toEqual(["CredentialSynchronizationError", "mock", "logout", cause]);
    expect(e.message).toMatch(/logout for provider "mock" succeeded.*disk full/);
  });
});

const TRACE = join(tmpdir(), `sdk-runtime-trace-${process.pid}.txt`);
const GOOD_EXT = `import { appendFileSync } from "node:fs";
export default function (pi: any) {
  pi.registerTool({ name: "shout", label: "Shout", description: "Upper-cases", parameters: { type: "object", properties: { text: { type: "string" } } },
    execute: async (_id: string, p: any, _s: any, _u: any, ctx: any) => ({ content: [{ type: "text", text: String(p.text).toUpperCase() + " in " + ctx.cwd }], details: { n: 1 } }) });
  pi.registerCommand("yell", { description: "Yells", handler: async () => {} });
  pi.registerFlag("loud", { type: "boolean", default: false, description: "Be loud" });
  pi.on("session_start", async (e: any) => { appendFileSync(${JSON.stringify(TRACE)}, "start:" + e.reason + "\\n"); });
  pi.on("tool_call", async (e: any) => (e.toolName === "rm" ? { block: true, reason: "no rm" } : undefined));
  pi.on("input", async (e: any) => (e.text === "hi" ? { action: "transform", text: "hello there" } : undefined));
  pi.on("agent_end", async () => { throw new Error("handler broke"); });
}
`;
const BROKEN_EXT = `export default function (pi: any) { pi.registerTool( ; }\n`;

describe("discoverAndLoadExtensions, ExtensionRunner, wrapRegisteredTool", () => {
  let result: LoadExtensionsResult;
  let cwd: string;
  let good: string;
  let broken: string;
  beforeAll(async () => {
    cwd = join(root, "ext-project");
    const agentDir = join(root, "ext-agent");
    mkdirSync(cwd, { recursive: true });
    good = join(agentDir, "extensions", "good.ts");
    broken = join(root, "broken-ext.ts");
    write(good, GOOD_EXT);
    write(broken, BROKEN_EXT);
    result = await discoverAndLoadExtensions([broken], cwd, agentDir);
  });

  it("loads the agent dir's extension and reports the broken one as an error naming its file", () => {
    expect(result.extensions.map((e) => e.path)).toEqual([good]);
    const ext = result.extensions[0]!;
    expect([...ext.tools.keys()]).toEqual(["shout"]);
    expect([...ext.commands.keys()]).toEqual(["yell"]);
    expect(ext.flags.get("loud")).toMatchObject({ name: "loud", type: "boolean", default: false, extensionPath: good });
    expect([...ext.handlers.keys()].sort()).toEqual(["agent_end", "input", "session_start", "tool_call"]);
    expect(ext.sourceInfo).toMatchObject({ path: good, scope: "user" });
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.path).toBe(broken);
    expect(result.errors[0]!.error).toMatch(/failed to load extension/);
    expect(result.runtime.flagValues.get("loud")).toBe(false);
  });

  it("the runner emits events to the handlers and combines their answers", async () => {
    const runner = new ExtensionRunner(result.extensions, result.runtime, cwd, undefined, undefined);
    const errors: string[] = [];
    runner.onError((e) => errors.push(`${e.extensionPath}|${e.event}|${e.error}`));
    expect(runner.hasHandlers("tool_call")).toBe(true);
    expect(runner.hasHandlers("turn_end")).toBe(false);
    writeFileSync(TRACE, "");
    await runner.emit({ type: "session_start", reason: "startup" });
    expect(readFileSync(TRACE, "utf8")).toBe("start:startup\n");
    expect(await runner.emitToolCall({ toolCallId: "1", toolName: "rm", input: {} })).toEqual({ block: true, reason: "no rm" });
    expect(await runner.emitToolCall({ toolCallId: "2", toolName: "ls", input: {} })).toBeUndefined();
    expect(await runner.emitInput("hi", undefined, "sdk")).toEqual({ action: "transform", text: "hello there" });
    expect(await runner.emitInput("other", undefined, "sdk")).toEqual({ action: "continue" });
    await runner.emit({ type: "agent_end", messages: [] });
    expect(errors.some((e) => e.startsWith(`${good}|agent_end|`) && e.includes("handler broke"))).toBe(true);
    expect(runner.getRegisteredCommands().map((c) => c.invocationName)).toEqual(["yell"]);
    expect([...runner.getFlags().keys()]).toEqual(["loud"]);
    runner.invalidate("gone");
    await expect(runner.emit({ type: "session_start", reason: "startup" })).rejects.toThrow("gone");
  });

  it("wrapRegisteredTool gives an agent tool that runs the definition with the runner's context", async () => {
    const runner = new ExtensionRunner(result.extensions, result.runtime, cwd, undefined, undefined);
    const [tool] = wrapRegisteredTools(runner.getAllRegisteredTools(), runner);
    expect([tool!.name, tool!.label, tool!.description]).toEqual(["shout", "Shout", "Upper-cases"]);
    const r = (await tool!.execute("call-1", { text: "hey" })) as { content: Array<{ text: string }>; details: unknown };
    expect(r.content[0]!.text).toBe(`HEY in ${cwd}`);
    expect(r.details).toEqual({ n: 1 });

    // A definition made by the host gets the runner's tool context: executeTool goes to bindCore's action.
    const calls: string[] = [];
    runner.bindCore({ getActiveTools: () => ["read"] }, {
      getModel: () => undefined, isIdle: () => true, abort: () => undefined, hasPendingMessages: () => false, shutdown: () => undefined,
      getContextUsage: () => undefined, compact: () => undefined, getSystemPrompt: () => "SP",
      executeTool: async (caller, name, args) => (calls.push(`${caller}>${name}:${JSON.stringify(args)}`), { isError: false }),
    });
    const own = wrapRegisteredTool(
      { definition: { name: "nest", description: "calls read", execute: async (_id: string, _p: unknown, _s: unknown, _u: unknown, ctx: any) => ({ content: [{ type: "text", text: `${ctx.getSystemPrompt()} ${JSON.stringify(await ctx.executeTool("read", { path: "a" }))}` }], details: {} }) }, sourceInfo: { path: "<host>", source: "sdk", scope: "temporary", origin: "top-level" } },
      runner,
    );
    const out = (await own.execute("c9", {})) as { content: Array<{ text: string }> };
    expect(out.content[0]!.text).toBe('SP {"isError":false}');
    expect(calls).toEqual(['c9>read:{"path":"a"}']);
    expect(runner.getActiveTools()).toEqual(["read"]);
    expect(() => wrapRegisteredTool({ definition: {} } as never, runner)).toThrow(/RegisteredTool/);
  });

  it("createExtensionRuntime: actions throw until bound; provider registrations queue", () => {
    const rt = createExtensionRuntime();
    expect(() => rt.sendMessage({})).toThrow(/Extension runtime not initialized/);
    expect(() => rt.createContext()).toThrow(/not initialized/);
    rt.registerProvider("p1", { baseUrl: "x" });
    rt.registerProvider("p2", {});
    rt.unregisterProvider("p1");
    expect(rt.pendingProviderRegistrations.map((p) => p.name)).toEqual(["p2"]);
    const runner = new ExtensionRunner([], rt, root, undefined, undefined);
    const registered: string[] = [];
    runner.bindCore({ getSessionName: () => "named" }, {}, { registerProvider: (name) => void registered.push(name) });
    expect(registered).toEqual(["p2"]);
    expect(rt.getSessionName()).toBe("named");
    expect(rt.pendingProviderRegistrations).toEqual([]);
  });
});

describe("DefaultResourceLoader", () => {
  it("finds skills, prompts, extensions, context files and SYSTEM.md of a project and an agent dir, and applies overrides", async () => {
    const cwd = join(root, "rl-project");
    const agentDir = join(root, "rl-agent");
    write(join(agentDir, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Ships it\n---\nSteps.\n");
    write(join(cwd, ".pi", "prompts", "review.md"), "---\ndescription: Review code\n---\nReview $1\n");
    write(join(cwd, "AGENTS.md"), "Project rules.\n");
    write(join(agentDir, "SYSTEM.md"), "You are the test agent.");
    write(join(agentDir, "extensions", "good.ts"), GOOD_EXT);
    write(join(agentDir, "extensions", "bad.ts"), "export default function () { throw new Error('factory failed'); }\n");
    write(join(root, "extra-skill", "SKILL.md"), "---\nname: extra\ndescription: Extra one\n---\nMore.\n");
    const loader = new DefaultResourceLoader({
      cwd,
      agentDir,
      additionalSkillPaths: [join(root, "extra-skill")],
      extensionFactories: [(pi: any) => pi.registerCommand("inline-cmd", { handler: async () => {} })],
      skillsOverride: (base) => ({ skills: base.skills.filter((s) => s.name !== "extra"), diagnostics: base.diagnostics }),
      appendSystemPrompt: ["EXTRA TEXT"],
      appendSystemPromptOverride: (base) => [...base, "APPENDED"],
    });
    expect(loader.getSkills().skills).toEqual([]);
    await loader.reload();

    expect(loader.getSkills().skills.map((s) => [s.name, s.description, s.sourceInfo.scope])).toEqual([["deploy", "Ships it", "user"]]);
    expect(loader.getPrompts().prompts.map((p) => [p.name, p.description, p.content.trim()])).toEqual([["review", "Review code", "Review $1"]]);
    expect(loader.getAgentsFiles().agentsFiles).toEqual([{ path: join(cwd, "AGENTS.md"), content: "Project rules.\n" }]);
    expect(loader.getSystemPrompt()).toBe("You are the test agent.");
    expect(loader.getSystemPromptSource()).toEqual({ path: join(agentDir, "SYSTEM.md") });
    expect(loader.getAppendSystemPrompt()).toEqual(["EXTRA TEXT", "APPENDED"]);
    const ext = loader.getExtensions();
    expect(ext.extensions.map((e) => [...e.tools.keys(), ...e.commands.keys()])).toEqual([["shout", "yell"], ["inline-cmd"]]);
    expect(ext.errors).toEqual([{ path: join(agentDir, "extensions", "bad.ts"), error: expect.stringMatching(/factory failed/) }]);

    loader.extendResources({ promptPaths: [{ path: join(cwd, ".pi", "prompts", "review.md") }], skillPaths: [{ path: join(root, "extra-skill") }] });
    expect(loader.getSkills().skills.map((s) => s.name)).toEqual(["deploy"]); // the override still drops "extra"
    expect(() => new DefaultResourceLoader({} as never)).toThrow(/cwd, agentDir/);
  });
});

describe("DefaultPackageManager", () => {
  it("adds a local package to the settings, resolves its resources with metadata, lists and removes it", async () => {
    const cwd = join(root, "pm-project");
    const agentDir = join(root, "pm-agent");
    const pkg = join(root, "my-pkg");
    mkdirSync(cwd, { recursive: true });
    write(join(agentDir, "settings.json"), "{}");
    write(join(pkg, "package.json"), JSON.stringify({ name: "my-pkg", version: "1.0.0" }));
    write(join(pkg, "extensions", "tool.ts"), "export default function () {}\n");
    write(join(pkg, "skills", "pkg-skill", "SKILL.md"), "---\nname: pkg-skill\ndescription: From a package\n---\nBody.\n");
    write(join(agentDir, "prompts", "mine.md"), "Mine.\n");
    const settingsManager = await SettingsManager.load({ agentDir, cwd });
    const pm = new DefaultPackageManager({ cwd, agentDir, settingsManager });

    expect(pm.addSourceToSettings(pkg)).toBe(true);
    expect(pm.addSourceToSettings(pkg)).toBe(false);
    expect(pm.listConfiguredPackages()).toEqual([{ source: expect.any(String), scope: "user", filtered: false, installedPath: pkg }]);
    const r = await pm.resolve();
    expect(r.extensions).toEqual([{ path: join(pkg, "extensions", "tool.ts"), enabled: true, metadata: expect.objectContaining({ scope: "user", origin: "package", baseDir: pkg }) }]);
    expect(r.skills.map((s) => [s.path, s.metadata.origin])).toEqual([[join(pkg, "skills", "pkg-skill", "SKILL.md"), "package"]]);
    expect(r.prompts.map((p) => [p.path, p.metadata.origin, p.metadata.scope])).toEqual([[join(agentDir, "prompts", "mine.md"), "top-level", "user"]]);
    expect(r.installFailures).toBeUndefined();

    const temp = await pm.resolveExtensionSources([pkg], { temporary: true });
    expect(temp.extensions.map((e) => e.path)).toEqual([join(pkg, "extensions", "tool.ts")]);

    expect(pm.removeSourceFromSettings(pkg)).toBe(true);
    expect(pm.listConfiguredPackages()).toEqual([]);
    expect(await pm.removeAndPersist(pkg)).toBe(false);
    expect(() => new DefaultPackageManager({} as never)).toThrow(/settingsManager/);
  });
});

describe("createAgentSession with a resource loader and a model runtime", () => {
  const fauxPlugins = (faux: FauxModel) => (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p));

  it("a ResourceLoader object decides the system prompt, context files and templates; nothing else is discovered", async () => {
    const cwd = join(root, "custom-loader-project");
    const agentDir = join(root, "custom-loader-agent");
    write(join(agentDir, "extensions", "discovered.ts"), "export default function (pi: any) { pi.registerCommand('discovered', { handler: async () => {} }); }\n");
    write(join(cwd, "AGENTS.md"), "FILE CONTEXT (must not be used)\n");
    mkdirSync(cwd, { recursive: true });
    const loader: ResourceLoader = {
      getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() }),
      getSkills: () => ({ skills: [], diagnostics: [] }),
      getPrompts: () => ({ prompts: [{ name: "tpl", description: "T", content: "Expanded with $1", filePath: "/virtual/tpl.md", sourceInfo: { path: "/virtual/tpl.md", source: "sdk", scope: "temporary", origin: "top-level" } }], diagnostics: [] }),
      getThemes: () => ({ themes: [], diagnostics: [] }),
      getAgentsFiles: () => ({ agentsFiles: [{ path: "/virtual/AGENTS.md", content: "VIRTUAL CONTEXT" }] }),
      getSystemPrompt: () => "You are a minimal assistant.",
      getSystemPromptSource: () => undefined,
      getAppendSystemPrompt: () => ["APPENDED BY LOADER"],
      getAppendSystemPromptSources: () => [],
      extendResources: () => {},
      reload: async () => {},
    };
    const faux = new FauxModel({ steps: ["done"] });
    const { session, runtime, services } = await createAgentSession({ cwd, agentDir, resourceLoader: loader, plugins: fauxPlugins(faux), model: "faux/faux-1", sessionManager: SessionManager.inMemory(cwd) });
    try {
      await runtime.bindExtensions();
      const prompt = await session.getSystemPrompt();
      expect(prompt.startsWith("You are a minimal assistant.")).toBe(true);
      expect(prompt).toContain("APPENDED BY LOADER");
      expect(prompt).toContain("VIRTUAL CONTEXT");
      expect(prompt).not.toContain("FILE CONTEXT");
      expect(services.kernel.commands.has("discovered")).toBe(false);
      expect(services.kernel.commands.has("tpl")).toBe(true);
      await session.prompt("/tpl now");
      const user = session.messages.find((m) => m.role === "user") as { content: unknown };
      expect(JSON.stringify(user.content)).toContain("Expanded with now");
    } finally {
      await runtime.dispose();
    }
  });

  it("a DefaultResourceLoader that was not reloaded reads the session's kernel; a ModelRuntime lends its keys and providers", async () => {
    const cwd = join(root, "lazy-loader-project");
    const agentDir = join(root, "lazy-loader-agent");
    write(join(agentDir, "skills", "lazy", "SKILL.md"), "---\nname: lazy\ndescription: Found late\n---\nBody.\n");
    write(join(agentDir, "extensions", "e.ts"), "export default function (pi: any) { pi.registerCommand('from-ext', { handler: async () => {} }); }\n");
    mkdirSync(cwd, { recursive: true });
    const loader = new DefaultResourceLoader({ cwd, agentDir, systemPromptOverride: () => "OVERRIDDEN HEAD" });
    const modelRuntime = await ModelRuntime.create({ agentDir, refreshOnCreate: false });
    modelRuntime.registerProvider("rt-prov", { baseUrl: "http://127.0.0.1:9", api: "openai-completions", apiKey: "k", models: [{ id: "rt-model", name: "rt-model", reasoning: false, input: ["text"], contextWindow: 10, maxTokens: 10 } as never] });
    const faux = new FauxModel({ steps: ["ok"] });
    const { session, runtime, services } = await createAgentSession({ resourceLoader: loader, modelRuntime, plugins: fauxPlugins(faux), model: "faux/faux-1", sessionManager: SessionManager.inMemory(cwd) });
    try {
      await runtime.bindExtensions();
      expect(services.cwd).toBe(cwd);
      expect((await session.getSystemPrompt()).startsWith("OVERRIDDEN HEAD")).toBe(true);
      expect(loader.getSkills().skills.map((s) => s.name)).toEqual(["lazy"]);
      expect(loader.getExtensions().extensions.map((e) => [...e.commands.keys()]).flat()).toEqual(["from-ext"]);
      expect(services.authStorage).toBe(modelRuntime.authStorage);
      expect(services.modelRegistry.find("rt-prov", "rt-model")?.id).toBe("rt-model");
    } finally {
      await runtime.dispose();
    }
  });
});
