/**
 * End to end: the real CLI in print and json mode against the loopback LLM server.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, spawnCli, type E2eEnv } from "./helpers/e2e.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});

const toolScript = {
  turns: [
    { text: "Let me check.", toolCalls: [{ name: "bash", arguments: { command: "echo hello-from-bash" } }] },
    { text: "The command printed hello-from-bash." },
  ],
};

describe("print mode", () => {
  beforeAll(() => {
    e = makeE2eEnv(server.url);
  });
  afterAll(() => e.cleanup());

  it("runs a two-turn tool-calling conversation and prints the last answer", async () => {
    server.setScript(toolScript);
    server.reset();
    const r = await runCli(["-p", "run echo"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("The command printed hello-from-bash.\n");
    const reqs = server.stats().requests;
    expect(reqs).toHaveLength(2);
    const toolMsg = reqs[1]!.body.messages.find((m: any) => m.role === "tool");
    expect(JSON.stringify(toolMsg.content)).toContain("hello-from-bash");
    // the key reached the server, and only as a header
    expect(JSON.stringify(reqs[0]!.body)).not.toContain("MOCK_KEY_VALUE_123");
  });

  it("runs each bash call in a bash started ahead (with the session, then while the model answers)", async () => {
    const ownShell = { name: "bash", arguments: { command: "tr '\\0' ' ' < /proc/$$/cmdline; echo" } };
    server.setScript({ turns: [{ toolCalls: [ownShell] }, { toolCalls: [ownShell] }, { text: "done" }] });
    server.reset();
    const r = await runCli(["-p", "run it twice"], e);
    expect(r.code).toBe(0);
    const results = server
      .stats()
      .requests.slice(1)
      .map((q) => JSON.stringify(q.body.messages.filter((m: any) => m.role === "tool").at(-1)?.content));
    expect(results).toHaveLength(2);
    for (const out of results) expect(out).toContain("read -r -d '' -u 3 __pi_command");
  });

  it("prepends piped stdin and inlines @file text", async () => {
    server.setScript({ default: { text: "ok" } });
    server.reset();
    writeFileSync(join(e.cwd, "notes.txt"), "FILE CONTENT 42");
    const r = await runCli(["-p", "@notes.txt", "summarise"], e, { input: "PIPED TEXT" });
    expect(r.code).toBe(0);
    const user = server.stats().requests[0]!.body.messages.find((m: any) => m.role === "user");
    const text = JSON.stringify(user.content);
    expect(text).toContain("PIPED TEXT");
    expect(text).toContain("FILE CONTENT 42");
    expect(text).toContain("summarise");
    expect(text.indexOf("FILE CONTENT 42")).toBeLessThan(text.indexOf("summarise"));
  });

  it("a missing @file exits 1 naming it", async () => {
    const r = await runCli(["-p", "@missing-file.txt", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("missing-file.txt");
    expect(r.stdout).toBe("");
  });

  it("retries a 500 then succeeds", async () => {
    server.setScript({ default: { text: "recovered", error: { status: 500, times: 1 } } });
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("recovered\n");
  });

  it("exhausted retries: exit 1 with the provider's error on stderr", async () => {
    server.setScript({ default: { text: "never", error: { status: 500, times: "always", message: "upstream exploded" } } });
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/500/);
    expect(r.stderr).toContain("upstream exploded");
    expect(r.stdout).toBe("");
  });

  it("no key for the provider: a clear error naming it, exit 1", async () => {
    const r = await runCli(["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/No API key for provider "anthropic"/);
    expect(r.stderr).toMatch(/ANTHROPIC_API_KEY|--api-key|auth\.json/);
  });

  it("no key and no model at all: a clear error saying how to set one up, exit 1", async () => {
    const bare = makeE2eEnv(server.url, { noDefaultModel: true });
    rmSync(join(bare.agentDir, "models.json"));
    const r = await runCli(["-p", "hi"], bare);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/No model is selected/);
    expect(r.stderr).toMatch(/ANTHROPIC_API_KEY|OPENAI_API_KEY/);
    expect(r.stderr).toContain(join(bare.agentDir, "models.json"));
    bare.cleanup();
  });

  it("a cut-off answer (length) prints the text, warns, exits 1", async () => {
    server.setScript({ default: { text: "partial answer", stopReason: "length" } });
    const r = await runCli(["-p", "hi"], e);
    expect(r.stdout).toBe("partial answer\n");
    expect(r.stderr).toMatch(/cut off/);
    expect(r.code).toBe(1);
  });

  it("SIGTERM during a long stream: exits 143", async () => {
    // The answer waits at the server's gate after its first chunk: the CLI is mid-stream for sure.
    server.setScript({ default: { text: "slow ", repeat: 400, gate: "sigterm" } });
    const child = spawnCli(["-p", "hi"], e);
    child.stdin!.end();
    await waitUntil(() => server.held("sigterm"), "the answer to start streaming");
    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(code).toBe(143);
  });
});

describe("json mode", () => {
  beforeAll(() => {
    e = makeE2eEnv(server.url);
  });
  afterAll(() => e.cleanup());

  it("streams the session header then every event, ending in agent_settled", async () => {
    server.setScript(toolScript);
    const r = await runCli(["--mode", "json", "run echo"], e);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines[0]).toMatchObject({ type: "session", version: 3, protocolVersion: 1, cwd: e.cwd });
    expect(typeof lines[0].id).toBe("string");
    const types = lines.slice(1).map((l) => l.type);
    expect(types[0]).toBe("agent_start");
    expect(types.at(-1)).toBe("agent_settled");
    expect(types.at(-2)).toBe("agent_end");
    expect(types).toContain("tool_execution_start");
    expect(types).toContain("tool_execution_end");
    expect(types.filter((t) => t === "turn_start")).toHaveLength(2);
    for (const l of lines.filter((x) => x.type === "message_update")) {
      expect(l).not.toHaveProperty("message");
      expect(l.assistantMessageEvent).not.toHaveProperty("partial");
    }
    const tcs = lines.find((l) => l.type === "message_update" && l.assistantMessageEvent.type === "toolcall_start");
    expect(tcs.assistantMessageEvent.toolName).toBe("bash");
    expect(typeof tcs.assistantMessageEvent.id).toBe("string");
  });

  it("a 5,000-chunk answer writes well under 2 MiB", async () => {
    server.setScript({ default: { text: "word ", repeat: 5000, chunkSize: 5 } });
    const r = await runCli(["--mode", "json", "long"], e);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    const updates = lines.filter((l) => l.type === "message_update" && l.assistantMessageEvent.type === "text_delta");
    expect(updates.length).toBe(5000);
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(2 * 1024 * 1024);
    const end = lines.find((l) => l.type === "message_end" && l.message.role === "assistant");
    expect(end.message.content[0].text).toBe("word ".repeat(5000));
  });

  it("retry events: 500 then success", async () => {
    server.setScript({ default: { text: "recovered", error: { status: 500, times: 1 } } });
    const r = await runCli(["--mode", "json", "hi"], e);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    const start = lines.find((l) => l.type === "auto_retry_start");
    const end = lines.find((l) => l.type === "auto_retry_end");
    expect(start).toMatchObject({ attempt: 1, maxAttempts: 3 });
    expect(start.errorMessage).toMatch(/500/);
    expect(end).toMatchObject({ success: true, attempt: 1 });
  });

  it("exhausted retries: exit 0 (the records carry the outcome), error also on stderr", async () => {
    server.setScript({ default: { text: "x", error: { status: 503, times: "always", message: "unavailable" } } });
    const r = await runCli(["--mode", "json", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/503/);
    const lines = jsonLines(r.stdout);
    expect(lines.at(-1).type).toBe("agent_settled");
    expect(lines.filter((l) => l.type === "auto_retry_start")).toHaveLength(3);
  });
});

describe("cli basics", () => {
  beforeAll(() => {
    e = makeE2eEnv(server.url);
  });
  afterAll(() => e.cleanup());

  it("--version prints the version", async () => {
    const r = await runCli(["--version"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it("--help lists flags, built from the registries", async () => {
    const r = await runCli(["--help"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--print");
    expect(r.stdout).toContain("--mode");
    expect(r.stdout).toContain("--list-models");
  });

  it("an unknown flag is an error (exit 2) and nothing is sent to the model", async () => {
    server.setScript({ default: { text: "fine" } });
    server.reset();
    const r = await runCli(["--frobnicate", "the message", "-p"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option --frobnicate");
    expect(server.stats().requests).toHaveLength(0);
  });

  it("a mode that is not installed is a clear error", async () => {
    const r = await runCli(["--mode", "nonsense", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--mode "nonsense"/);
  });

  it("--list-models lists configured models", async () => {
    const r = await runCli(["--list-models", "mock"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("mock-model");
  });

  it("a malformed settings file is reported with its position, and the run goes on", async () => {
    server.setScript({ default: { text: "still works" } });
    const settingsPath = join(e.cwd, ".pi");
    mkdirSync(settingsPath, { recursive: true });
    writeFileSync(join(settingsPath, "settings.json"), '{"theme": "dark",,}');
    const r = await runCli(["-p", "hi"], e);
    expect(r.stderr).toMatch(/settings\.json/);
    expect(r.stdout).toBe("still works\n");
    expect(r.code).toBe(0);
  });
});
