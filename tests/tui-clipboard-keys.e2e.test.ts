/**
 * End to end: pi 1.6's clipboard keys in the TUI — Ctrl+X copies the last assistant message
 * (`app.message.copy`; in /tree the selected entry), Ctrl+V pastes a clipboard image as the path
 * of a file it wrote, or the clipboard's text (`app.clipboard.pasteImage`) — /hotkeys lists both;
 * and /tree's filter keys (Ctrl+D/T/U/L/A, Ctrl+O cycling) as pi 1.6 binds them. The X11 clipboard is
 * a stub `xclip` on PATH (DISPLAY set) that serves a PNG or text and records what is copied.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-clipboard-keys", () => e);
const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");

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

describe("TUI keys of pi 1.6: Ctrl+X, Ctrl+V, /tree filters", () => {
  const clip = () => join(e.root, "clip");
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "CLIP-ANSWER-MARK done" } } });
    e = makeE2eEnv(server.url);
    const stubs = join(e.root, "stubs");
    mkdirSync(stubs);
    mkdirSync(clip());
    // The stub clipboard: `clip/image.png` when present is an image, else `clip/text`; a copy lands in `clip/copied`.
    writeFileSync(
      join(stubs, "xclip"),
      `#!/bin/sh
D='${clip()}'
case "$*" in
  *"-t TARGETS -o"*) if [ -e "$D/image.png" ]; then printf 'TARGETS\\nimage/png\\n'; else printf 'TARGETS\\nUTF8_STRING\\n'; fi ;;
  *"-t image/png -o"*) cat "$D/image.png" ;;
  *"-o"*) cat "$D/text" ;;
  *) cat > "$D/copied" ;;
esac
`,
    );
    chmodSync(join(stubs, "xclip"), 0o755);
    delete e.env.TMUX;
    delete e.env.WAYLAND_DISPLAY;
    delete e.env.SSH_CONNECTION;
    delete e.env.SSH_CLIENT;
    e.env.DISPLAY = ":99";
    e.env.PATH = `${stubs}:${dirname(process.execPath)}:/usr/bin:/bin`;
    sh.launch("--no-session");
    await sh.waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("/hotkeys lists Ctrl+X and Ctrl+V as pi 1.6 binds them", async () => {
    sh.typeText("/hotkeys");
    sh.send("Enter");
    const s = await sh.waitFor(/Ctrl\+V\s+Paste/);
    expect(s).toMatch(/Ctrl\+X\s+Copy the last assistant message/);
  });

  it("Ctrl+V pastes a clipboard image as the path of the file it wrote", async () => {
    writeFileSync(join(clip(), "image.png"), PNG);
    sh.send("C-v");
    const s = await sh.waitFor((x) => /pi-clipboard-[\w-]+\.png/.test(editorText(x)));
    const file = /(\/\S*pi-clipboard-[\w-]+\.png)/.exec(editorText(s))![1]!;
    expect(readFileSync(file)).toEqual(PNG);
    rmSync(file);
    sh.send("C-c");
    await sh.waitFor((x) => editorText(x) === "");
  });

  it("Ctrl+V pastes the clipboard's text when it holds no image", async () => {
    rmSync(join(clip(), "image.png"));
    writeFileSync(join(clip(), "text"), "from the clipboard");
    sh.send("C-v");
    await sh.waitFor((x) => editorText(x) === "from the clipboard");
    sh.send("C-c");
    await sh.waitFor((x) => editorText(x) === "");
  });

  it("Ctrl+X copies the last assistant message", async () => {
    sh.typeText("hello");
    sh.send("Enter");
    await sh.waitFor(/CLIP-ANSWER-MARK done/);
    sh.send("C-x");
    await sh.waitFor(/Copied the last assistant message/);
    await sh.waitFor(() => existsSync(join(clip(), "copied")) && readFileSync(join(clip(), "copied"), "utf8") === "CLIP-ANSWER-MARK done");
  });

  it("Ctrl+X in /tree copies the selected entry's text", async () => {
    rmSync(join(clip(), "copied"));
    sh.typeText("/tree");
    sh.send("Enter");
    await sh.waitFor(/Session Tree/);
    sh.send("Up");
    sh.send("C-x");
    await sh.waitFor(/Copied the entry to the clipboard/);
    await sh.waitFor(() => existsSync(join(clip(), "copied")) && readFileSync(join(clip(), "copied"), "utf8") === "hello");
    sh.send("Escape");
    await sh.waitFor((x) => !/Session Tree/.test(x));
  });

  it("/tree's filters: Ctrl+U user messages, Ctrl+L labeled entries, Ctrl+O steps on to every entry", async () => {
    sh.typeText("/tree");
    sh.send("Enter");
    await sh.waitFor(/Session Tree/);
    await sh.waitFor(/assistant: CLIP-ANSWER-MARK/);
    sh.send("C-u");
    let s = await sh.waitFor((x) => !/assistant: CLIP-ANSWER-MARK/.test(x));
    expect(s).toMatch(/user: hello/);
    sh.send("C-l");
    s = await sh.waitFor((x) => !/user: hello/.test(x));
    expect(s).toMatch(/Session Tree/);
    sh.send("C-o");
    await sh.waitFor((x) => /user: hello/.test(x) && /assistant: CLIP-ANSWER-MARK/.test(x));
    sh.send("Escape");
    await sh.waitFor((x) => !/Session Tree/.test(x));
  });

  it("/tree starts with the filter the treeFilterMode setting names", async () => {
    // /settings: "Tree filter mode" default → no-tools → user-only.
    sh.typeText("/settings");
    sh.send("Enter");
    await sh.waitFor(/type to search/);
    sh.typeText("treefilter"); // (Space would change the value)
    await sh.waitFor(/→ Tree filter mode\s+default/);
    sh.send("Enter");
    await sh.waitFor(/→ Tree filter mode\s+no-tools/);
    sh.send("Enter");
    await sh.waitFor(/→ Tree filter mode\s+user-only/);
    sh.send("Escape"); // clears the search
    await sh.waitFor(/type to search/);
    sh.send("Escape");
    await sh.waitFor((x) => !/── Settings/.test(x));
    expect(JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8")).treeFilterMode).toBe("user-only");
    sh.typeText("/tree");
    sh.send("Enter");
    const s = await sh.waitFor(/user: hello/);
    expect(s).not.toMatch(/assistant: CLIP-ANSWER-MARK/);
    sh.send("Escape");
    await sh.waitFor((x) => !/Session Tree/.test(x));
  });
});
