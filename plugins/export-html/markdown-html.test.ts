/** Markdown to HTML for the export: structure, escaping, safe links, highlighted code. */
import { describe, it, expect } from "@jest/globals";
import { diffHtml, highlightHtml, inline, markdownToHtml } from "./markdown-html.js";

describe("markdownToHtml", () => {
  it("renders headings, paragraphs, emphasis, lists, quotes, rules and tables", () => {
    const html = markdownToHtml("# Title\n\nSome **bold**, *em*, ~~gone~~ and `a<b`.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n> quoted\n\n---\n\n| a | b |\n|:--|--:|\n| 1 | 2 |");
    expect(html).toContain("<h2 class=\"md-h1\">Title</h2>");
    expect(html).toContain("<p>Some <strong>bold</strong>, <em>em</em>, <del>gone</del> and <code>a&lt;b</code>.</p>");
    expect(html).toContain("<ul><li>one</li><li><p>two</p>\n<ul><li>nested</li></ul></li></ul>");
    expect(html).toContain("<ol><li>first</li><li>second</li></ol>");
    expect(html).toContain("<blockquote><p>quoted</p></blockquote>");
    expect(html).toContain("<hr>");
    expect(html).toContain('<th style="text-align:right">b</th>');
    expect(html).toContain('<td style="text-align:right">2</td>');
  });

  it("escapes raw HTML and keeps only http, https and mailto links", () => {
    const html = markdownToHtml('<img src=x onerror=alert(1)> [ok](https://example.com/a?b=1&c=2) [bad](javascript:alert(1))');
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain('<a href="https://example.com/a?b=1&amp;c=2" rel="noreferrer noopener">ok</a>');
    expect(html).not.toContain('href="javascript');
    expect(html).toContain("[bad](javascript:alert(1))");
  });

  it("highlights fenced code with its language and escapes it", () => {
    const html = markdownToHtml("```ts\nconst a: string = \"<x>\"; // note & more\n```");
    expect(html).toContain('<div class="code-lang">ts</div>');
    expect(html).toContain('<span class="tok-syntaxKeyword">const</span>');
    expect(html).toContain('<span class="tok-syntaxString">"&lt;x&gt;"</span>');
    expect(html).toContain('<span class="tok-syntaxComment">// note &amp; more</span>');
    expect(html).not.toMatch(/<x>/);
  });

  it("code spans are literal; diff lines are coloured and escaped", () => {
    expect(inline("`**not bold**`")).toBe("<code>**not bold**</code>");
    expect(highlightHtml("a < b && c > d", "text")).toBe("a &lt; b &amp;&amp; c &gt; d");
    expect(diffHtml("-old <a>\n+new\n ctx")).toBe('<span class="diff-del">-old &lt;a&gt;</span>\n<span class="diff-add">+new</span>\n<span class="diff-ctx"> ctx</span>');
  });
});
