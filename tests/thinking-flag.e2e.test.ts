/**
 * End to end: the thinking level names pi 1.6 takes on the command line — `--thinking <level>`,
 * a model's `:level` suffix and the defaultThinkingLevel setting — with `max` meaning the highest
 * level the model offers (clamped per model), and a bad name warned about with the valid ones
 * listed (the run goes on with the default, as in 1.6). The level is read back from the session
 * file and from the request the loopback model server received.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;

/** Run one prompt; the thinking level the session recorded and the reasoning effort the request carried. */
async function run(args: string[], settings: Record<string, unknown> = {}): Promise<{ level: string | undefined; effort: unknown; stderr: string; code: number | null }> {
  const dir = join(e.root, "sessions");
  rmSync(dir, { recursive: true, force: true });
  writeFileSync(join(e.agentDir, "settings.json"), JSON.stringify({ defaultProvider: "mock", defaultModel: "plain", ...settings }));
  server.reset();
  const r = await runCli(["--session-dir", dir, ...args, "-p", "hi"], e);
  const file = readdirSync(dir).find((f) => f.endsWith(".jsonl"));
  const entries = file ? readFileSync(join(dir, file), "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
  const level = entries.filter((x) => x.type === "thinking_level_change").at(-1)?.thinkingLevel;
  const chat = server.stats().requests.find((q: { path: string }) => q.path.endsWith("/chat/completions"));
  return { level, effort: (chat?.body as { reasoning_effort?: unknown } | null)?.reasoning_effort, stderr: r.stderr, code: r.code };
}

describe("thinking levels as pi 1.6 names them", () => {
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
            // "plain" thinks up to high; "deep" also maps xhigh; "gaps" offers neither minimal nor medium.
            models: [model("plain", {}), model("deep", { thinkingLevelMap: { xhigh: "xhigh" } }), model("gaps", { thinkingLevelMap: { minimal: null, medium: null } })],
          },
        },
      }),
    );
  });

  afterAll(async () => {
    await server?.close();
    e?.cleanup();
  });

  it("--thinking max is the highest level the model offers", async () => {
    const plain = await run(["--thinking", "max"]);
    expect(plain.code).toBe(0);
    expect(plain.level).toBe("high");
    expect(plain.effort).toBe("high");
    const deep = await run(["--model", "mock/deep", "--thinking", "max"]);
    expect(deep.level).toBe("xhigh");
    expect(deep.effort).toBe("xhigh");
  });

  it("every name 1.6 lists is taken; one above what the model offers comes down to its highest", async () => {
    for (const [name, want] of [["off", "off"], ["minimal", "minimal"], ["low", "low"], ["medium", "medium"], ["high", "high"], ["xhigh", "high"]] as const) {
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

  it("a model's :max suffix and defaultThinkingLevel \"max\" mean the same", async () => {
    const suffix = await run(["--model", "mock/deep:max"]);
    expect(suffix.code).toBe(0);
    expect(suffix.level).toBe("xhigh");
    const setting = await run([], { defaultThinkingLevel: "max" });
    expect(setting.level).toBe("high");
  });

  it("a bad level is a warning naming the valid ones; the run goes on with the default", async () => {
    const r = await run(["--thinking", "extreme"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/invalid thinking level "extreme".*valid values: off, minimal, low, medium, high, xhigh, max/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.level).toBe("medium");
  });
});
