/**
 * The `Theme` class of the pi package: pi 1.6's (and 0.73.1's) constructor,
 * `new Theme(fgColors, bgColors, mode, options?)` — colour values per token as "#rrggbb", a
 * 256-colour palette index or "" (the terminal's default), and the colour mode ("truecolor" or
 * "256color") the escapes are written in — with the methods an extension calls (fg, bg, style,
 * bold/italic/underline/inverse/strikethrough, getFgAnsi/getBgAnsi, getColorMode,
 * getThinkingBorderColor, getBashModeBorderColor).
 *
 * It extends the TUI's own theme class, so an instance goes wherever a TUI theme goes, and the
 * themes the TUI hands extensions (ctx.ui.theme, renderer arguments) are `instanceof Theme`.
 * The older pi-kernel form `new Theme(name, paletteColors)` still works.
 */
import { Theme as TuiTheme, rgbTo256, type ThemeColors, type ThemeToken } from "../theme.js";

export type TerminalColorMode = "truecolor" | "256color";
type ColorValue = string | number;

export interface ThemeOptions {
  name?: string;
  sourcePath?: string;
  sourceInfo?: unknown;
  appearance?: "dark" | "light";
  /** Foreground tokens written faint (SGR 2). */
  dim?: readonly string[];
}

export interface ThemeStyle {
  fg?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
  strikethrough?: boolean;
}

/** [r, g, b] of a "#rrggbb" value, or an Error naming the token. */
function hexRgb(token: string, value: string): [number, number, number] | Error {
  const m = /^#?([0-9a-f]{6})$/i.exec(value.trim());
  if (!m) return new Error(`Theme: colour of "${token}" must be "#rrggbb", a palette index 0-255 or "" (got ${JSON.stringify(value)})`);
  const n = parseInt(m[1]!, 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** The SGR parameters of a colour value ("" → undefined: the terminal's default). */
function sgrOf(token: string, value: ColorValue, mode: TerminalColorMode, bg: boolean): { sgr?: string; palette?: number } {
  const base = bg ? 48 : 38;
  if (value === "" || value === undefined || value === null) return {};
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < 0 || value > 255) throw new Error(`Theme: colour of "${token}" is not a palette index 0-255 (got ${value})`);
    return { sgr: `${base};5;${value}`, palette: value };
  }
  if (typeof value !== "string") throw new Error(`Theme: colour of "${token}" must be a string or a number`);
  const rgb = hexRgb(token, value);
  if (rgb instanceof Error) throw rgb;
  const palette = rgbTo256(...rgb);
  return { sgr: mode === "truecolor" ? `${base};2;${rgb.join(";")}` : `${base};5;${palette}`, palette };
}

const LEVEL_TOKENS: Record<string, string> = {
  off: "thinkingOff", minimal: "thinkingMinimal", low: "thinkingLow", medium: "thinkingMedium", high: "thinkingHigh", xhigh: "thinkingXhigh", max: "thinkingMax",
};

export class Theme extends TuiTheme {
  readonly sourcePath?: string;
  sourceInfo?: unknown;
  private readonly colorMode: TerminalColorMode;
  private readonly fgAnsi = new Map<string, string>();
  private readonly bgAnsi = new Map<string, string>();
  private readonly dimTokens: Set<string>;
  private readonly appearanceOf?: "dark" | "light";

  /** A theme from colour values per token (pi 1.6 and 0.73.1), or the older `(name, paletteColors)` form. */
  constructor(fgColors: Record<string, ColorValue>, bgColors: Record<string, ColorValue>, mode: TerminalColorMode, options?: ThemeOptions);
  constructor(name: string, colors: Partial<ThemeColors>, path?: string);
  constructor(a: string | Record<string, ColorValue>, b: Record<string, ColorValue> | Partial<ThemeColors>, c?: string, options: ThemeOptions = {}) {
    if (typeof a === "string") {
      super(a, b as ThemeColors, c);
      this.colorMode = "256color";
      this.dimTokens = new Set();
      this.sourcePath = c;
      return;
    }
    if (!a || typeof a !== "object") throw new TypeError("Theme: the first argument must be the foreground colours by token (or a theme name)");
    if (!b || typeof b !== "object") throw new TypeError("Theme: the second argument must be the background colours by token");
    const mode = c ?? "truecolor";
    if (mode !== "truecolor" && mode !== "256color") throw new TypeError(`Theme: colour mode must be "truecolor" or "256color" (got ${JSON.stringify(c)})`);
    const palette: Record<string, number | undefined> = {};
    const fgAnsi = new Map<string, string>();
    const bgAnsi = new Map<string, string>();
    for (const [token, value] of Object.entries(a)) {
      const { sgr, palette: p } = sgrOf(token, value, mode, false);
      fgAnsi.set(token, sgr ? `\x1b[${sgr}m` : "\x1b[39m");
      palette[token] = p;
    }
    for (const [token, value] of Object.entries(b)) {
      const { sgr, palette: p } = sgrOf(token, value, mode, true);
      bgAnsi.set(token, sgr ? `\x1b[${sgr}m` : "\x1b[49m");
      palette[token] = p;
    }
    super(options.name ?? "", palette as ThemeColors, options.sourcePath);
    this.colorMode = mode;
    this.fgAnsi = fgAnsi;
    this.bgAnsi = bgAnsi;
    this.dimTokens = new Set(options.dim ?? []);
    this.sourcePath = options.sourcePath;
    this.sourceInfo = options.sourceInfo;
    this.appearanceOf = options.appearance;
  }

  /** The TUI's themes (ctx.ui.theme) are themes too. */
  static [Symbol.hasInstance](x: unknown): boolean {
    return x instanceof TuiTheme;
  }

  /** The background the theme is meant for: given, else guessed from its user-message background. */
  get appearance(): "dark" | "light" {
    if (this.appearanceOf) return this.appearanceOf;
    const bg = this.colors["userMessageBg" as ThemeToken];
    if (bg === undefined) return "dark";
    return (bg >= 232 && bg < 244) || (bg >= 16 && bg < 232 && (bg - 16) / 36 < 2) ? "dark" : "light";
  }

  private own(): boolean {
    return this.fgAnsi.size > 0 || this.bgAnsi.size > 0;
  }

  private tokenAnsi(map: Map<string, string>, token: string): string {
    const v = map.get(token);
    if (v === undefined) throw new Error(`Unknown theme color: ${token}`);
    return v;
  }

  override getFgAnsi(token: string): string {
    if (!this.own()) return super.getFgAnsi(token);
    const ansi = this.tokenAnsi(this.fgAnsi, token);
    return this.dimTokens.has(token) ? `${ansi}\x1b[2m` : ansi;
  }
  override getBgAnsi(token: string): string {
    if (!this.own()) return super.getBgAnsi(token);
    return this.tokenAnsi(this.bgAnsi, token);
  }
  override fg(token: string, text: string): string {
    if (!this.own()) return super.fg(token, text);
    const ansi = this.tokenAnsi(this.fgAnsi, token);
    return this.dimTokens.has(token) ? `${ansi}\x1b[2m${text}\x1b[22;39m` : `${ansi}${text}\x1b[39m`;
  }
  override bg(token: string, text: string): string {
    if (!this.own()) return super.bg(token, text);
    return `${this.tokenAnsi(this.bgAnsi, token)}${text}\x1b[49m`;
  }
  override italic(text: string): string {
    return text ? `\x1b[3m${text}\x1b[23m` : text;
  }
  override strikethrough(text: string): string {
    return text ? `\x1b[9m${text}\x1b[29m` : text;
  }
  /** Several attributes at once: a token (or none) in each slot plus text attributes. */
  style(text: string, options: ThemeStyle): string {
    let out = text;
    if (options.bold) out = this.bold(out);
    if (options.dim) out = `\x1b[2m${out}\x1b[22m`;
    if (options.italic) out = this.italic(out);
    if (options.underline) out = this.underline(out);
    if (options.inverse) out = this.inverse(out);
    if (options.strikethrough) out = this.strikethrough(out);
    if (options.fg !== undefined) out = this.fg(options.fg, out);
    if (options.bg !== undefined) out = this.bg(options.bg, out);
    return out;
  }
  getColorMode(): TerminalColorMode {
    return this.colorMode;
  }
  getThinkingBorderColor(level: string): (str: string) => string {
    let token = LEVEL_TOKENS[level] ?? "thinkingOff";
    // A theme built without a max colour borrows its xhigh one (pi 1.6's fallback).
    if (token === "thinkingMax" && !(this.own() ? this.fgAnsi.has(token) : token in this.colors)) token = "thinkingXhigh";
    return (s) => this.fg(token, s);
  }
  getBashModeBorderColor(): (str: string) => string {
    return (s) => this.fg("bashMode", s);
  }
}
