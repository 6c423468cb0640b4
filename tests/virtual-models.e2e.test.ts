/**
 * End to end: pi 1.6 virtual models through the real CLI and the loopback LLM server, with
 * tests/fixtures/extensions/virtual-models.ts ("vroute/sticky"):
 * - a retryable provider error is followed by a request routed with reason "retry", carrying the
 *   failed response (not in `messages`) and its physical model; the retry may switch models;
 * - `--continue` / `--session` / RPC switch_session of a session that used the virtual model
 *   resume on it (get_state)
 *   and keep routing with the router state of the branch; without the extension the session falls
 *   back to the physical model that answered last.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RawRpc } from "./helpers/rpc.js";

const FIXTURE = resolve("tests/fixtures/extensions/virtual-models.ts");

let server: LlmServer;
let e: E2eEnv;
let outFile: string;
const rpcs: RawRpc[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  e = makeE2eEnv(server.url);
  outFile = join(e.root, "virtual-out.jsonl");
  server.reset();
});
afterEach(async () => {
  for (const r of rpcs.splice(0)) await r.kill();
  e.cleanup();
});

const routes = () => (existsSync(outFile) ? readFileSync(outFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []).filter((r) => r.kind === "route");
const chats = () => server.stats().requests.filter((q) => q.method === "POST");
const ENV = () => ({ VIRTUAL_OUT: outFile });
const run = (args: string[]) => runCli(args, e, { env: ENV() });
const sessionFile = () => {
  const dir = join(e.agentDir, "sessions");
  const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
  expect(files).toHaveLength(1);
  return join(dir, files[0]!);
};
const entries = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

/** get_state of a resumed session, then one prompt; the RPC process and its records. */
async function resumeOverRpc(args: string[], withExtension = true) {
  const rpc = new RawRpc(e, [...(withExtension ? ["-e", FIXTURE] : []), ...args], ENV());
  rpcs.push(rpc);
  rpc.send({ id: "s1", type: "get_state" });
  const state = await rpc.response("s1");
  rpc.send({ id: "p1", type: "prompt", message: "again" });
  await rpc.waitFor((r) => r.type === "agent_end", "agent_end after the prompt");
  rpc.send({ id: "s2", type: "get_state" });
  const after = await rpc.response("s2");
  return { rpc, state, after };
}

describe("virtual model: the retry route", () => {
  it("after a retryable provider error the next request is routed with reason retry and the failed response", async () => {
    server.setScript({ default: { text: "recovered", error: { status: 500, message: "upstream exploded" } } });
    const r = await run(["--no-session", "-e", FIXTURE, "--model", "vroute/sticky", "--mode", "json", "go"]);
    expect(r.code).toBe(0);
    const rs = routes();
    expect(rs).toHaveLength(2);
    expect(rs[0]).toEqual({ kind: "route", reason: "user", model: "vroute/sticky", previous: null, state: null, failed: null });
    expect(rs[1]).toMatchObject({ kind: "route", reason: "retry", model: "vroute/sticky", previous: null, state: { n: 1 } });
    expect(rs[1].failed).toMatchObject({ model: "mock/mock-model", stopReason: "error", inMessages: false });
    expect(rs[1].failed.errorMessage).toContain("upstream exploded");
    // the failed request went to the OpenAI mock, the retry (switched by the router) to the Anthropic one
    expect(chats().map((q) => q.path)).toEqual(["/v1/chat/completions", "/v1/messages"]);
    const lines = jsonLines(r.stdout);
    expect(lines.some((x) => x.type === "auto_retry_start")).toBe(true);
    const answers = lines.filter((x) => x.type === "message_end" && x.message.role === "assistant").map((x) => x.message);
    expect(answers.map((m) => [`${m.provider}/${m.model}`, m.stopReason])).toEqual([
      ["mock/mock-model", "error"],
      ["mock-anthropic/mock-claude", "stop"],
    ]);
  });

  it("a successful request after a retry is routed as usual (user, continuation)", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "ls", arguments: {} }], error: { status: 503 } }, { text: "done" }] });
    const r = await run(["--no-session", "-e", FIXTURE, "--model", "vroute/sticky", "--mode", "json", "go"]);
    expect(r.code).toBe(0);
    expect(routes().map((x) => [x.reason, x.failed?.model ?? null])).toEqual([
      ["user", null],
      ["retry", "mock/mock-model"],
      ["continuation", null],
    ]);
  });
});

describe("virtual model: resuming a session", () => {
  const firstRun = async () => {
    server.setScript({ default: { text: "answer" } });
    const r = await run(["-e", FIXTURE, "--model", "vroute/sticky", "--mode", "json", "first"]);
    expect(r.code).toBe(0);
    const file = sessionFile();
    // the selection is the virtual model; the response names the physical one
    const es = entries(file);
    expect(es.filter((x) => x.type === "model_change").map((x) => `${x.provider}/${x.modelId}`)).toEqual(["vroute/sticky"]);
    expect(es.filter((x) => x.type === "message" && x.message.role === "assistant").map((x) => `${x.message.provider}/${x.message.model}`)).toEqual(["mock/mock-model"]);
    return file;
  };

  it("--continue resumes on the virtual model and routes with the branch's state", async () => {
    await firstRun();
    const { state, after } = await resumeOverRpc(["--continue"]);
    expect(state.success).toBe(true);
    expect(state.data.model).toMatchObject({ provider: "vroute", id: "sticky", api: "pi-virtual" });
    expect(after.data.model).toMatchObject({ provider: "vroute", id: "sticky" });
    expect(routes().map((x) => [x.reason, x.state, x.previous])).toEqual([
      ["user", null, null],
      ["user", { n: 1 }, "mock/mock-model"],
    ]);
    expect(chats()).toHaveLength(2);
  });

  it("--session <file> resumes on the virtual model; without its extension, on the physical model that answered last", async () => {
    const file = await firstRun();
    const { state } = await resumeOverRpc(["--session", file]);
    expect(state.data.model).toMatchObject({ provider: "vroute", id: "sticky" });
    expect(routes()).toHaveLength(2);

    const plain = await resumeOverRpc(["--session", file], false);
    expect(plain.state.data.model).toMatchObject({ provider: "mock", id: "mock-model" });
    expect(routes()).toHaveLength(2); // nothing routed
    expect(chats()).toHaveLength(3);
  });

  it("switch_session to it from another session (RPC) comes back on the virtual model", async () => {
    const file = await firstRun();
    const rpc = new RawRpc(e, ["-e", FIXTURE, "--no-session"], ENV());
    rpcs.push(rpc);
    rpc.send({ id: "s0", type: "get_state" });
    expect((await rpc.response("s0")).data.model).toMatchObject({ provider: "mock", id: "mock-model" });
    rpc.send({ id: "sw", type: "switch_session", sessionPath: file });
    expect((await rpc.response("sw")).success).toBe(true);
    rpc.send({ id: "s1", type: "get_state" });
    expect((await rpc.response("s1")).data.model).toMatchObject({ provider: "vroute", id: "sticky" });
  });
});
