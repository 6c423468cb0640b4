/**
 * End to end: the rest of pi 1.6's extension API through the real CLI and the loopback LLM
 * server, with tests/fixtures/extensions/extension-api-more.ts: project_trust deciding before project code
 * loads, context_with_system owning the request, session_compact_failed, provider_stream_event,
 * turn_end's boundary fields and result, a virtual model, tools calling tools (executeTool),
 * ctx.sessionManager.buildSessionProjection/buildContextEntries.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

const FIXTURE = resolve("tests/fixtures/extensions/extension-api-more.ts");

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
  e = makeE2eEnv(server.url, { settings: { checkpoints: { enabled: false } } }); // (the checkpoints plugin's custom entries would mix with the ones under test)
  outFile = join(e.root, "fixture-out.jsonl");
  server.reset();
});
afterEach(() => e.cleanup());

const records = (kind: string) =>
  (existsSync(outFile) ? readFileSync(outFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []).filter((r) => r.kind === kind);
const chats = () => server.stats().requests.filter((q) => q.method === "POST");
const run = (args: string[], env: Record<string, string> = {}) => runCli(args, e, { env: { FIXTURE_OUT: outFile, ...env } });

describe("project_trust", () => {
  const withProjectExtension = () => {
    mkdirSync(join(e.cwd, ".pi", "extensions"), { recursive: true });
    writeFileSync(
      join(e.cwd, ".pi", "extensions", "proj.ts"),
      `import { appendFileSync } from "node:fs";\nexport default function () { appendFileSync(process.env.FIXTURE_OUT!, JSON.stringify({ kind: "project-extension" }) + "\\n"); }\n`,
    );
  };

  it("an -e extension answering yes trusts the project before its extensions load; remember saves it", async () => {
    withProjectExtension();
    server.setScript({ default: { text: "ok" } });
    const r = await run(["--no-session", "-e", FIXTURE, "-p", "go"], { PI16_TRUST_ANSWER: "yes", PI16_TRUST_REMEMBER: "1" });
    expect(r.code).toBe(0);
    expect(records("project_trust")).toEqual([{ kind: "project_trust", cwd: e.cwd, hasUI: false, hasNotify: "function" }]);
    expect(records("project-extension")).toHaveLength(1);
    expect(records("session_start")[0].trusted).toBe(true);
    expect(JSON.parse(readFileSync(join(e.agentDir, "trust.json"), "utf8"))).toEqual({ [e.cwd]: true });
  });

  it("undecided leaves the project untrusted (no saved decision); no overrides a saved yes; -na asks nobody", async () => {
    withProjectExtension();
    server.setScript({ default: { text: "ok" } });
    let r = await run(["--no-session", "-e", FIXTURE, "-p", "go"], { PI16_TRUST_ANSWER: "undecided" });
    expect(r.code).toBe(0);
    expect(records("project_trust")).toHaveLength(1);
    expect(records("project-extension")).toHaveLength(0);
    expect(r.stderr).toContain("is not trusted");

    writeFileSync(join(e.agentDir, "trust.json"), JSON.stringify({ [e.cwd]: true }));
    r = await run(["--no-session", "-e", FIXTURE, "-p", "go"], { PI16_TRUST_ANSWER: "no" });
    expect(r.code).toBe(0);
    expect(records("project_trust")).toHaveLength(2);
    expect(records("project-extension")).toHaveLength(0);
    expect(records("session_start").map((x) => x.trusted)).toEqual([false, false]);

    r = await run(["--no-session", "-na", "-e", FIXTURE, "-p", "go"], { PI16_TRUST_ANSWER: "yes" });
    expect(r.code).toBe(0);
    expect(records("project_trust")).toHaveLength(2);
    expect(records("project-extension")).toHaveLength(0);
  });

  it("is not asked in a folder without project configuration", async () => {
    server.setScript({ default: { text: "ok" } });
    const r = await run(["--no-session", "-e", FIXTURE, "-p", "go"], { PI16_TRUST_ANSWER: "yes" });
    expect(r.code).toBe(0);
    expect(records("project_trust")).toHaveLength(0);
  });
});

describe("request events", () => {
  it("context_with_system sees the system prompt and tools as a leading system message; what it returns is sent", async () => {
    server.setScript({ default: { text: "ok" } });
    let r = await run(["--no-session", "-e", FIXTURE, "-p", "go"]);
    expect(r.code).toBe(0);
    const seen = records("context_with_system")[0];
    expect(seen).toMatchObject({ leadRole: "system", leadHasPrompt: true, roles: ["system", "user"] });
    expect(seen.tools).toEqual(expect.arrayContaining(["read", "bash", "delegate"]));
    expect(chats()[0]!.body.tools.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(["read", "delegate"]));

    r = await run(["--no-session", "-e", FIXTURE, "-p", "go"], { PI16_CWS: "1" });
    expect(r.code).toBe(0);
    const body = chats()[1]!.body;
    expect(body.messages[0]).toEqual({ role: "system", content: "REPLACED SYSTEM PROMPT" });
    expect(body.tools).toBeUndefined();
  });

  it("session_compact_failed reports a failed /compact", async () => {
    const r = await run(["--no-session", "-e", FIXTURE, "-p", "/compact"]);
    expect(r.stderr).toContain("Nothing to compact");
    expect(records("session_compact_failed")).toEqual([
      expect.objectContaining({ reason: "manual", aborted: false, willRetry: false, fromExtension: false, errorMessage: expect.stringContaining("Nothing to compact") }),
    ]);
  });

  it("provider_stream_event carries a provider's raw stream events", async () => {
    const r = await run(["--no-session", "-e", FIXTURE, "--model", "fx-stream/raw", "-p", "go"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("raw answer\n");
    expect(records("provider_stream_event")).toEqual([
      { kind: "provider_stream_event", provider: "fx-stream", api: "fx-stream-api", model: "raw", data: { raw: "chunk-1" } },
      { kind: "provider_stream_event", provider: "fx-stream", api: "fx-stream-api", model: "raw", data: { raw: "chunk-2" } },
    ]);
  });
});

describe("provider_stream_event from a built-in API", () => {
  it("carries each parsed SSE record of an OpenAI-compatible stream, in order, when an extension listens", async () => {
    server.setScript({ default: { text: "streamed words here" } });
    const r = await run(["--no-session", "-e", FIXTURE, "-p", "go"]);
    expect(r.code).toBe(0);
    const events = records("provider_stream_event");
    expect(events.length).toBeGreaterThan(2);
    for (const ev of events) expect(ev.api).toBe("openai-completions");
    // the records are the provider's own chunks: their text deltas join to the answer
    const text = events.map((ev) => ev.data?.choices?.[0]?.delta?.content ?? "").join("");
    expect(text).toBe("streamed words here");
  });
});

describe("turn_end boundary", () => {
  it("carries the boundary fields; entries it returns are appended and continue asks one more request", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "echo_inner", arguments: { text: "x" } }] }, { text: "first" }, { text: "second" }], turnBy: "request" });
    // turn 1 calls a tool (its result already brings another request); turn 2's handler asks for one more
    const r = await run(["--no-session", "-e", FIXTURE, "-p", "go"], { PI16_TURN_CONTINUE: "2" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("second\n");
    const turns = records("turn_end");
    expect(turns).toHaveLength(3);
    expect(turns[0]).toMatchObject({
      outcome: "completed",
      continue: false,
      entries: [],
      messageEntryId: "string",
      messageEntryIsAssistant: "assistant",
      toolResultEntryIds: 1,
      contextKeys: ["canContinue", "contextEntries", "contextMessages", "llmMessages", "pendingMessages"],
      canContinue: true,
    });
    expect(turns[1]).toMatchObject({ toolResultEntryIds: 0, outcome: "completed" });
    // the custom entry and the custom message of turn 2 are on the branch at turn 3
    expect(turns[1].projectionEntrySources).not.toContain("custom");
    expect(turns[2].projectionEntrySources).toContain("custom");
    // turn 3 adds its answer and the custom message to the projection
    expect(turns[2].projectionMessages).toBe(turns[1].projectionMessages + 2);
    expect(turns[2].contextEntryIds).toBe(turns[2].contextEntries);
    const requests = chats();
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(requests[2]!.body.messages)).toContain("TURN NOTE");
    expect(JSON.stringify(requests[1]!.body.messages)).not.toContain("TURN NOTE");
  });
});

describe("virtual models", () => {
  it("a virtual model is listed, selectable with --model, and each request is routed to a physical model with its state kept on the branch", async () => {
    const list = await run(["-e", FIXTURE, "--list-models", "fixture-router"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/fixture-router\s+auto\s+64K/);

    server.setScript({ turns: [{ toolCalls: [{ name: "echo_inner", arguments: { text: "x" } }] }, { text: "routed answer" }] });
    const r = await run(["-e", FIXTURE, "--model", "fixture-router/auto", "--mode", "json", "go"]);
    expect(r.code).toBe(0);
    expect(chats()).toHaveLength(2);
    expect(records("route")).toEqual([
      { kind: "route", reason: "user", state: null, firstRole: "system", previous: null, model: "fixture-router/auto" },
      { kind: "route", reason: "continuation", state: { n: 1 }, firstRole: "system", previous: "mock-model", model: "fixture-router/auto" },
    ]);
    const answers = jsonLines(r.stdout).filter((x) => x.type === "message_end" && x.message.role === "assistant");
    expect(answers.map((x) => `${x.message.provider}/${x.message.model}`)).toEqual(["mock/mock-model", "mock/mock-model"]);
    const sessions = join(e.agentDir, "sessions");
    const file = readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!;
    const states = readFileSync(join(sessions, file), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((x) => x.customType === "pi.virtual-model-state");
    expect(states.map((x) => x.data)).toEqual([
      { provider: "fixture-router", modelId: "auto", state: { n: 1 } },
      { provider: "fixture-router", modelId: "auto", state: { n: 2 } },
    ]);
  });

  it("a virtual model nobody registered is an unknown model", async () => {
    const r = await run(["--no-session", "--model", "fixture-router/auto", "-p", "go"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("fixture-router/auto");
    expect(chats()).toHaveLength(0);
  });
});

describe("tools calling tools", () => {
  it("executeTool runs a tool as a nested call through validation, tool_call handlers and events; failures come back as isError", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "delegate", arguments: {} }] }, { text: "all done" }] });
    const r = await run(["--no-session", "-e", FIXTURE, "--mode", "json", "go"]);
    expect(r.code).toBe(0);
    const d = records("delegate")[0];
    expect(d.tools).toEqual(expect.arrayContaining(["delegate", "echo_inner", "read"]));
    expect(d.ok).toEqual([`${d.id}/1`, false, "echo:hi"]);
    expect(d.blocked).toEqual([true, "blocked by fixture"]);
    expect(d.invalid).toBe(true);
    expect(d.missing).toEqual([true, "Tool no_such_tool not found"]);
    expect(records("tool_call").map((x) => [x.toolCallId, x.parentToolCallId])).toEqual([
      [d.id, null],
      [`${d.id}/1`, d.id],
      [`${d.id}/2`, d.id],
    ]);
    const events = jsonLines(r.stdout);
    const nestedEnds = events.filter((x) => x.type === "tool_execution_end" && x.parentToolCallId === d.id);
    expect(nestedEnds.map((x) => [x.toolCallId, x.isError])).toEqual([
      [`${d.id}/1`, false],
      [`${d.id}/2`, true],
      [`${d.id}/3`, true],
      [`${d.id}/4`, true],
    ]);
    // nested calls are not in the transcript: one tool result, the delegate's
    const results = events.filter((x) => x.type === "message_end" && x.message.role === "toolResult");
    expect(results.map((x) => x.message.content[0].text)).toEqual(["delegated: echo:hi"]);
    expect(JSON.stringify(chats()[1]!.body.messages)).not.toContain(`${d.id}/`);
  });
});
