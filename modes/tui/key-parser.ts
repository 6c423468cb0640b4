/**
 * Terminal input bytes → key presses and mouse events. The TUI reads the keyboard itself rather
 * than through blessed, so every encoding a terminal may use arrives as the same key id:
 *
 * - legacy bytes and escape sequences (`\r`, `\x01`, `ESC x` for Alt, `CSI 1;5H` for Ctrl+Home,
 *   `CSI 5~`, SS3 arrows);
 * - the kitty keyboard protocol's CSI-u form `CSI code[:shifted[:base]] ; mods[:event] u`
 *   (key releases are dropped, repeats are presses);
 * - xterm's modifyOtherKeys form `CSI 27 ; mods ; code ~` (what tmux 3.2–3.4 forwards);
 * - SGR mouse reports `CSI < button ; x ; y M|m`.
 *
 * Key ids are canonical key strings: modifiers in the order ctrl, alt, shift, super, then the key
 * ("ctrl+shift+f", "alt+enter", "pageUp"), as keybindings.json writes them.
 */

/** A normalised key press. */
export interface KeyPress {
  /** Canonical key string: modifiers in the order ctrl, alt, shift, super, then the key ("ctrl+a", "enter", "/"). */
  id: string;
  /** The printable text of the key, when it inserts text. */
  text?: string;
  /** Raw bytes the terminal sent (for custom components' handleInput). */
  sequence: string;
}

/** An SGR mouse report, 1-based cell coordinates as the terminal sends them. */
export interface MouseEvent {
  kind: "press" | "release" | "drag" | "move" | "wheelUp" | "wheelDown";
  /** 0 left, 1 middle, 2 right (presses, releases and drags). */
  button: number;
  x: number;
  y: number;
  shift: boolean;
  alt: boolean;
  ctrl: boolean;
  sequence: string;
}

const ESC = "\x1b";

/**
 * Split a chunk of terminal input into single keys and sequences. A lone ESC at the end stays a
 * token of its own (the caller decides whether it is Escape or the start of Alt+key).
 */
export function splitInput(data: string): string[] {
  const out: string[] = [];
  let i = 0;
  const n = data.length;
  while (i < n) {
    const c = data[i]!;
    if (c !== ESC) {
      const cp = data.codePointAt(i)!;
      const len = cp > 0xffff ? 2 : 1;
      out.push(data.slice(i, i + len));
      i += len;
      continue;
    }
    const next = data[i + 1];
    if (next === undefined) {
      out.push(ESC);
      i++;
    } else if (next === "[") {
      // CSI: parameters 0x30–0x3f, intermediates 0x20–0x2f, one final byte 0x40–0x7e.
      let j = i + 2;
      while (j < n && data.charCodeAt(j) >= 0x30 && data.charCodeAt(j) <= 0x3f) j++;
      while (j < n && data.charCodeAt(j) >= 0x20 && data.charCodeAt(j) <= 0x2f) j++;
      if (j < n && data.charCodeAt(j) >= 0x40 && data.charCodeAt(j) <= 0x7e) j++;
      out.push(data.slice(i, j));
      i = j;
    } else if (next === "O" && i + 2 < n) {
      out.push(data.slice(i, i + 3));
      i += 3;
    } else if (next === "]" || next === "P" || next === "_") {
      // OSC / DCS / APC string: up to BEL or ST.
      let j = i + 2;
      while (j < n && data[j] !== "\x07" && !(data[j] === ESC && data[j + 1] === "\\")) j++;
      j = j < n ? (data[j] === "\x07" ? j + 1 : j + 2) : n;
      out.push(data.slice(i, j));
      i = j;
    } else if (next === ESC) {
      // ESC ESC: Alt+Escape, or Alt before a sequence; keep the first ESC alone.
      out.push(ESC);
      i++;
    } else {
      const cp = data.codePointAt(i + 1)!;
      const len = cp > 0xffff ? 2 : 1;
      out.push(data.slice(i, i + 1 + len));
      i += 1 + len;
    }
  }
  return out;
}

const MODS = (bits: number) => ({ shift: !!(bits & 1), alt: !!(bits & 2), ctrl: !!(bits & 4), super: !!(bits & 8) });

function keyId(key: string, m: { ctrl?: boolean; alt?: boolean; shift?: boolean; super?: boolean }): string {
  return [m.ctrl && "ctrl", m.alt && "alt", m.shift && "shift", m.super && "super", key].filter(Boolean).join("+");
}

/** Key names of `CSI n ~` sequences. */
const TILDE: Record<number, string> = {
  1: "home", 2: "insert", 3: "delete", 4: "end", 5: "pageUp", 6: "pageDown", 7: "home", 8: "end",
  11: "f1", 12: "f2", 13: "f3", 14: "f4", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9", 21: "f10", 23: "f11", 24: "f12",
};
/** Key names of `CSI [1;m] X` and `SS3 X` final bytes. */
const LETTER: Record<string, string> = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end", E: "clear", P: "f1", Q: "f2", R: "f3", S: "f4" };

/** A key given as a Unicode code point (CSI-u, modifyOtherKeys) with modifier bits. */
function fromCodePoint(code: number, bits: number, sequence: string, shiftedCode?: number): KeyPress | undefined {
  const m = MODS(bits);
  let key: string;
  if (code === 13 || code === 57414) key = "enter";
  else if (code === 9) key = "tab";
  else if (code === 27) key = "escape";
  else if (code === 127 || code === 8) key = "backspace";
  else if (code === 32) key = "space";
  else if (code >= 57399 && code <= 57408) key = String(code - 57399); // keypad digits
  else if (code >= 33 && code !== 127 && code < 57344) key = String.fromCodePoint(code).toLowerCase();
  else return undefined;
  const printable = key.length === 1 || key === "space";
  let text: string | undefined;
  if (printable && !m.ctrl && !m.alt && !m.super) {
    const ch = key === "space" ? " " : String.fromCodePoint(code);
    text = m.shift ? (shiftedCode ? String.fromCodePoint(shiftedCode) : ch.toUpperCase()) : ch;
  }
  // Shift stays on letters and named keys ("shift+a", "shift+enter"); a shifted symbol is itself ("?").
  const keepShift = m.shift && (/^[a-z]$/.test(key) || key.length > 1);
  if (m.shift && !keepShift && shiftedCode && !m.ctrl && !m.alt) key = String.fromCodePoint(shiftedCode);
  return { id: keyId(key, { ...m, shift: keepShift }), text, sequence };
}

/** One token of splitInput() → a key press; undefined for what is not a key (replies, focus, releases, mouse). */
export function parseKey(seq: string): KeyPress | undefined {
  if (!seq) return undefined;
  if (seq.length === 1 || (seq.length === 2 && seq.codePointAt(0)! > 0xffff)) return single(seq, seq);
  if (seq[0] !== ESC) return undefined;
  if (seq[1] === "[") return csi(seq);
  if (seq[1] === "O" && seq.length === 3) {
    const k = LETTER[seq[2]!];
    return k ? { id: k, sequence: seq } : undefined;
  }
  if (seq[1] === "]" || seq[1] === "P" || seq[1] === "_") return undefined;
  // ESC + one key: Alt.
  const inner = single(seq.slice(1), seq);
  if (!inner) return undefined;
  return { id: inner.id.startsWith("alt+") || inner.id.includes("+alt+") ? inner.id : addAlt(inner.id), sequence: seq };
}

function addAlt(id: string): string {
  const parts = id.split("+");
  const key = id.endsWith("++") ? "+" : parts.pop()!;
  const mods = new Set(parts.filter((p) => p));
  mods.add("alt");
  return keyId(key, { ctrl: mods.has("ctrl"), alt: true, shift: mods.has("shift"), super: mods.has("super") });
}

function single(ch: string, sequence: string): KeyPress | undefined {
  const c = ch.charCodeAt(0);
  if (ch === "\r") return { id: "enter", sequence };
  if (ch === "\n") return { id: "ctrl+j", sequence };
  if (ch === "\t") return { id: "tab", sequence };
  if (ch === "\x7f" || ch === "\b") return { id: "backspace", sequence };
  if (ch === ESC) return { id: "escape", sequence };
  if (c === 0) return { id: "ctrl+space", sequence };
  if (c >= 1 && c <= 26) return { id: `ctrl+${String.fromCharCode(c + 96)}`, sequence };
  if (c === 0x1c) return { id: "ctrl+\\", sequence };
  if (c === 0x1d) return { id: "ctrl+]", sequence };
  if (c === 0x1e) return { id: "ctrl+^", sequence };
  if (c === 0x1f) return { id: "ctrl+-", sequence };
  if (ch === " ") return { id: "space", text: " ", sequence };
  if (/^[A-Z]$/.test(ch)) return { id: `shift+${ch.toLowerCase()}`, text: ch, sequence };
  return { id: ch, text: ch, sequence };
}

function csi(seq: string): KeyPress | undefined {
  const body = seq.slice(2, -1);
  const final = seq[seq.length - 1]!;
  if (body.startsWith("<") || body.startsWith("?") || body.startsWith(">")) return undefined; // mouse, replies
  const params = body.split(";");
  if (final === "u") {
    const [codes = "", mods = "1"] = params;
    const [code, shifted] = codes.split(":").map((x) => Number(x));
    const [modNum, event] = mods.split(":").map((x) => Number(x));
    if (event === 3) return undefined; // key release
    const bits = Math.max(0, (modNum || 1) - 1) & 0x0f;
    return code === undefined || Number.isNaN(code) ? undefined : fromCodePoint(code, bits, seq, shifted || undefined);
  }
  if (final === "~") {
    if (params[0] === "27" && params.length >= 3) return fromCodePoint(Number(params[2]), Math.max(0, Number(params[1]) - 1) & 0x0f, seq);
    const key = TILDE[Number(params[0])];
    if (!key) return undefined;
    const [modNum, event] = (params[1] ?? "1").split(":").map((x) => Number(x));
    if (event === 3) return undefined;
    return { id: keyId(key, MODS(Math.max(0, (modNum || 1) - 1))), sequence: seq };
  }
  if (final === "Z") return { id: "shift+tab", sequence: seq };
  const key = LETTER[final];
  if (!key) return undefined; // focus reports (I/O) and the rest
  const [modNum, event] = (params[1] ?? "1").split(":").map((x) => Number(x));
  if (event === 3) return undefined;
  return { id: keyId(key, MODS(Math.max(0, (modNum || 1) - 1))), sequence: seq };
}

/** An SGR mouse report (`CSI < b ; x ; y M` press/drag/wheel, `... m` release), else undefined. */
export function parseMouse(seq: string): MouseEvent | undefined {
  const m = /^\x1b\[<(\d+);(\d+);(\d+)([Mm])$/.exec(seq);
  if (!m) return undefined;
  const b = Number(m[1]);
  const base = { x: Number(m[2]), y: Number(m[3]), shift: !!(b & 4), alt: !!(b & 8), ctrl: !!(b & 16), sequence: seq };
  const low = b & 3;
  if (b & 64) return { ...base, kind: low === 0 ? "wheelUp" : "wheelDown", button: -1 };
  if (b & 32) return { ...base, kind: low === 3 ? "move" : "drag", button: low };
  return { ...base, kind: m[4] === "m" ? "release" : "press", button: low };
}

/** Best-effort: raw terminal bytes → key string (for components calling keybindings.matches(data, id)). */
export function keyFromData(data: string): string | undefined {
  const tokens = splitInput(data);
  if (tokens.length !== 1) return undefined;
  return parseKey(tokens[0]!)?.id;
}
