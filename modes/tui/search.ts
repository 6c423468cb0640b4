/**
 * Transcript search (pi 1.6's `tui.altScreen.search`, Ctrl+Shift+F; Ctrl+F on Windows): a search
 * box at the top right over the chat. Typing searches the rendered transcript (case-insensitive,
 * runs of spaces in the query match one space); matches are underlined, the selected one drawn
 * bold and inverse and scrolled into view a third of the way down the chat. Enter / Ctrl+G
 * select the next match, Shift+Enter / Ctrl+Shift+G the previous one (both wrap), Esc closes
 * the box and leaves the chat where it is. A new query selects the first match at or below the
 * top of the chat as it was.
 *
 * Matches are found within one rendered line (a phrase broken across a wrapped line is not found).
 */
import type { AppView } from "./app-view.js";
import type { KeyPress } from "./keys.js";
import type { Layer, LayerEnv } from "./layers.js";
import type { OverlayOptions } from "./component-host.js";
import { stripAnsi, truncate, visibleWidth } from "./text.js";

export interface SearchMatch {
  row: number;
  /** Character offsets in the line's plain text. */
  start: number;
  end: number;
}

/** The matches of `query` in `lines` (SGR-styled), in reading order. */
export function findMatches(lines: readonly string[], query: string): SearchMatch[] {
  const q = query.replace(/\s+/gu, " ").trim();
  if (!q) return [];
  const re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "\\s+"), "giu");
  const out: SearchMatch[] = [];
  lines.forEach((line, row) => {
    const plain = stripAnsi(line);
    for (const m of plain.matchAll(re)) if (m[0].length) out.push({ row, start: m.index!, end: m.index! + m[0].length });
  });
  return out;
}

/** A line with its matches marked (the line loses its own colours: the marks must read clearly). */
export function markLine(line: string, marks: Array<{ start: number; end: number; current: boolean }>): string {
  const plain = stripAnsi(line);
  let out = "";
  let at = 0;
  for (const m of [...marks].sort((a, b) => a.start - b.start)) {
    if (m.start < at) continue;
    out += plain.slice(at, m.start);
    const text = plain.slice(m.start, m.end);
    out += m.current ? `\x1b[1;7m${text}\x1b[22;27m` : `\x1b[4m${text}\x1b[24m`;
    at = m.end;
  }
  return out + plain.slice(at);
}

function sameLines(a: readonly string[], b: readonly string[] | undefined): boolean {
  if (!b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class TranscriptSearch implements Layer {
  readonly placement = "overlay" as const;
  readonly overlayOptions: OverlayOptions = { anchor: "top-right", width: "40%", minWidth: 32, margin: 1 };
  query = "";
  matches: SearchMatch[] = [];
  selected = -1;
  /** Scroll the selected match into view on the next frame. */
  private reveal = false;
  private mode: "query" | "next" | "previous" | "retain" = "retain";
  /** The transcript row at the top of the chat when the query last changed. */
  private anchorRow = 0;
  private linesKey: readonly string[] | undefined;

  constructor(private readonly app: AppView) {}

  static open(app: AppView): void {
    const open = app.layers.find((l) => l instanceof TranscriptSearch);
    if (open) app.popLayer(open);
    else app.pushLayer(new TranscriptSearch(app));
    app.requestRender();
  }

  handleKey(k: KeyPress, env: LayerEnv): void {
    const kb = env.keys;
    if (kb.matches(k, "tui.altScreen.searchClose") || kb.matches(k, "tui.altScreen.search")) {
      this.app.popLayer(this);
    } else if (kb.matches(k, "tui.altScreen.searchNext")) this.step("next");
    else if (kb.matches(k, "tui.altScreen.searchPrevious")) this.step("previous");
    else if (k.id === "backspace") this.setQuery(Array.from(this.query).slice(0, -1).join(""));
    else if (k.id === "ctrl+u") this.setQuery("");
    else if (k.text && !/[\x00-\x1f\x7f]/.test(k.text)) this.setQuery(this.query + k.text);
    env.requestRender();
  }

  private setQuery(q: string): void {
    if (q === this.query) return;
    this.query = q;
    this.mode = "query";
    this.linesKey = undefined;
  }

  private step(dir: "next" | "previous"): void {
    if (!this.query.trim()) return;
    this.mode = dir;
  }

  /**
   * Before a frame: search `all` (the whole transcript as rendered) and pick the selected match.
   * Returns the chat's scroll (rows up from the end) to reveal it, or undefined to keep the scroll.
   */
  update(all: readonly string[], viewHeight: number, scroll: number): number | undefined {
    const top = Math.max(0, all.length - scroll - viewHeight);
    if (this.mode === "query") this.anchorRow = top;
    if (!sameLines(all, this.linesKey)) {
      const prev = this.matches[this.selected];
      this.matches = findMatches(all, this.query);
      this.linesKey = all;
      // The transcript changed under a kept selection: keep the same match where it still is.
      if (this.mode === "retain" && prev) {
        const same = this.matches.findIndex((m) => m.row === prev.row && m.start === prev.start);
        this.selected = same >= 0 ? same : Math.min(this.selected, this.matches.length - 1);
      }
    }
    const n = this.matches.length;
    if (this.mode === "retain") return undefined;
    if (!n) this.selected = -1;
    else if (this.mode === "query") {
      const i = this.matches.findIndex((m) => m.row >= this.anchorRow);
      this.selected = i >= 0 ? i : 0;
    } else if (this.mode === "next") this.selected = this.selected < 0 ? 0 : (this.selected + 1) % n;
    else this.selected = this.selected < 0 ? n - 1 : (this.selected - 1 + n) % n;
    this.mode = "retain";
    this.reveal = this.selected >= 0;
    if (!this.reveal) return undefined;
    this.reveal = false;
    const row = this.matches[this.selected]!.row;
    if (row >= top && row < top + viewHeight) return undefined;
    const newTop = Math.max(0, Math.min(row - Math.floor(viewHeight / 3), all.length - viewHeight));
    return Math.max(0, all.length - newTop - viewHeight);
  }

  /** The visible rows `lines` (transcript rows from `top`) with the matches on them marked. */
  mark(lines: string[], top: number): string[] {
    if (!this.matches.length) return lines;
    const byRow = new Map<number, Array<{ start: number; end: number; current: boolean }>>();
    this.matches.forEach((m, i) => {
      if (m.row < top || m.row >= top + lines.length) return;
      const list = byRow.get(m.row) ?? [];
      list.push({ start: m.start, end: m.end, current: i === this.selected });
      byRow.set(m.row, list);
    });
    return lines.map((l, i) => (byRow.has(top + i) ? markLine(l, byRow.get(top + i)!) : l));
  }

  render(width: number, _maxRows: number, env?: LayerEnv): string[] {
    const t = env?.theme ?? this.app.theme;
    const kb = env?.keys ?? this.app.keys;
    const inner = Math.max(4, width - 2);
    const result = !this.query ? "" : this.matches.length ? `${this.selected + 1}/${this.matches.length}` : "No matches";
    const resultText = result ? t.fg("dim", ` ${result} `) : "";
    const inputW = Math.max(1, inner - visibleWidth(resultText));
    const shown = truncate(this.query, Math.max(1, inputW - 1), "…");
    const input = shown + "\x1b[7m \x1b[27m";
    const content = input + " ".repeat(Math.max(0, inputW - visibleWidth(input))) + resultText;
    let buttons = ` ↑ ${kb.hint("tui.altScreen.searchPrevious")} · ↓ ${kb.hint("tui.altScreen.searchNext")} `;
    if (visibleWidth(buttons) > inner - 2) buttons = " ↑ ↓ ";
    const rule = Math.max(0, inner - visibleWidth(buttons) - 1);
    const b = (s: string) => t.fg("borderAccent", s);
    return [b(`┌${"─".repeat(inner)}┐`), b("│") + truncate(content, inner) + b("│"), b(`└${"─".repeat(rule)}`) + t.fg("dim", buttons) + b("─┘")];
  }
}
