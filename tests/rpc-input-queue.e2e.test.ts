/**
 * End to end (RPC): steer and follow_up sent while the agent streams go through the `input`
 * hook as in pi 1.6 — marked with `streamingBehavior` ("steer" / "followUp") and source "rpc";
 * a transform changes what is queued, "handled" drops the message.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;
let client: RpcClient;
const log = () => join(e.root, "input.jsonl");
const inputs = () => (existsSync(log()) ? readFileSync(log(), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
const SLOW = { text: "slow ", repeat: 200, gate: "mid" };

beforeAll(async () => {
  server = await startLlmServer({ script: { default: SLOW } });
  e = makeE2eEnv(server.url);
  client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: { ...e.env, INPUT_LOG: join(e.root, "input.jsonl") }, inheritEnv: false, args: ["--no-session", "-e", resolve("tests/fixtures/api-shapes/input-recorder.ts")] });
  await client.start();
});
afterAll(async () => {
  await client?.stop();
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

describe("RPC steer and follow_up through the input hook", () => {
  it("while streaming: both reach `input` with their streamingBehavior; transforms are queued, handled ones dropped", async () => {
    server.setScript({ default: SLOW });
    const streaming = firstDelta();
    await client.prompt("start");
    await streaming;
    expect(await client.followUp("xform:later")).toBe("queued");
    expect(await client.steer("xform:now")).toBe("queued");
    expect(await client.followUp("drop:this")).toBe("handled");
    expect(await client.getQueue()).toEqual({ steering: ["transformed now"], followUp: ["transformed later"] });
    expect(inputs()).toEqual([
      { text: "start", source: "rpc", streamingBehavior: null },
      { text: "xform:later", source: "rpc", streamingBehavior: "followUp" },
      { text: "xform:now", source: "rpc", streamingBehavior: "steer" },
      { text: "drop:this", source: "rpc", streamingBehavior: "followUp" },
    ]);
    await client.clearQueue();
    await client.abort();
    await client.waitForIdle();
  });
});
