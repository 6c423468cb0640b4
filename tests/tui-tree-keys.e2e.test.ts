/**
 * End to end: /tree's moving keys as pi 1.6 binds them, through tmux as the terminal sends them —
 * ←/→ (Ctrl+B/Ctrl+F) move a page of half the terminal, Ctrl+K forks from a user message, Ctrl+←/→ (and Alt+←/→) fold a branch or step between branch starts, Shift+T
 * shows when labels were set — and keybindings.json rebinding them (/reload), /hotkeys listing
 * them. The session is a file written here: a root question, then two branches (a short one and
 * a long one of 20 exchanges the leaf is on), a label on the root's answer.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-tree-keys", () => e);
const ROWS = 44;
/** The leaf's row: the active branch is listed first, so the short branch's two rows come after it. */
const LEAF = 42;

function writeSession(file: string, cwd: string): void {
  const lines: object[] = [{ type: "session", version: 3, id: "7e1f0c2a-1b2c-4d3e-8f40-5a6b7c8d9e0f", timestamp: "2026-01-01T10:00:00.000Z", cwd }];
  let n = 0;
  const add = (parentId: string | null, message: object): string => {
    const id = (++n).toString(16).padStart(8, "a");
    lines.push({ type: "message", id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 10, 0, n)).toISOString(), message: { ...message, timestamp: 1767261600000 + n } });
    return id;
  };
  const user = (p: string | null, text: string) => add(p, { role: "user", content: text });
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const answer = (p: string, text: string) => add(p, { role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "mock", model: "mock-model", usage, stopReason: "stop" });
  const root = answer(user(null, "Q-ROOT"), "A-ROOT");
  answer(user(root, "Q-SHORT"), "A-SHORT");
  let p = root;
  for (let i = 1; i <= 20; i++) p = answer(user(p, `Q-LONG-${i}`), `A-LONG-${i}`);
  lines.push({ type: "label", id: "ffffffff", parentId: p, timestamp: "2024-03-09T12:05:00.000Z", targetId: root, label: "checkpoint" });
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

/** The selected row's text (the list marks it with ›), after the branch lines and the active path's •. */
const selected = (screen: string) => /^› [\s│├└─⊟⊞]*(?:• )?(.*?)\s*$/m.exec(screen)?.[1] ?? "";
/** How many of the tree's rows the list shows. */
const listRows = (screen: string) => screen.split("\n").filter((l) => /^(?:› | {2})[\s│├└─⊟⊞]*(?:• )?(?:\[\w+\] )?(?:user|assistant): /.test(l)).length;
/** The list's height: half of the 40 rows tmux gives the terminal. */
const PAGE = 20;
/** The list's position, "(12/44)". */
const position = (screen: string) => Number(/\((\d+)\/\d+\)/.exec(screen)?.[1] ?? NaN);

describe("/tree keys and drawing of pi 1.6: page, branch, label time, fork", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "unused" } } });
    e = makeE2eEnv(server.url);
    e.env.TZ = "UTC";
    const file = join(e.root, "tree.jsonl");
    writeSession(file, e.cwd);
    sh.launch(`--session '${file}'`);
    await sh.waitFor(/A-LONG-20/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  const openTree = async () => {
    sh.typeText("/tree");
    sh.send("Enter");
    return sh.waitFor((s) => /Session Tree/.test(s) && selected(s) === "assistant: A-LONG-20");
  };
  const openTreeAt = async (leaf: string) => {
    sh.typeText("/tree");
    sh.send("Enter");
    return sh.waitFor((s) => /Session Tree/.test(s) && selected(s) === leaf);
  };
  const closeTree = async () => {
    sh.send("Escape");
    await sh.waitFor((s) => !/Session Tree/.test(s));
  };

  it("the list shows half the terminal (20 rows at 40); ←/→ and Ctrl+B/Ctrl+F move that page, stopping at the ends", async () => {
    const s0 = await openTree();
    expect(position(s0)).toBe(LEAF);
    expect(listRows(s0)).toBe(PAGE);
    // Drawn as pi 1.6 draws it: the selection kept mid-list, so the short branch shows below the leaf.
    expect(s0).toMatch(/^ {2}│ {5}• user: Q-LONG-20\s*$/m);
    expect(s0).toMatch(/^ {2}└⊟ user: Q-SHORT\s*$/m);
    expect(s0).toMatch(/^ {8}assistant: A-SHORT\s*$/m);
    sh.send("Left");
    await sh.waitFor((s) => position(s) === LEAF - PAGE);
    sh.send("C-b");
    await sh.waitFor((s) => position(s) === LEAF - 2 * PAGE);
    sh.send("Left");
    const top = await sh.waitFor((s) => position(s) === 1 && selected(s) === "user: Q-ROOT");
    expect(listRows(top)).toBe(PAGE);
    expect(top).toMatch(/^ {2}• \[checkpoint\] assistant: A-ROOT\s*$/m);
    expect(top).toMatch(/^ {2}├⊟ • user: Q-LONG-1\s*$/m);
    expect(top).toMatch(/^ {2}│ {5}• assistant: A-LONG-1\s*$/m);
    sh.send("Right");
    await sh.waitFor((s) => position(s) === 1 + PAGE);
    sh.send("C-f"); // a page down, as in pi 1.6 (not a fork)
    const s2 = await sh.waitFor((s) => position(s) === 1 + 2 * PAGE);
    expect(s2).toMatch(/Session Tree/);
    sh.send("C-f");
    await sh.waitFor((s) => position(s) === ROWS);
    await closeTree();
  });

  it("Ctrl+← goes to the start of the branch, then folds it; Ctrl+→ unfolds, then goes to the branch's end; Alt+← as Ctrl+←", async () => {
    await openTree();
    sh.send("C-Left");
    await sh.waitFor((s) => selected(s) === "user: Q-LONG-1" && position(s) === 3); // the active branch is listed first
    sh.send("C-Left");
    let s = await sh.waitFor((x) => /⊞/.test(x));
    expect(selected(s)).toBe("user: Q-LONG-1");
    expect(s).toMatch(/├⊞ • user: Q-LONG-1/);
    expect(s).not.toMatch(/A-LONG-1\b/);
    expect(s).toMatch(/A-SHORT/);
    sh.send("C-Right");
    s = await sh.waitFor((x) => !/⊞/.test(x) && /A-LONG-1\b/.test(x));
    expect(selected(s)).toBe("user: Q-LONG-1");
    sh.send("C-Right");
    await sh.waitFor((x) => selected(x) === "assistant: A-LONG-20" && position(x) === LEAF);
    sh.send("M-Left");
    await sh.waitFor((x) => selected(x) === "user: Q-LONG-1");
    sh.send("M-Right");
    await sh.waitFor((x) => selected(x) === "assistant: A-LONG-20");
    // From the root, Ctrl+→ stops at the first branch start below it; from the short branch's answer (the last row), Ctrl+← goes to its start.
    sh.send("Left", "Left", "Left");
    await sh.waitFor((x) => selected(x) === "user: Q-ROOT");
    sh.send("C-Right");
    await sh.waitFor((x) => selected(x) === "user: Q-LONG-1");
    sh.send("Left");
    await sh.waitFor((x) => selected(x) === "user: Q-ROOT");
    sh.send("Up"); // wraps to the last row
    await sh.waitFor((x) => selected(x) === "assistant: A-SHORT" && position(x) === ROWS);
    sh.send("C-Left");
    await sh.waitFor((x) => selected(x) === "user: Q-SHORT" && position(x) === ROWS - 1);
    await closeTree();
  });

  it("Shift+T shows when each label was set, and hides it again", async () => {
    await openTree();
    sh.send("Left", "Left", "Left");
    let s = await sh.waitFor((x) => selected(x) === "user: Q-ROOT");
    expect(s).toMatch(/• \[checkpoint\] assistant: A-ROOT\s*$/m);
    sh.send("T");
    s = await sh.waitFor(/\[\+label time\]/);
    expect(s).toMatch(/\[checkpoint\] 24\/3\/9 12:05 assistant: A-ROOT/);
    expect(s).toMatch(/Type to search:\s*$/m); // not typed into the search
    sh.send("T");
    s = await sh.waitFor((x) => !/\[\+label time\]/.test(x));
    expect(s).not.toMatch(/12:05/);
    await closeTree();
  });

  it("keybindings.json rebinds them (after /reload) and /hotkeys lists them", async () => {
    writeFileSync(join(e.agentDir, "keybindings.json"), JSON.stringify({ "app.tree.toggleLabelTimestamp": "alt+t", "app.tree.foldOrUp": ["alt+b"] }));
    sh.typeText("/reload");
    sh.send("Enter");
    await sh.waitFor(/Reloaded/);
    sh.typeText("/hotkeys");
    sh.send("Enter");
    let s = await sh.waitFor(/In \/tree\s+Shift\+L label/);
    const line = s.replace(/\n\s*/g, " ");
    expect(line).toMatch(/In \/tree\s+Shift\+L label · Alt\+T label time · Alt\+B fold \/ previous branch · Ctrl\+Right\/Alt\+Right unfold \/ next branch · Ctrl\+K fork from a user message/);
    await openTree();
    sh.send("M-b");
    await sh.waitFor((x) => selected(x) === "user: Q-LONG-1");
    sh.send("C-Left"); // no longer bound in the tree: nothing moves
    sh.send("M-t");
    s = await sh.waitFor(/\[\+label time\]/);
    expect(selected(s)).toBe("user: Q-LONG-1");
    sh.send("T"); // Shift+T is a letter for the search now
    await sh.waitFor(/Type to search: T/);
    sh.send("Escape"); // as in pi 1.6, Escape clears the search first, and the list stays
    s = await sh.waitFor((x) => /Type to search:\s*$/m.test(x));
    expect(s).toMatch(/Session Tree/);
    await closeTree();
  });

  it("the editor keys of pi 1.6's list: Alt+Y after Ctrl+Y pastes the kill before, Ctrl+] jumps to the character typed next", async () => {
    const editorText = (screen: string) => {
      const rows = screen.split("\n");
      const rules = rows.map((l, i) => (/^─{20,}$/.test(l.trim()) ? i : -1)).filter((i) => i >= 0);
      const [a, b] = rules.slice(-2) as [number, number];
      return rows.slice(a + 1, b).map((l) => l.trim()).join("");
    };
    sh.typeText("alpha beta");
    sh.send("C-w");
    await sh.waitFor((x) => editorText(x) === "alpha");
    sh.typeText("gamma");
    sh.send("C-w");
    await sh.waitFor((x) => editorText(x) === "alpha");
    sh.send("C-y");
    await sh.waitFor((x) => editorText(x) === "alpha gamma");
    sh.send("M-y");
    await sh.waitFor((x) => editorText(x) === "alpha beta");
    sh.send("Home");
    sh.send("C-]");
    sh.typeText("b");
    sh.typeText("X");
    await sh.waitFor((x) => editorText(x) === "alpha Xbeta");
    sh.send("C-c");
    await sh.waitFor((x) => editorText(x) === "");
  });

  it("Ctrl+K forks a new session from the selected user message, its text back in the editor", async () => {
    await openTree();
    sh.send("Up");
    await sh.waitFor((x) => selected(x) === "user: Q-LONG-20");
    sh.send("C-k");
    const s = await sh.waitFor(/Forked to new session/);
    expect(s).not.toMatch(/Session Tree/);
    // The new session ends before the message: its answer is gone, the message waits in the editor.
    await sh.waitFor((x) => /Q-LONG-20/.test(x) && !/A-LONG-20/.test(x));
    sh.send("C-c");
    await sh.waitFor((x) => !/Q-LONG-20/.test(x));
    await openTreeAt("assistant: A-LONG-19");
    await closeTree();
  });
});
