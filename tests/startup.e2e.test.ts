/**
 * What start-up loads: `pi --version` loads none of blessed, a provider SDK, the MCP SDK or the
 * model catalog; print and RPC start without blessed or the MCP SDK, and RPC answers get_state
 * without any provider module. Checked by tracing every module the process resolves.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, ROOT, type E2eEnv } from "./helpers/e2e.js";

const BIN = join(ROOT, "dist", "bundle", "cli.js");
const TRACER = join(ROOT, "tests", "fixtures", "trace-imports.mjs");
let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "traced" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

/** Async on purpose: the LLM server runs in this process, a sync spawn would starve it. */
async function traced(args: string[], input = "", env: Record<string, string> = {}): Promise<{ modules: string[]; stdout: string; status: number | null }> {
  const file = join(e.root, `trace-${Math.random().toString(16).slice(2)}.txt`);
  const child = spawn(process.execPath, ["--import", TRACER, BIN, ...args], { cwd: e.cwd, env: { ...e.env, ...env, PI_TRACE_IMPORTS: file } });
  let stdout = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stdin.end(input);
  const status = await new Promise<number | null>((res) => child.on("exit", (c) => res(c)));
  const r = { stdout, status };
  let modules: string[] = [];
  try {
    modules = readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    /* nothing resolved */
  }
  rmSync(file, { force: true });
  return { modules: unbundled(modules), stdout: r.stdout, status: r.status };
}

/**
 * The bundle inlines pi-ai, its provider SDKs and the MCP SDK: each traced bundle file is
 * followed by the package files it carries (dist/bundle-contents.json, written by the build),
 * as `bundled:/node_modules/<package path>`, so the patterns below see what a run loads.
 */
function unbundled(modules: string[]): string[] {
  const contents = JSON.parse(readFileSync(join(ROOT, "dist", "bundle-contents.json"), "utf8")) as Record<string, string[]>;
  return modules.flatMap((m) => {
    const rel = /\/dist\/bundle\/(.+)$/.exec(m)?.[1];
    return [m, ...(rel ? (contents[rel] ?? []).map((p) => `bundled:/node_modules/${p}`) : [])];
  });
}

const HEAVY = {
  blessed: /\/node_modules\/blessed\//,
  provider: /\/node_modules\/(@earendil-works\/pi-ai\/dist\/api|@mariozechner\/pi-ai|openai|@anthropic-ai|@google|@mistralai|@aws-sdk)\//,
  mcp: /\/node_modules\/@modelcontextprotocol\//,
  // pi-ai's generated catalog module, or our catalog JSON (dist/model-catalog/, read with readFileSync)
  catalog: /models\.generated\.js|model-catalog\//,
};

describe("start-up loads only what the path needs", () => {
  it("--version: nothing heavy at all", async () => {
    const r = await traced(["--version"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(r.modules.length).toBeGreaterThan(0);
    for (const [name, re] of Object.entries(HEAVY)) expect([name, r.modules.filter((m) => re.test(m))]).toEqual([name, []]);
  });

  it("--list-models reads the model catalog (the tracer sees it; --version above does not)", async () => {
    const r = await traced(["--list-models", "claude-opus-5-5"], "", { ANTHROPIC_API_KEY: "test-key" });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("claude-opus-5-5");
    expect(r.modules).toEqual(expect.arrayContaining([expect.stringMatching(/^read:.*model-catalog\/models\.json$/)]));
  });

  it("a built-in default model: only its provider's part of the catalog is read, not the whole models.json", async () => {
    const agentDir = join(e.root, "agent-anthropic-default");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "anthropic", defaultModel: "claude-opus-5-5", quietStartup: true }));
    const r = await traced(["--mode", "rpc", "--no-session"], JSON.stringify({ id: "1", type: "get_state" }) + "\n", { PI_CODING_AGENT_DIR: agentDir, ANTHROPIC_API_KEY: "test-key" });
    expect(r.status).toBe(0);
    const state = JSON.parse(r.stdout.split("\n").find((l) => l.includes('"command":"get_state"'))!);
    expect(state.data.model).toMatchObject({ provider: "anthropic", id: "claude-opus-5-5" });
    expect(r.modules).toEqual(expect.arrayContaining([expect.stringMatching(/^read:.*model-catalog\/providers\.json$/)]));
    expect(r.modules.filter((m) => /^read:.*model-catalog\/models\.json$/.test(m))).toEqual([]);
  });

  // After answering, RPC warms the current model's provider module (pi-ai's provider modules import
  // its model catalog themselves), so only that one provider family may appear here.
  it("rpc get_state: no blessed, no MCP SDK; only the model's own provider module, warmed after the answer", async () => {
    const r = await traced(["--mode", "rpc"], JSON.stringify({ id: "1", type: "get_state" }) + "\n");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('"command":"get_state"');
    for (const name of ["blessed", "mcp"] as const) expect([name, r.modules.filter((m) => HEAVY[name].test(m))]).toEqual([name, []]);
    const providers = r.modules.filter((m) => /@earendil-works\/pi-ai\/dist\/api\//.test(m)).map((m) => m.replace(/.*\/api\//, ""));
    const otherApis = /^(anthropic-messages|google-generative-ai|google-vertex|mistral-conversations|bedrock-converse-stream|azure-openai-responses|openai-responses|openai-codex-responses|pi-messages)\.js$/;
    expect(providers.filter((p) => otherApis.test(p))).toEqual([]);
    expect(r.modules.filter((m) => /node_modules\/(@anthropic-ai|@google|@mistralai|@aws-sdk)\//.test(m))).toEqual([]);
    // The bundle requires Node's built-ins (scripts/bundle.mjs): an ESM import would build each
    // one's facade, running its lazy getters. These are imported by our code only.
    expect(r.modules.filter((m) => /^node:(child_process|os|crypto|readline|worker_threads|string_decoder)$/.test(m))).toEqual([]);
  });

  it("print: no provider API module beyond the direct path's; no blessed, no MCP SDK", async () => {
    const r = await traced(["-p", "--no-session", "hi"]);
    expect(r.stdout).toBe("traced\n");
    expect(r.modules.filter((m) => HEAVY.blessed.test(m))).toEqual([]);
    expect(r.modules.filter((m) => HEAVY.mcp.test(m))).toEqual([]);
    const piAi = r.modules.filter((m) => /@earendil-works\/pi-ai\/dist\/api\//.test(m)).map((m) => m.replace(/.*\/api\//, ""));
    // The direct path serves the call with pi-ai's message transformation: no pi-ai API module
    // streams it, and the `openai` SDK itself is not loaded.
    expect(piAi).toContain("transform-messages.js");
    expect(piAi.filter((m) => m !== "transform-messages.js")).toEqual([]);
    expect(r.modules.filter((m) => /node_modules\/openai\/(?!version\.js$|package\.json$)/.test(m))).toEqual([]);
  });
});

describe("PI_TIMING", () => {
  it("prints where start-up time goes: module loading, each plugin's setup, each extension's load", async () => {
    const ext = join(ROOT, "tests", "fixtures", "extensions", "greeter.ts");
    const child = spawn(process.execPath, [BIN, "-p", "--no-session", "-e", ext, "hi"], { cwd: e.cwd, env: { ...e.env, PI_TIMING: "1" } });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    child.stdin.end();
    const code = await new Promise((res) => child.on("exit", res));
    expect(code).toBe(0);
    expect(stderr).toMatch(/PI_TIMING \(ms\):/);
    expect(stderr).toMatch(/node start \+ module loading/);
    expect(stderr).toMatch(/plugin tools/);
    expect(stderr).toMatch(/plugin mode-print/);
    expect(stderr).toContain(`extension ${ext}`);
    expect(stderr).toMatch(/total since process start/);
  });
});
