/**
 * End to end: pi 1.6's RPC records — thinking_level_changed, session_info_changed and
 * bash_execution_update (streamed output carrying the bash command's id) — through the real CLI.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;
let client: RpcClient;
const events: any[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
  e = makeE2eEnv(server.url, { settings: { defaultModel: "mock-thinker" } });
  const model = (id: string, reasoning: boolean) => ({ id, name: id, reasoning, input: ["text"], contextWindow: 128000, maxTokens: 4096 });
  writeFileSync(
    join(e.agentDir, "models.json"),
    JSON.stringify({ providers: { mock: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "MOCK_KEY", models: [model("mock-thinker", true)] } } }),
  );
  client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
  await client.start();
  client.onEvent((ev) => void events.push(ev));
});

afterAll(async () => {
  await client?.stop();
  await server.close();
  e.cleanup();
});

async function waitFor<T>(find: () => T | undefined, what: string, ms = 30000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events.map((x) => x.type))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("pi 1.6 RPC records", () => {
  it("set_thinking_level and set_session_name announce the change", async () => {
    await client.setThinkingLevel("high");
    expect(await waitFor(() => events.find((x) => x.type === "thinking_level_changed"), "thinking_level_changed")).toEqual({ type: "thinking_level_changed", level: "high" });
    await client.setSessionName("rpc named");
    expect(await waitFor(() => events.find((x) => x.type === "session_info_changed"), "session_info_changed")).toEqual({ type: "session_info_changed", name: "rpc named" });
  });

  it("bash streams its output as bash_execution_update with the command's id", async () => {
    const r = await client.bash("echo first-chunk; echo second-chunk");
    expect(r.output).toContain("second-chunk");
    const updates = await waitFor(() => {
      const u = events.filter((x) => x.type === "bash_execution_update");
      return u.map((x) => x.delta).join("").includes("second-chunk") ? u : undefined;
    }, "bash_execution_update");
    expect(updates.map((x) => x.delta).join("")).toBe("first-chunk\nsecond-chunk\n");
    expect(updates.every((x) => x.id !== undefined && x.id === updates[0].id)).toBe(true);
  });

  it("a blocking extension dialog is announced with ui_prompt_start and ui_prompt_end", async () => {
    const out = join(e.root, "ui-out.jsonl");
    const c = new RpcClient({
      cliPath: CLI,
      cwd: e.cwd,
      env: { ...e.env, FIXTURE_OUT: out },
      inheritEnv: false,
      args: ["--no-session", "-e", resolve("tests/fixtures/extensions/extension-api.ts")],
      onExtensionUiRequest: () => true,
    });
    try {
      await c.start();
      expect(await c.prompt("/ask-go")).toBe("handled");
      const recs = () => (existsSync(out) ? readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
      await waitFor(() => (recs().some((r) => r.kind === "answer") ? true : undefined), "the answer");
      const seen = recs().filter((r) => ["ui_prompt_start", "answer", "ui_prompt_end"].includes(r.kind));
      expect(seen).toEqual([
        { kind: "ui_prompt_start", promptKind: "confirm", title: "Go ahead?" },
        { kind: "ui_prompt_end", promptKind: "confirm", title: "Go ahead?" },
        { kind: "answer", yes: true },
      ]);
    } finally {
      await c.stop();
    }
  });
});
