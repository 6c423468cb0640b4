/**
 * End to end over RPC: /rewind is listed by get_commands; get_checkpoints, get_checkpoint_diff
 * and restore_checkpoint list, preview and restore a point (code and conversation); /rewind as a
 * prompt asks through extension UI requests (select, select, confirm) and undoes the restore;
 * `fork` with restoreFiles brings the files its message started from into the new session.
 * A project's first capture is background work RPC holds while its client's first commands are
 * answered: it still starts without a prompt once the client is quiet.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RawRpc } from "./helpers/rpc.js";
import { waitUntil } from "./helpers/system.js";
import { storeDirFor } from "../plugins/checkpoints/store.js";

let server: LlmServer;
let e: E2eEnv;
let rpc: RawRpc | undefined;

beforeAll(async () => {
  server = await startLlmServer({
    script: {
      turns: [
        { toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "brand new\n" } }] },
        { toolCalls: [{ name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "one", newText: "two" }] } }] },
        { text: "changed" },
      ],
    },
  });
  e = makeE2eEnv(server.url);
  writeFileSync(join(e.cwd, "a.txt"), "one\n");
});
afterAll(async () => {
  await rpc?.kill();
  e.cleanup();
  await server.close();
});

let n = 0;
async function call(cmd: Record<string, unknown>): Promise<any> {
  const id = `c${++n}`;
  rpc!.send({ id, ...cmd });
  const r = await rpc!.response(id);
  expect([cmd.type, r.success, r.error]).toEqual([cmd.type, true, undefined]);
  return r.data;
}

describe("checkpoints over RPC", () => {
  it("the first capture starts once the client's first commands are answered, without a prompt", async () => {
    const quiet = makeE2eEnv(server.url);
    const client = new RawRpc(quiet, ["--tools", "read,bash,edit,write"]);
    try {
      writeFileSync(join(quiet.cwd, "b.txt"), "b\n");
      client.send({ id: "s", type: "get_state" });
      expect((await client.response("s")).success).toBe(true);
      client.send({ id: "m", type: "get_messages" });
      expect((await client.response("m")).success).toBe(true);
      await waitUntil(() => existsSync(storeDirFor(quiet.agentDir, quiet.cwd)), "the project's checkpoint store");
    } finally {
      await client.kill();
      quiet.cleanup();
    }
  });

  it("lists, previews and restores a point; /rewind asks through the extension UI and undoes it", async () => {
    rpc = new RawRpc(e, ["--tools", "read,bash,edit,write"]);
    await call({ type: "prompt", message: "change the files" });
    await rpc.waitFor((r) => r.type === "agent_settled", "agent_settled");
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("two\n");

    const { commands } = await call({ type: "get_commands" });
    expect(commands.map((c: any) => c.name)).toContain("rewind");

    const { points } = await call({ type: "get_checkpoints" });
    expect(points).toHaveLength(1);
    expect(points[0]).toMatchObject({ index: 1, kind: "prompt", label: "change the files", tree: expect.stringMatching(/^[0-9a-f]{40}$/) });

    const diff = await call({ type: "get_checkpoint_diff", point: 1 });
    expect(diff.changes).toEqual(expect.arrayContaining([{ path: "a.txt", status: "M" }, { path: "new.txt", status: "D" }]));
    expect(diff.external).toEqual([]);

    const restored = await call({ type: "restore_checkpoint", point: points[0].entryId, mode: "both" });
    expect(restored).toMatchObject({ mode: "both", kept: [], editorText: "change the files" });
    expect(restored.restored.sort()).toEqual(["a.txt", "new.txt"]);
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(e.cwd, "new.txt"))).toBe(false);
    const { messages } = await call({ type: "get_messages" });
    expect(messages.filter((m: any) => m.role === "assistant" || m.role === "user")).toEqual([]);

    // /rewind through the extension UI: pick the files before the restore, code only, confirm
    const seen = rpc.records.length;
    const answered = new Set<string>();
    const answer = async (pred: (r: any) => boolean, what: string, reply: (r: any) => Record<string, unknown>) => {
      const req = await rpc!.waitFor((r) => r.type === "extension_ui_request" && !answered.has(r.id) && rpc!.records.indexOf(r) >= seen && pred(r), what);
      answered.add(req.id);
      rpc!.send({ type: "extension_ui_response", id: req.id, ...reply(req) });
      return req;
    };
    rpc.send({ id: "rw", type: "prompt", message: "/rewind" });
    const pick = await answer((r) => r.method === "select" && r.title === "Rewind to", "the point picker", (r) => ({ value: r.options.find((o: string) => o.includes("(files before a restore)")) }));
    expect(pick.options).toHaveLength(1); // the conversation went back before the prompt: only the undo point is left
    await answer((r) => r.method === "select" && String(r.title).startsWith("Rewind to "), "the mode picker", () => ({ value: "Restore code only" }));
    const confirm = await answer((r) => r.method === "confirm", "the confirmation", () => ({ confirmed: true }));
    expect(confirm.message).toContain("create new.txt");
    expect(confirm.message).toContain("change a.txt");
    await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("Rewound to point"), "the rewind notice");
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(join(e.cwd, "new.txt"), "utf8")).toBe("brand new\n");
  }, 120_000);

  it("fork with restoreFiles: the new session starts from the message's files; a file changed outside the agent is kept", async () => {
    await rpc?.kill();
    server.setScript({
      turns: [
        { toolCalls: [{ name: "write", arguments: { path: "f1.txt", content: "agent 1\n" } }] },
        { toolCalls: [{ name: "write", arguments: { path: "f2.txt", content: "agent 2\n" } }] },
        { text: "forked later" },
      ],
    });
    writeFileSync(join(e.cwd, "f1.txt"), "original 1\n");
    writeFileSync(join(e.cwd, "f2.txt"), "original 2\n");
    rpc = new RawRpc(e, ["--tools", "read,write"]);
    await call({ type: "prompt", message: "fork me" });
    await rpc.waitFor((r) => r.type === "agent_settled", "agent_settled");
    expect(readFileSync(join(e.cwd, "f1.txt"), "utf8")).toBe("agent 1\n");
    writeFileSync(join(e.cwd, "f2.txt"), "the user's 2\n");
    const { messages } = await call({ type: "get_fork_messages" });
    const target = messages.find((m: any) => m.text === "fork me");
    // Without restoreFiles the files stay (as before); with it they come back.
    const forked = await call({ type: "fork", entryId: target.entryId, restoreFiles: true });
    expect(forked).toEqual({ text: "fork me", cancelled: false, files: { restored: ["f1.txt"], kept: ["f2.txt"] } });
    expect(readFileSync(join(e.cwd, "f1.txt"), "utf8")).toBe("original 1\n");
    expect(readFileSync(join(e.cwd, "f2.txt"), "utf8")).toBe("the user's 2\n");
    // The restore is a point of the new session: /rewind can undo it.
    const { points } = await call({ type: "get_checkpoints" });
    expect(points.map((p: any) => p.kind)).toEqual(["restore"]);
  }, 120_000);
});
