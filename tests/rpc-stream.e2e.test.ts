/**
 * End to end: RPC while the agent streams — abort, steering, follow-up, the queue commands —
 * and a slow reader (stdout not read during a 5,000-chunk answer: the writer waits, no record
 * lost). Answers that must still be streaming when the test acts wait at a gate of the scripted
 * server (see llm-server.mjs "gate") until the test releases them, so nothing races the clock.
 * The memory a blocked reader costs is measured by the benchmark (`npm run bench`), not here.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RawRpc, writtenBytes } from "./helpers/rpc.js";
import { waitUntil } from "./helpers/system.js";
import { RpcClient, type RpcEvent } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;
let client: RpcClient;
const raws: RawRpc[] = [];

/** 400 chunks that wait at the gate "mid" after the first one until the test releases it. */
const SLOW = { text: "slow ", repeat: 400, gate: "mid" };

beforeAll(async () => {
  server = await startLlmServer({ script: { default: SLOW } });
  e = makeE2eEnv(server.url);
  client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false, args: ["--no-session"] });
  await client.start();
});
afterAll(async () => {
  await client?.stop();
  await Promise.all(raws.map((r) => r.kill()));
  await server.close();
  e.cleanup();
});

function firstDelta(): Promise<void> {
  return new Promise((res) => {
    const off = client.onEvent((ev: any) => {
      if (ev.type === "message_update" && ev.assistantMessageEvent.type === "text_delta") {
        off();
        res();
      }
    });
  });
}
const lastUserText = (body: any) => {
  const users = body.messages.filter((m: any) => m.role === "user");
  const c = users[users.length - 1].content;
  return typeof c === "string" ? c : c.map((b: any) => b.text ?? "").join("");
};

describe("RPC while streaming", () => {
  it("abort during a long stream is answered quickly and the run settles aborted", async () => {
    server.setScript({ default: { text: "slow ", repeat: 3000, gate: "long" } });
    const collected = client.collectEvents();
    const streaming = firstDelta();
    await client.prompt("go long");
    await streaming;
    await client.abort();
    const events = await collected;
    expect(events[events.length - 1]).toEqual({ type: "agent_settled", aborted: true });
    const end = events.filter((ev) => ev.type === "message_end").pop() as any;
    expect(end.message.stopReason).toBe("aborted");
    expect((await client.getState()).isStreaming).toBe(false);
  });

  it("steering: a prompt with streamingBehavior 'steer' is queued and delivered before the run ends", async () => {
    server.setScript({ turns: [{ match: "steer me", text: "steered answer" }], default: SLOW });
    server.reset();
    const collected = client.collectEvents();
    const streaming = firstDelta();
    await client.prompt("start");
    await streaming;
    expect(await client.prompt("steer me", { streamingBehavior: "steer" })).toBe("queued");
    server.release("mid");
    const events = await collected;
    const queueUpdates = events.filter((ev) => ev.type === "queue_update") as any[];
    expect(queueUpdates[0]).toEqual({ type: "queue_update", steering: ["steer me"], followUp: [] });
    expect(queueUpdates[queueUpdates.length - 1]).toEqual({ type: "queue_update", steering: [], followUp: [] });
    expect(events.filter((ev) => ev.type === "agent_settled")).toHaveLength(1);
    const reqs = server.stats().requests;
    expect(reqs).toHaveLength(2);
    expect(lastUserText(reqs[1]!.body)).toBe("steer me");
    expect(await client.getLastAssistantText()).toBe("steered answer");
  });

  it("follow-up: follow_up and prompt with streamingBehavior 'followUp' run after the current answer", async () => {
    server.setScript({ turns: [{ match: "follow A", text: "answer A" }, { match: "follow B", text: "answer B" }], default: SLOW });
    server.reset();
    await client.setFollowUpMode("one-at-a-time");
    const settled: RpcEvent[] = [];
    const off = client.onEvent((ev) => ev.type === "agent_settled" && settled.push(ev));
    const collected = client.collectEvents();
    const streaming = firstDelta();
    await client.prompt("start again");
    await streaming;
    expect(await client.followUp("follow A")).toBe("queued");
    expect(await client.prompt("follow B", { streamingBehavior: "followUp" })).toBe("queued");
    expect(await client.getQueue()).toEqual({ steering: [], followUp: ["follow A", "follow B"] });
    server.release("mid");
    await collected;
    off();
    expect(settled).toHaveLength(1);
    const reqs = server.stats().requests;
    expect(reqs.map((r) => lastUserText(r.body))).toEqual(["start again", "follow A", "follow B"]);
    const texts = (await client.getMessages()).filter((m: any) => m.role === "assistant").slice(-3);
    expect(texts.map((m: any) => m.content[0].text)).toEqual(["slow ".repeat(400), "answer A", "answer B"]);
  });

  it("get_queue / clear_queue: the queue can be emptied (and its text restored) before an abort", async () => {
    server.setScript({ default: SLOW });
    const streaming = firstDelta();
    await client.prompt("busy");
    await streaming;
    await client.followUp("later one");
    await client.steer("now one");
    expect(await client.getQueue()).toEqual({ steering: ["now one"], followUp: ["later one"] });
    expect(await client.clearQueue()).toEqual({ steering: ["now one"], followUp: ["later one"] });
    expect(await client.getQueue()).toEqual({ steering: [], followUp: [] });
    expect((await client.getState()).pendingMessageCount).toBe(0);
    await client.abort();
    await client.waitForIdle();
    expect((await client.getState()).isStreaming).toBe(false);
  });

  it("steer and follow_up when idle start a run (answered 'started')", async () => {
    server.setScript({ default: { text: "idle answer" } });
    const collected = client.collectEvents();
    expect(await client.steer("hello while idle")).toBe("started");
    await collected;
    expect(await client.getLastAssistantText()).toBe("idle answer");
  });
});

describe("slow reader", () => {
  it("a reader that stops during a 5,000-chunk answer: the writer waits, nothing is lost", async () => {
    const CHUNKS = 5000;
    server.setScript({ default: { text: "word ", repeat: CHUNKS, chunkSize: 5 } });
    const p = new RawRpc(e, ["--no-session"]);
    raws.push(p);
    // Warm up first (modules loaded, code compiled), so what follows measures the answer alone.
    server.setScript({ default: { text: "word ", repeat: 200, chunkSize: 5 } });
    p.send({ id: "warm", type: "prompt", message: "warm up" });
    await p.waitFor((r) => r.type === "agent_settled", "the warm-up run");
    server.setScript({ default: { text: "word ", repeat: CHUNKS, chunkSize: 5 } });
    const pid = p.child.pid!;

    server.reset();
    const recordsBefore = p.records.length;
    const writtenAtStart = (await writtenBytes(pid))!;
    p.send({ id: "go", type: "prompt", message: "long answer please" });
    await p.waitFor((r) => r.id === "go", "the prompt response");
    p.child.stdout!.pause();
    // The reader is gone. Wait until the model has sent the whole answer and the child's writes
    // have stopped growing: with backpressure it is stuck on the full pipe.
    await waitUntil(() => server.stats().requests[0]?.outcome === "ok", "the model to send the whole answer");
    let last = -1;
    let stable = 0;
    await waitUntil(async () => {
      const now = (await writtenBytes(pid))!;
      stable = now === last ? stable + 1 : 0;
      last = now;
      return stable >= 5;
    }, "the child's writes to stall", 60_000, 100);
    const writtenWhilePaused = last - writtenAtStart;
    p.child.stdout!.resume();
    await p.waitFor((r) => r.type === "agent_settled" && p.records.indexOf(r) >= recordsBefore, "agent_settled", 30000);

    // Nothing lost: every delta, in order, and the final message.
    const run = p.records.slice(recordsBefore);
    const deltas = run.filter((r) => r.type === "message_update" && r.assistantMessageEvent.type === "text_delta");
    expect(deltas).toHaveLength(CHUNKS);
    expect(deltas.map((d) => d.assistantMessageEvent.delta).join("")).toBe("word ".repeat(CHUNKS));
    const end = run.find((r) => r.type === "message_end" && r.message.role === "assistant");
    expect(end.message.content[0].text).toBe("word ".repeat(CHUNKS));
    const outBytes = run.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 1, 0);

    // The writer waited for the reader: while it was gone the child wrote only what the pipe and
    // the reader's buffer hold (a few hundred KiB at most), a fraction of the 1+ MiB answer,
    // although the model had sent all of it.
    expect(outBytes).toBeGreaterThan(1024 * 1024);
    expect(writtenWhilePaused).toBeLessThan(outBytes / 2);

    p.end();
    expect((await p.closed).code).toBe(0);
  });

  it("while output is blocked stdin is still read: an abort sent meanwhile takes effect before the reader resumes", async () => {
    // The answer stops at a gate after 2,000 chunks (far more than the pipe holds) and stays open.
    server.setScript({ default: { text: "word ", repeat: 5000, chunkSize: 5, gate: "blocked", gateAfterChunks: 2000 } });
    server.reset();
    const p = new RawRpc(e, ["--no-session"]);
    raws.push(p);
    p.send({ id: "go", type: "prompt", message: "long slow answer" });
    await p.waitFor((r) => r.type === "message_update" && r.assistantMessageEvent.type === "text_delta", "the first delta");
    p.child.stdout!.pause();
    // Wait until the answer is at the gate and the child's writes have stalled (output blocked).
    await waitUntil(() => server.held("blocked"), "the answer to reach the gate");
    let last = -1;
    let stable = 0;
    await waitUntil(async () => {
      const now = (await writtenBytes(p.child.pid!))!;
      stable = now === last ? stable + 1 : 0;
      last = now;
      return stable >= 5;
    }, "the child's writes to stall", 60_000, 100);
    p.send({ id: "stop", type: "abort" });
    // The model connection is closed by the abort although nobody reads stdout yet.
    await waitUntil(() => server.stats().requests[0]?.outcome === "client closed", "the abort to close the model connection");
    expect(p.records.find((r) => r.id === "stop")).toBeUndefined(); // still paused: nothing read yet
    p.child.stdout!.resume();
    expect((await p.response("stop")).success).toBe(true);
    await p.waitFor((r) => r.type === "agent_settled", "agent_settled");
    expect(p.records.find((r) => r.type === "agent_settled")).toEqual({ type: "agent_settled", aborted: true });
    const deltas = p.records.filter((r) => r.type === "message_update" && r.assistantMessageEvent.type === "text_delta");
    expect(deltas.length).toBeLessThan(5000);
    p.end();
    expect((await p.closed).code).toBe(0);
  });
});
