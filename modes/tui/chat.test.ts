import { describe, it, expect } from "@jest/globals";
import { Block, ChatView, SkillBlock, SummaryBlock, ToolBlock, CustomMessageBlock, AssistantBlock, UserBlock, componentLines, type ChatContext } from "./chat.js";
import { Keybindings } from "./keys.js";
import { builtinTheme } from "./theme.js";
import { stripAnsi, visibleWidth } from "./text.js";

function ctx(over: Partial<ChatContext> = {}): ChatContext {
  return { theme: builtinTheme("dark"), keys: new Keybindings(), expandTools: false, showThinking: true, cwd: "/proj", markdown: {}, requestRender: () => {}, ...over };
}
const plain = (b: Block, width = 60, c = ctx()) => b.render(width, c).map(stripAnsi);

class Counting extends Block {
  renders = 0;
  constructor(private n: number, private tag: string) {
    super();
  }
  render(): string[] {
    this.renders++;
    return Array.from({ length: this.n }, (_, i) => `${this.tag}-${i}`);
  }
}

describe("chat blocks", () => {
  it("bash output shows the tail, expanded shows all", () => {
    const b = new ToolBlock("1", "bash");
    b.start({ command: "seq 1 20" });
    b.finish({ content: [{ type: "text", text: Array.from({ length: 20 }, (_, i) => `out${i + 1}`).join("\n") }] }, false);
    let lines = plain(b);
    expect(lines[0]).toMatch(/✓ bash \$ seq 1 20/);
    expect(lines.join("\n")).toContain("out20");
    expect(lines.join("\n")).not.toContain("out1\n");
    expect(lines.join("\n")).toMatch(/15 more lines above/); // the last five, as pi 1.6
    lines = plain(b, 60, ctx({ expandTools: true }));
    expect(lines.join("\n")).toContain(" out1 ");
  });

  it("edit shows details.diff coloured, errors show in red", () => {
    const t = builtinTheme("dark");
    const b = new ToolBlock("2", "edit");
    b.start({ path: "/proj/src/a.ts", edits: [] });
    b.finish({ content: [{ type: "text", text: "ok" }], details: { diff: " 1 keep\n-2 old\n+2 new" } }, false);
    const raw = b.render(60, ctx());
    expect(stripAnsi(raw[0]!)).toContain("edit src/a.ts");
    expect(raw.find((l) => stripAnsi(l).includes("-2 old"))).toContain(t.getFgAnsi("toolDiffRemoved"));
    expect(raw.find((l) => stripAnsi(l).includes("+2 new"))).toContain(t.getFgAnsi("toolDiffAdded"));
    const err = new ToolBlock("3", "read");
    err.start({ path: "/proj/missing" });
    err.finish({ content: [{ type: "text", text: "ENOENT: missing" }] }, true);
    expect(plain(err).join("\n")).toMatch(/✗ read missing[\s\S]*ENOENT: missing/);
  });

  it("a one-line edit marks the changed characters, as the package's renderDiff does", () => {
    const t = builtinTheme("dark");
    const b = new ToolBlock("2b", "edit");
    b.start({ path: "/proj/a.ts", edits: [] });
    b.finish({ content: [{ type: "text", text: "ok" }], details: { diff: "-4 let x = 1;\n+4 let x = 2;" } }, false);
    const raw = b.render(60, ctx());
    expect(raw.find((l) => stripAnsi(l).includes("+4 let x = 2;"))).toContain(t.inverse("2"));
    expect(raw.find((l) => stripAnsi(l).includes("-4 let x = 1;"))).toContain(t.inverse("1"));
  });

  it("a read's title gives its line range and writes a path under home from ~", () => {
    const home = process.env.HOME;
    process.env.HOME = "/home/ann";
    try {
      const b = new ToolBlock("r", "read");
      b.start({ path: "/home/ann/notes/todo.md", offset: 5, limit: 10 });
      expect(plain(b)[0]).toMatch(/read ~\/notes\/todo\.md:5-14/);
      const inCwd = new ToolBlock("r2", "read");
      inCwd.start({ path: "/proj/src/a.ts", offset: "x" });
      expect(plain(inCwd)[0]).toMatch(/read src\/a\.ts\s*$/);
    } finally {
      process.env.HOME = home;
    }
  });

  it("uses a tool's renderCall/renderResult and survives one that throws", () => {
    const reports: string[] = [];
    const defs: Record<string, any> = {
      fancy: {
        renderCall: (args: any, theme: any) => ({ render: () => [theme.bold(`FANCY CALL ${args.x}`)] }),
        renderResult: (_r: any, opts: any) => `FANCY RESULT partial=${opts.isPartial}`,
      },
      broken: { renderCall: () => { throw new Error("boom"); } },
    };
    const c = ctx({ tool: (n) => defs[n], report: (m) => void reports.push(m) });
    const b = new ToolBlock("4", "fancy");
    b.start({ x: 7 });
    b.update({ content: [{ type: "text", text: "…" }] });
    expect(plain(b, 60, c).join("\n")).toMatch(/FANCY CALL 7[\s\S]*FANCY RESULT partial=true/);
    const br = new ToolBlock("5", "broken");
    br.start({});
    expect(plain(br, 60, c).join("\n")).toContain("broken");
    expect(reports[0]).toMatch(/renderCall of tool "broken" failed/);
  });

  it("extension renderers get pi's key text from the user's bindings and a key hint", () => {
    const keys = new Keybindings({ "app.tools.expand": ["ctrl+e", "f2"] });
    const seen: string[] = [];
    const def = { renderCall: (_a: any, _t: any, rc: any) => `CALL ${rc.keyHint("app.tools.expand", "to open")} pad=${rc.outputPad}` };
    const b = new ToolBlock("k", "hinted");
    b.start({});
    expect(plain(b, 60, ctx({ keys, tool: () => def }))[0]).toContain("CALL ctrl+e/f2 to open pad=1");
    const m = new CustomMessageBlock({ customType: "note", content: "x", display: true });
    const renderer = (_m: any, o: any) => (seen.push(o.keyText("app.tools.expand")), "NOTE");
    expect(plain(m, 60, ctx({ keys, messageRenderer: () => renderer }))).toEqual(["NOTE"]);
    expect(seen).toEqual(["ctrl+e/f2"]);
  });

  it("a tool's renderResult gets the call's duration once it has finished", () => {
    const durations: unknown[] = [];
    const def = { renderResult: (_r: any, _o: any, _t: any, rc: any) => (durations.push(rc.durationMs), "R") };
    const b = new ToolBlock("d", "timed");
    b.start({});
    b.update({ content: [{ type: "text", text: "…" }] });
    plain(b, 60, ctx({ tool: () => def }));
    b.finish({ content: [{ type: "text", text: "done" }] }, false);
    plain(b, 60, ctx({ tool: () => def }));
    expect(durations[0]).toBeUndefined();
    expect(durations[1]).toEqual(expect.any(Number));
    expect(durations[1] as number).toBeGreaterThanOrEqual(0);
  });

  it("summaries collapse to one line and expand with the tools toggle", () => {
    const s = new SummaryBlock("compaction", "## Kept\n\n- the important part", 12345);
    expect(plain(s)).toHaveLength(1);
    expect(plain(s)[0]).toMatch(/Context compacted \(from 12,345 tokens\)/);
    expect(plain(s, 60, ctx({ expandTools: true })).join("\n")).toContain("• the important part");
    expect(plain(new SummaryBlock("branch", "left behind"), 60, ctx({ expandTools: true })).join("\n")).toMatch(/branch left behind[\s\S]*left behind/);
  });

  it("a skill block shows the skill's name collapsed and its text expanded", () => {
    const b = new SkillBlock({ name: "deploy", location: "/s/SKILL.md", content: "Run the **steps**.", userMessage: undefined });
    expect(plain(b)).toHaveLength(1);
    expect(plain(b)[0]).toMatch(/\[skill\] deploy \(Ctrl\+O to show\)/);
    expect(plain(b, 60, ctx({ expandTools: true })).join("\n")).toMatch(/\[skill\] deploy\s*\n\s*Run the steps\./);
  });

  it("custom messages without a renderer get a labelled box; component lines are clipped to the width", () => {
    const b = new CustomMessageBlock({ customType: "reminder", content: "**do** it", display: true });
    expect(plain(b).join("\n")).toMatch(/\[reminder\][\s\S]*do it/);
    const lines = componentLines({ render: () => ["x".repeat(100), "你好".repeat(40)] }, 30);
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(30);
  });

  it("assistant blocks show errors and collapsed thinking", () => {
    const b = new AssistantBlock({ role: "assistant", content: [{ type: "thinking", thinking: "a\nb" }, { type: "text", text: "hi" }], stopReason: "error", errorMessage: "rate limited" }, builtinTheme("dark"), {}, false);
    const collapsed = plain(b, 60, ctx({ showThinking: false })).join("\n");
    expect(collapsed).toMatch(/Thinking… \(2 lines/);
    expect(collapsed).toMatch(/hi[\s\S]*Error: rate limited/);
    // one column in from the edge, as pi 1.6 draws an answer
    expect(plain(b, 60, ctx()).join("\n")).toMatch(/^ a\n b/);
    expect(plain(b, 60, ctx()).every((l) => l === "" || (l.startsWith(" ") && l.length <= 59))).toBe(true);
  });
});

describe("chat view", () => {
  it("renders only the blocks on screen and scrolls back", () => {
    const view = new ChatView();
    const blocks = Array.from({ length: 2000 }, (_, i) => view.add(new Counting(5, `b${i}`)));
    const c = ctx();
    let rows = view.visible(40, 12, c);
    expect(rows).toHaveLength(12);
    expect(rows.at(-2)).toBe("b1999-4");
    const rendered = blocks.filter((b) => b.renders > 0).length;
    expect(rendered).toBeLessThan(5);
    view.scrollBy(6);
    rows = view.visible(40, 12, c);
    expect(rows.at(-2)).toBe("b1998-4");
    view.scrollBy(1e9);
    rows = view.visible(40, 12, c);
    expect(rows[0]).toBe("b0-0");
    expect(view.atTop).toBe(true);
    // cached: a second frame at the same width renders nothing again
    const before = blocks[0]!.renders;
    view.visible(40, 12, c);
    expect(blocks[0]!.renders).toBe(before);
  });
});

describe("markdown transformers in the chat", () => {
  const seen: Array<{ type: string; streaming: boolean; width: number; id?: string }> = [];
  const arrows = (md: string, c: { messageType: string; isStreaming: boolean; availableWidth: number; messageId?: string }) => {
    seen.push({ type: c.messageType, streaming: c.isStreaming, width: c.availableWidth, id: c.messageId });
    return md.replaceAll("-->", "→");
  };
  const withArrows = ctx({ transformMarkdown: arrows, expandTools: true });

  it("rewrites user, assistant and thinking text before drawing, telling each its surface", () => {
    seen.length = 0;
    expect(plain(new UserBlock("a --> b", { messageId: "u1", timestamp: "2026-01-01T00:00:00.000Z" }), 60, withArrows).join("\n")).toContain("a → b");
    const a = new AssistantBlock({ role: "assistant", content: [{ type: "thinking", thinking: "x --> y" }, { type: "text", text: "c --> d" }] }, builtinTheme("dark"), {}, true);
    const text = plain(a, 60, withArrows).join("\n");
    expect(text).toContain("x → y");
    expect(text).toContain("c → d");
    expect(seen).toEqual([
      { type: "user", streaming: false, width: 58, id: "u1" },
      { type: "assistant-thinking", streaming: true, width: 58, id: undefined },
      { type: "assistant", streaming: true, width: 58, id: undefined },
    ]);
    // Display only: the message keeps its text, and without transformers it is drawn as it is.
    expect(a.message.content[1]!.text).toBe("c --> d");
    expect(plain(a, 60).join("\n")).toContain("c --> d");
  });

  it("runs on custom messages and expanded summaries under their own surfaces", () => {
    seen.length = 0;
    expect(plain(new CustomMessageBlock({ customType: "note", content: "e --> f" }), 60, withArrows).join("\n")).toContain("e → f");
    expect(plain(new SummaryBlock("branch", "g --> h"), 60, withArrows).join("\n")).toContain("g → h");
    expect(seen.map((s) => s.type)).toEqual(["custom", "summary"]);
  });
});

describe("markdown transformers cannot reach the terminal", () => {
  it("escape sequences a transformer adds (clipboard write, title, screen clear, C1 CSI) are not in the lines drawn", () => {
    const inject = (md: string) => `${md} \x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x07\x1b[2J\x1b[H\x9b31m`;
    const c = ctx({ transformMarkdown: inject, expandTools: true, showThinking: true });
    // The assistant's markdown is drawn from the model's own text the same way; the screen writer
    // strips what is left (tests/tui-markdown-transform.e2e.test.ts checks the terminal).
    const thinking = new AssistantBlock({ role: "assistant", content: [{ type: "thinking", thinking: "think" }] }, builtinTheme("dark"), {}, false);
    const blocks: Block[] = [new UserBlock("hello"), thinking, new CustomMessageBlock({ customType: "note", content: "custom" }), new SummaryBlock("compaction", "summary", 1000)];
    for (const b of blocks) {
      const raw = b.render(60, c).join("\n");
      expect(raw).not.toMatch(/\x1b\]|\x07|\x1b\[2J|\x1b\[H|\x9b/);
      expect(stripAnsi(raw)).not.toContain("owned");
    }
  });
});
