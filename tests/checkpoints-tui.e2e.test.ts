/**
 * End to end in the interactive mode (tmux, its own -L socket): after the scripted model edits a
 * file, /rewind shows the point picker, the restore choices and the files that change, and
 * "code and conversation" puts the file and the prompt back.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

const SOCKET = `pi-checkpoints-tui-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;

const { tmux, send, typeText, waitFor } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

describe("/rewind in the interactive mode (tmux)", () => {
  beforeAll(async () => {
    server = await startLlmServer({
      script: { turns: [{ toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "agent wrote this\n" } }] }, { text: "REWRITE-DONE" }] },
    });
    e = makeE2eEnv(server.url);
    writeFileSync(join(e.cwd, "a.txt"), "original\n");
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' --tools read,write,edit,bash 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "140", "-y", "45", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
    await waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    try {
      tmux("kill-server");
    } catch {
      /* already gone */
    }
    await server?.close();
    e?.cleanup();
  });

  it("picks the point, restores code and conversation after showing the file", async () => {
    typeText("rewrite the file");
    send("Enter");
    await waitFor(/REWRITE-DONE/);
    expect(readFileSync(join(e.cwd, "a.txt"), "utf8")).toBe("agent wrote this\n");
    typeText("/rewind");
    send("Enter");
    await waitFor(/Rewind to[\s\S]*before "rewrite the file"/);
    send("Enter");
    await waitFor(/Restore code and conversation[\s\S]*Restore code only[\s\S]*Restore conversation only/);
    send("Enter");
    await waitFor(/change a\.txt/);
    send("y");
    const content = () => (existsSync(join(e.cwd, "a.txt")) ? readFileSync(join(e.cwd, "a.txt"), "utf8") : ""); // (checkout replaces the file: it may be absent for a moment)
    await waitFor((s) => /Rewound to point 1/.test(s));
    await waitFor(() => content() === "original\n");
  }, 120_000);
});
