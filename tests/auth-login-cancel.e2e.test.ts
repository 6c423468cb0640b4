/**
 * End to end in a terminal (tmux): `pi auth login <oauth provider>` stops at the first Ctrl+C
 * while it waits for the pasted code (with --no-browser, the headless method is chosen as in pi 1.6) (exit 130, one line, nothing saved) — the real CLI with a
 * throwaway agent dir; nothing leaves the machine (the browser is not opened).
 */
import { describe, it, expect, afterEach, jest } from "@jest/globals";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

jest.setTimeout(120_000);

const SOCKET = `pi-auth-cancel-${process.pid}`;
let e: E2eEnv;
const { tmux, waitFor, send, kill } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));
afterEach(() => {
  kill();
  e?.cleanup();
});

describe("pi auth login", () => {
  it("cancels on the first Ctrl+C at the code prompt", async () => {
    e = makeE2eEnv("http://127.0.0.1:9");
    delete e.env.TMUX;
    e.env.BROWSER = "true";
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' auth login anthropic --no-browser; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y", "40", cmd);
    // --no-browser picks the method without a browser, as pi 1.6 does, and asks for the code
    const asked = await waitFor(/Paste the redirect URL or code:/, 60_000);
    expect(asked).toMatch(/Select Anthropic login method: Copy code login \(headless\)/);
    send("C-c");
    const s = await waitFor(/EXIT=\d+/);
    expect(s).toMatch(/signing in to anthropic cancelled; nothing saved\n(\s*\n)*EXIT=130/);
    expect(s).not.toMatch(/^\s+at /m);
    expect(existsSync(join(e.agentDir, "auth.json"))).toBe(false);
  });
});
