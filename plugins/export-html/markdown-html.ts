/**
 * Markdown to HTML for the exported page: headings, paragraphs, emphasis, inline code, links
 * (http, https and mailto only), lists, block quotes, tables, rules and fenced code blocks with
 * syntax highlighting (the TUI's highlighter, its tokens as CSS classes). Every piece of source
 * text is escaped; the only markup in the output is what this file writes.
 */
import { highlightCode } from "../../modes/tui/highlight.js";
import type { Theme } from "../../modes/tui/theme.js";

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ESC[c]!);
}

// Code is tokenized with <, > and & swapped for private-use characters, so the highlighter's
// plain text and its token spans can be told apart; they become entities afterwards.
const HIDE: Record<string, string> = { "<": "\uE000", ">": "\uE001", "&": "\uE002" };
const SHOW: Record<string, string> = { "\uE000": "&lt;", "\uE001": "&gt;", "\uE002": "&amp;" };
const htmlTheme = {
  name: "html",
  fg: (token: string, text: string) => `<span class="tok-${token.replace(/[^A-Za-z]/g, "")}">${text}</span>`,
} as unknown as Theme;

/** Highlighted HTML lines of `code` (escaped). */
export function highlightHtml(code: string, lang: string | undefined): string {
  const hidden = code.replace(/[<>&\uE000-\uE002]/g, (c) => HIDE[c] ?? "");
  let lines: string[];
  try {
    lines = highlightCode(hidden, lang || undefined, htmlTheme);
  } catch {
    lines = hidden.split("\n");
  }
  return lines.join("\n").replace(/[\uE000-\uE002]/g, (c) => SHOW[c]!);
}

/** A diff (lines starting with +, -, space or @@) as coloured lines. */
export function diffHtml(diff: string): string {
  return diff
    .split("\n")
    .map((l) => {
      const cls = l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : l.startsWith("@@") ? "hunk" : "ctx";
      return `<span class="diff-${cls}">${esc(l)}</span>`;
    })
    .join("\n");
}

function safeUrl(url: string): string | undefined {
  const u = url.trim();
  return /^(https?:|mailto:)/i.test(u) ? u : undefined;
}

/** Inline markdown of one paragraph (already split into blocks). */
export function inline(text: string): string {
  const codes: string[] = [];
  // Code spans first: their contents are literal.
  let s = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_m, _t, body: string) => {
    codes.push(`<code>${esc(body.replace(/^ (.*) $/, "$1"))}</code>`);
    return `\uE010${codes.length - 1}\uE011`;
  });
  const links: string[] = [];
  s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (m, label: string, url: string) => {
    const href = safeUrl(url);
    if (!href) return m;
    links.push(`<a href="${esc(href)}" rel="noreferrer noopener">${inlineRest(esc(label))}</a>`);
    return `\uE012${links.length - 1}\uE013`;
  });
  s = inlineRest(esc(s));
  s = s.replace(/\uE012(\d+)\uE013/g, (_m, i: string) => links[Number(i)]!);
  return s.replace(/\uE010(\d+)\uE011/g, (_m, i: string) => codes[Number(i)]!);
}

function inlineRest(s: string): string {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
    .replace(/__(?=\S)([\s\S]*?\S)__/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, "$1<em>$2</em>")
    .replace(/(^|[^_\w])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>")
    .replace(/\n/g, "<br>");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** A markdown document as HTML blocks. */
export function markdownToHtml(md: string): string {
  const lines = String(md ?? "").replace(/\r\n?/g, "\n").split("\n");
  return blocks(lines);
}

function blocks(lines: string[]): string {
  const out: string[] = [];
  let i = 0;
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join("\n"))}</p>`);
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      const lang = fence[2] ?? "";
      const body: string[] = [];
      i++;
      while (i < lines.length && !new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`).test(lines[i]!)) body.push(lines[i++]!);
      i++;
      const code = body.join("\n");
      out.push(`<div class="code-block">${lang ? `<div class="code-lang">${esc(lang)}</div>` : ""}<pre><code>${highlightHtml(code, lang)}</code></pre></div>`);
      continue;
    }
    if (!line.trim()) {
      flush();
      i++;
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      flush();
      out.push(`<h${h[1]!.length + 1 > 6 ? 6 : h[1]!.length + 1} class="md-h${h[1]!.length}">${inline(h[2]!)}</h${h[1]!.length + 1 > 6 ? 6 : h[1]!.length + 1}>`);
      i++;
      continue;
    }
    if (RULE.test(line) && !para.length) {
      out.push("<hr>");
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) body.push(QUOTE.exec(lines[i++]!)![1]!);
      out.push(`<blockquote>${blocks(body)}</blockquote>`);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]!) && lines[i + 1]!.includes("-")) {
      flush();
      const head = cells(line);
      const aligns = cells(lines[i + 1]!).map((c) => (c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : ""));
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.includes("|") && lines[i]!.trim()) rows.push(cells(lines[i++]!));
      const td = (tag: string, c: string, k: number) => `<${tag}${aligns[k] ? ` style="text-align:${aligns[k]}"` : ""}>${inline(c)}</${tag}>`;
      out.push(
        `<table><thead><tr>${head.map((c, k) => td("th", c, k)).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${head.map((_, k) => td("td", r[k] ?? "", k)).join("")}</tr>`).join("")}</tbody></table>`,
      );
      continue;
    }
    const item = ITEM.exec(line);
    if (item && (!para.length || item[1] === "")) {
      flush();
      const ordered = /\d/.test(item[2]!);
      const start = ordered ? parseInt(item[2]!, 10) : 1;
      const items: string[][] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        const m = ITEM.exec(l);
        if (m && m[1]!.length <= item[1]!.length && /\d/.test(m[2]!) === ordered) {
          items.push([m[3]!]);
          i++;
        } else if (items.length && (/^\s{2,}\S/.test(l) || (!l.trim() && i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1]!)))) {
          items[items.length - 1]!.push(l.replace(/^ {2,4}/, ""));
          i++;
        } else break;
      }
      const lis = items.map((body) => {
        const inner = blocks(body);
        // A tight item is one paragraph: drop its <p>.
        return `<li>${/^<p>[\s\S]*<\/p>$/.test(inner) && inner.indexOf("<p>", 1) === -1 ? inner.slice(3, -4) : inner}</li>`;
      });
      out.push(ordered ? `<ol${start !== 1 ? ` start="${start}"` : ""}>${lis.join("")}</ol>` : `<ul>${lis.join("")}</ul>`);
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return out.join("\n");
}
