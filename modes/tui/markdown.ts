/**
 * Markdown to SGR lines for the chat: headings, paragraphs, lists, block quotes, fenced code
 * with syntax highlighting, tables, rules, and inline strong/emphasis/code/links.
 *
 * Streaming: `MarkdownView` keeps every block but the last one of a growing text as committed
 * (scanned once, rendered once per width); each frame re-scans and re-renders only the open
 * tail. A code fence is highlighted once it is closed, plain while it streams.
 */
import { diagramsGeneration, latexLines, mermaidLines } from "./diagrams.js";
import { piTuiModule } from "./component-host.js";
import { highlightCode } from "./highlight.js";
import type { Theme } from "./theme.js";
import { visibleWidth, wrapLine, wrapText, padToWidth } from "./text.js";

export type BlockType = "paragraph" | "heading" | "code" | "list" | "quote" | "hr" | "table" | "math";

export interface MdBlock {
  type: BlockType;
  lines: string[];
  /** heading level, code language */
  level?: number;
  lang?: string;
  /** A code fence whose closing line has arrived. */
  closed?: boolean;
  /** Offset just past the block's last line (relative to the scanned text). */
  end: number;
}

const FENCE_RE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING_RE = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const HR_RE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const LIST_RE = /^(\s*)([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const QUOTE_RE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP_RE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

const MATH_OPEN_RE = /^ {0,3}(\$\$|\\\[)/;

const isBlank = (l: string) => l.trim() === "";

/** Split markdown into blocks. */
export function scanBlocks(text: string): MdBlock[] {
  const lines = text.split("\n");
  const offsets: number[] = [];
  let off = 0;
  for (const l of lines) {
    offsets.push(off);
    off += l.length + 1;
  }
  const endOf = (i: number) => Math.min(text.length, offsets[i]! + lines[i]!.length + 1);
  const blocks: MdBlock[] = [];
  let i = 0;
  const startsBlock = (l: string, next: string | undefined) =>
    FENCE_RE.test(l) || MATH_OPEN_RE.test(l) || HEADING_RE.test(l) || HR_RE.test(l) || QUOTE_RE.test(l) || LIST_RE.test(l) || (l.includes("|") && next !== undefined && TABLE_SEP_RE.test(next) && next.includes("-"));
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE_RE.exec(line);
    if (fence) {
      const marker = fence[2]!;
      const body: string[] = [];
      let j = i + 1;
      let closed = false;
      while (j < lines.length) {
        const l = lines[j]!;
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(l);
        if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length) {
          closed = true;
          break;
        }
        body.push(l);
        j++;
      }
      // A fence closed on the last line without a newline yet is closed.
      blocks.push({ type: "code", lines: body, lang: fence[3] || undefined, closed, end: closed ? endOf(j) : text.length });
      i = closed ? j + 1 : lines.length;
      continue;
    }
    const math = MATH_OPEN_RE.exec(line);
    if (math) {
      // $$…$$ or \[…\]: display math, possibly on one line.
      const close = math[1] === "$$" ? "$$" : "\\]";
      const first = line.slice(line.indexOf(math[1]!) + 2);
      const body: string[] = [];
      let j = i;
      let closed = false;
      let rest = first;
      while (true) {
        const at = rest.indexOf(close);
        if (at >= 0 && rest.slice(at + 2).trim() === "") {
          body.push(rest.slice(0, at));
          closed = true;
          break;
        }
        body.push(rest);
        if (++j >= lines.length) break;
        rest = lines[j]!;
      }
      blocks.push({ type: "math", lines: body, closed, end: closed ? endOf(j) : text.length });
      i = closed ? j + 1 : lines.length;
      continue;
    }
    const heading = HEADING_RE.exec(line);
    if (heading) {
      blocks.push({ type: "heading", level: heading[1]!.length, lines: [heading[2] ?? ""], end: endOf(i) });
      i++;
      continue;
    }
    if (HR_RE.test(line)) {
      blocks.push({ type: "hr", lines: [line], end: endOf(i) });
      i++;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP_RE.test(lines[i + 1]!) && lines[i + 1]!.includes("-")) {
      const rows = [line];
      let j = i + 2;
      while (j < lines.length && !isBlank(lines[j]!) && lines[j]!.includes("|")) rows.push(lines[j++]!);
      blocks.push({ type: "table", lines: rows, end: endOf(j - 1) });
      i = j;
      continue;
    }
    if (QUOTE_RE.test(line)) {
      const body: string[] = [];
      let j = i;
      while (j < lines.length && QUOTE_RE.test(lines[j]!)) body.push(QUOTE_RE.exec(lines[j++]!)![1]!);
      blocks.push({ type: "quote", lines: body, end: endOf(j - 1) });
      i = j;
      continue;
    }
    if (LIST_RE.test(line)) {
      const body: string[] = [];
      let j = i;
      while (j < lines.length) {
        const l = lines[j]!;
        if (isBlank(l)) {
          // A blank line continues the list only when an item or an indented line follows.
          let k = j + 1;
          while (k < lines.length && isBlank(lines[k]!)) k++;
          if (k < lines.length && (LIST_RE.test(lines[k]!) || /^\s{2,}\S/.test(lines[k]!))) {
            body.push("");
            j++;
            continue;
          }
          break;
        }
        if (j > i && !LIST_RE.test(l) && !/^\s/.test(l) && startsBlock(l, lines[j + 1])) break;
        body.push(l);
        j++;
      }
      while (body.length && body[body.length - 1] === "") body.pop();
      blocks.push({ type: "list", lines: body, end: endOf(j - 1) });
      i = j;
      continue;
    }
    const body = [line];
    let j = i + 1;
    while (j < lines.length && !isBlank(lines[j]!) && !startsBlock(lines[j]!, lines[j + 1])) body.push(lines[j++]!);
    blocks.push({ type: "paragraph", lines: body, end: endOf(j - 1) });
    i = j;
  }
  return blocks;
}

// ---- inline ---------------------------------------------------------------------------------

/** Inline markdown (code spans, strong, emphasis, strikethrough, links) to SGR. */
export function renderInline(s: string, theme: Theme): string {
  let out = "";
  let i = 0;
  const n = s.length;
  let plain = "";
  const flush = () => {
    out += plain;
    plain = "";
  };
  while (i < n) {
    const ch = s[i]!;
    if (ch === "\\" && i + 1 < n && /[\\`*_{}[\]()#+\-.!|~<>]/.test(s[i + 1]!)) {
      plain += s[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      let run = 1;
      while (s[i + run] === "`") run++;
      const fence = "`".repeat(run);
      const close = s.indexOf(fence, i + run);
      if (close !== -1) {
        flush();
        let code = s.slice(i + run, close);
        if (code.startsWith(" ") && code.endsWith(" ") && code.trim()) code = code.slice(1, -1);
        out += theme.fg("mdCode", code);
        i = close + run;
        continue;
      }
    }
    if ((ch === "*" || ch === "_") && s[i + 1] === ch) {
      const marker = ch + ch;
      const close = s.indexOf(marker, i + 2);
      if (close > i + 2 && s[i + 2] !== " ") {
        flush();
        out += theme.bold(renderInline(s.slice(i + 2, close), theme));
        i = close + 2;
        continue;
      }
    }
    if (ch === "~" && s[i + 1] === "~") {
      const close = s.indexOf("~~", i + 2);
      if (close > i + 2) {
        flush();
        out += theme.fg("muted", renderInline(s.slice(i + 2, close), theme));
        i = close + 2;
        continue;
      }
    }
    if ((ch === "*" || ch === "_") && s[i + 1] !== " " && s[i + 1] !== undefined && !(ch === "_" && i > 0 && /\w/.test(s[i - 1]!))) {
      let close = i + 1;
      for (;;) {
        close = s.indexOf(ch, close);
        if (close === -1) break;
        if (s[close + 1] === ch) {
          close += 2;
          continue;
        }
        if (s[close - 1] !== " " && !(ch === "_" && /\w/.test(s[close + 1] ?? ""))) break;
        close++;
      }
      if (close > i + 1) {
        flush();
        out += theme.underline(renderInline(s.slice(i + 1, close), theme));
        i = close + 1;
        continue;
      }
    }
    if (ch === "[") {
      const m = /^\[([^\]\n]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)/.exec(s.slice(i));
      if (m) {
        flush();
        const label = m[1] || m[2]!;
        out += theme.underline(theme.fg("mdLink", renderInline(label, theme)));
        if (m[2] && m[2] !== m[1]) out += theme.fg("mdLinkUrl", ` (${m[2]})`);
        i += m[0].length;
        continue;
      }
    }
    if (ch === "<") {
      const m = /^<((?:https?|mailto):[^>\s]+)>/.exec(s.slice(i));
      if (m) {
        flush();
        out += theme.underline(theme.fg("mdLink", m[1]!));
        i += m[0].length;
        continue;
      }
    }
    plain += ch;
    i++;
  }
  flush();
  return out;
}

// ---- blocks ---------------------------------------------------------------------------------

export interface MarkdownOptions {
  /** Prefix of code block lines (settings markdown.codeBlockIndent). */
  codeIndent?: string;
  /** settings markdown.mermaid: "off" keeps mermaid fences as code blocks. */
  mermaid?: string;
}

/** Render one block to lines of at most `width` columns. */
export function renderBlock(b: MdBlock, width: number, theme: Theme, opts: MarkdownOptions = {}, lineCache?: Map<string, string[]>): string[] {
  width = Math.max(4, width);
  // Each source line of a paragraph (line breaks are kept) or an open code fence wraps on its own.
  const perLine = (prefix: string, l: string, last: boolean, fn: () => string[]): string[] => {
    // The last line is the one still growing: caching each of its versions would only fill memory.
    if (!lineCache || last) return fn();
    const k = prefix + l;
    let hit = lineCache.get(k);
    if (!hit) {
      hit = fn();
      lineCache.set(k, hit);
    }
    return hit;
  };
  switch (b.type) {
    case "heading": {
      const text = renderInline(b.lines[0]!, theme);
      const styled = b.level === 1 ? theme.underline(theme.bold(theme.fg("mdHeading", text))) : theme.bold(theme.fg("mdHeading", b.level! >= 3 ? `${"#".repeat(b.level!)} ${text}` : text));
      return wrapLine(styled, width);
    }
    case "hr":
      return [theme.fg("mdHr", "─".repeat(Math.min(width, 80)))];
    case "paragraph":
      return b.lines.flatMap((l, i) => perLine("p\0", l, i === b.lines.length - 1, () => wrapLine(renderInline(l.replace(/^\s+/, "").replace(/\s{2,}$/, ""), theme), width)));
    case "quote": {
      const inner = renderMarkdownLines(b.lines.join("\n"), width - 2, theme, opts);
      return inner.map((l) => theme.fg("mdQuoteBorder", "│ ") + theme.fg("mdQuote", l));
    }
    case "math": {
      const indent = opts.codeIndent ?? "  ";
      const src = b.lines.join("\n").trim();
      const shown = (b.closed && latexLines(src)) || b.lines.map((l) => l.trim()).filter(Boolean);
      return shown.flatMap((l) => wrapLine(l, Math.max(1, width - indent.length)).map((part) => indent + theme.fg("mdCode", part)));
    }
    case "code": {
      const indent = opts.codeIndent ?? "  ";
      const code = b.lines.join("\n");
      if (b.closed && b.lang?.toLowerCase() === "mermaid" && opts.mermaid !== "off") {
        const art = mermaidLines(code, width - indent.length, theme);
        if (art) return art.map((l) => indent + l);
      }
      const body = b.closed ? highlightCode(code, b.lang, theme) : b.lines;
      const out = [theme.fg("mdCodeBlockBorder", "```" + (b.lang ?? ""))];
      const w = Math.max(1, width - indent.length);
      if (b.closed) for (const l of body) for (const part of wrapLine(l, w)) out.push(indent + part);
      else body.forEach((l, i) => out.push(...perLine("c\0", l, i === body.length - 1, () => wrapLine(l, w).map((part) => indent + theme.fg("mdCodeBlock", part)))));
      if (b.closed) out.push(theme.fg("mdCodeBlockBorder", "```"));
      return out;
    }
    case "list":
      return renderList(b.lines, width, theme, opts);
    case "table":
      return renderTable(b.lines, width, theme);
  }
}

function renderList(lines: string[], width: number, theme: Theme, opts: MarkdownOptions): string[] {
  const out: string[] = [];
  const base = LIST_RE.exec(lines[0]!)?.[1]!.length ?? 0;
  // Group into items: an item line plus its continuation lines.
  const items: Array<{ indent: number; marker: string; text: string[] }> = [];
  for (const l of lines) {
    const m = LIST_RE.exec(l);
    if (m && (items.length === 0 || m[1]!.length <= (items[items.length - 1]!.indent + 1) * 2 + base + 4)) {
      const level = Math.max(0, Math.floor((m[1]!.length - base) / 2));
      items.push({ indent: level, marker: m[2]!, text: [m[4]!] });
    } else if (items.length) {
      items[items.length - 1]!.text.push(l.trim());
    }
  }
  for (const it of items) {
    const pad = "  ".repeat(Math.min(it.indent, 8));
    const bullet = /^\d/.test(it.marker) ? it.marker.replace(")", ".") + " " : "• ";
    const hang = pad.length + visibleWidth(bullet);
    const textLines = it.text.filter((t, i) => i === 0 || t !== "");
    let first = textLines[0] ?? "";
    let check = "";
    const task = /^\[([ xX])\]\s+/.exec(first);
    if (task) {
      check = task[1] === " " ? "☐ " : "☑ ";
      first = first.slice(task[0].length);
    }
    const body = wrapText([check + renderInline(first, theme), ...textLines.slice(1).map((t) => renderInline(t, theme))].join("\n"), Math.max(4, width - hang));
    body.forEach((l, i) => out.push(i === 0 ? pad + theme.fg("mdListBullet", bullet) + l : " ".repeat(hang) + l));
  }
  void opts;
  return out;
}

function splitRow(row: string): string[] {
  let r = row.trim();
  if (r.startsWith("|")) r = r.slice(1);
  if (r.endsWith("|") && !r.endsWith("\\|")) r = r.slice(0, -1);
  return r.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

function renderTable(rows: string[], width: number, theme: Theme): string[] {
  const header = splitRow(rows[0]!);
  const body = rows.slice(1).map(splitRow);
  const cols = Math.max(header.length, ...body.map((r) => r.length));
  const cells = [header, ...body].map((r) => Array.from({ length: cols }, (_, i) => renderInline(r[i] ?? "", theme)));
  const widths = Array.from({ length: cols }, (_, i) => Math.max(1, ...cells.map((r) => visibleWidth(r[i]!))));
  const avail = width - (3 * cols + 1);
  if (avail < cols * 3) {
    // Too narrow for a grid: one line per row.
    return cells.flatMap((r, ri) => wrapLine(ri === 0 ? theme.bold(r.join(" | ")) : r.join(" | "), width));
  }
  while (widths.reduce((a, b) => a + b, 0) > avail) {
    const max = Math.max(...widths);
    const idx = widths.indexOf(max);
    widths[idx] = max - 1;
  }
  const border = (l: string, m: string, r: string) => theme.fg("mdHr", l + widths.map((w) => "─".repeat(w + 2)).join(m) + r);
  const out = [border("┌", "┬", "┐")];
  cells.forEach((row, ri) => {
    const wrapped = row.map((c, i) => wrapLine(c, widths[i]!));
    const h = Math.max(...wrapped.map((w) => w.length));
    for (let k = 0; k < h; k++) {
      const parts = wrapped.map((w, i) => " " + padToWidth(ri === 0 ? theme.bold(w[k] ?? "") : (w[k] ?? ""), widths[i]!) + " ");
      out.push(theme.fg("mdHr", "│") + parts.join(theme.fg("mdHr", "│")) + theme.fg("mdHr", "│"));
    }
    if (ri === 0) out.push(border("├", "┼", "┤"));
  });
  out.push(border("└", "┴", "┘"));
  return out;
}

/** Blocks separated by one blank line. */
function joinBlocks(rendered: string[][]): string[] {
  const out: string[] = [];
  for (const r of rendered) {
    if (out.length) out.push("");
    for (const l of r) out.push(l);
  }
  return out;
}

/** Render complete markdown text to lines (no streaming cache). */
export function renderMarkdownLines(text: string, width: number, theme: Theme, opts: MarkdownOptions = {}): string[] {
  return joinBlocks(scanBlocks(text).map((b) => renderBlock(b, width, theme, opts)));
}

interface CachedBlock {
  block: MdBlock;
  width: number;
  themeName: string;
  lines: string[] | undefined;
}

/**
 * A growing markdown text. `render(width)` re-renders only the last (open) block and reuses the
 * committed blocks' lines for the same width and theme.
 */
export class MarkdownView {
  private text = "";
  private final = false;
  private synced = true;
  private committed: CachedBlock[] = [];
  /** The text prefix the committed blocks cover. */
  private committedText = "";
  private tail: MdBlock[] = [];
  /** Wrapped lines of the open block's source lines (paragraphs and code), per width. */
  private lineCache = new Map<string, string[]>();
  private lineCacheKey = "";

  constructor(
    private theme: Theme,
    private opts: MarkdownOptions = {},
  ) {}

  setTheme(theme: Theme): void {
    this.theme = theme;
  }

  /** Set the whole text (usually the previous text plus new characters). Cheap: work happens in render(). */
  setText(text: string, final = false): void {
    if (text === this.text && final === this.final) return;
    this.text = text;
    this.final = final;
    this.synced = false;
  }

  getText(): string {
    return this.text;
  }

  private sync(): void {
    if (this.synced) return;
    this.synced = true;
    const text = this.text;
    if (!text.startsWith(this.committedText)) {
      this.committed = [];
      this.committedText = "";
    }
    const base = this.committedText.length;
    const blocks = scanBlocks(text.slice(base));
    // Commit every block but the last while streaming; all of them when final.
    const keep = this.final ? blocks.length : Math.max(0, blocks.length - 1);
    let end = base;
    for (let i = 0; i < keep; i++) {
      const b = blocks[i]!;
      this.committed.push({ block: b, width: -1, themeName: "", lines: undefined });
      end = base + b.end;
    }
    if (end !== base) this.committedText = text.slice(0, end);
    this.tail = blocks.slice(keep);
  }

  render(width: number): string[] {
    this.sync();
    const parts: string[][] = [];
    for (const c of this.committed) {
      // The theme, and whether the diagram and math renderers had loaded, are part of the key.
      const look = `${this.theme.name}\0${diagramsGeneration()}\0${piTuiModule() ? 1 : 0}`;
      if (!c.lines || c.width !== width || c.themeName !== look) {
        c.lines = renderBlock(c.block, width, this.theme, this.opts);
        c.width = width;
        c.themeName = look;
      }
      parts.push(c.lines);
    }
    const key = `${width}\0${this.theme.name}\0${this.committedText.length}`;
    if (key !== this.lineCacheKey) {
      this.lineCache.clear();
      this.lineCacheKey = key;
    }
    for (const b of this.tail) parts.push(renderBlock(b, width, this.theme, this.opts, this.lineCache));
    return joinBlocks(parts);
  }
}
