/**
 * End to end: keys typed the moment the TUI's footer first appears reach the editor — none is
 * lost to the start-up (terminal queries in flight, the first frames, extensions loading).
 * Several fresh launches in tmux (`extended-keys on`), each typed into as soon as the footer shows.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-startup-typing", () => e);

/** The editor's rows: the lines between the two rules above the footer. */
function editorText(screen: string): string {
  const lines = screen.split("\n");
  const rules = lines.map((l, i) => (/^─{20,}$/.test(l.trim()) ? i : -1)).filter((i) => i >= 0);
  if (rules.length < 2) return "";
  const [a, b] = rules.slice(-2) as [number, number];
  return lines
    .slice(a + 1, b)
    .map((l) => l.trim())
    .join("");
}

describe("TUI start-up: typing at once", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "ok" } } });
    e = makeE2eEnv(server.url);
    delete e.env.TMUX;
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  /** A fresh launch in the same shell: the screen is cleared first, so the footer waited for is the new one. */
  const relaunch = async (args: string) => {
    sh.typeText("clear");
    sh.send("Enter");
    await sh.waitFor((x) => !/mock\/mock-model/.test(x) && /^\$\s*$/m.test(x));
    sh.launch(args);
  };
  const quit = async () => {
    sh.send("C-c");
    await sh.waitFor((x) => editorText(x) === "");
    sh.send("C-d");
    await sh.waitFor(/EXIT=0/);
  };

  it("keys typed one by one the moment the footer appears (a Shift+Enter among them) are all in the editor", async () => {
    for (let i = 0; i < 3; i++) {
      if (i === 0) sh.launch("--no-session");
      else await relaunch(i === 2 ? "--no-session --tui-mode regular" : "--no-session");
      await sh.waitFor(/mock\/mock-model/, 60_000);
      for (const ch of `first${i}`) sh.typeText(ch);
      sh.send("S-Enter");
      for (const ch of "second") sh.typeText(ch);
      const s = await sh.waitFor((x) => editorText(x) === `first${i}second`, 20_000).catch((err: Error) => err.message);
      expect(editorText(s)).toBe(`first${i}second`);
      expect(server.stats().requests.length).toBe(0);
      await quit();
    }
  }, 240_000);

  it("keys typed right after the command is started, before the TUI draws, land in the editor", async () => {
    await relaunch("--no-session");
    for (const ch of "earlybird") sh.typeText(ch);
    const s = await sh.waitFor((x) => /mock\/mock-model/.test(x) && editorText(x) === "earlybird", 60_000).catch((err: Error) => err.message);
    expect(editorText(s)).toBe("earlybird");
    await quit();
  }, 120_000);
});
