/**
 * Session files as pi 1.6 writes them, through the real CLI against the scripted server: a custom
 * message (pi.sendMessage) is stored as a `custom_message` entry, and it comes back into the
 * context when the session is continued, as one written by pi 1.6 does.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
  e = makeE2eEnv(server.url);
  writeFileSync(
    join(e.cwd, "note.ts"),
    `export default function (pi) { pi.registerCommand("note", { description: "adds a note", handler: async (a) => { pi.sendMessage({ customType: "note", content: "NOTE " + a, display: true, details: { k: 1 } }); } }); }\n`,
  );
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

const entries = () => {
  const root = join(e.agentDir, "sessions");
  const file = readdirSync(root, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!;
  return readFileSync(join(root, file), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
};

describe("custom messages in session files", () => {
  it("are custom_message entries with pi 1.6's fields, read back into the context on -c", async () => {
    const r = await runCli(["-e", "./note.ts", "-p", "hello", "/note kept for later"], e);
    expect(r.code).toBe(0);
    const custom = entries().filter((x) => x.type === "custom_message" || x.message?.role === "custom");
    expect(custom).toHaveLength(1);
    expect(custom[0]).toMatchObject({ type: "custom_message", customType: "note", content: "NOTE kept for later", display: true, details: { k: 1 } });
    expect(typeof custom[0].id).toBe("string");
    expect(typeof custom[0].timestamp).toBe("string");
    server.reset();
    const again = await runCli(["-c", "-p", "what was noted?"], e);
    expect(again.code).toBe(0);
    expect(JSON.stringify(server.stats().requests[0]!.body.messages)).toContain("NOTE kept for later");
  });
});
