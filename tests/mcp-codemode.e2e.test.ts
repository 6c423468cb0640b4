/**
 * End to end through the real CLI: pi 1.6's default MCP exposure, "codemode". A server without
 * an `exposure` (and no mcp.toolMode set by the user) has its tools registered but not declared
 * to the model; the `codemode` tool is turned on instead, and scripts call the server's tools —
 * each nested call still passes the tool_call hook (extensions, the permission gate).
 * Also: `autoEnableCodemode: false` in mcp.json, an explicit mcp.toolMode, and exposures per
 * server and per tool (`toolExposure`), checked in the requests the scripted model receives.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { ROOT, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

const STDIO = join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs");
const TOOL_CALL_LOG = join(ROOT, "tests", "fixtures", "extensions", "tool-call-log.ts");
const stdio = (...args: string[]) => ({ command: process.execPath, args: [STDIO, ...args] });

let llm: LlmServer;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  llm = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await llm.close();
});
afterEach(() => {
  while (envs.length) envs.pop()!.cleanup();
});

function env(settings: Record<string, unknown> = {}, mcpJson?: Record<string, unknown>): E2eEnv {
  const e = makeE2eEnv(llm.url, { settings });
  envs.push(e);
  if (mcpJson) writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify(mcpJson));
  return e;
}

function script(turns: Array<{ text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> }>) {
  llm.setScript({ turns });
  llm.reset();
}
const requests = () => llm.stats().requests.filter((r) => r.path === "/v1/chat/completions");
const toolNames = (i: number): string[] => (requests()[i]!.body.tools ?? []).map((t: any) => t.function.name);
const toolMessages = (i: number) => requests()[i]!.body.messages.filter((m: any) => m.role === "tool");
const mcpNames = (i: number) => toolNames(i).filter((n) => n.startsWith("mcp__"));
const systemPrompt = (i: number): string => {
  const m = requests()[i]!.body.messages.find((x: any) => x.role === "system" || x.role === "developer");
  return typeof m.content === "string" ? m.content : m.content.map((c: any) => c.text).join("");
};
/** The `<mcp_servers>` block of the system prompt, or undefined. */
const serversSection = (i: number) => /<mcp_servers>\n([\s\S]*?)\n<\/mcp_servers>/.exec(systemPrompt(i))?.[1];

describe("pi 1.6's default exposure: codemode", () => {
  it("a server without exposure: its tools are not declared, codemode is; a script calls them, each call through tool_call and the permission gate", async () => {
    const e = env({ permissions: { deny: ["mcp__demo__add"] } }, { mcpServers: { demo: stdio("--call-log", "calls.log") } });
    const callLog = join(e.cwd, "calls.log");
    const hookLog = join(e.root, "tool-calls.jsonl");
    const code = [
      'const echoed = await tools.mcp__demo__echo({ text: "from a script" });',
      "let blocked;",
      "try { await tools.mcp__demo__add({ a: 1, b: 2 }); } catch (err) { blocked = String(err.message ?? err); }",
      "const found = ALL_TOOLS.filter((t) => t.name.startsWith('mcp__demo__')).length;",
      "return { echoed: echoed.trim(), blocked, found };",
    ].join("\n");
    script([{ toolCalls: [{ name: "codemode", arguments: { code } }] }, { text: "done" }]);
    const r = await runCli(["-p", "--no-session", "-e", TOOL_CALL_LOG, "use the demo server"], e, { env: { PI_E2E_TOOL_CALL_LOG: hookLog } });
    expect(r.stderr).toBe('warning: permission-gate (tool_call): blocked mcp__demo__add {"a":1,"b":2} (deny rule "mcp__demo__add")\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");

    // What the model was offered: codemode, the default tools, no MCP tool and no `mcp` tool.
    expect(toolNames(0)).toEqual(expect.arrayContaining(["read", "bash", "edit", "write", "codemode"]));
    expect(mcpNames(0)).toEqual([]);
    expect(toolNames(0)).not.toContain("mcp");
    // tool_search is for `deferred` servers only.
    expect(toolNames(0)).not.toContain("tool_search");
    // The system prompt names the server and how to reach it.
    expect(serversSection(0)).toMatch(/^MCP servers whose tools are not declared to you\. Call the tools of `codemode` servers from codemode scripts/);
    expect(serversSection(0)).toContain("\n- mcp__demo (codemode)");

    // The script's result reached the model: echo ran, add was blocked by the permission gate.
    const result = toolMessages(1)[0].content as string;
    expect(result).toMatch(/^Script completed/);
    const out = JSON.parse(result.slice(result.indexOf("{")));
    expect(out.echoed).toBe("echo:from a script");
    expect(out.blocked).toMatch(/mcp__demo__add/);
    expect(out.found).toBeGreaterThanOrEqual(10);
    const calls = readFileSync(callLog, "utf8");
    expect(calls).toContain('echo {"text":"from a script"}');
    expect(calls).not.toMatch(/^add /m);

    // An extension's tool_call handler saw both nested calls, each naming the codemode call.
    const events = readFileSync(hookLog, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const outer = events.find((ev) => ev.toolName === "codemode");
    expect(outer).toBeDefined();
    const nested = events.filter((ev) => ev.toolName.startsWith("mcp__demo__"));
    expect(nested.map((ev) => [ev.toolName, ev.parentToolCallId])).toEqual([
      ["mcp__demo__echo", outer.toolCallId],
      ["mcp__demo__add", outer.toolCallId],
    ]);
  });

  it("the model cannot call a codemode-exposed tool directly (it is not declared)", async () => {
    const e = env({}, { mcpServers: { demo: stdio() } });
    script([{ toolCalls: [{ name: "mcp__demo__echo", arguments: { text: "direct" } }] }, { text: "done" }]);
    const r = await runCli(["-p", "--no-session", "try it"], e);
    expect(r.code).toBe(0);
    expect(toolMessages(1)[0].content).toMatch(/Tool mcp__demo__echo not found/);
  });

  it("autoEnableCodemode: false leaves codemode off and warns that the tools cannot be called", async () => {
    const e = env({}, { autoEnableCodemode: false, mcpServers: { demo: stdio() } });
    script([{ text: "done" }]);
    const r = await runCli(["-p", "--no-session", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames(0)).not.toContain("codemode");
    expect(mcpNames(0)).toEqual([]);
    expect(r.stderr).toMatch(/MCP tools are only reachable from the codemode or tool_search tool, but neither is active \(autoEnableCodemode is false\); they cannot be called\./);
  });

  it("autoEnableCodemode: false with codemode named in --tools: no warning, scripts reach the tools", async () => {
    const e = env({}, { autoEnableCodemode: false, mcpServers: { demo: stdio() } });
    script([{ toolCalls: [{ name: "codemode", arguments: { code: 'return await tools.mcp__demo__echo({ text: "x" });' } }] }, { text: "done" }]);
    const r = await runCli(["-p", "--no-session", "--tools", "+codemode", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(toolNames(0)).toContain("codemode");
    expect(toolMessages(1)[0].content).toMatch(/echo:x/);
  });

  it("mcp.toolMode set by the user: tools without exposure follow it (declared), codemode stays off", async () => {
    const e = env({ mcp: { toolMode: "auto" } }, { mcpServers: { demo: stdio() } });
    script([{ toolCalls: [{ name: "mcp__demo__echo", arguments: { text: "direct" } }] }, { text: "done" }]);
    const r = await runCli(["-p", "--no-session", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(mcpNames(0)).toEqual(expect.arrayContaining(["mcp__demo__echo", "mcp__demo__add"]));
    expect(toolNames(0)).not.toContain("codemode");
    expect(serversSection(0)).toBeUndefined();
    expect(toolMessages(1)[0].content).toBe("echo:direct");
  });

  it("exposure per server and per tool: direct is declared, deferred turns tool_search on, hidden is gone, the rest stays behind codemode", async () => {
    const e = env(
      {},
      {
        mcpServers: {
          plain: { ...stdio("--name", "plain"), description: "Plain tools for tests\nsecond line" },
          mixed: { ...stdio("--name", "mixed"), toolExposure: { echo: "direct", "a*": "hidden" } },
          near: { ...stdio("--name", "near"), exposure: "direct" },
          later: { ...stdio("--name", "later"), exposure: "deferred" },
        },
      },
    );
    script([{ toolCalls: [{ name: "codemode", arguments: { code: "return ALL_TOOLS.map((t) => t.name).filter((n) => n.startsWith('mcp__')).sort().join(',');" } }] }, { text: "done" }]);
    const r = await runCli(["-p", "--no-session", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const declared = mcpNames(0);
    expect(declared).toEqual(expect.arrayContaining(["mcp__mixed__echo", "mcp__near__echo", "mcp__near__add"]));
    expect(declared.some((n) => n.startsWith("mcp__plain__") || n.startsWith("mcp__later__"))).toBe(false);
    expect(declared).toContain("mcp__mixed__echo");
    expect(declared.filter((n) => n.startsWith("mcp__mixed__"))).toEqual(["mcp__mixed__echo"]);
    expect(toolNames(0)).toEqual(expect.arrayContaining(["codemode", "tool_search"]));
    // Servers with undeclared tools are named in the system prompt, sorted, with how to reach them.
    const section = serversSection(0)!.split("\n");
    expect(section[0]).toMatch(/codemode scripts.*Load the tools of `tool_search` servers with `tool_search`\.$/);
    expect(section.slice(1).map((l) => l.replace(/: .*/, ""))).toEqual(["- mcp__later (tool_search)", "- mcp__mixed (codemode)", "- mcp__plain (codemode)"]);
    expect(section).toContain("- mcp__plain (codemode): Plain tools for tests");
    // What a script can call: every registered tool but the hidden ones.
    const callable = (toolMessages(1)[0].content as string).split("\n").at(-1)!.split(",");
    expect(callable).toEqual(expect.arrayContaining(["mcp__plain__echo", "mcp__plain__add", "mcp__mixed__echo", "mcp__later__echo", "mcp__near__echo"]));
    expect(callable).not.toContain("mcp__mixed__add");

    // pi mcp list: each server's exposure, and the tools whose own exposure differs.
    const list = await runCli(["mcp", "list", "--json"], e);
    expect(list.code).toBe(0);
    const by = Object.fromEntries(JSON.parse(list.stdout).servers.map((s: any) => [s.name, s]));
    expect([by.plain.exposure, by.mixed.exposure, by.near.exposure, by.later.exposure]).toEqual(["codemode", "codemode", "direct", "deferred"]);
    expect(by.plain.toolExposure).toBeUndefined();
    expect(by.mixed.toolExposure).toMatchObject({ mcp__mixed__echo: "direct", mcp__mixed__add: "hidden" });
    const text = await runCli(["mcp", "list"], e);
    expect(text.stdout).toMatch(/^mixed: connected \(codemode, global\)$/m);
    expect(text.stdout).toMatch(/tools: .*mcp__mixed__echo \[direct\]/);
  });
});
