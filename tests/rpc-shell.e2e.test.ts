/**
 * RPC mode as the design documents describe it, through the real CLI and RpcClient against the
 * scripted server: abort answers once the session is idle (agent_settled first) and leaves the
 * queue to run next; RpcClient takes pi 1.6's positional arguments and returns dispositions.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, CLI, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient, type RpcEvent } from "../sdk/rpc-client.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;
let e: E2eEnv;
let client: RpcClient;
const seen: RpcEvent[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "fine" } } });
  e = makeE2eEnv(server.url);
  client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, args: ["--no-session"] });
  await client.start();
  client.onEvent((ev) => seen.push(ev));
});
afterAll(async () => {
  await client.stop();
  e.cleanup();
  await server.close();
});

describe("rpc abort", () => {
  it("answers after agent_settled {aborted: true}; a queued follow-up runs next", async () => {
    server.setScript([
      { match: "long run", text: "a b c d e f g h i j k l m n o p q r s t", delayMs: 200 },
      { match: "queued one", text: "the follow-up ran" },
    ]);
    seen.length = 0;
    const order: string[] = [];
    const off = client.onEvent((ev) => {
      if (ev.type === "agent_settled") order.push(`settled:${(ev as { aborted: boolean }).aborted}`);
    });
    expect(await client.prompt("long run")).toBe("started");
    await waitUntil(() => seen.some((ev) => ev.type === "message_update"), "the run streams");
    expect(await client.followUp("queued one")).toBe("queued");
    await client.abort();
    order.push("abort answered");
    expect(order).toEqual(["settled:true", "abort answered"]);
    await waitUntil(() => order.includes("settled:false"), "the queued follow-up settles");
    off();
    expect(await client.getLastAssistantText()).toBe("the follow-up ran");
  });

  it("abort while idle answers at once", async () => {
    await client.abort();
  });
});

describe("RpcClient with pi 1.6's signatures", () => {
  const image = { type: "image" as const, data: Buffer.from("89504e470d0a1a0a", "hex").toString("base64"), mimeType: "image/png" };

  it("prompt(message, images) sends the image (pi's positional form) and resolves with the disposition string", async () => {
    server.setScript({ default: { text: "seen" } });
    server.reset();
    const events = await client.promptAndWait("look at this", [image]);
    expect(events.at(-1)?.type).toBe("agent_settled");
    const user = server.stats().requests[0]!.body.messages.filter((m: any) => m.role === "user").at(-1);
    expect(JSON.stringify(user.content)).toContain("image_url");
  });

  it("the options-object form still works", async () => {
    server.reset();
    await client.promptAndWait("again", { images: [image] });
    const user = server.stats().requests[0]!.body.messages.filter((m: any) => m.role === "user").at(-1);
    expect(JSON.stringify(user.content)).toContain("image_url");
  });

  it("prompt(message, undefined, \"followUp\") while streaming queues it", async () => {
    server.setScript([{ match: "slow", text: "x y z w v u t s", delayMs: 150 }, { match: "later", text: "later done" }]);
    seen.length = 0;
    expect(await client.prompt("slow")).toBe("started");
    await waitUntil(() => seen.some((ev) => ev.type === "message_update"), "the run streams");
    expect(await client.prompt("later", undefined, "followUp")).toBe("queued");
    await waitUntil(() => seen.some((ev) => ev.type === "agent_settled"), "the run settles");
    expect(await client.getLastAssistantText()).toBe("later done");
  });
});
