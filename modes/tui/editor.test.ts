import { describe, it, expect } from "@jest/globals";
import { Editor } from "./editor.js";
import { Keybindings, type KeyPress } from "./keys.js";
import { stripAnsi, visibleWidth } from "./text.js";

const key = (id: string, text?: string): KeyPress => ({ id, text, sequence: text ?? id });
const typeText = (e: Editor, s: string) => {
  for (const ch of s) e.handleKey(key(ch === " " ? "space" : ch, ch));
};

describe("editor", () => {
  it("Alt+Y right after Ctrl+Y swaps the pasted text for the kill before it, and again for the one before that", () => {
    const e = new Editor(new Keybindings());
    for (const w of ["one ", "two ", "three "]) {
      typeText(e, w);
      e.handleKey(key("ctrl+w"));
    }
    typeText(e, "> ");
    e.handleKey(key("ctrl+y"));
    expect(e.getText()).toBe("> three ");
    e.handleKey(key("alt+y"));
    expect(e.getText()).toBe("> two ");
    e.handleKey(key("alt+y"));
    expect(e.getText()).toBe("> one ");
    typeText(e, "x");
    e.handleKey(key("alt+y")); // not right after a yank: nothing
    expect(e.getText()).toBe("> one x");
  });

  it("Ctrl+] then a character jumps forward to it, Ctrl+Alt+] backward; pressed twice it is off", () => {
    const e = new Editor(new Keybindings());
    typeText(e, "a.b.c");
    e.handleKey(key("home"));
    e.handleKey(key("ctrl+]"));
    e.handleKey(key(".", "."));
    expect(e.cursor).toBe(1);
    e.handleKey(key("ctrl+]"));
    e.handleKey(key(".", "."));
    expect(e.cursor).toBe(3);
    e.handleKey(key("ctrl+alt+]"));
    e.handleKey(key(".", "."));
    expect(e.cursor).toBe(1);
    e.handleKey(key("ctrl+]"));
    e.handleKey(key("ctrl+]"));
    typeText(e, "!");
    expect(e.getText()).toBe("a!.b.c"); // the cursor stayed on the first "."
  });

  it("tui.editor.historyPrevious / historyNext browse the history wherever the cursor is, once bound", () => {
    const e = new Editor(new Keybindings({ "tui.editor.historyPrevious": "alt+p", "tui.editor.historyNext": "alt+n" }));
    e.setHistory(["first", "second"]);
    typeText(e, "line one");
    e.handleKey(key("ctrl+j"));
    typeText(e, "line two");
    e.handleKey(key("alt+p"));
    expect(e.getText()).toBe("second");
    e.handleKey(key("alt+p"));
    expect(e.getText()).toBe("first");
    e.handleKey(key("alt+n"));
    expect(e.getText()).toBe("second");
  });

  it("edits with cursor movement, words and lines", () => {
    const e = new Editor(new Keybindings());
    typeText(e, "hello world");
    e.handleKey(key("ctrl+w"));
    expect(e.getText()).toBe("hello ");
    e.handleKey(key("ctrl+y"));
    expect(e.getText()).toBe("hello world");
    e.handleKey(key("home"));
    typeText(e, ">");
    expect(e.getText()).toBe(">hello world");
    e.handleKey(key("ctrl+j"));
    typeText(e, "two");
    expect(e.getText()).toBe(">\ntwohello world");
    e.handleKey(key("ctrl+-"));
    expect(e.getText()).toBe(">\ntwhello world");
    e.handleKey(key("ctrl+k"));
    expect(e.getText()).toBe(">\ntw");
  });

  it("moves through history on the first and last line", () => {
    const e = new Editor(new Keybindings());
    e.addToHistory("first");
    e.addToHistory("second");
    typeText(e, "draft");
    e.handleKey(key("up"));
    expect(e.getText()).toBe("second");
    e.handleKey(key("up"));
    expect(e.getText()).toBe("first");
    e.handleKey(key("down"));
    e.handleKey(key("down"));
    expect(e.getText()).toBe("draft");
  });

  it("turns a large paste into a marker that expands on submit", () => {
    const e = new Editor(new Keybindings());
    const big = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    typeText(e, "see: ");
    e.paste(big);
    expect(e.getText()).toBe("see: [paste #1 +30 lines]");
    expect(e.getExpandedText()).toBe("see: " + big);
    e.paste("small\ntext");
    expect(e.getText()).toContain("small\ntext");
  });

  it("renders wide characters within the width with the cursor drawn", () => {
    const e = new Editor(new Keybindings());
    typeText(e, "你好世界🎉 abc");
    const r = e.render(6, 10, true);
    for (const l of r.lines) expect(visibleWidth(l)).toBeLessThanOrEqual(6);
    expect(r.lines.map(stripAnsi).join("")).toBe("你好世界🎉 abc ");
    expect(r.lines[r.cursorRow]).toContain("\x1b[7m");
  });
});
