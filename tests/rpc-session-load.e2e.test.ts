/**
 * End to end: RPC get_messages on a session loaded from its file writes the loaded
 * messages from the file's bytes. The record must stay the one JSON line it was: byte for byte
 * JSON.stringify's when the file was written by JSON.stringify, the same values when it was not,
 * and correct around messages that have no file bytes (a context edit's copy, a CRLF line,
 * custom messages, messages added by a prompt).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, spawnCli, type E2eEnv } from "./helpers/e2e.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;
let e: E2eEnv;
const children: ChildProcess[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "the answer" } } });
  e = makeE2eEnv(server.url);
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

/** An RPC process whose stdout is kept as raw lines. */
function rpc(sessionFile: string) {
  const child = spawnCli(["--mode", "rpc", "--session", sessionFile], e);
  children.push(child);
  const chunks: Buffer[] = [];
  child.stdout!.on("data", (c: Buffer) => chunks.push(c));
  const lines = () => Buffer.concat(chunks).toString("utf8").split("\n").slice(0, -1);
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  return {
    send: (cmd: Record<string, unknown>) => child.stdin!.write(JSON.stringify(cmd) + "\n"),
    /** The raw line of the response with this id. */
    response: (id: string | number) =>
      waitUntil(() => lines().find((l) => l.startsWith(`{"id":${JSON.stringify(id)},"type":"response"`)), `the response ${id} (stderr: ${stderr.slice(-300)})`, 120_000),
    line: (pred: (r: any) => boolean, what: string) => waitUntil(() => lines().find((l) => pred(JSON.parse(l))), what, 120_000),
  };
}

const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (i: number) => new Date(T0 + i * 1000).toISOString();
const header = { type: "session", version: 3, id: "0b5c8d4e-1111-4222-8333-944445555666", timestamp: iso(0), cwd: "/somewhere" };

const user = { role: "user", content: [{ type: "text", text: "ünïcödé 🚀 漢字 — and a \"quote\" \\ backslash" }], timestamp: T0 + 1000 };
const call = {
  role: "assistant",
  content: [{ type: "toolCall", id: "call_1", name: "commit", arguments: { message: "fix: \"message\": {not a key}" } }],
  api: "openai-completions",
  provider: "mock",
  model: "mock-model",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "toolUse",
  timestamp: T0 + 2000,
};
const result = { role: "toolResult", toolCallId: "call_1", toolName: "commit", content: [{ type: "text", text: "done\u2028line\ttab" }], details: { message: { ok: true } }, isError: false, timestamp: T0 + 3000 };
const answer = { ...call, content: [{ type: "text", text: "committed ✓" }], stopReason: "stop", timestamp: T0 + 4000 };

describe("RPC get_messages on a loaded session", () => {
  it("is byte for byte the JSON line of the messages, with and without file bytes among them", async () => {
    const file = join(e.root, "canonical.jsonl");
    const entries = [
      { type: "message", id: "a0000001", parentId: null, timestamp: iso(1), message: user },
      { type: "message", id: "a0000002", parentId: "a0000001", timestamp: iso(2), message: call },
      { type: "message", id: "a0000003", parentId: "a0000002", timestamp: iso(3), message: result },
      { type: "custom_message", id: "a0000004", parentId: "a0000003", timestamp: iso(4), customType: "note", content: "a note", display: true },
      { type: "message", id: "a0000005", parentId: "a0000004", timestamp: iso(5), message: answer },
      // the user message as the model now sees it (a copy: no file bytes)
      { type: "context_edit", id: "a0000006", parentId: "a0000005", timestamp: iso(6), targetId: "a0000001", replacement: { content: [{ type: "text", text: "edited" }] } },
      { type: "message", id: "a0000007", parentId: "a0000006", timestamp: iso(7), message: { role: "user", content: "crlf line", timestamp: T0 + 7000 } },
      { type: "message", id: "a0000008", parentId: "a0000007", timestamp: iso(8), message: { role: "user", content: "last", timestamp: T0 + 8000 } },
    ];
    const lines = [header, ...entries].map((x) => JSON.stringify(x));
    lines[7] += "\r"; // a CRLF line: JSON.parse takes it, its bytes are not used
    writeFileSync(file, lines.join("\n") + "\n");
    const expected = [
      { ...user, content: [{ type: "text", text: "edited" }] },
      call,
      result,
      { role: "custom", customType: "note", content: "a note", display: true, timestamp: T0 + 4000 },
      answer,
      { role: "user", content: "crlf line", timestamp: T0 + 7000 },
      { role: "user", content: "last", timestamp: T0 + 8000 },
    ];

    const c = rpc(file);
    c.send({ id: "m1", type: "get_messages" });
    expect(await c.response("m1")).toBe(JSON.stringify({ id: "m1", type: "response", command: "get_messages", success: true, data: { messages: expected } }));

    // After a prompt, the new messages (no file bytes) follow the loaded ones in the same line.
    c.send({ id: "p", type: "prompt", message: "next question" });
    await c.line((r) => r.type === "agent_end", "agent_end");
    c.send({ id: "m2", type: "get_messages" });
    const after = await c.response("m2");
    const messages = JSON.parse(after).data.messages as Array<{ role: string }>;
    expect(messages.slice(0, expected.length)).toEqual(expected);
    expect(messages.slice(expected.length).map((m) => m.role).filter((r) => r !== "system")).toEqual(["user", "assistant"]);
    expect(after).toBe(JSON.stringify({ id: "m2", type: "response", command: "get_messages", success: true, data: { messages } }));
  }, 180_000);

  it("a file not written by JSON.stringify (spaces, escapes, other key order) gives the same values on one line", async () => {
    const file = join(e.root, "handmade.jsonl");
    const lines = [
      JSON.stringify(header),
      `{"message" : {"content":"caf\\u00e9 \\/ slash","role":"user","timestamp":1.0e3} , "parentId":null,"id":"b0000001","type":"message","timestamp":"${iso(1)}"}`,
      // its message is the last member, so these very bytes (spaces, escapes, 2e3) are what get_messages writes
      `{ "type":"message", "id":"b0000002", "parentId":"b0000001", "timestamp":"${iso(2)}", "message" : { "role" : "user" , "content" : "spaced\\u0021 \\ud83d\\ude80" , "timestamp" : 2e3 }}`,
    ];
    writeFileSync(file, lines.join("\n") + "\n");
    const c = rpc(file);
    c.send({ id: 7, type: "get_messages" });
    const line = await c.response(7);
    const rec = JSON.parse(line);
    expect(rec).toEqual({
      id: 7,
      type: "response",
      command: "get_messages",
      success: true,
      data: { messages: [{ content: "café / slash", role: "user", timestamp: 1000 }, { role: "user", content: "spaced! 🚀", timestamp: 2000 }] },
    });
    expect(line.includes("\n")).toBe(false);
    expect(line).toContain('{ "role" : "user" , "content" : "spaced\\u0021 \\ud83d\\ude80" , "timestamp" : 2e3 }');
  }, 180_000);
});
