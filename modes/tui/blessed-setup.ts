/**
 * The one place that imports blessed (loaded lazily by the interactive mode): terminal-type
 * mapping, the emoji width patch, and screen creation with blessed's terminfo noise muted.
 * The casts blessed's types leave out live here too.
 */
import blessed from "blessed";
import type { Readable, Writable } from "node:stream";
import { isWideCodePoint } from "./text.js";

export type Screen = blessed.Widgets.Screen;
export type Box = blessed.Widgets.BoxElement;

/** Terminal types blessed handles well; anything else falls back to xterm-256color (with a notice). */
const KNOWN_PLAIN = /^(xterm|xterm-color|xterm-16color|vt100|vt102|vt220|linux|rxvt|rxvt-unicode|ansi|screen|tmux|cygwin|putty)$/;

/**
 * The terminal type to give blessed, and a notice when TERM was not one it knows.
 * 256-colour and modern terminals map to xterm-256color (blessed drops tmux-256color,
 * screen-256color, kitty, alacritty to 8 colours or prints terminfo errors).
 */
export function termName(env: NodeJS.ProcessEnv = process.env): { term: string; notice?: string } {
  const t = env.TERM ?? "";
  if (/256|direct|truecolor|kitty|alacritty|wezterm|ghostty|foot|contour|iterm|tmux|screen/.test(t) || env.COLORTERM) return { term: "xterm-256color" };
  if (KNOWN_PLAIN.test(t)) return { term: t };
  return { term: "xterm-256color", notice: `TERM=${t || "(unset)"} is not a terminal type this UI knows; using xterm-256color` };
}

/** Make blessed measure emoji and East Asian wide characters the way our line model does. */
export function patchBlessedWidths(): void {
  const u = (blessed as any).unicode;
  if (!u || u.__piPatched) return;
  u.__piPatched = true;
  const orig = u.charWidth;
  u.charWidth = (s: string | number, i?: number) => {
    const cp = typeof s === "number" ? s : u.codePointAt(s, i ?? 0);
    if (cp >= 0x1100) return isWideCodePoint(cp) ? 2 : orig(s, i) === 2 ? 1 : orig(s, i);
    return orig(s, i);
  };
  // parseContent inserts a filler cell after each wide character: same test as charWidth.
  u.chars.all = {
    [Symbol.replace]: (str: string) => str.replace(/[^\x00-\u10ff]/gu, (c) => (isWideCodePoint(c.codePointAt(0)!) ? c + "\x03" : c)),
  };
}

export interface ScreenIo {
  input?: Readable;
  output?: Writable;
  env?: NodeJS.ProcessEnv;
  /**
   * "regular": stay in the terminal's normal buffer (its scrollback is kept; the app prints the
   * conversation there when it exits). "fullscreen" (default): the alternate screen.
   */
  tuiMode?: "fullscreen" | "regular";
}

/** Create the screen; on failure with the mapped TERM, retry once with xterm-256color. */
export function createScreen(io: ScreenIo = {}): { screen: Screen; notice?: string } {
  patchBlessedWidths();
  const { term, notice } = termName(io.env ?? process.env);
  const make = (terminal: string) => {
    const err = console.error;
    const warn = console.warn;
    console.error = () => {};
    console.warn = () => {};
    try {
      return blessed.screen({
        input: io.input as any,
        output: io.output as any,
        terminal,
        smartCSR: true,
        fullUnicode: true,
        forceUnicode: true,
        warnings: false,
        autoPadding: true,
        sendFocus: false,
        dockBorders: false,
        ignoreLocked: ["C-c"],
        resizeTimeout: 30,
        title: undefined,
      } as any);
    } finally {
      console.error = err;
      console.warn = warn;
    }
  };
  const regular = io.tuiMode === "regular";
  const P = (blessed as any).program.prototype;
  const alt = P.alternateBuffer;
  if (regular) {
    // Move what the terminal shows into its scrollback, then draw in the normal buffer.
    try {
      const out = (io.output ?? process.stdout) as Writable & { rows?: number };
      out.write("\n".repeat(Math.max(1, out.rows ?? 24)));
    } catch {
      /* output gone */
    }
    P.alternateBuffer = function (this: { isAlt: boolean }) {
      this.isAlt = true; // blessed's leave() still restores the cursor and scroll region
    };
  }
  const stay = (screen: Screen): Screen => {
    if (regular) (screen as any).program.normalBuffer = function (this: { isAlt: boolean }) {
      this.isAlt = false;
    };
    return noAcs(screen);
  };
  try {
    return { screen: stay(make(term)), notice };
  } catch (e) {
    if (term === "xterm-256color") throw e;
    return { screen: stay(make("xterm-256color")), notice: `the terminal type ${term} failed in blessed (${(e as Error).message}); using xterm-256color` };
  } finally {
    P.alternateBuffer = alt;
  }
}

export function createBox(screen: Screen, opts: Record<string, unknown>): Box {
  return blessed.box({ parent: screen, tags: false, wrap: false, scrollable: false, ...opts } as any);
}

/** Screen rows as plain text (wide-character filler cells removed) — for tests and checks. */
export function screenText(screen: Screen): string {
  return ((screen as any).lines as Array<Array<[number, string]>>)
    .map((row) => row.map((c) => c[1]).join("").replace(/\x03/g, "").trimEnd())
    .join("\n");
}

export function program(screen: Screen): any {
  return (screen as any).program;
}

/**
 * blessed swaps box-drawing characters (─ │ ┌) for the terminal's alternate character set
 * whenever terminfo lists one, even in full-Unicode mode; terminals and multiplexers that do
 * not honour the charset switch then show "qqqq". We draw UTF-8 only, so turn that path off.
 */
function noAcs<T>(screen: T): T {
  const tput = (screen as { tput?: { brokenACS?: boolean } }).tput;
  if (tput) tput.brokenACS = true;
  return screen;
}
