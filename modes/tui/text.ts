/**
 * Terminal text helpers for the TUI: display width (CJK, emoji), sanitising untrusted text for
 * blessed (SGR colour codes only), word wrapping and truncation that keep SGR state per line.
 *
 * The width table is the East Asian Wide/Fullwidth set of Unicode (the same data string-width
 * uses); blessed's own width function is patched to use `charWidth` (blessed-setup.ts), so the
 * line model and the screen never disagree about where a character ends. Also: a path with the
 * home folder written as `~`.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";

// East Asian Width W/F ranges (Unicode 16), as [first, last] pairs.
// prettier-ignore
const WIDE: readonly number[] = [
  0x1100,0x115f,0x231a,0x231b,0x2329,0x232a,0x23e9,0x23ec,0x23f0,0x23f0,0x23f3,0x23f3,0x25fd,0x25fe,0x2614,0x2615,
  0x2630,0x2637,0x2648,0x2653,0x267f,0x267f,0x268a,0x268f,0x2693,0x2693,0x26a1,0x26a1,0x26aa,0x26ab,0x26bd,0x26be,
  0x26c4,0x26c5,0x26ce,0x26ce,0x26d4,0x26d4,0x26ea,0x26ea,0x26f2,0x26f3,0x26f5,0x26f5,0x26fa,0x26fa,0x26fd,0x26fd,
  0x2705,0x2705,0x270a,0x270b,0x2728,0x2728,0x274c,0x274c,0x274e,0x274e,0x2753,0x2755,0x2757,0x2757,0x2795,0x2797,
  0x27b0,0x27b0,0x27bf,0x27bf,0x2b1b,0x2b1c,0x2b50,0x2b50,0x2b55,0x2b55,0x2e80,0x2e99,0x2e9b,0x2ef3,0x2f00,0x2fd5,
  0x2ff0,0x303e,0x3041,0x3096,0x3099,0x30ff,0x3105,0x312f,0x3131,0x318e,0x3190,0x31e5,0x31ef,0x321e,0x3220,0x3247,
  0x3250,0xa48c,0xa490,0xa4c6,0xa960,0xa97c,0xac00,0xd7a3,0xf900,0xfaff,0xfe10,0xfe19,0xfe30,0xfe52,0xfe54,0xfe66,
  0xfe68,0xfe6b,0xff01,0xff60,0xffe0,0xffe6,0x16fe0,0x16fe4,0x16ff0,0x16ff6,0x17000,0x18cda,0x18cff,0x18d20,0x18d80,0x18df2,
  0x18e00,0x19191,0x191a0,0x191d2,0x1aff0,0x1aff3,0x1aff5,0x1affb,0x1affd,0x1affe,0x1b000,0x1b128,0x1b132,0x1b132,0x1b150,0x1b152,
  0x1b155,0x1b155,0x1b164,0x1b168,0x1b170,0x1b2fb,0x1d300,0x1d356,0x1d360,0x1d376,0x1f004,0x1f004,0x1f0cf,0x1f0cf,0x1f18e,0x1f18e,
  0x1f191,0x1f19a,0x1f1ae,0x1f1ae,0x1f200,0x1f202,0x1f210,0x1f23b,0x1f240,0x1f248,0x1f250,0x1f251,0x1f260,0x1f265,0x1f300,0x1f320,
  0x1f32d,0x1f335,0x1f337,0x1f37c,0x1f37e,0x1f393,0x1f3a0,0x1f3ca,0x1f3cf,0x1f3d3,0x1f3e0,0x1f3f0,0x1f3f4,0x1f3f4,0x1f3f8,0x1f43e,
  0x1f440,0x1f440,0x1f442,0x1f4fc,0x1f4ff,0x1f53d,0x1f54b,0x1f54e,0x1f550,0x1f567,0x1f57a,0x1f57a,0x1f595,0x1f596,0x1f5a4,0x1f5a4,
  0x1f5fb,0x1f64f,0x1f680,0x1f6c5,0x1f6cc,0x1f6cc,0x1f6d0,0x1f6d2,0x1f6d5,0x1f6d9,0x1f6dc,0x1f6df,0x1f6eb,0x1f6ec,0x1f6f4,0x1f6fc,
  0x1f7da,0x1f7da,0x1f7e0,0x1f7eb,0x1f7f0,0x1f7f0,0x1f90c,0x1f93a,0x1f93c,0x1f945,0x1f947,0x1f9ff,0x1fa70,0x1fa7c,0x1fa80,0x1fac6,
  0x1fac8,0x1fac8,0x1facc,0x1fadd,0x1fadf,0x1faeb,0x1faef,0x1fafa,0x20000,0x2fffd,0x30000,0x3fffd,
];

function isWide(cp: number): boolean {
  if (cp < 0x1100) return false;
  let lo = 0;
  let hi = WIDE.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < WIDE[mid * 2]!) hi = mid - 1;
    else if (cp > WIDE[mid * 2 + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;

/** Columns a code point takes: 0 (controls, combining marks, format chars), 1 or 2. */
export function charWidth(cp: number): 0 | 1 | 2 {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x300) return 1;
  if (isWide(cp)) {
    // A few wide code points are combining marks (U+3099..309A): they attach to the previous cell.
    return cp === 0x3099 || cp === 0x309a ? 0 : 2;
  }
  if (cp >= 0x300 && ZERO_WIDTH.test(String.fromCodePoint(cp))) return 0;
  return 1;
}

/** Whether a code point is drawn two columns wide (used by the blessed patch). */
export function isWideCodePoint(cp: number): boolean {
  return charWidth(cp) === 2;
}

/**
 * Where a focused input draws its cursor (our editor; pi-tui's CURSOR_MARKER is turned into it):
 * shaped as an SGR sequence so width measuring and cutting keep it as zero-width; the renderer
 * takes it out and moves the terminal's cursor there.
 */
export const CURSOR_MARK = "\x1b[9999m";

// SGR: ESC [ digits/semicolons m. Other escapes are dropped by sanitize().
const SGR_RE = /\x1b\[[0-9;]*m/g;
const ANSI_RE = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;

export function stripAnsi(s: string): string {
  return s.includes("\x1b") ? s.replace(ANSI_RE, "") : s;
}

/** Display width of a string (escape sequences count 0). */
export function visibleWidth(s: string): number {
  let w = 0;
  const plain = stripAnsi(s);
  for (let i = 0; i < plain.length; i++) {
    const c = plain.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) {
      w++;
      continue;
    }
    const cp = plain.codePointAt(i)!;
    if (cp > 0xffff) i++;
    w += charWidth(cp);
  }
  return w;
}

/**
 * Make text safe for blessed: keep SGR colour codes; drop OSC (links, titles), other CSI and
 * escape sequences, control characters (tabs become spaces), zero-width joiners, emoji variation
 * selectors and skin-tone modifiers (terminals disagree on their width). `keepNewlines` keeps \n.
 */
export function sanitize(s: string, keepNewlines = true): string {
  let out = s;
  if (out.includes("\x1b")) {
    out = out
      .replace(/\x1b[_\]P^X][^\x07\x1b]*(?:\x07|\x1b\\)/g, "")
      .replace(/\x1b\[[0-9;]*m|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]?/g, (m) => (/^\x1b\[[0-9;]*m$/.test(m) ? m : ""));
  }
  if (out.includes("\t")) out = out.replace(/\t/g, "    ");
  if (out.includes("\r")) out = out.replace(/\r\n?/g, "\n");
  // eslint-disable-next-line no-control-regex
  out = out.replace(keepNewlines ? /[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]/g : /[\x00-\x1a\x1c-\x1f\x7f]/g, "");
  // C1 controls (U+0080–U+009F): a terminal may read U+009B as CSI, U+009D as OSC.
  if (/[\x80-\x9f]/.test(out)) out = out.replace(/[\x80-\x9f]/g, "");
  if (/[\u200d\ufe0f\ufe0e]|\ud83c[\udffb-\udfff]/.test(out)) out = out.replace(/[\u200d\ufe0f\ufe0e]|\ud83c[\udffb-\udfff]/g, "");
  if (/[^\x00-\x7f]/.test(out)) out = out.normalize("NFC");
  return out;
}

// ---- SGR state ------------------------------------------------------------------------------

/** Tracks the SGR attributes in effect, so a wrapped line can close and re-open them. */
export class SgrState {
  fg: string | undefined;
  bg: string | undefined;
  bold = false;
  underline = false;
  inverse = false;
  strike = false;

  get active(): boolean {
    return this.fg !== undefined || this.bg !== undefined || this.bold || this.underline || this.inverse || this.strike;
  }

  apply(seq: string): void {
    const body = seq.slice(2, -1);
    const p = body === "" ? [0] : body.split(";").map((x) => (x === "" ? 0 : Number(x)));
    for (let i = 0; i < p.length; i++) {
      const n = p[i]!;
      if (n === 0) this.reset();
      else if (n === 1) this.bold = true;
      else if (n === 22) this.bold = false;
      else if (n === 4) this.underline = true;
      else if (n === 24) this.underline = false;
      else if (n === 7) this.inverse = true;
      else if (n === 27) this.inverse = false;
      else if (n === 9) this.strike = true;
      else if (n === 29) this.strike = false;
      else if ((n >= 30 && n <= 37) || (n >= 90 && n <= 97)) this.fg = String(n);
      else if (n === 39) this.fg = undefined;
      else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) this.bg = String(n);
      else if (n === 49) this.bg = undefined;
      else if (n === 38 || n === 48) {
        let val: string;
        if (p[i + 1] === 5) {
          val = `${n};5;${p[i + 2] ?? 0}`;
          i += 2;
        } else if (p[i + 1] === 2) {
          val = `${n};2;${p[i + 2] ?? 0};${p[i + 3] ?? 0};${p[i + 4] ?? 0}`;
          i += 4;
        } else continue;
        if (n === 38) this.fg = val;
        else this.bg = val;
      }
    }
  }

  reset(): void {
    this.fg = this.bg = undefined;
    this.bold = this.underline = this.inverse = this.strike = false;
  }

  /** The SGR sequence that re-establishes this state from a reset. */
  open(): string {
    if (!this.active) return "";
    const p: string[] = [];
    if (this.bold) p.push("1");
    if (this.underline) p.push("4");
    if (this.inverse) p.push("7");
    if (this.strike) p.push("9");
    if (this.fg) p.push(this.fg);
    if (this.bg) p.push(this.bg);
    return `\x1b[${p.join(";")}m`;
  }
}

const TOKEN_RE = /\x1b\[[0-9;]*m|[\s\S]/gu;

/**
 * Word-wrap one line (no \n) to `width` columns. SGR state is closed at the end of each output
 * line and re-opened at the start of the next; words longer than the width are broken.
 */
export function wrapLine(line: string, width: number): string[] {
  width = Math.max(1, Math.floor(width));
  // Fast path: plain ASCII that fits.
  if (line.length <= width && !/[^\x20-\x7e]/.test(line)) return [line];
  if (visibleWidth(line) <= width) return [line.includes("\x1b") ? closeLine(line) : line];

  const out: string[] = [];
  const state = new SgrState();
  let cur = "";
  let curW = 0;
  let word = "";
  let wordW = 0;
  // SGR state at the start of the pending word, for a break before it.
  const pushLine = () => {
    let l = cur.replace(/ +((?:\x1b\[[0-9;]*m)*)$/, "$1");
    if (state.active) l += "\x1b[0m";
    out.push(l);
    cur = state.open();
    curW = 0;
  };
  const appendWord = () => {
    if (!word) return;
    if (curW + wordW > width && curW > 0) pushLine();
    if (wordW > width) {
      // Break the long word at the width.
      TOKEN_RE.lastIndex = 0;
      for (const m of word.matchAll(TOKEN_RE)) {
        const t = m[0];
        if (t.charCodeAt(0) === 0x1b && t.length > 1) {
          state.apply(t);
          cur += t;
          continue;
        }
        const w = charWidth(t.codePointAt(0)!);
        if (curW + w > width && curW > 0) pushLine();
        cur += t;
        curW += w;
      }
    } else {
      for (const m of word.matchAll(SGR_RE)) state.apply(m[0]);
      cur += word;
      curW += wordW;
    }
    word = "";
    wordW = 0;
  };

  for (const m of line.matchAll(TOKEN_RE)) {
    const t = m[0];
    if (t.charCodeAt(0) === 0x1b && t.length > 1) {
      word += t;
      continue;
    }
    if (t === " ") {
      appendWord();
      if (curW === 0 && out.length > 0) continue; // no leading space on a continuation line
      if (curW + 1 > width) {
        pushLine();
        continue;
      }
      cur += " ";
      curW += 1;
      continue;
    }
    word += t;
    wordW += charWidth(t.codePointAt(0)!);
  }
  appendWord();
  if (cur !== state.open() || out.length === 0) {
    if (state.active) cur += "\x1b[0m";
    out.push(cur);
  }
  return out;
}

function closeLine(line: string): string {
  const st = new SgrState();
  for (const m of line.matchAll(SGR_RE)) st.apply(m[0]);
  return st.active ? line + "\x1b[0m" : line;
}

/** Wrap multi-line text: each \n starts a new line, each line is word-wrapped. */
export function wrapText(text: string, width: number): string[] {
  const out: string[] = [];
  const state = new SgrState();
  for (const raw of text.split("\n")) {
    // Carry SGR state over explicit newlines too, so each output line stands alone.
    const line = state.open() + raw;
    for (const m of raw.matchAll(SGR_RE)) state.apply(m[0]);
    for (const l of wrapLine(line, width)) out.push(l);
  }
  return out;
}

/** Cut a line to at most `width` columns, adding `ellipsis` when something was cut. */
export function truncate(line: string, width: number, ellipsis = "…"): string {
  if (width <= 0) return "";
  if (line.length <= width && !/[^\x20-\x7e]/.test(line)) return line;
  if (visibleWidth(line) <= width) return line;
  const ellW = visibleWidth(ellipsis);
  const limit = Math.max(0, width - ellW);
  const state = new SgrState();
  let out = "";
  let w = 0;
  for (const m of line.matchAll(TOKEN_RE)) {
    const t = m[0];
    if (t.charCodeAt(0) === 0x1b && t.length > 1) {
      state.apply(t);
      out += t;
      continue;
    }
    const cw = charWidth(t.codePointAt(0)!);
    if (w + cw > limit) break;
    out += t;
    w += cw;
  }
  out += ellW <= width ? ellipsis : "";
  return state.active ? out + "\x1b[0m" : out;
}

/** Pad with spaces to exactly `width` columns (truncating when longer). */
export function padToWidth(line: string, width: number): string {
  const w = visibleWidth(line);
  if (w > width) return truncate(line, width, "");
  return line + " ".repeat(width - w);
}

/** Make a component's line safe and no wider than `width`. */
export function fitLine(line: string, width: number): string {
  const s = sanitize(String(line ?? ""), false);
  return visibleWidth(s) > width ? truncate(s, width, "") : s;
}

/** Split text into code points (surrogate pairs stay together). */
export function codePoints(s: string): string[] {
  return Array.from(s);
}

/** A path with the home folder written as `~` (one outside it as it is). */
export function homePath(p: string, home: string | undefined = process.env.HOME || process.env.USERPROFILE): string {
  if (!home || !isAbsolute(p)) return p;
  const rel = relative(resolve(home), resolve(p));
  if (rel === "") return "~";
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? p : `~${sep}${rel}`;
}
