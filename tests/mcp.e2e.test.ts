/**
 * End to end: the real CLI (dist/) with MCP servers written with the SDK (tests/fixtures/mcp):
 * the loopback LLM server scripts a call to `mcp__<server>__<tool>`, the result must reach the
 * next request. Covers stdio, streamable HTTP on 127.0.0.1, a crash mid-call, a server that never
 * answers, a bad command, project trust, search mode and `pi mcp add|list|remove` (get: plugins/mcp/cli.test.ts).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { startMcpHttpServer, type McpHttpServer } from "./fixtures/mcp/http-server.mjs";
import { ROOT, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

const STDIO = join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs");
const stdio = (...args: string[]) => ({ command: process.execPath, args: [STDIO, ...args] });

let llm: LlmServer;
let web: McpHttpServer;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  llm = await startLlmServer({ script: { turns: [] } });
  web = await startMcpHttpServer({ name: "web" });
});
afterAll(async () => {
  await llm.close();
  await web.close();
});
afterEach(() => {
  while (envs.length) envs.pop()!.cleanup();
});

/**
 * These tests are about tools declared to the model: mcp.toolMode is set explicitly ("auto":
 * direct up to 40 tools, the `mcp` tool beyond). Without it, pi 1.6's default exposure
 * "codemode" applies (tests/mcp-codemode.e2e.test.ts).
 */
function env(settings: Record<string, unknown>): E2eEnv {
  const e = makeE2eEnv(llm.url, { settings: { ...settings, mcp: { toolMode: "auto", ...(settings.mcp as object | undefined) } } });
  envs.push(e);
  return e;
}

/** Script: call `tool` with `args`, then answer "done". */
function callThenDone(tool: string, args: Record<string, unknown> = {}) {
  llm.setScript({ turns: [{ text: "calling", toolCalls: [{ name: tool, arguments: args }] }, { text: "done" }] });
  llm.reset();
}

const requests = () => llm.stats().requests.filter((r) => r.path === "/v1/chat/completions");
const toolMessage = (i: number) => requests()[i]!.body.messages.find((m: any) => m.role === "tool");
const toolNames = (i: number): string[] => (requests()[i]!.body.tools ?? []).map((t: any) => t.function.name);

describe("pi with MCP servers", () => {
  it("stdio: the model calls mcp__demo__echo and the result reaches the next request", async () => {
    const e = env({ mcpServers: { demo: stdio() } });
    callThenDone("mcp__demo__echo", { text: "from the model" });
    const r = await runCli(["-p", "echo something"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    const tools = requests()[0]!.body.tools as any[];
    const echo = tools.find((t) => t.function.name === "mcp__demo__echo");
    expect(echo.function.parameters).toEqual({ type: "object", properties: { text: { type: "string", description: "Text to echo" } }, required: ["text"] });
    expect(toolNames(0)).toEqual(expect.arrayContaining(["read", "bash", "mcp__demo__add"]));
    expect(toolMessage(1).content).toBe("echo:from the model");
  });

  it("streamable HTTP on 127.0.0.1: a call and its result", async () => {
    const e = env({ mcpServers: { web: { type: "http", url: web.url, headers: { "X-Token": "${PI_E2E_MCP_TOKEN}" } } } });
    callThenDone("mcp__web__add", { a: 40, b: 2 });
    const r = await runCli(["-p", "add"], e, { env: { PI_E2E_MCP_TOKEN: "secret-7" } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(toolMessage(1).content).toBe("42");
    const last = web.stats().requests.filter((q) => q.method === "POST").at(-1);
    expect(last!.headers["x-token"]).toBe("secret-7");
  });

  it("a server that crashes mid-call: the model gets an error result, stderr a diagnostic, the run still ends normally", async () => {
    const e = env({ mcpServers: { demo: stdio() } });
    callThenDone("mcp__demo__crash");
    const r = await runCli(["-p", "crash"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    expect(toolMessage(1).content).toMatch(/MCP tool "crash" on server "demo" failed: .*(closed the connection|exited)/);
    expect(r.stderr).toMatch(/error: mcp: MCP server "demo" stopped: .*\/mcp reconnect demo/);
  });

  it("a server that never answers and a bad command: diagnostics at start, the working server's tools still run", async () => {
    const e = env({
      mcpServers: { silent: stdio("--silent"), bad: { command: "pi-no-such-command-xyz" }, demo: { ...stdio(), connectTimeoutMs: 120_000 } },
      mcp: { connectTimeoutMs: 1000 },
    });
    callThenDone("mcp__demo__add", { a: 1, b: 2 });
    const r = await runCli(["-p", "add"], e);
    expect(r.code).toBe(0);
    expect(toolMessage(1).content).toBe("3");
    expect(r.stderr).toMatch(/MCP server "silent" failed to start .*did not answer within 1 s \(setting mcp\.connectTimeoutMs\)/);
    expect(r.stderr).toMatch(/MCP server "bad" failed to start \(pi-no-such-command-xyz\): cannot start "pi-no-such-command-xyz": command not found \(ENOENT\)/);
    expect(toolNames(0).some((n) => n.startsWith("mcp__silent__") || n.startsWith("mcp__bad__"))).toBe(false);
  });

  it("an untrusted project's .mcp.json is skipped with a hint; the user's servers still run", async () => {
    const e = env({ mcpServers: { demo: stdio() } });
    writeFileSync(join(e.cwd, ".mcp.json"), JSON.stringify({ mcpServers: { proj: stdio() } }));
    callThenDone("mcp__demo__echo", { text: "x" });
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: mcp: skipped 1 project MCP server \(proj\): this project is not trusted\. To trust it, run pi with --trust, or add .* to "trustedProjects"/);
    expect(toolNames(0)).toContain("mcp__demo__echo");
    expect(toolNames(0).some((n) => n.startsWith("mcp__proj__"))).toBe(false);
  });

  it("many tools: one `mcp` tool is sent instead, and calls go through it", async () => {
    const e = env({ mcpServers: { big: stdio("--generated", "45") } });
    llm.setScript({
      turns: [
        { toolCalls: [{ name: "mcp", arguments: { action: "call", tool: "mcp__big__echo", arguments: { text: "through search" } } }] },
        { text: "done" },
      ],
    });
    llm.reset();
    const r = await runCli(["-p", "go"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(toolNames(0)).toContain("mcp");
    expect(toolNames(0).some((n) => n.startsWith("mcp__"))).toBe(false);
    expect(toolMessage(1).content).toBe("echo:through search");
  });

  it("pi mcp add | list | remove, with options the main CLI does not know", async () => {
    const e = env({});
    const add = await runCli(["mcp", "add", "--env", "GREETING=hello", "demo", "--", process.execPath, STDIO], e);
    expect(add.stderr).toBe("");
    expect(add.code).toBe(0);
    // (changed for pi 1.6) add writes <agentDir>/mcp.json; settings.json is left alone.
    const mcpJson = JSON.parse(readFileSync(join(e.agentDir, "mcp.json"), "utf8"));
    expect(mcpJson.mcpServers.demo).toEqual({ command: process.execPath, args: [STDIO], env: { GREETING: "hello" } });
    expect(JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8")).defaultModel).toBe("mock-model");

    const addWeb = await runCli(["mcp", "add", "-t", "http", "-H", "Authorization: Bearer ${WEB_TOKEN}", "web", web.url], e);
    expect(addWeb.stderr).toBe("");
    expect(addWeb.code).toBe(0);

    const list = await runCli(["mcp", "list"], e, { env: { WEB_TOKEN: "t" } });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("demo: connected (mcp.toolMode auto, global)");
    expect(list.stdout).toContain(`web: connected (mcp.toolMode auto, global)\n  ${web.url} (http)`);

    callThenDone("mcp__demo__env", { name: "GREETING" });
    const run = await runCli(["-p", "env"], e, { env: { WEB_TOKEN: "t" } });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(toolMessage(1).content).toBe("hello");
    expect(toolNames(0)).toEqual(expect.arrayContaining(["mcp__demo__env", "mcp__web__echo"]));

    const rm = await runCli(["mcp", "remove", "demo"], e);
    expect(rm.code).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(join(e.agentDir, "mcp.json"), "utf8")).mcpServers)).toEqual(["web"]);
  });
});
