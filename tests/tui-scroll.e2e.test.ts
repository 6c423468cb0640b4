/**
 * End to end: fullscreen scrolling in tmux as pi 1.6 does it — mouse reports on (SGR), the
 * wheel (sent as SGR reports) scrolls the transcript, a scrollbar and the "Jump to latest
 * message" hint while scrolled up, Ctrl+Home / Ctrl+End, a click on the hint, and a drag that
 * selects transcript text and copies it with OSC 52 (tmux's set-clipboard keeps it as a buffer).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-scroll", () => e);

const LINES = Array.from({ length: 80 }, (_, i) => `row-${String(i + 1).padStart(3, "0")}`).join("\n\n");
const wheelUp = (n = 1) => {
  for (let i = 0; i < n; i++) sh.typeText("\x1b[<64;30;10M");
};
const HINT = /↓ Jump to latest message · Ctrl\+End/;

describe("fullscreen scrolling in tmux", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: `FIRST-LINE\n\n${LINES}\n\nLAST-LINE` } } });
    // A fixed step (pi 1.6's setting) keeps the distance independent of how fast tmux sends the steps.
    e = makeE2eEnv(server.url, { settings: { fullscreenWheelScrollLines: 3 } });
    delete e.env.TMUX;
    sh.launch();
    await sh.waitFor(/mock\/mock-model/);
    sh.typeText("long answer please");
    sh.send("Enter");
    await sh.waitFor(/LAST-LINE/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("turns SGR mouse reporting on in fullscreen", () => {
    expect(sh.pane("#{mouse_sgr_flag} #{mouse_button_flag}")).toBe("1 1");
  });

  it("the wheel scrolls the transcript up, with a scrollbar and the jump-to-latest hint", async () => {
    wheelUp(10);
    // All ten steps taken (thirty rows): the last twenty rows are out of view.
    const s = await sh.waitFor((x) => HINT.test(x) && !/row-0(?:7\d|80)/.test(x));
    expect(s).not.toMatch(/LAST-LINE/);
    expect(s).toMatch(/row-0[6-7]\d/);
    expect(s).toMatch(/┃$/m); // the scrollbar's thumb in the last column
    // The wheel down goes back towards the end.
    for (let i = 0; i < 12; i++) sh.typeText("\x1b[<65;30;10M");
    await sh.waitFor((x) => /LAST-LINE/.test(x) && !HINT.test(x));
  });

  it("Ctrl+Home jumps to the top, Ctrl+End back to the latest", async () => {
    sh.send("C-Home");
    const top = await sh.waitFor(/^pi v\d/m);
    expect(top).toMatch(HINT);
    sh.send("C-End");
    await sh.waitFor((x) => /LAST-LINE/.test(x) && !HINT.test(x));
  });

  it("a click on the hint jumps to the latest message", async () => {
    wheelUp(5);
    const s = await sh.waitFor(HINT);
    const lines = s.split("\n");
    const row = lines.findIndex((l) => HINT.test(l));
    const col = lines[row]!.indexOf("Jump") + 1;
    sh.typeText(`\x1b[<0;${col + 1};${row + 1}M\x1b[<0;${col + 1};${row + 1}m`);
    await sh.waitFor((x) => /LAST-LINE/.test(x) && !HINT.test(x));
  });

  it("the wheel over an open selector moves its selection; over the transcript it scrolls", async () => {
    sh.send("C-l");
    const s0 = await sh.waitFor(/Select a model/);
    const lines = s0.split("\n");
    const row = lines.findIndex((l) => l.startsWith("→ ")) + 1;
    const selected = (x: string) => x.split("\n").find((l) => l.startsWith("→ "))?.trim();
    const first = selected(s0);
    expect(first).toBeTruthy();
    sh.typeText(`\x1b[<65;30;${row}M`);
    await sh.waitFor((x) => !!selected(x) && selected(x) !== first);
    sh.typeText(`\x1b[<64;30;${row}M`);
    await sh.waitFor((x) => selected(x) === first);
    sh.typeText("\x1b[<64;30;5M");
    await sh.waitFor((x) => HINT.test(x) && selected(x) === first);
    sh.send("Escape");
    await sh.waitFor((x) => !/Select a model/.test(x));
    sh.send("C-End");
    await sh.waitFor((x) => /LAST-LINE/.test(x) && !HINT.test(x));
  });

  it("dragging selects transcript text and copies it with OSC 52", async () => {
    const s = await sh.waitFor(/LAST-LINE/);
    const row = s.split("\n").findIndex((l) => /LAST-LINE/.test(l));
    const start = s.split("\n")[row]!.indexOf("LAST-LINE") + 1;
    sh.typeText(`\x1b[<0;${start};${row + 1}M\x1b[<32;${start + 4};${row + 1}M\x1b[<0;${start + 4};${row + 1}m`);
    await sh.waitFor(/Copied the selection/);
    await sh.waitFor(() => {
      try {
        return sh.tmux("show-buffer") === "LAST-";
      } catch {
        return false;
      }
    });
  });
});
