import { describe, it, expect } from "@jest/globals";
import type { SessionTreeNode } from "../../core/stores/index.js";
import { TreeModel, toolCallText, treeFilterNamed, type Painter } from "./tree-model.js";

/** Colours left out: the rows' text as a terminal shows it. */
const plain: Painter = { fg: (_t, s) => s, bold: (s) => s, italic: (s) => s };

let n = 0;
function node(parentId: string | null, body: object, children: SessionTreeNode[] = [], label?: string): SessionTreeNode {
  const id = `e${++n}`;
  const kids = children.map((c) => ({ ...c, entry: { ...c.entry, parentId: id } }) as SessionTreeNode);
  return { entry: { id, parentId, timestamp: "2026-01-01T00:00:00.000Z", ...body } as never, children: kids, label };
}
const user = (text: string, kids: SessionTreeNode[] = [], label?: string) => node(null, { type: "message", message: { role: "user", content: text } }, kids, label);
const answer = (text: string, kids: SessionTreeNode[] = []) => node(null, { type: "message", message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" } }, kids);

/**
 * q1 → a1 → (q2 → call → result → a2) | (q3 → a3 → model change); the leaf is the model change,
 * the call an assistant message with a tool call only, q2 labelled "poem".
 */
function session() {
  const modelChange = node(null, { type: "model_change", provider: "p", modelId: "m2" });
  const a3 = answer("why did the chicken", [modelChange]);
  const q3 = user("tell a joke", [a3]);
  const a2 = answer("roses are red");
  const result = node(null, { type: "message", message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "ok" }] } }, [a2]);
  const call = node(null, { type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls -la" } }], stopReason: "toolUse" } }, [result]);
  const q2 = user("write a poem", [call], "poem");
  const root = user("hello there", [answer("hi", [q2, q3])]);
  // The ids are fixed up from the root down (children copies get their parent's id).
  const fix = (x: SessionTreeNode, parentId: string | null): SessionTreeNode => ({ ...x, entry: { ...x.entry, parentId } as never, children: x.children.map((c) => fix(c, x.entry.id)) });
  const tree = fix(root, null);
  const all: SessionTreeNode[] = [];
  const walk = (x: SessionTreeNode) => (all.push(x), x.children.forEach(walk));
  walk(tree);
  const id = (text: string) => all.find((x) => JSON.stringify(x.entry).includes(text))!.entry.id;
  return { tree: [tree], leaf: id('"m2"'), id };
}

const texts = (m: TreeModel) => m.shown.map((r) => m.drawRow(r, plain));

describe("TreeModel", () => {
  it("lists the active branch first, hides bookkeeping and tool-call-only answers by default, and selects the leaf's nearest shown entry", () => {
    const s = session();
    const m = new TreeModel(s.tree, s.leaf);
    expect(texts(m)).toEqual([
      "• user: hello there",
      "• assistant: hi",
      "├⊟ • user: tell a joke",
      "│     • assistant: why did the chicken",
      "└⊟ [poem] user: write a poem",
      "      [bash: ls -la]",
      "      assistant: roses are red",
    ]);
    expect(m.selectedRow?.id).toBe(s.id("why did the chicken"));
  });

  it("filters as pi 1.6: no-tools drops tool results, user-only keeps user messages, labeled-only the labelled, all adds the bookkeeping entries", () => {
    const s = session();
    const m = new TreeModel(s.tree, s.leaf, "no-tools");
    expect(texts(m)).not.toContain("      [bash: ls -la]");
    expect(texts(m)).toHaveLength(6);
    m.setFilter("user-only");
    expect(texts(m)).toEqual(["• user: hello there", "├─ • user: tell a joke", "└─ [poem] user: write a poem"]);
    m.setFilter("labeled-only");
    expect(texts(m)).toEqual(["[poem] user: write a poem"]);
    m.setFilter("all");
    expect(texts(m).some((t) => t.includes("[model: m2]"))).toBe(true);
    // An answer with tool calls only stays out even here (pi 1.6 shows it only as the leaf).
    expect(texts(m).some((t) => t.includes("assistant: (no content)"))).toBe(false);
    expect(m.marks()).toBe(" [all]");
  });

  it("search keeps the entries holding every word (label, role, text) and redraws the tree from them; the selection falls back to a shown ancestor", () => {
    const s = session();
    const m = new TreeModel(s.tree, s.leaf);
    m.setQuery("POEM user");
    expect(texts(m)).toEqual(["[poem] user: write a poem"]);
    m.setQuery("red assistant");
    expect(texts(m)).toEqual(["assistant: roses are red"]);
    m.setQuery("");
    expect(m.selectedRow?.id).toBe(s.id("roses are red"));
  });

  it("tree keys: a filter key toggles back to default, Ctrl+← folds a branch start and Ctrl+→ unfolds it, typing searches and Escape clears it", () => {
    const s = session();
    const m = new TreeModel(s.tree, s.leaf);
    const press = (id: string, text?: string) => m.handleKey((k) => k === id, text, 5);
    expect(press("app.tree.filter.userOnly")).toBe("changed");
    expect(m.filter).toBe("user-only");
    press("app.tree.filter.userOnly");
    expect(m.filter).toBe("default");
    press("app.tree.filter.cycleBackward");
    expect(m.filter).toBe("all");
    press("app.tree.filter.default");
    m.selected = m.shown.findIndex((r) => r.id === s.id("tell a joke"));
    expect(press("app.tree.foldOrUp")).toBe("changed");
    expect(texts(m)).toContain("├⊞ • user: tell a joke");
    expect(texts(m)).not.toContain("│     • assistant: why did the chicken");
    expect(m.selectedRow?.id).toBe(s.id("tell a joke"));
    expect(press("app.tree.unfoldOrDown")).toBe("changed");
    expect(press("app.tree.unfoldOrDown")).toBe("moved");
    expect(m.selectedRow?.id).toBe(s.id("why did the chicken"));
    press("none", "joke");
    expect(m.query).toBe("joke");
    expect(texts(m)).toEqual(["• user: tell a joke"]);
    expect(press("tui.select.cancel")).toBe("changed");
    expect(m.query).toBe("");
    expect(press("tui.select.cancel")).toBeUndefined();
    expect(press("none", "\x1b[A")).toBeUndefined();
  });

  it("pages stop at the ends; up and down wrap", () => {
    const s = session();
    const m = new TreeModel(s.tree, s.leaf);
    const press = (id: string) => m.handleKey((k) => k === id, undefined, 5);
    press("tui.editor.cursorLeft");
    expect(m.selected).toBe(0);
    press("tui.select.up");
    expect(m.selected).toBe(6);
    press("tui.select.down");
    expect(m.selected).toBe(0);
    press("tui.select.pageDown");
    press("tui.select.pageDown");
    expect(m.selected).toBe(6);
  });

  it("labels: setting one shows it (with its time under Shift+T), clearing it removes it; copy text is the entry's full text", () => {
    const s = session();
    const m = new TreeModel(s.tree, s.leaf);
    const id = s.id("tell a joke");
    m.setLabel(id, "joke", new Date().toISOString());
    m.handleKey((k) => k === "app.tree.toggleLabelTimestamp", undefined, 5);
    expect(texts(m).find((t) => t.includes("tell a joke"))).toMatch(/^├⊟ • \[joke\] \d\d:\d\d user: tell a joke$/);
    expect(m.marks()).toBe(" [+label time]");
    m.setLabel(id, undefined);
    expect(texts(m)).toContain("├⊟ • user: tell a joke");
    expect(m.copyText(m.shown[0]!.entry)).toBe("hello there");
  });

  it("names tool calls as pi 1.6 and reads filter names with or without -only", () => {
    expect(toolCallText("read", { path: "/x/a.ts", offset: 10, limit: 20 })).toBe("[read: /x/a.ts:10-29]");
    expect(toolCallText("grep", { pattern: "foo" })).toBe("[grep: /foo/ in .]");
    expect(toolCallText("mine", { a: 1 })).toBe('[mine: {"a":1}]');
    expect(treeFilterNamed("user")).toBe("user-only");
    expect(treeFilterNamed("no-tools")).toBe("no-tools");
    expect(treeFilterNamed("bogus")).toBeUndefined();
  });
});
