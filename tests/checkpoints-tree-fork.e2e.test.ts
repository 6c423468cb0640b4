/**
 * End to end in the interactive mode (tmux, its own -L socket): /tree and /fork offer to bring
 * the files of the chosen point back (only when they differ), name the files that change, and
 * keep a file changed outside the agent unless told to overwrite it.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

const SOCKET = `pi-checkpoints-tree-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;

const { tmux, send, typeText, waitFor } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));
const read = (name: string) => (existsSync(join(e.cwd, name)) ? readFileSync(join(e.cwd, name), "utf8") : undefined);

describe("/tree and /fork restore the files of the chosen point (tmux)", () => {
  beforeAll(async () => {
    server = await startLlmServer({
      script: {
        turnBy: "assistant",
        turns: [
          { match: "first change", turns: [{ toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "agent wrote this\n" } }] }, { text: "FIRST-DONE" }] },
          {
            match: "second change",
            turns: [
              {
                toolCalls: [
                  { name: "write", arguments: { path: "a.txt", content: "second version\n" } },
                  { name: "write", arguments: { path: "c.txt", content: "new file\n" } },
                ],
              },
              { text: "SECOND-DONE" },
            ],
          },
        ],
      },
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

  it("/tree: jumping before the prompt offers the files, names them, and restores them", async () => {
    typeText("first change");
    send("Enter");
    await waitFor(/FIRST-DONE/);
    expect(read("a.txt")).toBe("agent wrote this\n");
    // The write's result has the files as they are now: no question about them.
    typeText("/tree");
    send("Enter");
    await waitFor(/Session Tree/);
    // pi 1.6's search looks in the role and the text: the write's result ("Wrote … bytes to a.txt").
    typeText("toolResult wrote a.txt");
    await waitFor(/^› .*\[write: a\.txt\]/m);
    send("Enter");
    await waitFor(/Summarize the branch you leave\?/);
    send("Enter"); // No summary
    typeText("/tree"); // (a files question would take these keys, and the tree would not open)
    send("Enter");
    await waitFor((screen) => /Session Tree/.test(screen) && !/The files differ/.test(screen));
    typeText("first change");
    await waitFor(/user: first change/);
    send("Enter");
    await waitFor(/Summarize the branch you leave\?/);
    send("Enter"); // No summary
    await waitFor(/The files differ at this point[\s\S]*change a\.txt[\s\S]*Restore files too/);
    send("Down");
    send("Enter");
    await waitFor(/1 file\(s\) restored/);
    await waitFor(() => read("a.txt") === "original\n");
  }, 120_000);

  it("/fork: offers the files, keeps a file changed outside the agent, restores the rest", async () => {
    // The editor holds the prompt the jump gave back; a new prompt replaces it.
    send("C-u");
    typeText("second change");
    send("Enter");
    await waitFor(/SECOND-DONE/);
    expect(read("c.txt")).toBe("new file\n");
    writeFileSync(join(e.cwd, "a.txt"), "edited by the user\n");
    typeText("/fork");
    send("Enter");
    await waitFor(/Fork from a user message/);
    send("Enter");
    await waitFor(/The files differ at this point[\s\S]*change a\.txt  \(changed outside the agent\)[\s\S]*delete c\.txt/);
    send("Down");
    send("Enter");
    await waitFor(/Changed outside the agent since its last checkpoint[\s\S]*Keep my changes to 1 file/);
    send("Enter");
    await waitFor(/Forked to new session/);
    await waitFor(/1 file\(s\) restored; kept 1 file\(s\) changed outside the agent: a\.txt/);
    await waitFor(() => read("c.txt") === undefined);
    expect(read("a.txt")).toBe("edited by the user\n");
  }, 120_000);
});
