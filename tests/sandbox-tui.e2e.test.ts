/**
 * End to end: the sandbox in the interactive mode (tmux, its own -L socket). The footer shows the
 * level, and a command the sandbox blocked asks once whether to run it outside the sandbox:
 * "n" keeps it blocked, "y" runs it again unconfined.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";
import { mkdtempOutsideTmp, requireProgram } from "./helpers/system.js";


const SOCKET = `pi-sandbox-tui-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;
let outside: string;

const { tmux, send, typeText, waitFor } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

describe("sandbox in the interactive mode (tmux)", () => {
  requireProgram("bwrap", "bubblewrap");
  beforeAll(async () => {
    outside = mkdtempOutsideTmp(".pi-sandbox-tui-");
    const touch = (name: string) => ({ toolCalls: [{ name: "bash", arguments: { command: `touch '${join(outside, name)}'` } }] });
    server = await startLlmServer({
      script: {
        turns: [
          { match: "refuse-escalation", turns: [touch("tui-no"), { text: "NO-TURN-DONE" }] },
          { match: "allow-escalation", turns: [touch("tui-yes"), { text: "YES-TURN-DONE" }] },
        ],
        default: { text: "nothing scripted" },
      },
    });
    // Escalation is off unless the global settings allow a person to answer it.
    e = makeE2eEnv(server.url, { settings: { sandbox: { allowEscalation: true } } });
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' --no-session --sandbox workspace-write 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
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
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  it("shows the sandbox level in the footer", async () => {
    await waitFor(/sandbox: workspace-write/);
  });

  it("No keeps a blocked command blocked", async () => {
    typeText("refuse-escalation");
    send("Enter");
    await waitFor(/Run outside the sandbox\?/);
    send("n");
    await waitFor(/NO-TURN-DONE/);
    expect(existsSync(join(outside, "tui-no"))).toBe(false);
  });

  it("Yes runs the blocked command again outside the sandbox", async () => {
    typeText("allow-escalation");
    send("Enter");
    await waitFor(/Run outside the sandbox\?/);
    send("y");
    await waitFor(/YES-TURN-DONE/);
    expect(existsSync(join(outside, "tui-yes"))).toBe(true);
  });
});
