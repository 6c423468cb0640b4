/**
 * End to end: the TUI's keyboard in tmux with `extended-keys on`, as a pi 1.6 user types —
 * Shift+Enter (tmux forwards it once the TUI asks for modifyOtherKeys), a kitty CSI-u
 * Shift+Enter, `\` then Enter, Alt+Enter, Ctrl+Shift+F, a keybindings.json binding written as
 * pi 1.6 documents it ("$schema" included), the terminal cursor at the editor's cursor, and
 * Ctrl+Z then `fg`. Every wait is for the screen (or the model server's log), never a sleep.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

/** Commands opening a dialog input and a pi-tui Input component, each reporting what was typed. */
const EXTENSION = `
import { Input } from "@earendil-works/pi-tui";
export default function (pi) {
  pi.registerCommand("askname", { description: "dialog input", handler: async (_a, ctx) => {
    const v = await ctx.ui.input("Your name?");
    ctx.ui.notify("NAME=" + v, "info");
  } });
  pi.registerCommand("askcity", { description: "pi-tui Input", handler: async (_a, ctx) => {
    const v = await ctx.ui.custom((tui, theme, kb, done) => {
      const input = new Input();
      input.onSubmit = (value) => done(value);
      return { get focused() { return input.focused; }, set focused(f) { input.focused = f; }, render: (w) => ["CITY-PROMPT", ...input.render(w)], handleInput: (d) => { input.handleInput(d); tui.requestRender(); }, invalidate: () => input.invalidate() };
    });
    ctx.ui.notify("CITY=" + v, "info");
  } });
}
`;

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-keys", () => e);

const requests = () => server.stats().requests.length;
/** The editor's rows: the lines between the two rules above the footer. */
function editorRows(screen: string): string[] {
  const lines = screen.split("\n");
  const rules = lines.map((l, i) => (/^─{20,}$/.test(l.trim()) ? i : -1)).filter((i) => i >= 0);
  const [a, b] = rules.slice(-2) as [number, number];
  return lines.slice(a + 1, b).map((l) => l.trimEnd());
}
const clearEditor = async () => {
  sh.send("C-c");
  await sh.waitFor((s) => editorRows(s).join("") === "");
};

describe("TUI keyboard in tmux (extended-keys on)", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "ANSWER-MARK done" } } });
    e = makeE2eEnv(server.url);
    delete e.env.TMUX;
    writeFileSync(
      join(e.agentDir, "keybindings.json"),
      JSON.stringify({ $schema: "https://pi.dev/schemas/keybindings.schema.json", "tui.input.newLine": ["shift+enter", "ctrl+j", "alt+n"] }),
    );
    const ext = join(e.root, "inputs-ext.mjs");
    writeFileSync(ext, EXTENSION);
    sh.launch(`-e '${ext}'`);
    await sh.waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("Shift+Enter inserts a new line and sends nothing; the terminal cursor sits at the editor's cursor", async () => {
    const before = requests();
    sh.typeText("first");
    sh.send("S-Enter");
    sh.typeText("second");
    const s = await sh.waitFor((x) => editorRows(x).join("|") === "first|second");
    expect(requests()).toBe(before);
    // The hardware cursor (hidden, as pi 1.6 by default) is right after "second".
    const row = s.split("\n").findIndex((l) => l.trimEnd() === "second");
    await sh.waitFor(() => sh.pane("#{cursor_x} #{cursor_y}") === `6 ${row}`);
    await clearEditor();
  });

  it("the terminal cursor follows the focused input in a dialog and in an extension's pi-tui Input", async () => {
    sh.typeText("/askname");
    sh.send("Enter");
    await sh.waitFor(/Your name\?/);
    sh.typeText("Zed");
    let s = await sh.waitFor(/Zed/);
    let lines = s.split("\n");
    let row = lines.findIndex((l) => /Zed/.test(l));
    const zed = `${lines[row]!.indexOf("Zed") + 3} ${row}`;
    await sh.waitFor(() => sh.pane("#{cursor_x} #{cursor_y}") === zed);
    sh.send("Enter");
    await sh.waitFor(/NAME=Zed/);
    sh.typeText("/askcity");
    sh.send("Enter");
    await sh.waitFor(/CITY-PROMPT/);
    sh.typeText("Oslo");
    s = await sh.waitFor(/Oslo/);
    lines = s.split("\n");
    row = lines.findIndex((l) => /Oslo/.test(l));
    const oslo = `${lines[row]!.indexOf("Oslo") + 4} ${row}`;
    await sh.waitFor(() => sh.pane("#{cursor_x} #{cursor_y}") === oslo);
    sh.send("Enter");
    await sh.waitFor(/CITY=Oslo/);
  });

  it("a kitty-protocol Shift+Enter (CSI 13;2u) and a keybindings.json key insert a new line too", async () => {
    sh.typeText("one");
    sh.typeText("\x1b[13;2u");
    sh.typeText("two");
    sh.send("M-n");
    sh.typeText("three");
    await sh.waitFor((x) => editorRows(x).join("|") === "one|two|three");
    await clearEditor();
  });

  it("a backslash then Enter becomes a new line instead of sending", async () => {
    const before = requests();
    sh.typeText("left\\");
    sh.send("Enter");
    sh.typeText("right");
    await sh.waitFor((x) => editorRows(x).join("|") === "left|right");
    expect(requests()).toBe(before);
    // Enter now sends both lines as one prompt.
    sh.send("Enter");
    await sh.waitFor(/ANSWER-MARK done/);
    const last = server.stats().requests.at(-1)!;
    expect(JSON.stringify(last.body)).toContain("left\\nright");
  });

  it("Alt+Enter sends the prompt when the agent is idle (as pi 1.6)", async () => {
    const before = requests();
    sh.typeText("via alt enter");
    sh.send("M-Enter");
    await sh.waitFor(() => requests() > before);
    await sh.waitFor(/ via alt enter/);
  });

  it("Ctrl+Shift+F opens transcript search", async () => {
    sh.send("C-S-f");
    sh.typeText("ANSWER-MARK");
    await sh.waitFor(/│ANSWER-MARK +\d+\/\d+ │/);
    sh.send("Escape");
    await sh.waitFor((x) => !/ANSWER-MARK +\d+\/\d+/.test(x));
  });

  it("keys /hotkeys lists reach their actions through tmux: Shift+Tab, Ctrl+Shift+P, Ctrl+P, Ctrl+-, Ctrl+Home", async () => {
    sh.typeText("/hotkeys");
    sh.send("Enter");
    await sh.waitFor(/Ctrl\+Home +Scroll to the beginning of the transcript/);
    sh.send("S-Tab");
    await sh.waitFor(/This model has no thinking levels/);
    sh.send("C-S-p");
    await sh.waitFor(/mock-anthropic\/mock-claude\s*$/m);
    sh.send("C-p");
    await sh.waitFor(/mock\/mock-model\s*$/m);
    sh.typeText("abc");
    await sh.waitFor((x) => editorRows(x).join("|") === "abc");
    sh.send("C--");
    await sh.waitFor((x) => editorRows(x).join("|") === "ab");
    await clearEditor();
  });

  it("Ctrl+Z suspends to the shell; after fg the protocols are back (Shift+Enter still a new line)", async () => {
    sh.send("C-z");
    await sh.waitFor(/Stopped/);
    await sh.waitFor(() => sh.pane("#{alternate_on}") === "0");
    sh.typeText("fg");
    sh.send("Enter");
    await sh.waitFor(/mock\/mock-model/);
    await sh.waitFor(() => sh.pane("#{alternate_on}") === "1");
    sh.typeText("after");
    sh.send("S-Enter");
    sh.typeText("fg");
    await sh.waitFor((x) => editorRows(x).join("|") === "after|fg");
  });
});
