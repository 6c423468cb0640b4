/**
 * End to end: /rewind in ACP (`pi --mode acp` driven by the official ACP SDK's client). It is an
 * available command; its choices (the point, code / conversation / both, the files to restore,
 * files changed outside the agent) are session/request_permission dialogs, and its result is a
 * session update the client shows.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import type { ChildProcess } from "node:child_process";
import { ClientSideConnection, ndJsonStream, type Client, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification } from "@agentclientprotocol/sdk";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, spawnCli, type E2eEnv } from "./helpers/e2e.js";

jest.setTimeout(240_000);

let server: LlmServer;
let e: E2eEnv;
let child: ChildProcess | undefined;

beforeAll(async () => {
  server = await startLlmServer({
    script: {
      turns: [
        {
          match: "change two files",
          turns: [
            {
              toolCalls: [
                { name: "write", arguments: { path: "a.txt", content: "agent a\n" } },
                { name: "write", arguments: { path: "b.txt", content: "agent b\n" } },
              ],
            },
            { text: "CHANGED" },
          ],
        },
      ],
      default: { text: "default answer" },
    },
  });
  e = makeE2eEnv(server.url);
});
afterEach(async () => {
  const c = child;
  child = undefined;
  if (c && c.exitCode === null && c.signalCode === null) {
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await gone;
  }
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

async function waitFor(pred: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20)); // (polling the condition)
  }
}

describe("/rewind over ACP", () => {
  it("is an available command; its choices are permission dialogs; the result is a session update; files changed outside the agent are kept", async () => {
    writeFileSync(join(e.cwd, "a.txt"), "original a\n");
    writeFileSync(join(e.cwd, "b.txt"), "original b\n");
    child = spawnCli(["--mode", "acp"], e);
    child.stderr!.on("data", () => {});
    const updates: SessionNotification[] = [];
    const asked: RequestPermissionRequest[] = [];
    let answer: (req: RequestPermissionRequest) => RequestPermissionResponse = () => ({ outcome: { outcome: "cancelled" } });
    const client: Client = {
      async requestPermission(req) {
        asked.push(req);
        return answer(req);
      },
      async sessionUpdate(n) {
        updates.push(n);
      },
    };
    const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>);
    const conn = new ClientSideConnection(() => client, stream);
    await conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await conn.newSession({ cwd: e.cwd, mcpServers: [] });
    const messages = () =>
      updates
        .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
        .map((u) => (u.update as { content: { text?: string } }).content.text ?? "")
        .join("");

    await waitFor(() => updates.some((u) => u.update.sessionUpdate === "available_commands_update"), "available_commands_update");
    const commands = (updates.find((u) => u.update.sessionUpdate === "available_commands_update")!.update as { availableCommands: Array<{ name: string; description: string }> }).availableCommands;
    expect(commands.find((c) => c.name === "rewind")?.description).toMatch(/restore code and conversation/i);

    expect((await conn.prompt({ sessionId, prompt: [{ type: "text", text: "change two files" }] })).stopReason).toBe("end_turn");
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("agent a\n");
    // The user edits one of the agent's files afterwards: /rewind must not overwrite it silently.
    writeFileSync(join(e.cwd, "b.txt"), "the user's b\n");

    // Each dialog is a permission request whose title says what it asks; the options are the choices.
    const pick = (req: RequestPermissionRequest, name: RegExp) => {
      const option = req.options.find((o) => name.test(o.name));
      if (!option) throw new Error(`no option ${name} in ${JSON.stringify(req.options.map((o) => o.name))}`);
      return { outcome: { outcome: "selected" as const, optionId: option.optionId } };
    };
    answer = (req) => {
      const title = String(req.toolCall.title ?? "") + JSON.stringify(req.toolCall.content ?? "");
      if (title.startsWith("Rewind to") && !/Restore/.test(req.options.map((o) => o.name).join())) return pick(req, /before "change two files"/);
      if (title.startsWith("Rewind to")) return pick(req, /^Restore code and conversation$/);
      if (title.startsWith("Restore these files?")) return pick(req, /^Yes$/);
      if (title.startsWith("Changed outside the agent")) return pick(req, /^Keep my changes/);
      return { outcome: { outcome: "cancelled" } };
    };
    expect((await conn.prompt({ sessionId, prompt: [{ type: "text", text: "/rewind" }] })).stopReason).toBe("end_turn");

    const titles = asked.map((r) => String(r.toolCall.title));
    expect(titles[0]).toMatch(/^Rewind to/);
    expect(asked[0]!.options.map((o) => o.name)).toEqual(expect.arrayContaining([expect.stringContaining('before "change two files"')]));
    expect(asked[1]!.options.map((o) => o.name)).toEqual(["Restore code and conversation", "Restore code only", "Restore conversation only"]);
    // The confirmation names the files that change, and marks the one changed outside the agent.
    const confirm = JSON.stringify(asked.find((r) => String(r.toolCall.title).startsWith("Restore these files?")));
    expect(confirm).toContain("change a.txt");
    expect(confirm).toContain("change b.txt  (changed outside the agent)");
    expect(titles.some((t) => t.startsWith("Changed outside the agent"))).toBe(true);

    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("original a\n");
    expect(readFileSync(join(e.cwd, "b.txt"), "utf8")).toBe("the user's b\n");
    await waitFor(() => /Rewound to point 1: 1 file\(s\) restored; conversation rewound; kept 1 file\(s\) changed outside the agent: b\.txt/.test(messages()), "the result as a session update");

    // The conversation went back too: the next prompt starts from before "change two files".
    expect((await conn.prompt({ sessionId, prompt: [{ type: "text", text: "anything" }] })).stopReason).toBe("end_turn");
    const last = server.stats().requests.at(-1)!.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(last.messages)).not.toContain("change two files");
  });

  it("a dialog the client cancels ends /rewind without touching the files", async () => {
    writeFileSync(join(e.cwd, "a.txt"), "kept as is\n");
    child = spawnCli(["--mode", "acp"], e);
    child.stderr!.on("data", () => {});
    const asked: RequestPermissionRequest[] = [];
    const client: Client = {
      async requestPermission(req) {
        asked.push(req);
        return { outcome: { outcome: "cancelled" } };
      },
      async sessionUpdate() {},
    };
    const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>);
    const conn = new ClientSideConnection(() => client, stream);
    await conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await conn.newSession({ cwd: e.cwd, mcpServers: [] });
    expect((await conn.prompt({ sessionId, prompt: [{ type: "text", text: "change two files" }] })).stopReason).toBe("end_turn");
    expect((await conn.prompt({ sessionId, prompt: [{ type: "text", text: "/rewind" }] })).stopReason).toBe("end_turn");
    expect(asked).toHaveLength(1);
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("agent a\n");
  });
});
