/**
 * End to end: the extension UI sub-protocol (protocol.md §5.2), extension errors as records and
 * ctx.shutdown(), through a fixture plugin (tests/fixtures/rpc-ui-plugin.ts) loaded by the
 * settings key "plugins", against the real CLI.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RawRpc } from "./helpers/rpc.js";
import { RpcClient, type RpcEvent, type RpcExtensionUiRequest, type RpcUiAnswer } from "../sdk/rpc-client.js";

const PLUGIN = resolve(ROOT, "tests", "fixtures", "rpc-ui-plugin.ts");

let server: LlmServer;
let e: E2eEnv;
let client: RpcClient;
/** How the client answers dialogs in the current test. */
let answerer: (req: RpcExtensionUiRequest) => RpcUiAnswer | Promise<RpcUiAnswer> = () => undefined;
const raws: RawRpc[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "fine" } } });
  e = makeE2eEnv(server.url, { settings: { plugins: [PLUGIN] } });
  client = new RpcClient({
    cliPath: CLI,
    cwd: e.cwd,
    env: e.env,
    inheritEnv: false,
    args: ["--no-session"],
    onExtensionUiRequest: (req) => answerer(req),
  });
  await client.start();
});
afterAll(async () => {
  await client?.stop();
  await Promise.all(raws.map((r) => r.kill()));
  await server.close();
  e.cleanup();
});

/** The answers the fixture reported (custom messages), in order. */
function answers(events: RpcEvent[]): Array<{ method: string; answer: unknown }> {
  return events
    .filter((ev: any) => ev.type === "message_end" && ev.message.role === "custom" && ev.message.customType === "rpc-test")
    .map((ev: any) => JSON.parse(ev.message.content));
}
function requests(events: RpcEvent[], method?: string): any[] {
  return events.filter((ev: any) => ev.type === "extension_ui_request" && (!method || ev.method === method));
}
function nextEvent(pred: (ev: any) => boolean): Promise<any> {
  return new Promise((res) => {
    const off = client.onEvent((ev) => {
      if (pred(ev)) {
        off();
        res(ev);
      }
    });
  });
}

describe("extension UI over RPC", () => {
  it("dialogs answered by the client: select, confirm, input, editor", async () => {
    answerer = (req) => {
      if (req.method === "select") return req.options[1];
      if (req.method === "confirm") return true;
      if (req.method === "input") return "Ada";
      if (req.method === "editor") return `${req.prefill}!`;
      return undefined;
    };
    const seen: RpcEvent[] = [];
    const off = client.onEvent((ev) => seen.push(ev));
    for (const cmd of ["/ask-select", "/ask-confirm", "/ask-input", "/ask-editor"]) {
      expect(await client.prompt(cmd)).toEqual({ disposition: "handled" });
    }
    off();
    expect(answers(seen)).toEqual([
      { method: "select", answer: "green" },
      { method: "confirm", answer: true },
      { method: "input", answer: "Ada" },
      { method: "editor", answer: "line 1\nline 2!" },
    ]);
    expect(requests(seen, "select")[0]).toMatchObject({ title: "Pick a colour", options: ["red", "green"] });
    expect(requests(seen, "select")[0].timeout).toBeUndefined();
    expect(requests(seen, "confirm")[0]).toMatchObject({ title: "Sure?", message: "Really do it?" });
    expect(requests(seen, "input")[0]).toMatchObject({ title: "Your name", placeholder: "type here" });
    expect(requests(seen, "editor")[0]).toMatchObject({ title: "Edit", prefill: "line 1\nline 2" });
    for (const r of requests(seen)) expect(typeof r.id).toBe("string");
  });

  it("a cancelled answer resolves to the default (undefined, false)", async () => {
    answerer = () => undefined; // the client sends {cancelled: true}
    const a = await client.promptAndWait("/ask-select");
    const b = await client.promptAndWait("/ask-confirm");
    expect([...answers(a), ...answers(b)]).toEqual([
      { method: "select", answer: "<undefined>" },
      { method: "confirm", answer: false },
    ]);
  });

  it("server-side timeout: unanswered dialogs resolve to their default and the request carries the timeout", async () => {
    answerer = () => new Promise<RpcUiAnswer>(() => {}); // never answers
    const a = await client.promptAndWait("/ask-select 300");
    const b = await client.promptAndWait("/ask-confirm 300");
    expect(requests(a, "select")[0].timeout).toBe(300);
    expect(requests(b, "confirm")[0].timeout).toBe(300);
    expect([...answers(a), ...answers(b)]).toEqual([
      { method: "select", answer: "<undefined>" },
      { method: "confirm", answer: false },
    ]);
  });

  it("an aborted signal resolves the dialog to its default", async () => {
    answerer = () => new Promise<RpcUiAnswer>(() => {});
    const request = nextEvent((ev) => ev.type === "extension_ui_request" && ev.title === "Abortable");
    const result = nextEvent((ev) => ev.type === "message_end" && ev.message.customType === "rpc-test");
    const first = client.prompt("/ask-abortable");
    await request;
    // Extension commands run at once, even while another one waits on a dialog.
    expect(await client.prompt("/cancel-dialog")).toEqual({ disposition: "handled" });
    expect(await first).toEqual({ disposition: "handled" });
    expect(JSON.parse((await result).message.content)).toEqual({ method: "abortable", answer: "<undefined>" });
  });

  it("the abort command closes an open dialog with its default", async () => {
    answerer = () => new Promise<RpcUiAnswer>(() => {});
    const request = nextEvent((ev) => ev.type === "extension_ui_request" && ev.method === "input");
    const result = nextEvent((ev) => ev.type === "message_end" && ev.message.customType === "rpc-test");
    const pending = client.prompt("/ask-input");
    await request;
    await client.abort();
    expect(await pending).toEqual({ disposition: "handled" });
    expect(JSON.parse((await result).message.content)).toEqual({ method: "input", answer: "<undefined>" });
  });

  it("fire-and-forget requests go out; what has no RPC form is a quiet no-op, as in pi 1.6", async () => {
    answerer = () => undefined;
    const events = await client.promptAndWait("/ui-fire");
    expect(requests(events, "notify")).toEqual([expect.objectContaining({ message: "hello from the plugin", notifyType: "warning" })]);
    expect(requests(events, "setStatus")).toEqual([expect.objectContaining({ statusKey: "rpc-test", statusText: "busy" })]);
    expect(requests(events, "setWidget")).toEqual([expect.objectContaining({ widgetKey: "rpc-test", widgetLines: ["line A", "line B"], widgetPlacement: "belowEditor" })]);
    expect(requests(events, "setTitle")).toEqual([expect.objectContaining({ title: "rpc test title" })]);
    expect(requests(events, "set_editor_text")).toEqual([expect.objectContaining({ text: "prefilled" })]);
    // custom, setEditorComponent, setFooter, setHeader and the theme: no diagnostic, no request.
    expect(events.filter((ev: any) => ev.type === "extension_error")).toEqual([]);
    expect(events.filter((ev: any) => ev.type === "extension_ui_request" && ["custom", "setEditorComponent", "setFooter", "setHeader"].includes(ev.method))).toEqual([]);
    // The theme stand-in returns text unchanged.
    expect(answers(events)).toEqual([{ method: "ui-fire", answer: "styled" }]);
  });
});

describe("extension errors and shutdown", () => {
  it("a throwing hook becomes an extension_error record and the run goes on", async () => {
    const events = await client.promptAndWait("please explode");
    const err = events.find((ev: any) => ev.type === "extension_error") as any;
    expect(err).toMatchObject({ type: "extension_error", extensionPath: "rpc-test-plugin", event: "before_agent_start" });
    expect(err.error).toMatch(/before_agent_start boom/);
    expect(events[events.length - 1]).toEqual({ type: "agent_settled", aborted: false });
    const cmd = await client.promptAndWait("/boom");
    const err2 = cmd.find((ev: any) => ev.type === "extension_error") as any;
    expect(err2).toMatchObject({ event: "/boom" });
    expect(err2.error).toMatch(/command exploded/);
  });

  it("session_start handlers already reach the client; stdin end: session_shutdown, exit 0", async () => {
    const marker = join(e.root, "marker-eof");
    const p = new RawRpc(e, ["--no-session"], { RPC_TEST_MARKER: marker });
    raws.push(p);
    p.send({ id: "s", type: "get_state" });
    await p.response("s");
    // The startup session_start ran before the first command was read; its UI call went out first.
    expect(p.records[0]).toMatchObject({ type: "extension_ui_request", method: "setTitle", title: "rpc-test session_start startup" });
    p.send({ id: "n", type: "new_session" });
    await p.response("n");
    expect(p.records.filter((r) => r.method === "setTitle").map((r) => r.title)).toEqual(["rpc-test session_start startup", "rpc-test session_start new"]);
    p.end();
    expect((await p.closed).code).toBe(0);
    expect(readFileSync(marker, "utf8")).toBe("shutdown switch\nshutdown exit\n");
  });

  it("ctx.shutdown() when idle: answered, session_shutdown, exit 0", async () => {
    const marker = join(e.root, "marker-idle");
    const p = new RawRpc(e, ["--no-session"], { RPC_TEST_MARKER: marker });
    raws.push(p);
    p.send({ id: "q", type: "prompt", message: "/quit" });
    expect((await p.closed).code).toBe(0);
    expect(p.records.find((r) => r.id === "q")).toMatchObject({ success: true, data: { disposition: "handled" } });
    expect(readFileSync(marker, "utf8")).toBe("shutdown exit\n");
  });

  it("ctx.shutdown() while streaming waits until the agent settles", async () => {
    // The answer waits at a gate after its first chunk until /quit has been taken.
    server.setScript({ default: { text: "word ", repeat: 60, gate: "quit" } });
    const marker = join(e.root, "marker-busy");
    const p = new RawRpc(e, ["--no-session"], { RPC_TEST_MARKER: marker });
    raws.push(p);
    p.send({ id: "run", type: "prompt", message: "talk" });
    await p.waitFor((r) => r.type === "message_update", "streaming");
    p.send({ id: "q", type: "prompt", message: "/quit" });
    expect(await p.response("q")).toMatchObject({ success: true, data: { disposition: "handled" } });
    expect(p.records.find((r) => r.type === "agent_settled")).toBeUndefined(); // still streaming
    server.release("quit");
    expect((await p.closed).code).toBe(0);
    const settled = p.records.find((r) => r.type === "agent_settled");
    expect(settled).toEqual({ type: "agent_settled", aborted: false });
    const text = p.records
      .filter((r) => r.type === "message_update" && r.assistantMessageEvent.type === "text_delta")
      .map((r) => r.assistantMessageEvent.delta)
      .join("");
    expect(text).toBe("word ".repeat(60));
    expect(existsSync(marker)).toBe(true);
    server.setScript({ default: { text: "fine" } });
  });
});
