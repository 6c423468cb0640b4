/**
 * createCodemodeExtension (plugins/codemode/codemode.ts) in SDK sessions on the faux model: the model's
 * script runs in the QuickJS sandbox and calls the session's tools through the loop's nested
 * calls (hooks apply); scripts that try to reach Node get nothing; deadlines, promises that can
 * never settle and misplaced options lines fail the script; MCP tools behind the `mcp` search
 * tool are callable by name.
 */
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createCodemodeExtension } from "../../sdk/pi-package/tools.js";
import { runScript } from "./codemode.js";
import { createAgentSession, type CreateAgentSessionResult } from "../../sdk/sdk.js";
import { FauxModel, createFauxPlugin } from "../faux/index.js";
import type { PluginManifest } from "../../core/kernel/plugin.js";
import { SessionManager } from "../../core/stores/session/session-manager.js";
import type { ExtensionAPI } from "../extensions/types.js";
import { waitUntil } from "../../tests/helpers/system.js";

const roots: string[] = [];
const live: CreateAgentSessionResult[] = [];
afterEach(async () => {
  while (live.length) await live.pop()!.runtime.dispose();
});
afterAll(() => {
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});

const withFaux = (faux: FauxModel) => (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p));

/** One prompt whose model runs `code` with codemode, then answers "done"; returns the codemode result. */
async function runCode(code: string, opts: { extensions?: Array<(pi: ExtensionAPI) => void>; settings?: Record<string, unknown>; before?: (r: CreateAgentSessionResult) => Promise<void> } = {}) {
  const root = mkdtempSync(join(tmpdir(), "pi-codemode-"));
  roots.push(root);
  const cwd = join(root, "project");
  mkdirSync(cwd);
  const faux = new FauxModel({ steps: [{ toolCalls: [{ id: "cm1", name: "codemode", arguments: { code } }] }, "done"] });
  const r = await createAgentSession({
    cwd,
    agentDir: join(root, "agent"),
    model: "faux/faux-1",
    sessionManager: SessionManager.inMemory(cwd),
    plugins: withFaux(faux),
    settings: opts.settings,
    extensionFactories: [createCodemodeExtension({ mode: "on" }), ...(opts.extensions ?? [])],
  });
  live.push(r);
  await r.runtime.bindExtensions();
  if (opts.before) await opts.before(r);
  await r.runtime.session.prompt("run it");
  const result = r.runtime.session.messages.find((m: any) => m.role === "toolResult" && m.toolName === "codemode") as any;
  return { cwd, root, r, text: result.content[0].text as string, isError: !!result.isError };
}

describe("codemode scripts", () => {
  it("call the session's tools in parallel; text, return and console make the output", async () => {
    const { cwd, text, isError } = await runCode(
      [
        'await tools.write({ path: "a.txt", content: "alpha\\n" });',
        "const [a, sh] = await Promise.all([tools.read({ path: \"a.txt\" }), tools.bash({ command: \"echo from-bash\" })]);",
        'console.log("read", a.trim(), 42);',
        "text(sh.trim());",
        "return { names: ALL_TOOLS.map((t) => t.name).filter((n) => n === \"read\" || n === \"codemode\"), found: (await searchTools(\"shell command\", { limit: 1 })).map((t) => t.name) };",
      ].join("\n"),
    );
    expect(isError ? text : "").toBe(""); // the failure text says why
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("alpha\n");
    expect(text).toMatch(/^Script completed in \d+\.\ds\n/);
    expect(text.replace(/^Script completed in \d+\.\ds\n/, "")).toBe(
      [
        "==> text 1/2 <==",
        "from-bash",
        "==> text 2/2 <==",
        JSON.stringify({ names: ["read"], found: ["bash"] }, null, 2),
        "<console_output>",
        "read alpha 42",
        "</console_output>",
      ].join("\n"),
    );
  }, 120_000);

  it("cannot reach Node: no require, process, import, timers, network; the Function constructor finds nothing either", async () => {
    const { text, isError } = await runCode(
      [
        "const probes = {",
        "  require: typeof require, process: typeof process, global: typeof global, fetch: typeof fetch,",
        "  setTimeout: typeof setTimeout, Buffer: typeof Buffer, WebAssembly: typeof WebAssembly,",
        '  viaFunction: Function("return typeof this.process")(),',
        '  viaConstructor: (() => {}).constructor.constructor("return typeof globalThis.require")(),',
        "  codemodeItself: typeof tools.codemode, notGiven: typeof tools.powershell,",
        "};",
        'try { await import("node:fs"); probes.import = "loaded"; } catch (e) { probes.import = "refused"; }',
        'const original = tools.read; tools.read = () => "hijacked"; probes.frozen = tools.read === original ? "kept" : "replaced";',
        "return probes;",
      ].join("\n"),
    );
    expect(isError).toBe(false);
    const probes = JSON.parse(text.slice(text.indexOf("\n") + 1));
    expect(probes).toEqual({
      require: "undefined",
      process: "undefined",
      global: "undefined",
      fetch: "undefined",
      setTimeout: "undefined",
      Buffer: "undefined",
      WebAssembly: "undefined",
      viaFunction: "undefined",
      viaConstructor: "undefined",
      codemodeItself: "undefined",
      notGiven: "undefined",
      import: "refused",
      frozen: "kept",
    });
  }, 120_000);

  it("tool calls pass the tool_call hooks: a blocked call rejects inside the script, with parentToolCallId", async () => {
    const seen: Array<{ toolName: string; parent?: string }> = [];
    const gate = (pi: ExtensionAPI) => {
      pi.on("tool_call", (event: any) => {
        seen.push({ toolName: event.toolName, parent: event.parentToolCallId });
        if (event.toolName === "bash" && String(event.input?.command).includes("rm ")) return { block: true, reason: "no deleting here" };
        return undefined;
      });
    };
    const { cwd, text, isError } = await runCode(
      [
        'await tools.write({ path: "keep.txt", content: "x" });',
        'try { await tools.bash({ command: "rm keep.txt" }); return "ran"; } catch (e) { return "blocked: " + e.message; }',
      ].join("\n"),
      { extensions: [gate] },
    );
    expect(isError).toBe(false);
    expect(text).toMatch(/\nblocked: .*no deleting here/);
    expect(readFileSync(join(cwd, "keep.txt"), "utf8")).toBe("x");
    expect(seen).toEqual([
      { toolName: "codemode", parent: undefined },
      { toolName: "write", parent: "cm1" },
      { toolName: "bash", parent: "cm1" },
    ]);
  }, 120_000);

  it("a deadline stops an endless loop; a promise that can never settle and a misplaced options line fail the script", async () => {
    // The deadline counts from the call (as in 1.6, start-up of the worker included): long enough for a busy machine.
    const loop = await runCode('// @options: {"timeout_ms": 1500}\ntext("before");\nwhile (true) {}');
    expect(loop.isError).toBe(true);
    expect(loop.text).toMatch(/^Script failed in \d+\.\ds\nbefore\nScript error: .*interrupted/);

    const never = await runCode("await new Promise(() => {});\nreturn 1;");
    expect(never.isError).toBe(true);
    expect(never.text).toMatch(/Script error: the script waits on a promise that can never settle/);

    const misplaced = await runCode('text(1);\n// @options: {"timeout_ms": 10}');
    expect(misplaced.isError).toBe(true);
    expect(misplaced.text).toMatch(/Script error: an \/\/ @options: line must be the first line of the script \(found on line 2\)/);

    const thrown = await runCode('text("partial");\nthrow new TypeError("bad thing");');
    expect(thrown.text).toMatch(/^Script failed in \d+\.\ds\npartial\nScript error: TypeError: bad thing$/);

    // A stack overflow fails the script; the next script still runs.
    const deep = await runCode("function f() { return f() + 1; }\nreturn f();");
    expect(deep.isError).toBe(true);
    expect(deep.text).toMatch(/^Script failed in \d+\.\ds\nScript error: .*stack overflow/i);
    const after = await runCode("return 6 * 7;");
    expect(after.text).toMatch(/^Script completed in \d+\.\ds\n42$/);
  }, 180_000);

  it("a script that never yields runs beside the agent: the event loop keeps going and an abort ends it", async () => {
    let tool: any;
    createCodemodeExtension({ mode: "on" })({ registerTool: (t: unknown) => (tool = t), getAllTools: () => [] } as unknown as ExtensionAPI);
    const ac = new AbortController();
    let pinged!: () => void;
    const ping = new Promise<void>((r) => (pinged = r));
    const ctx = {
      tools: [{ name: "ping", description: "ping" }],
      executeTool: async () => {
        pinged();
        return { result: { content: [{ type: "text", text: "pong" }] }, isError: false };
      },
    };
    const run = tool.execute("cm", { code: 'text(await tools.ping({}));\nwhile (true) {}' }, ac.signal, undefined, ctx);
    const settled = run.then(() => "resolved", (e: Error) => e.message);
    await ping;
    // The main thread is free while the script spins: timers fire.
    let ticks = 0;
    await new Promise<void>((r) => {
      const t = setInterval(() => {
        if (++ticks === 3) {
          clearInterval(t);
          r();
        }
      }, 5);
    });
    ac.abort();
    expect(await settled).toMatch(/^Script failed in \d+\.\ds\npong\nScript error: aborted$/);
    // An aborted signal before the start fails at once.
    await expect(tool.execute("cm2", { code: "while (true) {}" }, ac.signal, undefined, ctx)).rejects.toThrow(/aborted/);
  }, 60_000);

  it("MCP tools with codemode exposure (registered, not declared) are callable by name", async () => {
    const callLog = join(mkdtempSync(join(tmpdir(), "pi-codemode-log-")), "calls.log");
    roots.push(resolve(callLog, ".."));
    const stdio = { command: process.execPath, args: [resolve("tests/fixtures/mcp/stdio-server.mjs"), "--call-log", callLog], exposure: "codemode" };
    const { text, isError } = await runCode('return await tools.mcp__demo__echo({ text: "via script" });', {
      settings: { mcpServers: { demo: stdio }, mcp: { connectTimeoutMs: 120_000 } },
      before: async (r) => {
        const mcp = r.services.kernel.service("mcp")!;
        await waitUntil(() => mcp.list().some((s) => s.status === "connected"), "the demo server connected", 120_000);
        await mcp.whenSettled();
      },
    });
    expect(isError).toBe(false);
    expect(text).toMatch(/\necho:via script$/);
    expect(readFileSync(callLog, "utf8")).toContain('echo {"text":"via script"}');
  }, 180_000);
});

describe("createCodemodeExtension options", () => {
  it("refuses mode \"only\" and a bad inlineBudget, naming them", () => {
    expect(() => createCodemodeExtension({ mode: "only" })).toThrow(/mode "only" is not supported here/);
    expect(() => createCodemodeExtension({ inlineBudget: -1 })).toThrow(/inlineBudget must be a number >= 0/);
  });
});

describe("a script aborted while it starts", () => {
  it("ends: an abort that comes while the worker's modules load is not missed", async () => {
    const ac = new AbortController();
    const run = runScript("while (true) {}", [], async () => ({ text: "", isError: false }), ac.signal);
    ac.abort(); // the script is past its first check and waiting for its modules
    await expect(run).rejects.toThrow(/aborted/);
  });
});
