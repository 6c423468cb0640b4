import { describe, it, expect, afterAll, afterEach } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AssistantMessageEvent, Context } from "@mariozechner/pi-ai";
import fauxPlugin, { createFauxPlugin, FauxModel, getFaux, setFauxScript, defaultFaux, FAUX_SCRIPT_ENV } from "./index.js";
import { Kernel, type AssistantStream, defineApp, SettingsManager, PluginHost, type AnyModel } from "../../core/kernel/index.js";
import { ModelRegistry, AuthStorage } from "../../core/stores/index.js";

const dir = mkdtempSync(join(tmpdir(), "pi-faux-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const savedEnv = process.env[FAUX_SCRIPT_ENV];
afterEach(() => {
  if (savedEnv === undefined) delete process.env[FAUX_SCRIPT_ENV];
  else process.env[FAUX_SCRIPT_ENV] = savedEnv;
});

async function kernelWith(manifest: unknown, settings: Record<string, unknown> = {}) {
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory(settings) });
  await new PluginHost(kernel).load([{ manifest, origin: "builtin", builtin: true }]);
  return kernel;
}

const fauxModel: AnyModel = {
  id: "faux-1",
  name: "Faux 1",
  api: "faux",
  provider: "faux",
  baseUrl: "faux://local",
  reasoning: false,
  input: ["text"],
  cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
};
const ctx = (text = "hello there"): Context => ({ systemPrompt: "be brief", messages: [{ role: "user", content: text, timestamp: 0 }] });

async function run(s: AssistantStream, onEvent?: (e: AssistantMessageEvent, i: number) => void) {
  const events: AssistantMessageEvent[] = [];
  for await (const e of s) {
    onEvent?.(e, events.length);
    events.push(e);
  }
  return { events, types: events.map((e) => e.type), final: await s.result() };
}

describe("FauxModel event sequences", () => {
  it("streams text word by word with a growing partial message", async () => {
    const faux = new FauxModel({ steps: ["Hello brave new world"] });
    const snapshots: string[] = [];
    const { types, final, events } = await run(faux.stream(fauxModel, ctx()), (e) => {
      if (e.type === "text_delta") snapshots.push((e.partial.content[0] as { text: string }).text);
    });
    expect(types).toEqual(["start", "text_start", "text_delta", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
    expect(snapshots).toEqual(["Hello ", "Hello brave ", "Hello brave new ", "Hello brave new world"]);
    const end = events.find((e) => e.type === "text_end");
    expect(end && end.type === "text_end" && end.content).toBe("Hello brave new world");
    expect(final).toMatchObject({ role: "assistant", stopReason: "stop", provider: "faux", model: "faux-1", content: [{ type: "text", text: "Hello brave new world" }] });
    expect(final.usage.output).toBe(Math.ceil("Hello brave new world".length / 4));
    expect(final.usage.cost.output).toBeCloseTo((2 / 1e6) * final.usage.output);
  });

  it("streams thinking, text and a tool call; stopReason toolUse; deltas rebuild the arguments", async () => {
    const faux = new FauxModel({
      steps: [{ thinking: "let me look", text: "Listing.", toolCalls: [{ name: "bash", arguments: { command: "ls -la", cwd: "/tmp" } }], chunkSize: 5 }],
    });
    const { types, final, events } = await run(faux.stream(fauxModel, ctx()));
    expect(types.filter((t) => !t.endsWith("_delta"))).toEqual([
      "start",
      "thinking_start",
      "thinking_end",
      "text_start",
      "text_end",
      "toolcall_start",
      "toolcall_end",
      "done",
    ]);
    const json = events.flatMap((e) => (e.type === "toolcall_delta" ? [e.delta] : [])).join("");
    expect(JSON.parse(json)).toEqual({ command: "ls -la", cwd: "/tmp" });
    const end = events.find((e) => e.type === "toolcall_end");
    expect(end?.type === "toolcall_end" && end.toolCall).toEqual({ type: "toolCall", id: "faux_call_1_0", name: "bash", arguments: { command: "ls -la", cwd: "/tmp" } });
    expect(final.stopReason).toBe("toolUse");
    expect(final.content.map((c) => c.type)).toEqual(["thinking", "text", "toolCall"]);
    const done = events.at(-1)!;
    expect(done.type === "done" && done.reason).toBe("toolUse");
  });

  it("a scripted error ends with an error event after the content", async () => {
    const faux = new FauxModel({ steps: [{ text: "partial answer", error: "500 upstream exploded", usage: { input: 7 } }] });
    const { types, final } = await run(faux.stream(fauxModel, ctx()));
    expect(types.at(-1)).toBe("error");
    expect(types).not.toContain("done");
    expect(final.stopReason).toBe("error");
    expect(final.errorMessage).toBe("500 upstream exploded");
    expect(final.content).toEqual([{ type: "text", text: "partial answer" }]);
    expect(final.usage.input).toBe(7);
  });

  it("abort mid-stream ends with reason aborted and keeps the partial content", async () => {
    const faux = new FauxModel({ steps: [{ text: "one two three four five six seven eight", delayMs: 2 }] });
    const ac = new AbortController();
    const { types, final } = await run(faux.stream(fauxModel, ctx(), { signal: ac.signal }), (e) => {
      if (e.type === "text_delta" && e.delta === "three ") ac.abort();
    });
    expect(types.at(-1)).toBe("error");
    const last = types.length - 1;
    expect(types.slice(0, last).every((t) => t === "start" || t.startsWith("text_"))).toBe(true);
    expect(types).not.toContain("text_end");
    expect(final.stopReason).toBe("aborted");
    expect(final.errorMessage).toBe("Request was aborted");
    expect(final.content).toEqual([{ type: "text", text: "one two three " }]);
  });

  it("an already-aborted signal yields only the error event", async () => {
    const faux = new FauxModel({ steps: ["never"] });
    const ac = new AbortController();
    ac.abort();
    const { types, final } = await run(faux.stream(fauxModel, ctx(), { signal: ac.signal }));
    expect(types).toEqual(["error"]);
    expect(final.stopReason).toBe("aborted");
  });

  it("function steps see the context; a throwing step becomes an error event; a used-up script says so", async () => {
    const faux = new FauxModel({
      steps: [
        (context, info) => `you said ${(context.messages[0] as { content: string }).content} (call ${info.callCount})`,
        () => {
          throw new Error("step blew up");
        },
      ],
    });
    expect((await run(faux.stream(fauxModel, ctx("ping")))).final.content).toEqual([{ type: "text", text: "you said ping (call 1)" }]);
    const bad = await run(faux.stream(fauxModel, ctx()));
    expect(bad.types).toEqual(["error"]);
    expect(bad.final.errorMessage).toBe("faux: step blew up");
    const done = await run(faux.stream(fauxModel, ctx()));
    expect(done.final.stopReason).toBe("error");
    expect(done.final.errorMessage).toMatch(/no more steps \(2 used\)/);
    expect(faux.callCount).toBe(3);
  });

  it("echoes the last user message when no script is set; loop repeats a script", async () => {
    const faux = new FauxModel();
    expect((await run(faux.stream(fauxModel, ctx("are you there")))).final.content).toEqual([{ type: "text", text: "Echo: are you there" }]);
    faux.setScript(["a", "b"], { loop: true });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) texts.push(((await run(faux.stream(fauxModel, ctx()))).final.content[0] as { text: string }).text);
    expect(texts).toEqual(["a", "b", "a"]);
  });
});

describe("the faux plugin", () => {
  it("registers API and provider 'faux' (model faux-1) that the model registry treats as keyed", async () => {
    const faux = new FauxModel();
    const kernel = await kernelWith(createFauxPlugin(faux));
    expect(getFaux(kernel)).toBe(faux);
    const registry = ModelRegistry.forKernel(kernel, { authStorage: AuthStorage.inMemory(), catalog: () => ({}) });
    const model = registry.find("faux", "faux-1")!;
    expect(model).toMatchObject({ api: "faux", provider: "faux", id: "faux-1" });
    expect((await registry.getAvailable()).map((m) => m.id)).toEqual(["faux-1"]);
    expect(await registry.getApiKey(model)).toBe("faux");
    faux.setScript(["through the kernel"]);
    const stream = await registry.resolveStream(model)!(model, ctx(), {});
    expect((await run(stream)).final.content).toEqual([{ type: "text", text: "through the kernel" }]);
    faux.addModel({ id: "faux-2", reasoning: true });
    expect(registry.find("faux", "faux-2")).toMatchObject({ reasoning: true, name: "faux-2", api: "faux" });
  });

  it("the default plugin serves the shared default FauxModel scripted by setFauxScript", async () => {
    const kernel = await kernelWith(fauxPlugin);
    setFauxScript(["scripted globally"]);
    const p = kernel.providers.get("faux")!;
    expect((await run(await p.stream(fauxModel, ctx()))).final.content).toEqual([{ type: "text", text: "scripted globally" }]);
    defaultFaux.reset();
  });

  it("loads a script file named by PI_FAUX_SCRIPT, with its models", async () => {
    const file = join(dir, "script.json");
    writeFileSync(file, JSON.stringify({ models: [{ id: "faux-big", contextWindow: 1000000 }], steps: ["from file", { toolCalls: [{ name: "read", arguments: { path: "a" } }] }] }));
    process.env[FAUX_SCRIPT_ENV] = file;
    const faux = new FauxModel();
    const kernel = await kernelWith(createFauxPlugin(faux));
    expect(kernel.models.get("faux")!.models!.map((m) => m.id)).toEqual(["faux-1", "faux-big"]);
    expect((await run(faux.stream(fauxModel, ctx()))).final.content).toEqual([{ type: "text", text: "from file" }]);
    expect((await run(faux.stream(fauxModel, ctx()))).final.stopReason).toBe("toolUse");
  });

  it("loads a script from the faux.script setting (relative to cwd); a malformed one is a diagnostic with its position", async () => {
    writeFileSync(join(dir, "good.json"), JSON.stringify(["from setting"]));
    delete process.env[FAUX_SCRIPT_ENV];
    const faux = new FauxModel();
    await kernelWith(createFauxPlugin(faux), { faux: { script: "good.json" } });
    expect((await run(faux.stream(fauxModel, ctx()))).final.content).toEqual([{ type: "text", text: "from setting" }]);

    writeFileSync(join(dir, "bad.json"), '[\n  "ok",\n  { "text": "x" ]\n');
    const broken = new FauxModel();
    const kernel = await kernelWith(createFauxPlugin(broken), { faux: { script: "bad.json" } });
    const d = kernel.diagnostics.list().find((x) => x.source === "faux")!;
    expect(d.level).toBe("error");
    expect(d.message).toContain(join(dir, "bad.json"));
    expect(d.message).toMatch(/line 3, column 17/);
    const r = await run(broken.stream(fauxModel, ctx()));
    expect(r.final.stopReason).toBe("error");
    expect(r.final.errorMessage).toMatch(/malformed JSON/);
  });

  it("rejects script steps with bad fields, naming them", async () => {
    writeFileSync(join(dir, "fields.json"), JSON.stringify({ steps: [{ text: "a" }, { toolCalls: [{ arguments: {} }] }] }));
    const faux = new FauxModel();
    expect(() => faux.loadScriptFile(join(dir, "fields.json"))).toThrow(/steps\[1\]\.toolCalls\[0\]\.name: must be a non-empty string/);
  });
});
