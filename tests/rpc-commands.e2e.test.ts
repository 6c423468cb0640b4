/**
 * End to end: every RPC command, driven through the sdk RpcClient against the real CLI
 * (dist/bundle/cli.js) and the loopback LLM server.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient, RpcCommandError } from "../sdk/rpc-client.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;
let e: E2eEnv;
let client: RpcClient;

const PLUGIN = resolve(ROOT, "tests", "fixtures", "rpc-ui-plugin.ts");

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "hello from the mock" } } });
  e = makeE2eEnv(server.url, { settings: { plugins: [PLUGIN], compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 } } });
  // A reasoning model next to the default one, for the thinking-level commands.
  const model = (id: string, reasoning: boolean) => ({ id, name: id, reasoning, input: ["text"], contextWindow: 128000, maxTokens: 4096 });
  writeFileSync(
    join(e.agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "MOCK_KEY", models: [model("mock-model", false), model("mock-thinker", true)] },
        "mock-anthropic": { baseUrl: server.url, api: "anthropic-messages", apiKey: "MOCK_KEY_2", models: [model("mock-claude", false)] },
      },
    }),
  );
  client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
  await client.start();
});

afterAll(async () => {
  await client?.stop();
  await server.close();
  e.cleanup();
});

async function expectCommandError(p: Promise<unknown>, pattern: RegExp): Promise<RpcCommandError> {
  const error = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(RpcCommandError);
  expect((error as Error).message).toMatch(pattern);
  return error as RpcCommandError;
}

describe("RPC commands", () => {
  let firstSessionFile: string;
  let firstSessionId: string;

  it("get_state has exactly the protocol fields", async () => {
    const state = await client.getState();
    expect(Object.keys(state).sort()).toEqual(
      [
        "autoCompactionEnabled",
        "followUpMode",
        "isCompacting",
        "isStreaming",
        "messageCount",
        "model",
        "pendingMessageCount",
        "sessionFile",
        "sessionId",
        "steeringMode",
        "thinkingLevel",
      ].sort(),
    );
    expect(state.model).toMatchObject({ provider: "mock", id: "mock-model" });
    expect(state).toMatchObject({ isStreaming: false, isCompacting: false, messageCount: 0, pendingMessageCount: 0, thinkingLevel: "off" });
    firstSessionFile = state.sessionFile!;
    firstSessionId = state.sessionId;
  });

  it("prompt: one response with the disposition, then the events up to agent_settled", async () => {
    const events = await client.promptAndWait("hi there");
    const types = events.map((ev) => ev.type);
    expect(types[0]).toBe("agent_start");
    expect(types[types.length - 1]).toBe("agent_settled");
    expect(types).toContain("agent_end");
    const deltas = events.filter((ev: any) => ev.type === "message_update" && ev.assistantMessageEvent.type === "text_delta") as any[];
    expect(deltas.map((d) => d.assistantMessageEvent.delta).join("")).toBe("hello from the mock");
    // Delta-only on the wire.
    for (const d of deltas) {
      expect(d.message).toBeUndefined();
      expect(d.assistantMessageEvent.partial).toBeUndefined();
    }
    expect(await client.getLastAssistantText()).toBe("hello from the mock");
  });

  it("get_messages, get_entries (with since), get_tree, get_fork_messages, get_session_stats", async () => {
    const messages = await client.getMessages();
    // pi 1.6: the run opened with a system message (the prompt and tools).
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    const entries = await client.getEntries();
    const messageEntries = entries.filter((en) => en.type === "message");
    expect(messageEntries).toHaveLength(3);
    const later = await client.getEntries(messageEntries[0]!.id);
    expect(later.map((en) => en.id)).toEqual(entries.slice(entries.indexOf(messageEntries[0]!) + 1).map((en) => en.id));
    const bad = await expectCommandError(client.getEntries("nope-id"), /no entry with id "nope-id"/);
    expect(bad.response.id).toMatch(/^req_/); // handler errors echo the id

    const { tree, leafId } = await client.getTree();
    expect(leafId).toBe(entries[entries.length - 1]!.id);
    expect(tree).toHaveLength(1);
    expect(tree[0]!.entry.id).toBe(entries[0]!.id);

    const forkable = await client.getForkMessages();
    expect(forkable).toEqual([{ entryId: messageEntries[1]!.id, text: "hi there" }]);

    const stats = await client.getSessionStats();
    expect(stats).toMatchObject({ sessionId: firstSessionId, userMessages: 1, assistantMessages: 1, toolCalls: 0, totalMessages: 3 });
    expect(stats.tokens.output).toBeGreaterThan(0);
    expect(stats.tokens.total).toBe(stats.tokens.input + stats.tokens.output + stats.tokens.cacheRead + stats.tokens.cacheWrite);
  });

  it("models: set_model, errors for unknown models and missing keys, get_available_models, cycle_model", async () => {
    const m = await client.setModel("mock-anthropic", "mock-claude");
    expect(m).toMatchObject({ provider: "mock-anthropic", id: "mock-claude" });
    expect((await client.getState()).model).toMatchObject({ id: "mock-claude" });
    await expectCommandError(client.setModel("mock", "no-such-model"), /Model not found: mock\/no-such-model/);
    await expectCommandError(client.setModel("anthropic", "claude-sonnet-4-5"), /No API key for provider "anthropic"/);

    const available = await client.getAvailableModels();
    expect(available.map((x) => `${x.provider}/${x.id}`)).toEqual(expect.arrayContaining(["mock/mock-model", "mock/mock-thinker", "mock-anthropic/mock-claude"]));
    const cycled = await client.cycleModel();
    expect(cycled).not.toBeNull();
    expect(cycled!.isScoped).toBe(false);
    expect(`${cycled!.model.provider}/${cycled!.model.id}`).not.toBe("mock-anthropic/mock-claude");
    expect((await client.getState()).model!.id).toBe(cycled!.model.id);
  });

  it("thinking levels: clamped on a non-reasoning model, settable and cyclable on a reasoning one", async () => {
    await client.setModel("mock", "mock-model");
    expect(await client.getAvailableThinkingLevels()).toEqual(["off"]);
    await client.setThinkingLevel("high");
    expect((await client.getState()).thinkingLevel).toBe("off");
    expect(await client.cycleThinkingLevel()).toBeNull();

    await client.setModel("mock", "mock-thinker");
    const levels = await client.getAvailableThinkingLevels();
    expect(levels).toEqual(expect.arrayContaining(["off", "minimal", "low", "medium", "high"]));
    await client.setThinkingLevel("high");
    expect((await client.getState()).thinkingLevel).toBe("high");
    const next = await client.cycleThinkingLevel();
    expect(next!.level).toBe(levels[(levels.indexOf("high") + 1) % levels.length]);
    await client.setModel("mock", "mock-model");
  });

  it("queue modes, auto compaction, auto retry, abort_retry", async () => {
    await client.setSteeringMode("all");
    await client.setFollowUpMode("all");
    await client.setAutoCompaction(false);
    await client.setAutoRetry(false);
    await client.abortRetry();
    const s = await client.getState();
    expect(s).toMatchObject({ steeringMode: "all", followUpMode: "all", autoCompactionEnabled: false });
    await client.setSteeringMode("one-at-a-time");
    await client.setFollowUpMode("one-at-a-time");
    await client.setAutoCompaction(true);
    await client.setAutoRetry(true);
    expect(await client.getState()).toMatchObject({ steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", autoCompactionEnabled: true });
    // Invalid values are refused, naming the field.
    const r = await client.send({ type: "set_steering_mode", mode: "sometimes" } as never);
    expect(r).toMatchObject({ success: false, command: "set_steering_mode" });
    expect((r as { error: string }).error).toMatch(/"mode" must be one of "all", "one-at-a-time"/);
  });

  it("bash runs, joins the messages, and abort_bash cancels a running one", async () => {
    const r = await client.bash("echo hi-from-bash");
    expect(r.output).toContain("hi-from-bash");
    expect(r.exitCode).toBe(0);
    expect(r.cancelled).toBe(false);
    const msgs = await client.getMessages();
    expect(msgs[msgs.length - 1]).toMatchObject({ role: "bashExecution", command: "echo hi-from-bash" });

    // Abort once the command is running (it leaves a marker), not after a guessed delay.
    const marker = join(e.cwd, "bash-started.marker");
    const long = client.bash(`touch '${marker}'; sleep 20`);
    await waitUntil(() => existsSync(marker), "the bash command to start");
    await client.abortBash();
    const aborted = await long;
    expect(aborted.cancelled).toBe(true);
  });

  it("set_session_name shows in get_state; an empty name is refused", async () => {
    await client.setSessionName("my rpc session");
    expect((await client.getState()).sessionName).toBe("my rpc session");
    await expectCommandError(client.setSessionName("   "), /empty/);
  });

  it("get_commands lists plugin commands (not built-ins) with their source", async () => {
    const commands = await client.getCommands();
    const ask = commands.find((c) => c.name === "ask-select");
    expect(ask).toMatchObject({ name: "ask-select", description: "select dialog", source: "plugin" });
    expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(["ask-confirm", "quit", "ui-fire"]));
  });

  it("new_session starts an empty session and events keep flowing (re-subscribed)", async () => {
    const r = await client.newSession();
    expect(r).toEqual({ cancelled: false });
    const s = await client.getState();
    expect(s.sessionId).not.toBe(firstSessionId);
    expect(s.messageCount).toBe(0);
    expect(s.sessionName).toBeUndefined();
    const events = await client.promptAndWait("second session");
    expect(events.map((ev) => ev.type)).toContain("message_end");
    expect((await client.getState()).messageCount).toBe(3); // system, user, assistant
  });

  it("switch_session resumes a file; a missing file is an error", async () => {
    const r = await client.switchSession(firstSessionFile);
    expect(r).toEqual({ cancelled: false });
    const s = await client.getState();
    expect(s.sessionId).toBe(firstSessionId);
    expect(s.sessionName).toBe("my rpc session");
    expect((await client.getMessages()).map((m) => m.role)).toContain("assistant");
    await expectCommandError(client.switchSession(join(e.root, "missing.jsonl")), /not found/);
  });

  it("fork from a user message returns its text; a non-user entry is refused", async () => {
    const [first] = await client.getForkMessages();
    const entries = await client.getEntries();
    const assistant = entries.find((en: any) => en.type === "message" && en.message.role === "assistant")!;
    await expectCommandError(client.fork(assistant.id), /not a user message/);
    const r = await client.fork(first!.entryId);
    expect(r).toEqual({ text: "hi there", cancelled: false });
    const s = await client.getState();
    expect(s.sessionId).not.toBe(firstSessionId);
    // Forked before the first user message: only the system message that opened that run is left.
    expect((await client.getMessages()).map((m) => m.role)).toEqual(["system"]);
    expect(s.messageCount).toBe(1);
  });

  it("clone copies the current branch into a new session", async () => {
    await client.switchSession(firstSessionFile);
    const before = await client.getState();
    const r = await client.clone();
    expect(r).toEqual({ cancelled: false });
    const after = await client.getState();
    expect(after.sessionId).not.toBe(before.sessionId);
    expect(after.messageCount).toBe(before.messageCount);
  });

  it("an unknown command type is an error echoing id and command", async () => {
    const r = await client.send({ type: "fly_to_moon" } as never);
    expect(r).toMatchObject({ type: "response", command: "fly_to_moon", success: false, id: expect.stringMatching(/^req_/) });
  });

  it("compact and export_html answer with data (or a clear 'not available' error in a build without them)", async () => {
    const seen: any[] = [];
    const off = client.onEvent((ev) => seen.push(ev));
    const compacted = await client.compact("keep it short").then(
      (data) => ({ data }),
      (error: Error) => ({ error }),
    );
    off();
    if ("error" in compacted) expect(compacted.error.message).toMatch(/^compact: .*not available/);
    else {
      // The summary comes from the (mock) model.
      expect(compacted.data).toMatchObject({ summary: expect.stringContaining("hello from the mock"), firstKeptEntryId: expect.any(String), tokensBefore: expect.any(Number) });
      expect(seen.find((ev) => ev.type === "compaction_start")).toEqual({ type: "compaction_start", reason: "manual" });
      expect(seen.find((ev) => ev.type === "compaction_end")).toMatchObject({ reason: "manual", aborted: false });
      expect((await client.getMessages())[0]).toMatchObject({ role: "compactionSummary", summary: compacted.data.summary });
    }
    const out = join(e.root, "out.html");
    const exported = await client.exportHtml(out).then(
      (data) => ({ data }),
      (error: Error) => ({ error }),
    );
    if ("error" in exported) expect(exported.error.message).toMatch(/^export_html: .*not available/);
    else {
      expect(exported.data.path).toBe(out);
      expect(existsSync(out)).toBe(true);
    }
  });
});

describe("RpcClient life cycle", () => {
  it("rejects pending requests with a clear error when the child dies, and refuses later sends", async () => {
    const c = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
    await c.start();
    await expect(c.waitForIdle()).resolves.toBeUndefined(); // idle: resolves at once
    const marker = join(e.cwd, "bash-kill.marker");
    const pending = c.bash(`touch '${marker}'; sleep 30`).catch((error: Error) => error);
    await waitUntil(() => existsSync(marker), "the bash command to start");
    process.kill(c.pid!, "SIGKILL");
    expect(String(await pending)).toMatch(/no response to "bash".*killed by SIGKILL/);
    await expect(c.getState()).rejects.toThrow(/killed by SIGKILL/);
    await c.stop();
  });

  it("stop() ends the child (exit 0 through stdin end) and rejects what is pending", async () => {
    const c = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
    await c.start();
    const pid = c.pid!;
    const pending = c.bash("sleep 30").catch((error: Error) => error);
    // A generous grace period: on a busy machine the child may need seconds to wind down, and
    // this test is about the clean path (stdin end → exit 0), not the SIGTERM fallback.
    await c.stop(90_000);
    expect(String(await pending)).toMatch(/stopped/);
    expect(c.isRunning).toBe(false);
    expect(c.exitStatus).toEqual({ code: 0, signal: null });
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("start() fails with the CLI's message when the child cannot start", async () => {
    const c = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false, args: ["@some-file.txt"] });
    await expect(c.start()).rejects.toThrow(/@file arguments cannot be used with --mode rpc/);
  });
});
