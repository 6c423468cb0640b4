import { describe, it, expect } from "@jest/globals";
import { MarkdownView, renderInline, renderMarkdownLines, scanBlocks } from "./markdown.js";
import { highlightCode } from "./highlight.js";
import { builtinTheme } from "./theme.js";
import { stripAnsi, visibleWidth } from "./text.js";

const theme = builtinTheme("dark");
const plain = (lines: string[]) => lines.map(stripAnsi);

const DOC = [
  "# Heading",
  "",
  "A paragraph with **bold**, *emphasis*, `code` and a [link](https://example.com).",
  "",
  "- first item",
  "- second item that is long enough to wrap around the narrow width",
  "  - nested",
  "1. one",
  "2. two",
  "",
  "> quoted text",
  "",
  "```python",
  "def f(x):",
  "    return x  # comment",
  "```",
  "",
  "| a | b |",
  "|---|---|",
  "| 1 | 22 |",
  "",
  "---",
  "tail",
].join("\n");

describe("markdown", () => {
  it("splits blocks", () => {
    expect(scanBlocks(DOC).map((b) => b.type)).toEqual(["heading", "paragraph", "list", "quote", "code", "table", "hr", "paragraph"]);
  });

  it("renders inline styles as SGR without the markers", () => {
    const s = renderInline("**bold** and `code` and [x](http://u)", theme);
    expect(stripAnsi(s)).toBe("bold and code and x (http://u)");
    expect(s).toContain("\x1b[1m");
  });

  it("renders every block within the width", () => {
    const lines = renderMarkdownLines(DOC, 40, theme);
    const text = plain(lines).join("\n");
    expect(text).toContain("Heading");
    expect(text).toContain("• first item");
    expect(text).toContain("  • nested");
    expect(text).toContain("1. one");
    expect(text).toContain("│ quoted text");
    expect(text).toContain("    return x  # comment");
    expect(text).toMatch(/│ 1 +│ 22 │/);
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(40);
  });

  it("highlights code blocks once they are closed", () => {
    const hl = highlightCode('const s = "x"; // c', "ts", theme);
    expect(stripAnsi(hl[0]!)).toBe('const s = "x"; // c');
    expect(hl[0]).toContain(theme.getFgAnsi("syntaxKeyword"));
    expect(hl[0]).toContain(theme.getFgAnsi("syntaxString"));
    expect(hl[0]).toContain(theme.getFgAnsi("syntaxComment"));
  });

  it("streams to the same lines as a full render", () => {
    const view = new MarkdownView(theme);
    let out: string[] = [];
    for (let i = 1; i <= DOC.length; i += 7) {
      view.setText(DOC.slice(0, i));
      out = view.render(50);
    }
    view.setText(DOC, true);
    out = view.render(50);
    expect(plain(out)).toEqual(plain(renderMarkdownLines(DOC, 50, theme)));
    // re-rendering at another width re-wraps
    expect(plain(view.render(30))).toEqual(plain(renderMarkdownLines(DOC, 30, theme)));
  });

  it("shows an open code fence as plain text while it streams", () => {
    const view = new MarkdownView(theme);
    view.setText("```js\nconst a = 1;");
    const lines = plain(view.render(40));
    expect(lines).toContain("  const a = 1;");
    expect(lines.filter((l) => l === "```")).toHaveLength(0);
  });
});

describe("Mermaid and LaTeX blocks", () => {
  const DIAGRAM = ["```mermaid", "graph LR", "  A[Start] --> B[Done]", "```"].join("\n");

  it("shows $$…$$ and \\[…\\] display math as Unicode text (pi-tui's renderLatex)", async () => {
    const { loadPiTui } = await import("./component-host.js");
    const md = ["before", "", "$$", "\\frac{a}{b} + \\alpha^2", "$$", "", "\\[ x_i \\leq \\infty \\]", "", "after"].join("\n");
    const blocks = scanBlocks(md);
    expect(blocks.map((b) => b.type)).toEqual(["paragraph", "math", "math", "paragraph"]);
    await loadPiTui();
    const out = plain(renderMarkdownLines(md, 60, theme)).join("\n");
    expect(out).toContain("α²");
    expect(out).toMatch(/a\s*\n\s*─+/); // the fraction stacked over its rule
    expect(out).toContain("xᵢ ≤ ∞");
    expect(out).not.toContain("\\frac");
    // Syntax the renderer does not know is shown as its source, not dropped.
    const odd = plain(renderMarkdownLines("$$\\unknowncommand{x}$$", 60, theme)).join("\n");
    expect(odd).toContain("\\unknowncommand{x}");
  });

  it("keeps an unclosed math block (still streaming) as its source", () => {
    const out = plain(renderMarkdownLines("$$\n\\alpha + ", 60, theme)).join("\n");
    expect(out).toContain("\\alpha +");
  });

  it("draws a closed mermaid fence as a box diagram once the library is loaded; a labelled code block otherwise", async () => {
    const { preloadMermaid } = await import("./diagrams.js");
    await preloadMermaid();
    const out = plain(renderMarkdownLines(DIAGRAM, 80, theme));
    expect(out.join("\n")).toMatch(/┌─+┐/);
    expect(out.join("\n")).toContain("│ Start ├");
    expect(out.join("\n")).not.toContain("graph LR");
    // Too narrow for the diagram, or the setting off: the source, labelled.
    for (const [w, opts] of [[12, {}], [80, { mermaid: "off" }]] as const) {
      const fallback = plain(renderMarkdownLines(DIAGRAM, w, theme, opts));
      expect(fallback[0]).toBe("```mermaid");
      expect(fallback.join("\n")).toContain("A[Start]");
    }
    // Still streaming (fence not closed): the source.
    expect(plain(renderMarkdownLines("```mermaid\ngraph LR\n  A --> B", 80, theme))[0]).toBe("```mermaid");
  });
});
