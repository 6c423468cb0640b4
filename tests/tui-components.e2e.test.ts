/**
 * End to end: real pi-tui components from a fixture extension (tests/fixtures/extensions/
 * tui-components.ts) drawn by the real CLI's interactive mode in tmux (120x40), keys in with
 * send-keys, the screen back with capture-pane; every wait is for a marker on screen.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { visibleWidth } from "../modes/tui/text.js";
import { tmuxDriver } from "./helpers/tmux.js";


const SOCKET = `pi-tui-comp-${process.pid}`;
const EXTENSION = join(ROOT, "tests", "fixtures", "extensions", "tui-components.ts");
let server: LlmServer;
let e: E2eEnv;

const { tmux, send, typeText, waitFor, readErr } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

const SCRIPT = {
  turns: [
    { match: "stream please", text: "tick ", repeat: 120, delayMs: 15 },
    { match: "long one", text: ["needle-top first", ...Array.from({ length: 24 }, (_, i) => `filler ${i + 1}`), "needle-bottom last"].join("\n\n") },
    { match: "after the card", text: "CARD-TURN-DONE" },
    { match: "whisper it", turns: [{ text: "Whispering.", toolCalls: [{ name: "whisper", arguments: { word: "QUIET" } }] }, { text: "WHISPER-DONE" }] },
    { match: "shout it", turns: [{ text: "Shouting.", toolCalls: [{ name: "shout", arguments: { word: "hello" } }] }, { text: "SHOUT-DONE" }] },
  ],
  default: { text: "REPLY-TO-EDITOR" },
};

describe("pi-tui components in the interactive mode (tmux)", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: SCRIPT });
    e = makeE2eEnv(server.url);
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' -e '${EXTENSION}' 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
    await waitFor(/FOOTER-COMP chunks=0/);
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

  it("draws a footer and a widget that update while an answer streams", async () => {
    let s = await waitFor(/WIDGET-CHUNKS=0/);
    expect(s).toContain("WIDGET-COMP below the editor");
    // The widget sits below the editor, the footer is the last line.
    const lines = s.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/FOOTER-COMP chunks=0 {4}end/);
    typeText("stream please");
    send("Enter");
    // Mid-stream: the counters moved and the answer is still arriving.
    s = await waitFor((x) => /Working/.test(x) && /FOOTER-COMP chunks=([1-9]\d*)/.test(x) && /WIDGET-CHUNKS=([1-9]\d*)/.test(x));
    s = await waitFor((x) => !/Working/.test(x) && /tick tick/.test(x));
    const n = Number(/FOOTER-COMP chunks=(\d+)/.exec(s)![1]);
    expect(n).toBeGreaterThan(10);
  });

  it("answers a ctx.ui.custom() SelectList with keys and gives the keyboard back", async () => {
    typeText("/pick");
    send("Enter");
    let s = await waitFor(/PICK-A-COLOUR/);
    expect(s).toMatch(/→ Red/);
    send("Down");
    await waitFor(/→ Green/);
    send("Down");
    await waitFor(/→ Blue/);
    send("Enter");
    s = await waitFor(/PICKED=blue/);
    expect(s).not.toContain("PICK-A-COLOUR");
    // The editor has the keyboard again.
    typeText("typed-after-pick");
    await waitFor(/typed-after-pick/);
    send("C-u");
    await waitFor((x) => !/typed-after-pick/.test(x));
  });

  it("draws an overlay over the chat at its anchor and width, and closes it", async () => {
    typeText("/over");
    send("Enter");
    const s = await waitFor(/OVERLAY-BOX/);
    const lines = s.split("\n");
    const row = lines.findIndex((l) => l.includes("OVERLAY-BOX"));
    // anchor top-right, margin 1: the second row of the box is screen row 2, its right edge at column 119.
    expect(row).toBe(2);
    expect(lines[row]).toMatch(/\| OVERLAY-BOX +\|$/);
    expect(lines[row + 1]).toContain("width=30");
    expect(visibleWidth(lines[row]!.trimEnd())).toBe(119);
    send("Escape");
    await waitFor((x) => /OVERLAY-CLOSED/.test(x) && !/OVERLAY-BOX/.test(x));
  });

  it("keeps CJK and emoji lines of a component inside the screen", async () => {
    typeText("/cjk");
    send("Enter");
    const s = await waitFor(/CJK-START/);
    expect(s).toContain("漢字かなカナ한국어");
    expect(s).not.toContain("CJK-TAIL");
    for (const line of s.split("\n")) expect(visibleWidth(line)).toBeLessThanOrEqual(120);
    send("Enter");
    await waitFor((x) => !/CJK-START/.test(x));
  });

  it("draws a tool's result with the component its renderResult returns", async () => {
    typeText("shout it");
    send("Enter");
    const s = await waitFor(/SHOUT-DONE/);
    expect(s).toContain("SHOUT-CALL hello");
    expect(s).toMatch(/ {3}SHOUT-RENDERED HELLO!/);
  });

  it("draws a tool with the renderers a registerToolRenderer resolver chose (renderShell self)", async () => {
    typeText("whisper it");
    send("Enter");
    const s = await waitFor(/WHISPER-DONE/);
    // No shell: the component's line starts at the left edge, no tool box padding.
    expect(s).toMatch(/^RESOLVED-CALL QUIET/m);
    expect(s).toMatch(/^RESOLVED-RESULT quiet/m);
    // The resolver passed "shout" to next(): its own renderers still draw it.
    expect(s).toContain("SHOUT-RENDERED HELLO!");
  });

  it("draws a custom entry (pi.appendEntry) with its entry renderer, and not for the model", async () => {
    typeText("/card first card");
    send("Enter");
    let s = await waitFor(/CARD-ENTRY first card/);
    expect(s).not.toContain("CARD-EXPANDED");
    // Expanding tools expands the entry too (options.expanded).
    send("C-o");
    s = await waitFor(/CARD-EXPANDED/);
    send("C-o");
    await waitFor((x) => !/CARD-EXPANDED/.test(x));
    typeText("after the card");
    send("Enter");
    await waitFor(/CARD-TURN-DONE/);
    expect(JSON.stringify(server.stats().requests.at(-1)!.body.messages)).not.toContain("first card");
  });

  it("searches the transcript (Ctrl+Shift+F): matches counted, the selected one scrolled into view, Esc closes", async () => {
    typeText("long one");
    send("Enter");
    let s = await waitFor(/needle-bottom last/);
    expect(s).not.toContain("needle-top first"); // scrolled off the top
    // Ctrl+Shift+F as a terminal with extended keys sends it (CSI 102;6u).
    tmux("send-keys", "-t", "t", "-H", "1b", "5b", "31", "30", "32", "3b", "36", "75");
    await waitFor(/↑ Shift\+Enter · ↓ Enter/);
    typeText("NEEDLE");
    // The first match at or below the top of the chat is selected: the bottom one (2 of 2).
    s = await waitFor(/NEEDLE +2\/2 /);
    // Ctrl+Shift+G: the previous match, scrolled into view.
    tmux("send-keys", "-t", "t", "-H", "1b", "5b", "31", "30", "33", "3b", "36", "75");
    s = await waitFor((x) => /NEEDLE +1\/2 /.test(x) && /needle-top first/.test(x));
    // Enter: the next match (wrapping), back at the bottom.
    send("Enter");
    s = await waitFor((x) => /NEEDLE +2\/2 /.test(x) && /needle-bottom last/.test(x));
    typeText("zzz");
    await waitFor(/No matches/);
    send("Escape");
    s = await waitFor((x) => !/No matches|↑ Shift\+Enter/.test(x));
    // Nothing was sent: the editor is empty and no new request went out.
    expect(JSON.stringify(server.stats().requests.at(-1)!.body.messages.at(-1))).toContain("long one");
  });

  it("replaces the editor with an extension's pi-tui Editor that still submits", async () => {
    typeText("/myedit");
    send("Enter");
    await waitFor(/MY-EDITOR ▸/);
    typeText("sent from my editor");
    await waitFor(/sent from my editor/);
    send("Enter");
    const s = await waitFor(/REPLY-TO-EDITOR/);
    expect(s).toMatch(/ sent from my editor/);
    expect(JSON.stringify(server.stats().requests.at(-1)!.body.messages)).toContain("sent from my editor");
    // Quitting still works from the custom editor (Ctrl+D on an empty editor).
    send("C-d");
    await waitFor(/EXIT=0/);
    expect(readErr()).toBe("");
  });
});

describe("tuiMode (tmux)", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "ANSWER-IN-SCROLLBACK\n\nsecond paragraph" } } });
    e = makeE2eEnv(server.url);
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
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

  /** The pane's history only (the lines scrolled off above the visible screen). */
  const history = (session: string) => tmux("capture-pane", "-p", "-S", "-", "-E", "-1", "-t", session);

  /**
   * Run one prompt in a fresh tmux session with `args`, call `mid` after the turn (before exit),
   * quit, and return the pane with its history.
   */
  async function conversation(session: string, args: string, mid: (session: string) => Promise<void> = async () => {}): Promise<string> {
    const cmd = `cd '${e.cwd}' && echo SHELL-BEFORE && '${process.execPath}' '${CLI}' ${args} 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", cmd);
    const pane = () => tmux("capture-pane", "-p", "-t", session);
    const wait = async (re: RegExp) => {
      const t0 = Date.now();
      while (Date.now() - t0 < 60_000) {
        if (re.test(pane())) return;
        await new Promise((r) => setTimeout(r, 30));
      }
      throw new Error(`timed out waiting for ${re}\n${pane()}\n${readErr()}`);
    };
    await wait(/mock\/mock-model/);
    tmux("send-keys", "-t", session, "-l", "prompt-for-scrollback");
    tmux("send-keys", "-t", session, "Enter");
    await wait(/second paragraph/);
    await mid(session);
    tmux("send-keys", "-t", session, "C-d");
    await wait(/EXIT=0/);
    return tmux("capture-pane", "-p", "-S", "-", "-t", session);
  }

  it("regular mode prints each finished turn into the terminal's scrollback, and leaves it there after exit", async () => {
    const all = await conversation("regular", "--tui-mode regular", async (session) => {
      // Mid-session: the finished turn is in the terminal's history (above the live screen)...
      const t0 = Date.now();
      while (!/ANSWER-IN-SCROLLBACK/.test(history(session)) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
      const h = history(session);
      expect(h).toContain("prompt-for-scrollback");
      expect(h).toContain("ANSWER-IN-SCROLLBACK");
      // ...once, and the live screen still shows the editor and the footer.
      expect(h.split("ANSWER-IN-SCROLLBACK").length).toBe(2);
      expect(tmux("capture-pane", "-p", "-t", session)).toMatch(/mock\/mock-model/);
    });
    expect(all.split("ANSWER-IN-SCROLLBACK").length).toBe(2);
    expect(all).toContain("SHELL-BEFORE");
    expect(all).toContain("prompt-for-scrollback");
    expect(all).toContain("ANSWER-IN-SCROLLBACK");
    // The conversation comes before the shell's next line.
    expect(all.indexOf("ANSWER-IN-SCROLLBACK")).toBeLessThan(all.indexOf("EXIT=0"));
  });

  it("fullscreen mode (the default) draws on the alternate screen; on quit the conversation is printed into the normal screen (as pi 1.6)", async () => {
    const all = await conversation("fullscreen", "", async (session) => {
      // The run settled (the working line is gone): regular mode would have printed the turn by now.
      const t0 = Date.now();
      while (/Working/.test(tmux("capture-pane", "-p", "-t", session)) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
      expect(history(session)).not.toContain("ANSWER-IN-SCROLLBACK");
    });
    expect(all).toContain("SHELL-BEFORE");
    expect(all.indexOf("SHELL-BEFORE")).toBeLessThan(all.indexOf("ANSWER-IN-SCROLLBACK"));
    expect(all.indexOf("ANSWER-IN-SCROLLBACK")).toBeLessThan(all.indexOf("To resume this session:"));
    expect(all.indexOf("To resume this session:")).toBeLessThan(all.indexOf("EXIT=0"));
  });

  it("the tuiMode setting chooses regular mode as well", async () => {
    const settingsFile = join(e.agentDir, "settings.json");
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(readFileSync(settingsFile, "utf8")), tuiMode: "regular" }));
    const all = await conversation("setting", "");
    expect(all).toContain("ANSWER-IN-SCROLLBACK");
  });
});
