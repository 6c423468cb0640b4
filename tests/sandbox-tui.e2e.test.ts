/**
 * End to end: the sandbox in the interactive mode (tmux, its own -L socket). The footer shows the
 * level, and a command the sandbox blocked asks once whether to run it outside the sandbox:
 * "n" keeps it blocked, "y" runs it again unconfined.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { findBwrap } from "../plugins/sandbox/bwrap.js";

const hasTools = (() => {
  if (process.platform !== "linux" || !findBwrap()) return false;
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const SOCKET = `pi-sandbox-tui-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;
let outside: string;

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8", env: e.env });
}
const capture = () => tmux("capture-pane", "-p", "-t", "t");
const send = (...keys: string[]) => tmux("send-keys", "-t", "t", ...keys);
const typeText = (text: string) => tmux("send-keys", "-t", "t", "-l", text);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const readErr = () => (existsSync(join(e.root, "err.log")) ? readFileSync(join(e.root, "err.log"), "utf8") : "");

async function waitFor(test: RegExp | (() => boolean), timeout = 30_000): Promise<string> {
  const t0 = Date.now();
  let s = "";
  while (Date.now() - t0 < timeout) {
    s = capture();
    if (typeof test === "function" ? test() : test.test(s)) return s;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${test}\n--- screen ---\n${s}\n--- stderr ---\n${readErr()}`);
}

(hasTools ? describe : describe.skip)("sandbox in the interactive mode (tmux)", () => {
  beforeAll(async () => {
    outside = mkdtempSync(join(homedir(), ".pi-sandbox-tui-"));
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
    e = makeE2eEnv(server.url);
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
