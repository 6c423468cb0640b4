/**
 * End to end: pi 1.6's assistant `rawStopReason` (the provider's own finish / stop reason) and
 * `usage.reasoning` (reasoning tokens) for the three built-in wire APIs the scripted server
 * speaks — openai-completions, anthropic-messages, openai-responses — in JSON-mode records, RPC
 * records, get_messages and the session file; with the streaming fast path and without it
 * (PI_STREAM_FAST_PATH=0: pi-ai 0.73.1 streams, the fields are read from the body beside it).
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RawRpc } from "./helpers/rpc.js";

let server: LlmServer;
let e: E2eEnv;
const rpcs: RawRpc[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  e = makeE2eEnv(server.url);
  // a third provider: OpenAI Responses at the same server
  const file = join(e.agentDir, "models.json");
  const models = JSON.parse(readFileSync(file, "utf8"));
  models.providers["mock-responses"] = {
    baseUrl: `${server.url}/v1`,
    api: "openai-responses",
    apiKey: "MOCK_RESPONSES_KEY_789",
    models: [{ id: "mock-gpt", name: "mock-gpt", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096 }],
  };
  writeFileSync(file, JSON.stringify(models));
  server.reset();
});
afterEach(async () => {
  for (const r of rpcs.splice(0)) await r.kill();
  e.cleanup();
});

const SCRIPT = {
  turns: [
    { toolCalls: [{ name: "ls", arguments: {} }], usage: { output: 20, reasoning: 7 } },
    { text: "done", usage: { output: 5, reasoning: 2 } },
  ],
};

/** What each API's answers carry: [rawStopReason, reasoning] of the tool-call turn and the final one. */
const APIS = [
  { model: "mock/mock-model", path: "/v1/chat/completions", want: [["tool_calls", 7], ["stop", 2]] },
  { model: "mock-anthropic/mock-claude", path: "/v1/messages", want: [["tool_use", 7], ["end_turn", 2]] },
  { model: "mock-responses/mock-gpt", path: "/v1/responses", want: [["completed", 7], ["completed", 2]] },
] as const;

type Msg = { role: string; stopReason: string; rawStopReason?: string; usage: { reasoning?: number; output: number } };
const details = (ms: Msg[]) => ms.filter((m) => m.role === "assistant").map((m) => [m.rawStopReason, m.usage.reasoning]);

describe("rawStopReason and usage.reasoning", () => {
  for (const fast of ["1", "0"]) {
    for (const api of APIS) {
      it(`JSON mode and the session file, ${api.model}, PI_STREAM_FAST_PATH=${fast}`, async () => {
        server.setScript(SCRIPT);
        const r = await runCli(["--model", api.model, "--mode", "json", "list the files"], e, { env: { PI_STREAM_FAST_PATH: fast } });
        expect(r.code).toBe(0);
        expect(server.stats().requests.filter((q) => q.method === "POST").map((q) => q.path)).toEqual([api.path, api.path]);
        const ends = jsonLines(r.stdout).filter((x) => x.type === "message_end").map((x) => x.message as Msg);
        expect(details(ends)).toEqual(api.want);
        expect(ends.filter((m) => m.role === "assistant").map((m) => m.stopReason)).toEqual(["toolUse", "stop"]);
        const sessions = join(e.agentDir, "sessions");
        const file = readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!;
        const stored = readFileSync(join(sessions, file), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((x) => x.type === "message").map((x) => x.message as Msg);
        expect(details(stored)).toEqual(api.want);
      });
    }
  }

  it("RPC: message_end records and get_messages, all three APIs in one session", async () => {
    server.setScript({ default: { text: "hi", usage: { output: 4, reasoning: 3 } } });
    const rpc = new RawRpc(e, []);
    rpcs.push(rpc);
    for (const [i, api] of APIS.entries()) {
      const [provider, modelId] = api.model.split("/");
      rpc.send({ id: `m${i}`, type: "set_model", provider, modelId });
      expect((await rpc.response(`m${i}`)).success).toBe(true);
      rpc.send({ id: `p${i}`, type: "prompt", message: `question ${i}` });
      await rpc.waitFor((r) => r.type === "agent_end" && rpc.records.filter((x) => x.type === "agent_end").indexOf(r) === i, `agent_end ${i}`);
    }
    const ends = rpc.records.filter((r) => r.type === "message_end" && r.message.role === "assistant").map((r) => r.message as Msg);
    expect(details(ends)).toEqual([
      ["stop", 3],
      ["end_turn", 3],
      ["completed", 3],
    ]);
    rpc.send({ id: "g", type: "get_messages" });
    const got = await rpc.response("g");
    expect(details(got.data.messages)).toEqual(details(ends));
  });

  it("Anthropic reports reasoning only when the provider sends a count; OpenAI always (0), as pi 1.6", async () => {
    server.setScript({ default: { text: "plain" } });
    const counts: unknown[] = [];
    for (const model of ["mock/mock-model", "mock-anthropic/mock-claude", "mock-responses/mock-gpt"]) {
      const r = await runCli(["--no-session", "--model", model, "--mode", "json", "q"], e);
      expect(r.code).toBe(0);
      const m = jsonLines(r.stdout).find((x) => x.type === "message_end" && x.message.role === "assistant").message as Msg;
      counts.push([m.rawStopReason, "reasoning" in m.usage ? m.usage.reasoning : "absent"]);
    }
    expect(counts).toEqual([
      ["stop", 0],
      ["end_turn", "absent"],
      ["completed", 0],
    ]);
  });
});
