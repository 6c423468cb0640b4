/**
 * End to end: `pi --mode acp` (the bundled CLI) driven by the official ACP SDK's client
 * (ClientSideConnection, @agentclientprotocol/sdk) against the scripted model server.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import type { ChildProcess } from "node:child_process";
import { ClientSideConnection, ndJsonStream, type Client, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification } from "@agentclientprotocol/sdk";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { ROOT, makeE2eEnv, spawnCli, type E2eEnv } from "./helpers/e2e.js";

// Each test spawns the CLI (and acpx) several times: generous limits for a busy machine.
jest.setTimeout(240_000);

let server: LlmServer;
let e: E2eEnv;
const agents: Agent[] = [];

const SCRIPT = {
  turns: [
    { match: "say hello", text: "Hello from the mock model" },
    { match: "write the file", turns: [{ toolCalls: [{ name: "write", arguments: { path: "out.txt", content: "new content\n" } }] }, { text: "wrote it" }] },
    { match: "pending guard", turns: [{ toolCalls: [{ name: "write", arguments: { path: "guarded-pending.txt", content: "no\n" } }] }, { text: "never" }] },
    { match: "guarded write", turns: [{ toolCalls: [{ name: "write", arguments: { path: "guarded.txt", content: "secret\n" } }] }, { text: "after the guarded write" }] },
    { match: "go slowly", text: "slow ", repeat: 4000, delayMs: 5 },
    { match: "read the notes", turns: [{ toolCalls: [{ name: "read", arguments: { path: "notes.md" } }] }, { text: "read them" }] },
    { match: "use the echo tool", turns: [{ toolCalls: [{ name: "mcp__demo__echo", arguments: { text: "via acp" } }] }, { text: "echoed" }] },
    { match: "tick a while", text: "tick ", repeat: 150, delayMs: 10 },
  ],
  default: { text: "default answer" },
};

interface Agent {
  child: ChildProcess;
  conn: ClientSideConnection;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  reads: string[];
  stdout: () => string;
  answer: (req: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
  kill(): Promise<void>;
}

function startAgent(args: string[] = []): Agent {
  const child = spawnCli(["--mode", "acp", ...args], e);
  let raw = "";
  child.stdout!.on("data", (c: Buffer) => (raw += c.toString("utf8")));
  child.stderr!.on("data", () => {});
  const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>);
  const agent: Agent = {
    child,
    updates: [],
    permissions: [],
    reads: [],
    stdout: () => raw,
    answer: () => ({ outcome: { outcome: "cancelled" } }),
    conn: undefined as unknown as ClientSideConnection,
    kill: () =>
      new Promise((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res();
        child.once("exit", () => res());
        child.kill("SIGKILL");
      }),
  };
  const client: Client = {
    async requestPermission(req) {
      agent.permissions.push(req);
      return agent.answer(req);
    },
    async sessionUpdate(n) {
      agent.updates.push(n);
    },
    async readTextFile(req) {
      agent.reads.push(req.path);
      return { content: `EDITOR BUFFER of ${req.path}` };
    },
  };
  agent.conn = new ClientSideConnection(() => client, stream);
  agents.push(agent);
  return agent;
}

async function waitFor(pred: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const kinds = (a: Agent, id: string) => a.updates.filter((u) => u.sessionId === id).map((u) => u.update.sessionUpdate);
const text = (a: Agent, id: string, kind = "agent_message_chunk") =>
  a.updates
    .filter((u) => u.sessionId === id && u.update.sessionUpdate === kind)
    .map((u) => ((u.update as { content: { text?: string } }).content.text ?? ""))
    .join("");

async function openSession(a: Agent): Promise<string> {
  const init = await a.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
  expect(init.protocolVersion).toBe(1);
  const s = await a.conn.newSession({ cwd: e.cwd, mcpServers: [] });
  return s.sessionId;
}

beforeAll(async () => {
  server = await startLlmServer({ script: SCRIPT });
  // mcp.toolMode set: the client's MCP servers' tools are declared to the model.
  e = makeE2eEnv(server.url, { settings: { permissions: { ask: ["write(guarded*)"] }, mcp: { toolMode: "auto" }, extensions: [join(ROOT, "tests", "fixtures", "acp", "plan-extension.ts")] } });
});
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.kill()));
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

describe("pi --mode acp with the official SDK client", () => {
  it("initialize, session/new, a text prompt, and a write tool call with a diff", async () => {
    const a = startAgent();
    const init = await a.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentInfo?.name).toBe("pi");
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(init.agentCapabilities?.promptCapabilities).toMatchObject({ image: true, embeddedContext: true });
    const s = await a.conn.newSession({ cwd: e.cwd, mcpServers: [] });
    expect(s.configOptions?.find((o) => o.id === "model")).toMatchObject({ currentValue: "mock/mock-model" });
    expect(s.modes?.currentModeId).toBe("default");

    const r1 = await a.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "say hello" }] });
    expect(r1.stopReason).toBe("end_turn");
    expect(text(a, s.sessionId)).toBe("Hello from the mock model");
    await waitFor(() => kinds(a, s.sessionId).includes("available_commands_update"), "available_commands_update");
    await waitFor(() => kinds(a, s.sessionId).includes("usage_update"), "usage_update");

    writeFileSync(join(e.cwd, "out.txt"), "old content\n");
    const r2 = await a.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "write the file" }] });
    expect(r2.stopReason).toBe("end_turn");
    expect(readFileSync(join(e.cwd, "out.txt"), "utf8")).toBe("new content\n");
    const calls = a.updates.map((u) => u.update as any).filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
    const start = calls.find((u) => u.sessionUpdate === "tool_call");
    expect(start).toMatchObject({ kind: "edit", status: "pending", rawInput: { path: "out.txt" }, locations: [{ path: join(e.cwd, "out.txt") }] });
    const done = calls.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === start.toolCallId && u.status === "completed");
    expect(done.content).toContainEqual({ type: "diff", path: join(e.cwd, "out.txt"), oldText: "old content\n", newText: "new content\n" });
    expect(text(a, s.sessionId)).toContain("wrote it");
  });

  it("asks permission through session/request_permission: rejected blocks the write, allowed runs it", async () => {
    const a = startAgent();
    const id = await openSession(a);
    a.answer = () => ({ outcome: { outcome: "selected", optionId: "reject_once" } });
    const r1 = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "guarded write one" }] });
    expect(r1.stopReason).toBe("end_turn");
    expect(a.permissions).toHaveLength(1);
    expect(a.permissions[0]!.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    expect(a.permissions[0]!.toolCall).toMatchObject({ kind: "edit", rawInput: { path: "guarded.txt" } });
    expect(existsSync(join(e.cwd, "guarded.txt"))).toBe(false);
    const failed = a.updates.map((u) => u.update as any).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(JSON.stringify(failed.content)).toContain("did not allow");

    a.answer = () => ({ outcome: { outcome: "selected", optionId: "allow_always" } });
    const r2 = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "guarded write two" }] });
    expect(r2.stopReason).toBe("end_turn");
    expect(readFileSync(join(e.cwd, "guarded.txt"), "utf8")).toBe("secret\n");
    expect(a.permissions).toHaveLength(2);
    // allow_always is remembered for the session: the same call is not asked again.
    const r3 = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "guarded write three" }] });
    expect(r3.stopReason).toBe("end_turn");
    expect(a.permissions).toHaveLength(2);
  });

  it("session/cancel mid-stream answers the prompt with stopReason cancelled", async () => {
    const a = startAgent();
    const id = await openSession(a);
    const pending = a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "go slowly" }] });
    await waitFor(() => text(a, id).length > 0, "the first chunk");
    await a.conn.cancel({ sessionId: id });
    const r = await pending;
    expect(r.stopReason).toBe("cancelled");
    expect(text(a, id).length).toBeLessThan("slow ".length * 4000);
    // still serving
    const r2 = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    expect(r2.stopReason).toBe("end_turn");
  });

  it("session/cancel while a permission request is pending: the tool is blocked and the prompt answers cancelled", async () => {
    const a = startAgent();
    const id = await openSession(a);
    let answerLater!: (r: RequestPermissionResponse) => void;
    a.answer = () => new Promise((r) => (answerLater = r));
    const pending = a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "pending guard write" }] });
    await waitFor(() => a.permissions.length === 1, "the permission request");
    await a.conn.cancel({ sessionId: id });
    expect((await pending).stopReason).toBe("cancelled");
    answerLater({ outcome: { outcome: "cancelled" } });
    expect(a.permissions[0]!.toolCall.rawInput).toEqual({ path: "guarded-pending.txt", content: "no\n" });
    expect(existsSync(join(e.cwd, "guarded-pending.txt"))).toBe(false);
  });

  it("session/load in a new process replays the conversation before answering", async () => {
    const a = startAgent();
    const id = await openSession(a);
    writeFileSync(join(e.cwd, "out.txt"), "x\n");
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "write the file" }] });
    const list = await a.conn.listSessions({ cwd: e.cwd });
    expect(list.sessions.map((s) => s.sessionId)).toContain(id);
    await a.kill();

    const b = startAgent();
    await b.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    const loaded = await b.conn.loadSession({ sessionId: id, cwd: e.cwd, mcpServers: [] });
    // Everything replayed arrived before the response.
    const replayed = b.updates.filter((u) => u.sessionId === id).map((u) => u.update as any);
    expect(loaded.configOptions?.length).toBeGreaterThan(0);
    expect(replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text)).toEqual(["say hello", "write the file"]);
    expect(replayed.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("|")).toBe("Hello from the mock model|wrote it");
    expect(replayed.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ kind: "edit", rawInput: { path: "out.txt" } });
    expect(replayed.find((u) => u.sessionUpdate === "tool_call_update")).toMatchObject({ status: "completed" });
    // and the loaded session continues
    const r = await b.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello again" }] });
    expect(r.stopReason).toBe("end_turn");
    const last = server.stats().requests.at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain("wrote it");
  });

  it("session/set_config_option switches the model; set_mode echoes current_mode_update", async () => {
    const a = startAgent();
    const id = await openSession(a);
    const res = await a.conn.setSessionConfigOption({ sessionId: id, configId: "model", value: "mock-anthropic/mock-claude" });
    expect(res.configOptions.find((o) => o.id === "model")).toMatchObject({ currentValue: "mock-anthropic/mock-claude" });
    const before = server.stats().requests.length;
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    const reqs = server.stats().requests.slice(before);
    expect(reqs.map((r) => r.path)).toEqual(["/v1/messages"]);
    await expect(a.conn.setSessionConfigOption({ sessionId: id, configId: "model", value: "nope/none" })).rejects.toMatchObject({ code: -32602 });
    await a.conn.setSessionMode({ sessionId: id, modeId: "auto-approve" });
    await waitFor(() => a.updates.some((u) => (u.update as any).sessionUpdate === "current_mode_update" && (u.update as any).currentModeId === "auto-approve"), "current_mode_update");
  });

  it("malformed input: -32700 for a bad line, -32601 for an unknown method, -32602 naming the field; the agent keeps serving", async () => {
    const a = startAgent();
    await a.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    a.child.stdin!.write("this is not json\n");
    await waitFor(() => a.stdout().includes('"code":-32700'), "the parse error");
    await expect(a.conn.extMethod("pi/no_such_method", {})).rejects.toMatchObject({ code: -32601 });
    await expect(a.conn.newSession({ cwd: "relative/dir", mcpServers: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("cwd") });
    const id = (await a.conn.newSession({ cwd: e.cwd, mcpServers: [] })).sessionId;
    const r = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    expect(r.stopReason).toBe("end_turn");
    for (const line of a.stdout().split("\n").filter(Boolean)) expect(JSON.parse(line).jsonrpc).toBe("2.0");
  });

  it("a session/prompt arriving mid-turn is steered into the running turn, never an error", async () => {
    const a = startAgent();
    const id = await openSession(a);
    const first = a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "tick a while" }] });
    await waitFor(() => text(a, id).includes("tick"), "the first chunk");
    const second = a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    const [r1, r2] = await Promise.all([first, second]);
    expect(r1.stopReason).toBe("end_turn");
    expect(r2.stopReason).toBe("end_turn");
    expect(text(a, id)).toMatch(/tick[\s\S]*Hello from the mock model$/);
  });

  it("prompts carry resource links, embedded resources and images to the model", async () => {
    const a = startAgent();
    const id = await openSession(a);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const before = server.stats().requests.length;
    const r = await a.conn.prompt({
      sessionId: id,
      prompt: [
        { type: "text", text: "look at these" },
        { type: "resource_link", uri: `file://${join(e.cwd, "notes.md")}`, name: "notes.md" },
        { type: "resource", resource: { uri: `file://${join(e.cwd, "draft.ts")}`, text: "UNSAVED BUFFER TEXT", mimeType: "text/x-typescript" } },
        { type: "image", data: png, mimeType: "image/png" },
      ],
    });
    expect(r.stopReason).toBe("end_turn");
    const body = JSON.stringify(server.stats().requests.slice(before)[0]!.body);
    expect(body).toContain(`@${join(e.cwd, "notes.md")}`);
    expect(body).toContain("UNSAVED BUFFER TEXT");
    expect(body).toContain(png); // an image part (OpenAI data: URL or Anthropic base64 source, per the current model)
    await expect(a.conn.prompt({ sessionId: id, prompt: [{ type: "text" } as any] })).rejects.toMatchObject({ code: -32602 });
  });

  it("read goes through the client's fs/read_text_file when advertised (the editor's buffer)", async () => {
    const a = startAgent();
    await a.conn.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } } });
    const id = (await a.conn.newSession({ cwd: e.cwd, mcpServers: [] })).sessionId;
    writeFileSync(join(e.cwd, "notes.md"), "DISK CONTENT\n");
    const before = server.stats().requests.length;
    const r = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "read the notes" }] });
    expect(r.stopReason).toBe("end_turn");
    expect(a.reads).toEqual([join(e.cwd, "notes.md")]);
    const second = JSON.stringify(server.stats().requests.slice(before)[1]!.body);
    expect(second).toContain(`EDITOR BUFFER of ${join(e.cwd, "notes.md")}`);
    expect(second).not.toContain("DISK CONTENT");
  });

  it("the client's mcpServers (session/new) are connected through the MCP plugin and their tools reach the model", async () => {
    const a = startAgent();
    await a.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    const stdio = { name: "demo", command: process.execPath, args: [join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs")], env: [] };
    await expect(a.conn.newSession({ cwd: e.cwd, mcpServers: [{ name: "", command: "x", args: [], env: [] }] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("mcpServers[0].name") });
    const id = (await a.conn.newSession({ cwd: e.cwd, mcpServers: [stdio] })).sessionId;
    const before = server.stats().requests.length;
    const r = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "use the echo tool" }] });
    expect(r.stopReason).toBe("end_turn");
    const done = a.updates.map((u) => u.update as any).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(done.rawOutput.content).toBe("echo:via acp");
    const reqs = server.stats().requests.slice(before);
    expect(JSON.stringify(reqs[0]!.body.tools)).toContain("mcp__demo__echo");
  });

  it("extensions: a plan reaches the client as a plan update; confirm() becomes session/request_permission", async () => {
    const a = startAgent();
    const id = await openSession(a);
    await waitFor(() => a.updates.some((u) => (u.update as any).sessionUpdate === "available_commands_update"), "commands");
    const cmds = (a.updates.find((u) => (u.update as any).sessionUpdate === "available_commands_update")!.update as any).availableCommands.map((c: any) => c.name);
    expect(cmds).toEqual(expect.arrayContaining(["plan-it", "confirm-it", "rewind"])); // (rewind: the checkpoints plugin's command)
    expect((await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "/plan-it" }] })).stopReason).toBe("end_turn");
    await waitFor(() => a.updates.some((u) => (u.update as any).sessionUpdate === "plan"), "plan");
    expect((a.updates.find((u) => (u.update as any).sessionUpdate === "plan")!.update as any).entries).toEqual([
      { content: "read the code", status: "completed", priority: "high" },
      { content: "change it", status: "in_progress", priority: "medium" },
      { content: "run the tests", status: "pending", priority: "medium" },
    ]);
    a.answer = (req) => ({ outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === "allow_once")!.optionId } });
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "/confirm-it" }] });
    await waitFor(() => JSON.stringify(a.updates).includes("answer: yes"), "the confirm answer");
    expect(a.permissions.at(-1)!.toolCall.title).toContain("Deploy?");
  });

  it("resume, close, legacy session/set_model, thought_level, read-only mode, _session/steering", async () => {
    const a = startAgent();
    const init = await a.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    expect((init._meta as any)?.steering?.supported).toBe(true);
    const id = (await a.conn.newSession({ cwd: e.cwd, mcpServers: [] })).sessionId;
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    const id2 = (await a.conn.newSession({ cwd: e.cwd, mcpServers: [] })).sessionId;
    expect(id2).not.toBe(id);
    const resumed = await a.conn.resumeSession({ sessionId: id, cwd: e.cwd, mcpServers: [] });
    expect(resumed.configOptions?.length).toBeGreaterThan(0);
    // no replay on resume: the only user_message_chunk updates would come from load
    expect(a.updates.some((u) => (u.update as any).sessionUpdate === "user_message_chunk")).toBe(false);
    await expect(a.conn.resumeSession({ sessionId: "no-such-session", cwd: e.cwd, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });

    expect(await a.conn.extMethod("session/set_model", { sessionId: id, modelId: "mock/mock-model" })).toEqual({});
    const before = server.stats().requests.length;
    await a.conn.setSessionMode({ sessionId: id, modeId: "read-only" });
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] });
    const req = server.stats().requests.slice(before)[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect((req.body.tools as any[]).map((t) => t.function.name).sort()).toEqual(["read"]);
    await a.conn.setSessionMode({ sessionId: id, modeId: "default" });
    await expect(a.conn.setSessionMode({ sessionId: id, modeId: "nope" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("modeId") });
    await expect(a.conn.setSessionConfigOption({ sessionId: id, configId: "thought_level", value: "ultra" })).rejects.toMatchObject({ code: -32602 });

    const slow = a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "tick a while" }] });
    await waitFor(() => text(a, id).includes("tick"), "ticking");
    expect(await a.conn.extMethod("_session/steering", { sessionId: id, prompt: [{ type: "text", text: "say hello" }] })).toEqual({ outcome: "injected" });
    expect((await slow).stopReason).toBe("end_turn");
    expect(text(a, id)).toMatch(/Hello from the mock model$/);
    expect(await a.conn.extMethod("_session/steering", { sessionId: id, prompt: [{ type: "text", text: "x" }], _meta: { steering: { idleBehavior: "promptRequired" } } })).toEqual({ outcome: "promptRequired" });
    expect(await a.conn.closeSession({ sessionId: id })).toEqual({});
  });
});

describe("pi --mode acp without a model", () => {
  it("answers auth_required (-32000) with the auth method that says what to set", async () => {
    const saved = e;
    const bare = makeE2eEnv(server.url, { noDefaultModel: true });
    rmSync(join(bare.agentDir, "models.json"));
    e = bare;
    try {
      const a = startAgent();
      const init = await a.conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
      expect(init.authMethods?.[0]).toMatchObject({ id: "provider-api-key" });
      expect(init.authMethods?.[0]?.description).toContain("API key");
      const id = (await a.conn.newSession({ cwd: bare.cwd, mcpServers: [] })).sessionId;
      await expect(a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "say hello" }] })).rejects.toMatchObject({ code: -32000 });
      await expect(a.conn.authenticate({ methodId: "provider-api-key" })).rejects.toMatchObject({ code: -32000 });
      await a.kill();
    } finally {
      e = saved;
      bare.cleanup();
    }
  });
});
