/**
 * The fullscreen chat viewport's mouse and scrolling, as pi 1.6 does them: the wheel scrolls the
 * transcript (faster for a fast spin, `fullscreenWheelScrollLines` fixes the step; Alt+wheel five
 * times as far), Ctrl+Home / Ctrl+End jump to the top / the latest
 * message (keybindings tui.altScreen.top / bottom), a scrollbar in the last column
 * (`fullscreenScrollbar`: "auto" shows it for a moment after scrolling, "always", "hidden"),
 * and a "↓ Jump to latest message" hint on the last chat row while scrolled up (a click on it
 * jumps). Dragging with the left button selects transcript text; on release it is copied with
 * OSC 52 when `fullscreenCopyOnSelect` is on (the default). The terminal's own selection stays
 * available with Shift held while dragging (terminals keep Shift+drag for themselves while an
 * application takes mouse reports).
 */
import type { AppView } from "./app-view.js";
import type { MouseEvent } from "./key-parser.js";
import { codePoints, charWidth, padToWidth, stripAnsi, truncate, visibleWidth } from "./text.js";

const SCROLLBAR_LINGER_MS = 1500;

/**
 * Lines per wheel step for `fullscreenWheelScrollLines: "auto"`, by the speed of the spin (as pi
 * 1.6 describes it): a lone step moves one line; steps of one gesture (same direction, at most
 * 200 ms apart) move about 100 ms / (average gap) lines, at most 6; steps closer than 5 ms are one
 * notch reported several times (or a high-resolution wheel) and move one line each. Local macOS
 * terminals accelerate the wheel themselves: there every step is one line.
 */
export class WheelSpeed {
  private last = -Infinity;
  private dir = 0;
  private gap: number | undefined;
  private carry = 0;

  constructor(private readonly accelerate = !(process.platform === "darwin" && !process.env.SSH_CONNECTION && !process.env.SSH_TTY)) {}

  lines(dir: 1 | -1, now: number): number {
    if (!this.accelerate) return 1;
    const gap = now - this.last;
    const gesture = dir === this.dir && gap <= 200;
    this.last = now;
    this.dir = dir;
    if (!gesture) {
      this.gap = undefined;
      this.carry = 0;
      return 1;
    }
    if (gap < 5) return 1;
    this.gap = this.gap === undefined ? gap : (this.gap + gap) / 2;
    const exact = Math.min(6, Math.max(1, 100 / this.gap)) + this.carry;
    const n = Math.floor(exact);
    this.carry = exact - n;
    return n;
  }
}

interface Point {
  /** Row counted from the bottom of the conversation (0 = its last row). */
  fromBottom: number;
  col: number;
}

export class ChatViewport {
  /** Rows of the chat viewport drawn in the last frame and the bottom offset of its first row. */
  private shown = { rows: 0, firstFromBottom: 0, width: 0 };
  private selection: { anchor: Point; head: Point; dragged: boolean } | undefined;
  private scrollbarUntil = 0;
  private scrollbarTimer: NodeJS.Timeout | undefined;
  private hintRect: { row: number; col: number; width: number } | undefined;

  constructor(private readonly app: AppView) {}

  private readonly wheelSpeed = new WheelSpeed();

  private get setting(): { scrollbar: string; copyOnSelect: boolean; wheel: number | "auto" } {
    const s = this.app.kernel.settings.get() as { fullscreenScrollbar?: unknown; fullscreenCopyOnSelect?: unknown; fullscreenWheelScrollLines?: unknown };
    const sb = s.fullscreenScrollbar === "always" || s.fullscreenScrollbar === "hidden" ? s.fullscreenScrollbar : "auto";
    const wheel = typeof s.fullscreenWheelScrollLines === "number" && s.fullscreenWheelScrollLines >= 1 ? Math.min(100, Math.floor(s.fullscreenWheelScrollLines)) : "auto";
    return { scrollbar: sb, copyOnSelect: s.fullscreenCopyOnSelect !== false, wheel };
  }

  /** Scroll by rows (positive = up, towards older output) and show the scrollbar for a moment. */
  scrollBy(rows: number): void {
    this.app.chat.scrollBy(rows);
    this.touchScrollbar();
    this.app.requestRender();
  }

  toTop(): void {
    this.app.chat.scroll = Number.MAX_SAFE_INTEGER; // visible() clamps it to the top
    this.touchScrollbar();
    this.app.requestRender();
  }

  toBottom(): void {
    this.app.chat.scroll = 0;
    this.touchScrollbar();
    this.app.requestRender();
  }

  private touchScrollbar(): void {
    this.scrollbarUntil = Date.now() + SCROLLBAR_LINGER_MS;
    if (this.scrollbarTimer) clearTimeout(this.scrollbarTimer);
    this.scrollbarTimer = setTimeout(() => {
      this.scrollbarTimer = undefined;
      this.app.requestRender();
    }, SCROLLBAR_LINGER_MS + 20);
    this.scrollbarTimer.unref?.();
  }

  dispose(): void {
    if (this.scrollbarTimer) clearTimeout(this.scrollbarTimer);
  }

  /** Is the 1-based screen row `y` on the transcript (as last drawn)? */
  inChat(y: number): boolean {
    return y - 1 < this.shown.rows;
  }

  /** A mouse report from the terminal. */
  handleMouse(ev: MouseEvent): void {
    const row = ev.y - 1;
    const col = ev.x - 1;
    const inChat = row < this.shown.rows;
    if (ev.kind === "wheelUp" || ev.kind === "wheelDown") {
      if (!inChat) return;
      const dir = ev.kind === "wheelUp" ? 1 : -1;
      const per = this.setting.wheel;
      const n = (per === "auto" ? this.wheelSpeed.lines(dir, Date.now()) : per) * (ev.alt ? 5 : 1);
      this.scrollBy(dir * n);
      return;
    }
    if (ev.button !== 0) return;
    if (ev.kind === "press") {
      const h = this.hintRect;
      if (h && row === h.row && col >= h.col && col < h.col + h.width) {
        this.toBottom();
        return;
      }
      this.selection = inChat ? { anchor: this.point(row, col), head: this.point(row, col), dragged: false } : undefined;
      this.app.requestRender();
      return;
    }
    const sel = this.selection;
    if (!sel) return;
    if (ev.kind === "drag") {
      // Dragging past the top or bottom edge scrolls.
      if (row < 0) this.app.chat.scrollBy(1);
      else if (row >= this.shown.rows) this.app.chat.scrollBy(-1);
      sel.head = this.point(Math.max(0, Math.min(this.shown.rows - 1, row)), col);
      sel.dragged = true;
      this.app.requestRender();
      return;
    }
    if (ev.kind === "release") {
      if (!sel.dragged) {
        this.selection = undefined;
        this.app.requestRender();
        return;
      }
      sel.head = this.point(Math.max(0, Math.min(this.shown.rows - 1, row)), col);
      if (this.setting.copyOnSelect) this.copySelection();
      this.app.requestRender();
    }
  }

  /** The selected transcript text (plain), or "" without a selection. */
  selectedText(): string {
    const sel = this.selection;
    if (!sel) return "";
    const [a, b] = order(sel.anchor, sel.head);
    const all = this.app.chat.allLines(this.shown.width, this.app.chatContext());
    const out: string[] = [];
    for (let fb = a.fromBottom; fb >= b.fromBottom; fb--) {
      const line = stripAnsi(all[all.length - 1 - fb] ?? "");
      const from = fb === a.fromBottom ? a.col : 0;
      const to = fb === b.fromBottom ? b.col + 1 : Number.MAX_SAFE_INTEGER;
      out.push(sliceColumns(line, from, to).trimEnd());
    }
    return out.join("\n");
  }

  /** Copy the selection to the clipboard with OSC 52 (the terminal forwards it to the system clipboard). */
  copySelection(): boolean {
    const text = this.selectedText();
    if (!text) return false;
    try {
      const prog = (this.app.screen as unknown as { program: { output: { write(s: string): void } } }).program;
      prog.output.write(`\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`);
    } catch {
      return false;
    }
    this.app.flash("Copied the selection to the clipboard", 1500);
    return true;
  }

  /** The chat rows drawn for this frame (fullscreen): selection, scrollbar and the jump hint on top. */
  decorate(lines: string[], width: number, height: number): string[] {
    const chat = this.app.chat;
    this.shown = { rows: height, firstFromBottom: chat.scroll + lines.length - 1, width };
    this.hintRect = undefined;
    let out = lines;
    if (this.selection) out = this.highlight(out);
    const sb = this.setting.scrollbar;
    const showBar = sb === "always" || (sb === "auto" && Date.now() < this.scrollbarUntil);
    if (showBar && height > 0) {
      const total = chat.allLines(width, this.app.chatContext()).length;
      if (total > height || sb === "always") out = this.scrollbar(out, width, height, total);
    }
    if (chat.scroll > 0 && lines.length >= height && height > 1) out = this.jumpHint(out, width, height);
    return out;
  }

  private point(row: number, col: number): Point {
    return { fromBottom: this.shown.firstFromBottom - row, col: Math.max(0, col) };
  }

  private highlight(lines: string[]): string[] {
    const sel = this.selection!;
    const [a, b] = order(sel.anchor, sel.head);
    if (!sel.dragged) return lines;
    return lines.map((line, r) => {
      const fb = this.shown.firstFromBottom - r;
      if (fb > a.fromBottom || fb < b.fromBottom) return line;
      const plain = stripAnsi(line);
      const w = visibleWidth(plain);
      const from = fb === a.fromBottom ? a.col : 0;
      const to = Math.min(w, fb === b.fromBottom ? b.col + 1 : w);
      if (to <= from) return line;
      return sliceColumns(plain, 0, from) + "\x1b[7m" + sliceColumns(plain, from, to) + "\x1b[27m" + sliceColumns(plain, to, Number.MAX_SAFE_INTEGER);
    });
  }

  private scrollbar(lines: string[], width: number, height: number, total: number): string[] {
    const t = this.app.theme;
    const content = Math.max(total, height);
    const thumb = Math.max(1, Math.round((height * height) / content));
    const maxTop = height - thumb;
    const scrollable = Math.max(1, content - height);
    const fromTop = content - height - Math.min(this.app.chat.scroll, scrollable);
    const top = Math.round((fromTop / scrollable) * maxTop);
    const out: string[] = [];
    for (let r = 0; r < height; r++) {
      const line = padToWidth(truncate(lines[r] ?? "", width - 1, ""), width - 1);
      const bar = r >= top && r < top + thumb ? t.fg("muted", "┃") : t.fg("dim", "│");
      out.push(line + bar);
    }
    return out;
  }

  private jumpHint(lines: string[], width: number, height: number): string[] {
    const t = this.app.theme;
    const key = this.app.keys.hint("tui.altScreen.bottom");
    const label = ` ↓ Jump to latest message${key !== "(unbound)" ? ` · ${key}` : ""} `;
    const text = truncate(label, width, "");
    const w = visibleWidth(text);
    const col = Math.max(0, Math.floor((width - w) / 2));
    const row = height - 1;
    const base = stripAnsi(lines[row] ?? "");
    const out = [...lines];
    out[row] = sliceColumns(base, 0, col).padEnd(col) + t.bg("selectedBg", t.fg("text", text)) + sliceColumns(base, col + w, width);
    this.hintRect = { row, col, width: w };
    return out;
  }
}

function order(a: Point, b: Point): [Point, Point] {
  if (a.fromBottom > b.fromBottom || (a.fromBottom === b.fromBottom && a.col <= b.col)) return [a, b];
  return [b, a];
}

/** Columns [from, to) of a plain line (wide characters count two). */
function sliceColumns(plain: string, from: number, to: number): string {
  let col = 0;
  let out = "";
  for (const ch of codePoints(plain)) {
    const w = charWidth(ch.codePointAt(0)!);
    if (col >= from && col + w <= to) out += ch;
    col += w;
    if (col >= to) break;
  }
  return out;
}
