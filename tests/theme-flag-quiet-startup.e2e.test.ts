/**
 * End to end in a terminal (tmux): pi 1.6's --use-theme and quietStartup "header" against the
 * real CLI's interactive mode, the loopback LLM server and a throwaway agent dir.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

jest.setTimeout(180_000);

const SOCKET = `pi-s16-tui-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;
const { tmux, waitFor, kill } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  kill();
  e?.cleanup();
});

function start(settings: Record<string, unknown>, args: string[], env: Record<string, string> = {}) {
  e = makeE2eEnv(server.url, { settings });
  delete e.env.TMUX;
  delete e.env.COLORFGBG;
  e.env.LANG = "C.UTF-8";
  Object.assign(e.env, env);
  const quoted = args.map((a) => `'${a}'`).join(" ");
  const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' ${quoted} 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
  tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
}
const savedTheme = () => JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8")).theme;

describe("--use-theme", () => {
  it("selects the theme for the run (an unknown one is reported by name) without saving it", async () => {
    start({ theme: "light" }, ["--use-theme", "no-such-theme"]);
    await waitFor(/mock\/mock-model/, 120_000);
    await waitFor(/theme "no-such-theme" not found/);
    expect(savedTheme()).toBe("light");
  });

  it("a light/dark pair picks by the terminal background (COLORFGBG)", async () => {
    start({ theme: "dark" }, ["--use-theme", "no-such-light/no-such-dark"], { COLORFGBG: "0;15" });
    const s = await waitFor(/theme "no-such-[a-z]+" not found/, 120_000);
    expect(s).toContain('theme "no-such-light" not found');
    kill();
    e.cleanup();
    start({ theme: "dark" }, ["--use-theme", "no-such-light/no-such-dark"], { COLORFGBG: "15;0" });
    const d = await waitFor(/theme "no-such-[a-z]+" not found/, 120_000);
    expect(d).toContain('theme "no-such-dark" not found');
  });
});

describe("quietStartup", () => {
  it('"header" keeps the header with its key hints; true hides the hints', async () => {
    start({ quietStartup: "header" }, []);
    const s = await waitFor(/mock\/mock-model/, 120_000);
    expect(s).toMatch(/interrupt/);
    kill();
    e.cleanup();
    start({ quietStartup: true }, []);
    const q = await waitFor(/mock\/mock-model/, 120_000);
    expect(q).not.toMatch(/interrupt/);
    expect(q).toMatch(/v\d+\.\d+/);
  });
});
