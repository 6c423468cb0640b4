/**
 * End to end: the thinking level names pi 1.6 takes on the command line — `--thinking <level>`,
 * a model's `:level` suffix, the defaultThinkingLevel and modelThinkingLevels settings, RPC's
 * set_thinking_level — each clamped to what the model offers: `xhigh` and `max` only where the
 * model's thinkingLevelMap maps them, and then the mapped provider value is what is sent. A bad
 * name is warned about with the valid ones listed (the run goes on with the default, as in 1.6).
 * The level is read back from the session file and from the request the loopback model server
 * received.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;

type Body = { reasoning_effort?: unknown; thinking?: unknown; output_config?: unknown } | null;

/** The session's entries (the one session file in `dir`). */
function sessionEntries(dir: string): Array<Record<string, unknown>> {
  const file = readdirSync(dir).find((f) => f.endsWith(".jsonl"));
  return file ? readFileSync(join(dir, file), "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
}

/** The body of the last model request the server received. */
function lastBody(): Body {
  const chats = server.stats().requests.filter((q: { path: string }) => q.path.endsWith("/chat/completions") || q.path.endsWith("/messages"));
  return (chats.at(-1)?.body ?? null) as Body;
}

/**
 * Run one prompt; the thinking level the session recorded and the reasoning effort the request
 * carried. `keep` keeps the sessions of earlier runs (for --continue).
 */
async function run(args: string[], settings: Record<string, unknown> = {}, keep = false): Promise<{ level: string | undefined; levels: unknown[]; effort: unknown; body: Body; stderr: string; code: number | null }> {
  const dir = join(e.root, "sessions");
  if (!keep) rmSync(dir, { recursive: true, force: true });
  writeFileSync(join(e.agentDir, "settings.json"), JSON.stringify({ defaultProvider: "mock", defaultModel: "plain", ...settings }));
  server.reset();
  const r = await runCli(["--session-dir", dir, ...args, "-p", "hi"], e);
  const levels = sessionEntries(dir).filter((x) => x.type === "thinking_level_change").map((x) => x.thinkingLevel);
  const body = lastBody();
  return { level: levels.at(-1) as string | undefined, levels, effort: body?.reasoning_effort, body, stderr: r.stderr, code: r.code };
}

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [], default: { text: "ok" } } });
  e = makeE2eEnv(server.url);
  const model = (id: string, extra: object) => ({ id, name: id, reasoning: true, input: ["text"], contextWindow: 128000, maxTokens: 4096, ...extra });
  writeFileSync(
    join(e.agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: {
          baseUrl: `${server.url}/v1`,
          api: "openai-completions",
          apiKey: "MOCK_KEY_VALUE_123",
          compat: { supportsReasoningEffort: true },
          // "plain" thinks up to high; "extra" also maps xhigh; "deep" maps xhigh and max; "ultra"
          // maps max (only) to its own provider value; "capped" maps max to null; "gaps" offers
          // neither minimal nor medium.
          models: [
            model("plain", {}),
            model("extra", { thinkingLevelMap: { xhigh: "xhigh" } }),
            model("deep", { thinkingLevelMap: { xhigh: "xhigh", max: "max" } }),
            model("ultra", { thinkingLevelMap: { max: "ultra" } }),
            model("capped", { thinkingLevelMap: { xhigh: "xhigh", max: null } }),
            model("gaps", { thinkingLevelMap: { minimal: null, medium: null } }),
          ],
        },
        // Claude with adaptive thinking whose catalog entry maps max (as pi-ai 1.6's does), and an older one.
        claude: {
          baseUrl: server.url,
          api: "anthropic-messages",
          apiKey: "MOCK_ANTHROPIC_KEY_456",
          models: [model("adaptive", { compat: { forceAdaptiveThinking: true }, thinkingLevelMap: { xhigh: "xhigh", max: "max" } }), model("budget", {})],
        },
      },
    }),
  );
});

afterAll(async () => {
  await server?.close();
  e?.cleanup();
});

describe("thinking levels as pi 1.6 names them", () => {
  it("--thinking max on a model that maps max: the session records max and the request carries the mapped value", async () => {
    const deep = await run(["--model", "mock/deep", "--thinking", "max"]);
    expect([deep.code, deep.level, deep.effort, deep.stderr]).toEqual([0, "max", "max", ""]);
    const ultra = await run(["--model", "mock/ultra", "--thinking", "max"]);
    expect([ultra.level, ultra.effort]).toEqual(["max", "ultra"]);
    // xhigh is not offered by "ultra": it goes up to max, as pi 1.6 clamps upward first
    const up = await run(["--model", "mock/ultra", "--thinking", "xhigh"]);
    expect([up.level, up.effort]).toEqual(["max", "ultra"]);
  });

  it("--thinking max on a model without max comes down to its highest level", async () => {
    const plain = await run(["--thinking", "max"]);
    expect([plain.code, plain.level, plain.effort]).toEqual([0, "high", "high"]);
    const extra = await run(["--model", "mock/extra", "--thinking", "max"]);
    expect([extra.level, extra.effort]).toEqual(["xhigh", "xhigh"]);
    const capped = await run(["--model", "mock/capped", "--thinking", "max"]);
    expect([capped.level, capped.effort]).toEqual(["xhigh", "xhigh"]);
  });

  it("Anthropic adaptive thinking: max is sent as effort max; a budget model runs max as high", async () => {
    const adaptive = await run(["--model", "claude/adaptive", "--thinking", "max"]);
    expect(adaptive.code).toBe(0);
    expect(adaptive.level).toBe("max");
    expect(adaptive.body).toMatchObject({ thinking: { type: "adaptive" }, output_config: { effort: "max" } });
    const budget = await run(["--model", "claude/budget", "--thinking", "max"]);
    expect(budget.level).toBe("high");
    expect(budget.body).toMatchObject({ thinking: { type: "enabled" } });
    expect(budget.body?.output_config).toBeUndefined();
  });

  it("every name 1.6 lists is taken; one above what the model offers comes down to its highest", async () => {
    for (const [name, want] of [["off", "off"], ["minimal", "minimal"], ["low", "low"], ["medium", "medium"], ["high", "high"], ["xhigh", "high"], ["max", "high"]] as const) {
      const r = await run(["--thinking", name]);
      expect([name, r.level, r.stderr]).toEqual([name, want, ""]);
    }
  });

  it("a level the model does not offer becomes the nearest higher one it offers", async () => {
    const medium = await run(["--model", "mock/gaps", "--thinking", "medium"]);
    expect([medium.level, medium.effort]).toEqual(["high", "high"]);
    const minimal = await run(["--model", "mock/gaps:minimal"]);
    expect(minimal.level).toBe("low");
  });

  it("a model's :max suffix, defaultThinkingLevel and modelThinkingLevels \"max\" mean the same", async () => {
    const suffix = await run(["--model", "mock/deep:max"]);
    expect([suffix.code, suffix.level, suffix.effort]).toEqual([0, "max", "max"]);
    const setting = await run([], { defaultThinkingLevel: "max" });
    expect([setting.level, setting.effort]).toEqual(["high", "high"]);
    const onDeep = await run(["--model", "mock/deep"], { defaultThinkingLevel: "max" });
    expect([onDeep.level, onDeep.effort]).toEqual(["max", "max"]);
    const perModel = await run(["--model", "mock/deep"], { modelThinkingLevels: { "mock/deep": "max" } });
    expect([perModel.level, perModel.effort]).toEqual(["max", "max"]);
  });

  it("a session whose thinking_level_change says max resumes at max; on a model without max it runs at the model's highest", async () => {
    const first = await run(["--model", "mock/deep", "--thinking", "max"]);
    expect(first.levels).toEqual(["max"]);
    const resumed = await run(["-c"], {}, true);
    expect([resumed.code, resumed.effort]).toEqual([0, "max"]);
    // another model named on the command line: the session's level, clamped to that model (1.6)
    const other = await run(["-c", "--model", "mock/extra"], {}, true);
    expect([other.code, other.effort]).toEqual([0, "xhigh"]);
    const plain = await run(["-c", "--model", "mock/plain"], {}, true);
    expect([plain.code, plain.effort]).toEqual([0, "high"]);
  });

  it("a bad level is a warning naming the valid ones; the run goes on with the default", async () => {
    const r = await run(["--thinking", "extreme"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/invalid thinking level "extreme".*valid values: off, minimal, low, medium, high, xhigh, max/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.level).toBe("medium");
  });
});

describe("RPC: thinking level max", () => {
  let client: RpcClient;
  beforeAll(async () => {
    writeFileSync(join(e.agentDir, "settings.json"), JSON.stringify({ defaultProvider: "mock", defaultModel: "plain" }));
    client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false, args: ["--session-dir", join(e.root, "rpc-sessions")] });
    await client.start();
  });
  afterAll(async () => {
    await client?.stop();
  });

  it("set_thinking_level max: max on a model that maps it (offered, cycled, recorded, sent), clamped on one that does not", async () => {
    await client.setThinkingLevel("max");
    expect((await client.getState()).thinkingLevel).toBe("high");
    expect(await client.getAvailableThinkingLevels()).toEqual(["off", "minimal", "low", "medium", "high"]);

    await client.setModel("mock", "deep");
    expect(await client.getAvailableThinkingLevels()).toEqual(["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
    await client.setThinkingLevel("max");
    const state = await client.getState();
    expect(state.thinkingLevel).toBe("max");
    expect(await client.cycleThinkingLevel()).toEqual({ level: "off" });
    await client.setThinkingLevel("xhigh");
    expect(await client.cycleThinkingLevel()).toEqual({ level: "max" });

    server.reset();
    await client.promptAndWait("hi");
    expect(lastBody()?.reasoning_effort).toBe("max");
    const levels = sessionEntries(join(e.root, "rpc-sessions")).filter((x) => x.type === "thinking_level_change").map((x) => x.thinkingLevel);
    expect(levels.at(-1)).toBe("max");
    // picked for this session only: settings.json gets no defaultThinkingLevel (pi 1.6)
    expect(JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8")).defaultThinkingLevel).toBeUndefined();
  });
});
