/**
 * Retries as pi 1.6 shows them, through the real CLI against the scripted server: provider SDKs
 * do not retry silently (retry.provider.maxRetries defaults to 0), so a transient error is one
 * failed request, agent_end {willRetry: true} and the auto_retry_* pair; a failed summary request
 * is retried with the summarization_retry_* events.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient, type RpcEvent } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
  // No retry.provider setting: the default applies.
  e = makeE2eEnv(server.url, { settings: { retry: { enabled: true, maxRetries: 3, baseDelayMs: 10, maxDelayMs: 50 }, compaction: { enabled: false, reserveTokens: 2000, keepRecentTokens: 10 } } });
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

describe("turn retries", () => {
  it("a 500 is one request, then agent_end {willRetry}, auto_retry_start/end and the retried request", async () => {
    server.setScript({ default: { text: "recovered", error: { status: 500, times: 1, message: "upstream hiccup" } } });
    server.reset();
    const r = await runCli(["--mode", "json", "--no-session", "hi"], e);
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(2);
    const types = jsonLines(r.stdout).map((x) => x.type).filter((t) => ["agent_end", "auto_retry_start", "auto_retry_end"].includes(t));
    expect(types).toEqual(["agent_end", "auto_retry_start", "auto_retry_end", "agent_end"]);
    const records = jsonLines(r.stdout);
    expect(records.find((x) => x.type === "agent_end").willRetry).toBe(true);
    expect(records.find((x) => x.type === "auto_retry_end")).toMatchObject({ success: true, attempt: 1 });
  });
});

describe("summary retries", () => {
  it("compaction's summary request fails once: summarization_retry_scheduled, _attempt_start {source, reason}, _finished", async () => {
    server.setScript({
      turns: [{ match: "<conversation>", text: "THE SUMMARY", error: { status: 503, times: 1, message: "summary hiccup" } }],
      default: { text: "a fairly long answer to make the history worth summarising, with several words in it" },
    });
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, args: ["--no-session"] });
    await client.start();
    const seen: RpcEvent[] = [];
    client.onEvent((ev) => seen.push(ev));
    try {
      await client.promptAndWait("first question about the project");
      await client.promptAndWait("second question about the project");
      const result = (await client.compact()) as { summary: string };
      expect(result.summary).toContain("THE SUMMARY");
      const retry = seen.filter((ev) => ev.type.startsWith("summarization_retry_") || ev.type.startsWith("compaction_"));
      expect(retry.map((ev) => ev.type)).toEqual(["compaction_start", "summarization_retry_scheduled", "summarization_retry_attempt_start", "summarization_retry_finished", "compaction_end"]);
      expect(retry[1]).toMatchObject({ attempt: 1, maxAttempts: 3, delayMs: 10 });
      expect(String((retry[1] as { errorMessage: string }).errorMessage)).toContain("503");
      expect(retry[2]).toMatchObject({ source: "compaction", reason: "manual" });
    } finally {
      await client.stop();
    }
  });
});
