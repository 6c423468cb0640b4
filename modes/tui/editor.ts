/**
 * The input editor: a multi-line text buffer with a cursor, history (Up on the first line,
 * Down on the last), word and line movement and deletion, a kill ring (Ctrl+Y), undo, and
 * paste markers for large pastes (`[paste #1 +24 lines]`, expanded on submit).
 *
 * It knows nothing of blessed: `handleKey` takes normalised key presses and `render` returns
 * lines with the cursor drawn as an inverse cell.
 */
import type { KeyPress, Keybindings } from "./keys.js";
import { charWidth, CURSOR_MARK } from "./text.js";

export interface EditorRender {
  lines: string[];
  /** Row of the cursor within `lines`. */
  cursorRow: number;
}

const PASTE_LINES = 10;
const PASTE_CHARS = 1000;

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}_]/u.test(c);
}

export class Editor {
  text = "";
  cursor = 0;
  private history: string[] = [];
  private historyIndex = -1;
  private draft = "";
  private undoStack: Array<{ text: string; cursor: number }> = [];
  private killRing: string[] = [];
  /** Where the last yank put its text, while the next key may replace it (Alt+Y). */
  private yanked: { from: number; to: number } | undefined;
  /** Ctrl+] (forward) or Ctrl+Alt+] (backward) was pressed: the next character is where to go. */
  private jump: "forward" | "backward" | undefined;
  private pastes = new Map<number, string>();
  private pasteCounter = 0;
  /** First visible wrapped row (scrolling inside the editor). */
  private scrollTop = 0;
  onChange?: () => void;

  constructor(private keys: Keybindings) {}

  setKeybindings(keys: Keybindings): void {
    this.keys = keys;
  }

  // ---- text ------------------------------------------------------------------------------------

  setText(text: string): void {
    this.pushUndo();
    this.text = text;
    this.cursor = text.length;
    this.historyIndex = -1;
    this.changed();
  }

  getText(): string {
    return this.text;
  }

  /** The text with paste markers replaced by what was pasted. */
  getExpandedText(): string {
    if (!this.pastes.size) return this.text;
    return this.text.replace(/\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]/g, (m, id: string) => this.pastes.get(Number(id)) ?? m);
  }

  clear(): void {
    this.text = "";
    this.cursor = 0;
    this.pastes.clear();
    this.historyIndex = -1;
    this.scrollTop = 0;
    this.changed();
  }

  insert(s: string): void {
    if (!s) return;
    this.pushUndo();
    this.text = this.text.slice(0, this.cursor) + s + this.text.slice(this.cursor);
    this.cursor += s.length;
    this.changed();
  }

  /** Insert pasted text; a large paste becomes a marker that expands on submit. */
  paste(s: string): void {
    const text = s.replace(/\r\n?/g, "\n").replace(/\t/g, "    ");
    const lines = text.split("\n").length;
    if (lines > PASTE_LINES || text.length > PASTE_CHARS) {
      const id = ++this.pasteCounter;
      this.pastes.set(id, text);
      this.insert(lines > 1 ? `[paste #${id} +${lines} lines]` : `[paste #${id} ${text.length} chars]`);
    } else this.insert(text);
  }

  addToHistory(text: string): void {
    const t = text.trim();
    if (!t) return;
    if (this.history[this.history.length - 1] !== t) this.history.push(t);
    if (this.history.length > 500) this.history.shift();
    this.historyIndex = -1;
  }

  setHistory(entries: string[]): void {
    this.history = entries.filter((e) => e.trim()).slice(-500);
    this.historyIndex = -1;
  }

  private changed(): void {
    this.onChange?.();
  }

  private pushUndo(): void {
    const last = this.undoStack[this.undoStack.length - 1];
    if (last && last.text === this.text) return;
    this.undoStack.push({ text: this.text, cursor: this.cursor });
    if (this.undoStack.length > 200) this.undoStack.shift();
  }

  private kill(from: number, to: number): void {
    if (to <= from) return;
    this.pushUndo();
    this.killRing.push(this.text.slice(from, to));
    if (this.killRing.length > 30) this.killRing.shift();
    this.text = this.text.slice(0, from) + this.text.slice(to);
    this.cursor = from;
    this.changed();
  }

  // ---- positions --------------------------------------------------------------------------------

  private prevIndex(i: number): number {
    if (i <= 0) return 0;
    const c = this.text.charCodeAt(i - 1);
    return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? i - 2 : i - 1;
  }
  private nextIndex(i: number): number {
    if (i >= this.text.length) return this.text.length;
    const c = this.text.charCodeAt(i);
    return c >= 0xd800 && c <= 0xdbff ? i + 2 : i + 1;
  }
  private lineStart(i = this.cursor): number {
    return this.text.lastIndexOf("\n", i - 1) + 1;
  }
  private lineEnd(i = this.cursor): number {
    const e = this.text.indexOf("\n", i);
    return e === -1 ? this.text.length : e;
  }
  get isOnFirstLine(): boolean {
    return this.lineStart() === 0;
  }
  get isOnLastLine(): boolean {
    return this.lineEnd() === this.text.length;
  }

  private wordLeft(): number {
    let i = this.cursor;
    while (i > 0 && !isWordChar(this.text[i - 1])) i = this.prevIndex(i);
    while (i > 0 && isWordChar(this.text[i - 1])) i = this.prevIndex(i);
    return i;
  }
  private wordRight(): number {
    let i = this.cursor;
    const n = this.text.length;
    while (i < n && !isWordChar(this.text[i])) i = this.nextIndex(i);
    while (i < n && isWordChar(this.text[i])) i = this.nextIndex(i);
    return i;
  }

  private moveVertical(dir: -1 | 1): void {
    const start = this.lineStart();
    const col = Array.from(this.text.slice(start, this.cursor)).length;
    const targetStart = dir < 0 ? this.lineStart(start - 1) : this.lineEnd() + 1;
    const targetEnd = this.lineEnd(targetStart);
    const chars = Array.from(this.text.slice(targetStart, targetEnd));
    this.cursor = targetStart + chars.slice(0, col).join("").length;
  }

  private historyMove(dir: -1 | 1): boolean {
    if (!this.history.length) return false;
    if (dir < 0) {
      if (this.historyIndex === -1) {
        this.draft = this.text;
        this.historyIndex = this.history.length - 1;
      } else if (this.historyIndex > 0) this.historyIndex--;
      else return true;
    } else {
      if (this.historyIndex === -1) return false;
      if (this.historyIndex < this.history.length - 1) this.historyIndex++;
      else {
        this.historyIndex = -1;
        this.text = this.draft;
        this.cursor = this.text.length;
        this.changed();
        return true;
      }
    }
    this.text = this.history[this.historyIndex]!;
    this.cursor = this.text.length;
    this.changed();
    return true;
  }

  // ---- keys -------------------------------------------------------------------------------------

  /**
   * Enter right after a backslash: the backslash becomes a new line (for terminals that cannot
   * send Shift+Enter, as pi 1.6). Returns false when the character before the cursor is not `\`.
   */
  backslashNewLine(): boolean {
    if (this.cursor === 0 || this.text[this.cursor - 1] !== "\\") return false;
    this.pushUndo();
    this.text = this.text.slice(0, this.cursor - 1) + "\n" + this.text.slice(this.cursor);
    this.changed();
    return true;
  }

  /** Apply an editing key; returns false when the key is not an editing key. */
  handleKey(k: KeyPress): boolean {
    const kb = this.keys;
    const m = (id: string) => kb.matches(k, id);
    const yanked = this.yanked;
    this.yanked = undefined;
    if (this.jump) {
      const dir = this.jump;
      this.jump = undefined;
      if (m("tui.editor.jumpForward") || m("tui.editor.jumpBackward")) return true; // pressed again: cancelled
      if (k.text) {
        const at = dir === "forward" ? this.text.indexOf(k.text, this.cursor + 1) : this.cursor > 0 ? this.text.lastIndexOf(k.text, this.cursor - 1) : -1;
        if (at >= 0) this.cursor = at;
        this.changed();
        return true;
      }
      // Another key: the jump is off and the key does what it does.
    }
    if (m("tui.editor.jumpForward") || m("tui.editor.jumpBackward")) {
      this.jump = m("tui.editor.jumpForward") ? "forward" : "backward";
      return true;
    }
    if (m("tui.editor.yankPop")) {
      // Right after a yank: the yanked text becomes the kill before it (the ring turns).
      if (yanked && this.killRing.length > 1 && this.text.slice(yanked.from, yanked.to) === this.killRing.at(-1)) {
        this.pushUndo();
        this.killRing.unshift(this.killRing.pop()!);
        const next = this.killRing.at(-1)!;
        this.text = this.text.slice(0, yanked.from) + next + this.text.slice(yanked.to);
        this.cursor = yanked.from + next.length;
        this.yanked = { from: yanked.from, to: this.cursor };
        this.changed();
      }
      return true;
    }
    if (m("tui.editor.historyPrevious") || m("tui.editor.historyNext")) {
      this.historyMove(m("tui.editor.historyPrevious") ? -1 : 1);
      this.changed();
      return true;
    }
    if (m("tui.input.newLine")) {
      this.insert("\n");
      return true;
    }
    if (m("tui.editor.cursorLeft")) {
      this.cursor = this.prevIndex(this.cursor);
    } else if (m("tui.editor.cursorRight")) {
      this.cursor = this.nextIndex(this.cursor);
    } else if (m("tui.editor.cursorUp")) {
      if (this.isOnFirstLine) {
        if (!this.historyMove(-1)) this.cursor = 0;
      } else this.moveVertical(-1);
    } else if (m("tui.editor.cursorDown")) {
      if (this.isOnLastLine) {
        if (!this.historyMove(1)) this.cursor = this.text.length;
      } else this.moveVertical(1);
    } else if (m("tui.editor.cursorWordLeft")) {
      this.cursor = this.wordLeft();
    } else if (m("tui.editor.cursorWordRight")) {
      this.cursor = this.wordRight();
    } else if (m("tui.editor.cursorLineStart")) {
      this.cursor = this.lineStart();
    } else if (m("tui.editor.cursorLineEnd")) {
      this.cursor = this.lineEnd();
    } else if (m("tui.editor.deleteCharBackward")) {
      if (this.cursor > 0) {
        this.pushUndo();
        const p = this.prevIndex(this.cursor);
        this.text = this.text.slice(0, p) + this.text.slice(this.cursor);
        this.cursor = p;
        this.changed();
      }
    } else if (m("tui.editor.deleteCharForward")) {
      if (this.cursor < this.text.length) {
        this.pushUndo();
        this.text = this.text.slice(0, this.cursor) + this.text.slice(this.nextIndex(this.cursor));
        this.changed();
      }
    } else if (m("tui.editor.deleteWordBackward")) {
      this.kill(this.wordLeft(), this.cursor);
    } else if (m("tui.editor.deleteWordForward")) {
      this.kill(this.cursor, this.wordRight());
    } else if (m("tui.editor.deleteToLineStart")) {
      const s = this.lineStart();
      this.kill(s === this.cursor && s > 0 ? s - 1 : s, this.cursor);
    } else if (m("tui.editor.deleteToLineEnd")) {
      const e = this.lineEnd();
      this.kill(this.cursor, e === this.cursor && e < this.text.length ? e + 1 : e);
    } else if (m("tui.editor.yank")) {
      const last = this.killRing[this.killRing.length - 1];
      if (last) {
        const from = this.cursor;
        this.insert(last);
        this.yanked = { from, to: this.cursor };
      }
    } else if (m("tui.editor.undo")) {
      const prev = this.undoStack.pop();
      if (prev) {
        this.text = prev.text;
        this.cursor = Math.min(prev.cursor, prev.text.length);
        this.changed();
      }
    } else if (k.text !== undefined && k.text !== "") {
      this.insert(k.text);
    } else return false;
    this.changed();
    return true;
  }

  // ---- rendering --------------------------------------------------------------------------------

  /**
   * Lines of the buffer wrapped to `width` (character wrap), at most `maxRows` of them around the
   * cursor. The cursor cell is drawn inverse when `showCursor`.
   */
  render(width: number, maxRows: number, showCursor: boolean, placeholder?: string): EditorRender {
    width = Math.max(2, width);
    const rows: string[] = [];
    let cursorRow = 0;
    const logical = this.text.split("\n");
    let offset = 0;
    for (const line of logical) {
      const chars = Array.from(line);
      let row = "";
      let w = 0;
      let idx = offset;
      const flushRow = () => {
        rows.push(row);
        row = "";
        w = 0;
      };
      if (chars.length === 0) {
        if (showCursor && this.cursor === offset) {
          cursorRow = rows.length;
          row = CURSOR_MARK + "\x1b[7m \x1b[27m";
        }
        flushRow();
      } else {
        for (const c of chars) {
          const cw = charWidth(c.codePointAt(0)!);
          if (w + cw > width - 1 && w > 0) flushRow();
          if (showCursor && idx === this.cursor) {
            cursorRow = rows.length;
            row += `${CURSOR_MARK}\x1b[7m${c}\x1b[27m`;
          } else row += c;
          w += cw;
          idx += c.length;
        }
        if (showCursor && this.cursor === offset + line.length) {
          cursorRow = rows.length;
          row += CURSOR_MARK + "\x1b[7m \x1b[27m";
        }
        flushRow();
      }
      offset += line.length + 1;
    }
    if (!this.text && placeholder) {
      rows[0] = (showCursor ? CURSOR_MARK + "\x1b[7m \x1b[27m" : "") + `\x1b[38;5;242m${placeholder}\x1b[39m`;
    }
    // Keep the cursor row inside the visible window.
    const max = Math.max(1, maxRows);
    if (cursorRow < this.scrollTop) this.scrollTop = cursorRow;
    if (cursorRow >= this.scrollTop + max) this.scrollTop = cursorRow - max + 1;
    if (this.scrollTop > Math.max(0, rows.length - max)) this.scrollTop = Math.max(0, rows.length - max);
    return { lines: rows.slice(this.scrollTop, this.scrollTop + max), cursorRow: cursorRow - this.scrollTop };
  }
}
