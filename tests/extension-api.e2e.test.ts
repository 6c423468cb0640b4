/**
 * End to end: an extension written for pi 1.6 (tests/fixtures/extensions/extension-api.ts) runs in
 * the real CLI against the loopback LLM server: module aliases, 1.6 registration methods and ctx
 * fields, 1.6 events with their payloads, and `terminate: true` ending the run.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

const FIXTURE = resolve("tests/fixtures/extensions/extension-api.ts");

let server: LlmServer;
let e: E2eEnv;
let outFile: string;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  e = makeE2eEnv(server.url);
  outFile = join(e.root, "fixture-out.jsonl");
  server.reset();
});
afterEach(() => e.cleanup());

const records = () => (existsSync(outFile) ? readFileSync(outFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
const one = (kind: string) => records().find((r) => r.kind === kind);

describe("a pi 1.6 extension through the CLI", () => {
  it("loads with the 1.6 module names, registers with the 1.6 methods and sees the 1.6 ctx and events", async () => {
    server.setScript({ default: { text: "hello there" } });
    const r = await runCli(["--no-session", "-p", "-e", FIXTURE, "say hi"], e, { env: { FIXTURE_OUT: outFile } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("hello there\n");

    const imports = one("imports");
    expect(imports.tuiLines[0]).toContain("hello 1.6");
    expect(imports.oldTuiLines[0]).toContain("hello 0.73");
    expect(imports.width).toBe(3);
    expect([imports.stringEnum, imports.agent, imports.schema]).toEqual(["function", "function", "function"]);

    expect(one("exports")).toEqual({ kind: "exports", sessionVersion: 3, frontmatter: { name: "scout" }, tokens: 100, heard: 7, compact: [true, false] });

    expect(one("registration").calls).toEqual([
      "registerToolRenderer:ok", "registerEntryRenderer:ok", "registerMarkdownTransformer:ok", "registerMcpServer:ok",
      "getMcpServers:ok", "unregisterMcpServer:ok", "getSettings:ok",
    ]);
    expect(one("mcp").servers).toEqual(["fixture-mcp"]);
    expect(one("settings").defaultModel).toBe("mock-model");

    const ctx = one("ctx");
    expect(ctx).toMatchObject({ isProjectTrusted: false, scopedModels: true, hasUI: false, thinkingLevel: "off" });
    expect(ctx.uiMethods).toEqual(["function", "function", "function", "function", "function"]);

    expect(one("session_info_changed")).toEqual({ kind: "session_info_changed", name: "fixture session" });
    // the mock model has no reasoning: "high" clamps to "off", so no change and no event
    expect(one("thinking_level_select")).toBeUndefined();

    const resp = one("after_provider_response");
    expect(resp.status).toBe(200);
    expect(resp.contentType).toContain("text/event-stream");
    expect(server.stats().requests[0]!.headers["x-fixture-trace"]).toBe("trace-123");
  });

  it("a tool result with terminate: true ends the run without another model turn (json mode)", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "finish", arguments: { answer: "42" } }] }, { text: "SHOULD NOT BE ASKED" }] });
    const r = await runCli(["--no-session", "--mode", "json", "-e", FIXTURE, "finish it"], e, { env: { FIXTURE_OUT: outFile } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const chat = server.stats().requests.filter((q) => q.method === "POST");
    expect(chat).toHaveLength(1);
    const ends = jsonLines(r.stdout).filter((x) => x.type === "tool_execution_end");
    expect(ends.map((x) => x.result.content[0].text)).toEqual(["final: 42"]);
    expect(jsonLines(r.stdout).some((x) => x.type === "agent_end")).toBe(true);
  });
});

const RUN_FIXTURE = resolve("tests/fixtures/extensions/run-hooks.ts");

describe("pi 1.6 run hooks through the CLI", () => {
  it("agent_before_settle appends a custom message and asks for one more request", async () => {
    server.setScript({ turns: [{ text: "first answer" }, { text: "second answer" }], turnBy: "request" });
    const r = await runCli(["--no-session", "-p", "-e", RUN_FIXTURE, "go"], e, { env: { FIXTURE_OUT: outFile, PI16_SETTLE_CONTINUE: "1" } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const chat = server.stats().requests.filter((q) => q.method === "POST");
    expect(chat).toHaveLength(2);
    expect(JSON.stringify(chat[1]!.body.messages)).toContain("NOTE FROM SETTLE");
    expect(records().filter((x) => x.kind === "agent_before_settle").map((x) => [x.outcome, x.n])).toEqual([["completed", 1], ["completed", 2]]);
  });

  it("a run started by an extension's custom message fires before_agent_start with messageType custom", async () => {
    server.setScript({ default: { text: "kicked" } });
    const r = await runCli(["--no-session", "--mode", "json", "-e", RUN_FIXTURE, "/kick"], e, { env: { FIXTURE_OUT: outFile } });
    expect(r.code).toBe(0);
    const starts = records().filter((x) => x.kind === "before_agent_start");
    expect(starts).toEqual([{ kind: "before_agent_start", messageType: "custom", customType: "kick" }]);
    const chat = server.stats().requests.filter((q) => q.method === "POST");
    expect(chat).toHaveLength(1);
    expect(JSON.stringify(chat[0]!.body.messages)).toContain("KICK MESSAGE");
    expect(JSON.stringify(chat[0]!.body.messages)).toContain("CUSTOM RUN PROMPT");
  });

  it("tool_result handlers see structuredContent (replacing the content drops it); prompt sections reach the model", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "measure", arguments: {} }] }, { text: "done" }] });
    const r = await runCli(["--no-session", "--mode", "json", "-e", RUN_FIXTURE, "measure"], e, { env: { FIXTURE_OUT: outFile } });
    expect(r.code).toBe(0);
    expect(one("tool_result").structuredContent).toEqual({ length: 3 });
    const end = jsonLines(r.stdout).find((x) => x.type === "tool_execution_end");
    expect(end.result.content[0].text).toBe("redacted");
    expect(end.result.structuredContent).toBeUndefined();
    // a before_agent_start handler's prompt section reaches the model as a tagged block
    const system = server.stats().requests.filter((q) => q.method === "POST")[0]!.body.messages[0];
    expect(system.role).toBe("system");
    expect(system.content).toContain("<fixture_rules>\nALWAYS BE KIND\n</fixture_rules>");
  });
});
