/**
 * End to end: pi 1.6's settings keys with behaviour against the real
 * CLI (dist/bundle/cli.js), the loopback LLM server and throwaway agent dirs.
 * docs/pi-1.6-compat.md is the table these check.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { startHttpProxy, type HttpProxy } from "./fixtures/http-proxy.mjs";
import { RawRpc } from "./helpers/rpc.js";
import { ROOT, makeE2eEnv, runCli as runCliRaw, type E2eEnv } from "./helpers/e2e.js";

const STDIO = join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs");

jest.setTimeout(180_000);

const runCli = (args: string[], e: Pick<E2eEnv, "env" | "cwd">, opts: { input?: string } = {}) => runCliRaw(args, e, { timeoutMs: 150_000, ...opts });

let llm: LlmServer;
let proxy: HttpProxy;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  llm = await startLlmServer({ script: { turns: [] } });
  proxy = await startHttpProxy();
});
afterAll(async () => {
  await llm.close();
  await proxy.close();
});
afterEach(() => {
  while (envs.length) envs.pop()!.cleanup();
});

function env(settings: Record<string, unknown> = {}): E2eEnv {
  const e = makeE2eEnv(llm.url, { settings });
  // No proxy from the machine running the tests.
  for (const k of Object.keys(e.env)) if (/^(https?_proxy|no_proxy|all_proxy)$/i.test(k)) delete e.env[k];
  envs.push(e);
  return e;
}

const requests = () => llm.stats().requests.filter((r) => r.path === "/v1/chat/completions");
function answer(script: unknown = { default: { text: "ok" } }) {
  llm.setScript(script as never);
  llm.reset();
}
const llmHostPort = () => new URL(llm.url).host;

describe("network settings", () => {
  it("httpProxy (global settings) routes provider requests through the proxy", async () => {
    const e = env({ httpProxy: proxy.url });
    answer({ default: { text: "via proxy" } });
    proxy.log.length = 0;
    const r = await runCli(["-p", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("via proxy\n");
    expect(requests()).toHaveLength(1);
    expect(proxy.log.map((l) => l.target)).toContainEqual(expect.stringContaining(llmHostPort()));
  });

  it("httpProxy in a project's settings is ignored (global only) and said so", async () => {
    const e = env();
    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify({ httpProxy: proxy.url }));
    answer({ default: { text: "direct" } });
    proxy.log.length = 0;
    const r = await runCli(["-p", "-a", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("direct\n");
    expect(proxy.log).toHaveLength(0);
    expect(r.stderr).toMatch(/httpProxy in the project settings .* is ignored/);
  });

  it("a bad httpProxy value is reported naming the key; the run goes on without a proxy", async () => {
    const e = env({ httpProxy: "not a url" });
    answer({ default: { text: "fine" } });
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("fine\n");
    expect(r.stderr).toMatch(/httpProxy: "not a url" is not a proxy URL/);
  });

  it("httpIdleTimeoutMs: a server that stops sending fails the request with a timeout error", async () => {
    const e = env({ httpIdleTimeoutMs: 1500, retry: { enabled: false, provider: { maxRetries: 0 } } });
    answer({ default: { text: "never", hang: true, hangTimes: "always" } });
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no data from http:\/\/127\.0\.0\.1:\d+ for 1500 ms \(httpIdleTimeoutMs\)/);
    expect(requests()).toHaveLength(1);
  });

  it("httpIdleTimeoutMs: no response headers within the timeout fails the request too", async () => {
    const e = env({ httpIdleTimeoutMs: 1500, retry: { enabled: false, provider: { maxRetries: 0 } } });
    answer({ default: { text: "late", firstByteDelayMs: 60_000 } });
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/httpIdleTimeoutMs|timed out/i);
    expect(r.stdout).not.toContain("late");
  });
});

/** Adds a reasoning model "mock/mock-reasoner" to the env's models.json. */
function addReasoner(e: E2eEnv): void {
  const path = join(e.agentDir, "models.json");
  const models = JSON.parse(readFileSync(path, "utf8"));
  for (const id of ["mock-reasoner", "mock-reasoner-2"]) models.providers.mock.models.push({ id, name: id, reasoning: true, input: ["text"], contextWindow: 128000, maxTokens: 4096 });
  writeFileSync(path, JSON.stringify(models));
}
const effort = (i = 0) => requests()[i]!.body.reasoning_effort;

describe("modelThinkingLevels", () => {
  it("a model's entry beats defaultThinkingLevel at start-up; --thinking and :level still win; other models keep the default", async () => {
    const e = env({ defaultThinkingLevel: "low", modelThinkingLevels: { "mock/mock-reasoner": "high" } });
    addReasoner(e);
    answer();
    const r = await runCli(["-p", "--model", "mock/mock-reasoner", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(effort()).toBe("high");

    answer();
    expect((await runCli(["-p", "--model", "mock/mock-reasoner", "--thinking", "minimal", "hi"], e)).code).toBe(0);
    expect(effort()).toBe("minimal");

    answer();
    expect((await runCli(["-p", "--model", "mock/mock-reasoner:medium", "hi"], e)).code).toBe(0);
    expect(effort()).toBe("medium");

    answer();
    expect((await runCli(["-p", "--model", "mock/mock-reasoner-2", "hi"], e)).code).toBe(0);
    expect(effort()).toBe("low");
  });

  it("switching to a model with an entry (RPC set_model) starts it at that level", async () => {
    const e = env({ defaultThinkingLevel: "low", modelThinkingLevels: { "mock/mock-reasoner": "high" } });
    addReasoner(e);
    const rpc = new RawRpc(e, ["--model", "mock/mock-reasoner-2"]);
    try {
      rpc.send({ id: "s1", type: "get_state" });
      const before = await rpc.waitFor((r) => r.id === "s1", "get_state");
      expect(before.data.thinkingLevel).toBe("low");
      rpc.send({ id: "m", type: "set_model", provider: "mock", modelId: "mock-reasoner" });
      expect((await rpc.waitFor((r) => r.id === "m", "set_model")).success).toBe(true);
      rpc.send({ id: "s2", type: "get_state" });
      const after = await rpc.waitFor((r) => r.id === "s2", "get_state");
      expect(after.data.thinkingLevel).toBe("high");
    } finally {
      rpc.end();
      await rpc.closed;
    }
  });

  it("applies to the default model from settings, and is not reported as unsupported", async () => {
    const e = env({ defaultModel: "mock-reasoner", defaultThinkingLevel: "minimal", modelThinkingLevels: { "mock/mock-reasoner": "high", "mock/other": "low" } });
    addReasoner(e);
    answer();
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/modelThinkingLevels/);
    expect(effort()).toBe("high");
  });
});

describe("extensions: builtin:<name> entries", () => {
  const toolNames = (i = 0): string[] => (requests()[i]!.body.tools ?? []).map((t: any) => t.function.name);
  const mcpTools = () => toolNames().filter((n) => n.startsWith("mcp"));
  const withServer = (settings: Record<string, unknown>) => {
    const e = env({ ...settings, mcp: { connectTimeoutMs: 120_000 } });
    writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [STDIO], exposure: "direct" } } }));
    return e;
  };
  const run = async (e: E2eEnv, args: string[] = []) => {
    answer();
    const r = await runCli(["-p", ...args, "hi"], e);
    expect(r.code).toBe(0);
    return r;
  };

  it("-builtin:mcp turns MCP off; a trusted project's +builtin:mcp turns it back on; -e builtin:mcp too", async () => {
    const e = withServer({ extensions: ["-builtin:mcp"] });
    const r = await run(e);
    expect(r.stderr).toBe("");
    expect(toolNames()).toContain("read");
    expect(mcpTools()).toEqual([]);

    await run(e, ["-e", "builtin:mcp"]);
    expect(mcpTools()).toEqual(expect.arrayContaining(["mcp__demo__echo"]));

    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify({ extensions: ["+builtin:mcp"] }));
    await run(e, ["-a"]);
    expect(mcpTools()).toEqual(expect.arrayContaining(["mcp__demo__echo"]));
    // An untrusted project's entry does not count.
    await run(e, ["-na"]);
    expect(mcpTools()).toEqual([]);
  });

  it("!builtin:* turns every built-in off; -builtin:* matches nothing (exact names, as 1.6) and says so", async () => {
    const e = withServer({ extensions: ["!builtin:*"] });
    await run(e);
    expect(mcpTools()).toEqual([]);

    const e2 = withServer({ extensions: ["-builtin:*"] });
    const r = await run(e2);
    expect(r.stderr).toMatch(/"-builtin:\*" matches no built-in extension.*"!builtin:\*"/);
    expect(mcpTools()).toEqual(expect.arrayContaining(["mcp__demo__echo"]));
  });

  it("--no-extensions turns the built-ins off; -ne -e builtin:mcp keeps only MCP", async () => {
    const e = withServer({});
    await run(e, ["-ne"]);
    expect(mcpTools()).toEqual([]);
    await run(e, ["-ne", "-e", "builtin:mcp"]);
    expect(mcpTools()).toEqual(expect.arrayContaining(["mcp__demo__echo"]));
  });
});

describe("pi config -l, pi update flags", () => {
  it("pi config lists the built-in extensions as the settings decide; -l the project's overrides", async () => {
    const e = env({ extensions: ["-builtin:mcp"] });
    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify({ extensions: ["-builtin:codemode", "+builtin:mcp"] }));
    const g = await runCli(["config"], e);
    expect(g.code).toBe(0);
    expect(g.stdout).toMatch(/\[ \] mcp/);
    expect(g.stdout).toMatch(/\[x\] codemode/);
    expect(g.stdout).toMatch(/No packages configured/);
    const l = await runCli(["config", "-l"], e);
    expect(l.code).toBe(0);
    expect(l.stdout).toMatch(/\[x\] mcp/);
    expect(l.stdout).toMatch(/\[ \] codemode/);
    expect(l.stdout).toMatch(/No project packages configured \(\.pi\/settings\.json\)/);
    const h = await runCli(["config", "--help"], e);
    expect(h.stdout).toMatch(/-l, --local/);
  });

  it("pi update: no target means the app itself (not done here, exit 1); --models, --extensions, --all", async () => {
    const e = env();
    llm.reset();
    const self = await runCli(["update"], e);
    expect(self.code).toBe(1);
    expect(self.stderr).toMatch(/itself is not updated by this command.*update --extensions/);
    expect((await runCli(["update", "--self"], e)).code).toBe(1);

    const models = await runCli(["update", "--models"], e);
    expect(models.code).toBe(0);
    expect(models.stdout).toMatch(/nothing to refresh/);

    const ext = await runCli(["update", "--extensions"], e);
    expect(ext.code).toBe(0);
    expect(ext.stdout).toMatch(/Nothing to update/);

    const all = await runCli(["update", "--all"], e);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/Nothing to update/);
    expect(all.stderr).toMatch(/itself is not updated/);

    const bad = await runCli(["update", "--frobnicate"], e);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown option --frobnicate/);

    const help = await runCli(["update", "--help"], e);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--models/);
    expect(requests()).toHaveLength(0);
  });
});
