/**
 * Themes: the reference's colour tokens (thinkingMax falling back to thinkingXhigh), built-in "dark" and "light", and theme JSON files
 * (`<agentDir>/themes/*.json`, `.pi/themes/*.json`, the `themes` setting). Colours are emitted as
 * 256-colour SGR (`38;5;n`), the form blessed keeps; hex values are mapped to the nearest
 * palette entry. Blessed drops italic and dim, so `italic()` is plain text here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Kernel } from "../../core/kernel/index.js";

export const THEME_TOKENS = [
  "accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim", "text", "thinkingText",
  "selectedBg", "userMessageBg", "userMessageText", "customMessageBg", "customMessageText", "customMessageLabel",
  "toolPendingBg", "toolSuccessBg", "toolErrorBg", "toolTitle", "toolOutput",
  "mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock", "mdCodeBlockBorder", "mdQuote", "mdQuoteBorder", "mdHr", "mdListBullet",
  "toolDiffAdded", "toolDiffRemoved", "toolDiffContext",
  "syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString", "syntaxNumber", "syntaxType", "syntaxOperator", "syntaxPunctuation",
  "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh", "thinkingMax",
  "bashMode",
] as const;
export type ThemeToken = (typeof THEME_TOKENS)[number];
/** A colour: palette index, or undefined for the terminal default. */
export type ThemeColors = Record<ThemeToken, number | undefined>;

const DARK: ThemeColors = {
  accent: 39, border: 67, borderAccent: 45, borderMuted: 240, success: 114, error: 203, warning: 221, muted: 245, dim: 241,
  text: undefined, thinkingText: 245,
  selectedBg: 237, userMessageBg: 236, userMessageText: undefined, customMessageBg: 235, customMessageText: undefined,
  customMessageLabel: 141, toolPendingBg: 235, toolSuccessBg: 234, toolErrorBg: 52, toolTitle: 39, toolOutput: 250,
  mdHeading: 214, mdLink: 39, mdLinkUrl: 243, mdCode: 116, mdCodeBlock: 252, mdCodeBlockBorder: 240, mdQuote: 246,
  mdQuoteBorder: 240, mdHr: 240, mdListBullet: 116,
  toolDiffAdded: 114, toolDiffRemoved: 203, toolDiffContext: 244,
  syntaxComment: 244, syntaxKeyword: 176, syntaxFunction: 75, syntaxVariable: 222, syntaxString: 150, syntaxNumber: 209,
  syntaxType: 80, syntaxOperator: 252, syntaxPunctuation: 247,
  thinkingOff: 240, thinkingMinimal: 67, thinkingLow: 39, thinkingMedium: 45, thinkingHigh: 171, thinkingXhigh: 203, thinkingMax: 209,
  bashMode: 214,
};

const LIGHT: ThemeColors = {
  accent: 25, border: 67, borderAccent: 31, borderMuted: 250, success: 28, error: 160, warning: 130, muted: 242, dim: 246,
  text: undefined, thinkingText: 242,
  selectedBg: 254, userMessageBg: 255, userMessageText: undefined, customMessageBg: 254, customMessageText: undefined,
  customMessageLabel: 91, toolPendingBg: 255, toolSuccessBg: 255, toolErrorBg: 224, toolTitle: 25, toolOutput: 238,
  mdHeading: 130, mdLink: 25, mdLinkUrl: 244, mdCode: 30, mdCodeBlock: 236, mdCodeBlockBorder: 248, mdQuote: 242,
  mdQuoteBorder: 248, mdHr: 248, mdListBullet: 30,
  toolDiffAdded: 28, toolDiffRemoved: 160, toolDiffContext: 243,
  syntaxComment: 244, syntaxKeyword: 90, syntaxFunction: 25, syntaxVariable: 130, syntaxString: 28, syntaxNumber: 166,
  syntaxType: 30, syntaxOperator: 238, syntaxPunctuation: 242,
  thinkingOff: 250, thinkingMinimal: 67, thinkingLow: 25, thinkingMedium: 31, thinkingHigh: 91, thinkingXhigh: 160, thinkingMax: 202,
  bashMode: 130,
};

/** The theme object handed to renderers and extensions (pi's `theme.fg(token, text)` API). */
export class Theme {
  constructor(
    readonly name: string,
    readonly colors: ThemeColors,
    readonly path?: string,
  ) {}

  getFgAnsi(token: string): string {
    const c = this.colors[token as ThemeToken];
    return c === undefined ? "\x1b[39m" : `\x1b[38;5;${c}m`;
  }
  getBgAnsi(token: string): string {
    const c = this.colors[token as ThemeToken];
    return c === undefined ? "\x1b[49m" : `\x1b[48;5;${c}m`;
  }
  fg(token: string, text: string): string {
    const c = this.colors[token as ThemeToken];
    if (c === undefined || text === "") return text;
    return `\x1b[38;5;${c}m${text}\x1b[39m`;
  }
  bg(token: string, text: string): string {
    const c = this.colors[token as ThemeToken];
    if (c === undefined || text === "") return text;
    return `\x1b[48;5;${c}m${text}\x1b[49m`;
  }
  bold(text: string): string {
    return text ? `\x1b[1m${text}\x1b[22m` : text;
  }
  underline(text: string): string {
    return text ? `\x1b[4m${text}\x1b[24m` : text;
  }
  inverse(text: string): string {
    return text ? `\x1b[7m${text}\x1b[27m` : text;
  }
  /** Terminals under blessed show no italic; the text stays plain. */
  italic(text: string): string {
    return text;
  }
  strikethrough(text: string): string {
    return text;
  }
  /** The editor border colour for a thinking level. */
  thinkingBorder(level: string): string {
    const key = ("thinking" + level.charAt(0).toUpperCase() + level.slice(1)) as ThemeToken;
    return key in this.colors ? key : "borderMuted";
  }
}

export const BUILTIN_THEMES: Record<string, ThemeColors> = { dark: DARK, light: LIGHT };

export function builtinTheme(name: "dark" | "light"): Theme {
  return new Theme(name, BUILTIN_THEMES[name]!);
}

// ---- colour conversion ------------------------------------------------------------------------

const CUBE = [0, 95, 135, 175, 215, 255];

/** Nearest xterm-256 palette index of an RGB colour (cube or grey ramp). */
export function rgbTo256(r: number, g: number, b: number): number {
  const idx = (v: number) => (v < 48 ? 0 : v < 115 ? 1 : Math.min(5, Math.floor((v - 35) / 40)));
  const ri = idx(r), gi = idx(g), bi = idx(b);
  const cube = 16 + 36 * ri + 6 * gi + bi;
  const cr = CUBE[ri]!, cg = CUBE[gi]!, cb = CUBE[bi]!;
  const avg = Math.round((r + g + b) / 3);
  const greyIdx = avg > 238 ? 23 : Math.max(0, Math.round((avg - 8) / 10));
  const gv = 8 + greyIdx * 10;
  const d = (x: number, y: number, z: number) => (r - x) ** 2 + (g - y) ** 2 + (b - z) ** 2;
  return d(gv, gv, gv) < d(cr, cg, cb) ? 232 + greyIdx : cube;
}

function parseColor(value: unknown, vars: Record<string, unknown>, depth = 0): number | undefined | Error {
  if (value === "" || value === undefined || value === null) return undefined;
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < 0 || value > 255) return new Error(`colour ${value} is not a palette index 0-255`);
    return value;
  }
  if (typeof value !== "string") return new Error(`colour ${JSON.stringify(value)} is not a string or number`);
  const hex = /^#([0-9a-f]{6})$/i.exec(value);
  if (hex) {
    const n = parseInt(hex[1]!, 16);
    return rgbTo256((n >> 16) & 255, (n >> 8) & 255, n & 255);
  }
  if (depth < 5 && value in vars) return parseColor(vars[value], vars, depth + 1);
  return new Error(`colour "${value}" is not a hex value, a palette index or a variable in "vars"`);
}

/** Parse a theme JSON object (reference format). Missing tokens fall back to `base`. */
export function parseThemeJson(data: unknown, source: string, base: ThemeColors = DARK): { theme?: Theme; errors: string[] } {
  const errors: string[] = [];
  if (!data || typeof data !== "object" || Array.isArray(data)) return { errors: [`${source}: a theme must be a JSON object`] };
  const obj = data as { name?: unknown; vars?: unknown; colors?: unknown };
  const name = typeof obj.name === "string" && obj.name ? obj.name : basename(source).replace(/\.json$/i, "");
  const vars = obj.vars && typeof obj.vars === "object" ? (obj.vars as Record<string, unknown>) : {};
  const colors = obj.colors && typeof obj.colors === "object" ? (obj.colors as Record<string, unknown>) : undefined;
  if (!colors) return { errors: [`${source}: the theme has no "colors" object`] };
  const out = { ...base };
  for (const token of THEME_TOKENS) {
    if (!(token in colors)) continue;
    const c = parseColor(colors[token], vars);
    if (c instanceof Error) errors.push(`${source}: ${token}: ${c.message}`);
    else out[token] = c;
  }
  // A theme without its own max colour uses its xhigh one (as pi 1.6's theme files may omit it).
  if (!("thinkingMax" in colors) && "thinkingXhigh" in colors) out.thinkingMax = out.thinkingXhigh;
  return { theme: new Theme(name, out, source), errors };
}

/** Theme files found in the usual places, by name (built-ins first, later sources win). */
export function discoverThemes(opts: { agentDir: string; cwd: string; configDir?: string; extraPaths?: string[]; defaultDirs?: boolean }): {
  themes: Map<string, Theme>;
  errors: string[];
} {
  const themes = new Map<string, Theme>([
    ["dark", builtinTheme("dark")],
    ["light", builtinTheme("light")],
  ]);
  const errors: string[] = [];
  const files: string[] = [];
  const addDir = (dir: string) => {
    try {
      if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
      for (const f of readdirSync(dir).sort()) if (f.toLowerCase().endsWith(".json")) files.push(join(dir, f));
    } catch {
      /* unreadable folder: nothing to add */
    }
  };
  if (opts.defaultDirs !== false) {
    addDir(join(opts.agentDir, "themes"));
    addDir(join(opts.cwd, opts.configDir ?? ".pi", "themes"));
  }
  for (const p of opts.extraPaths ?? []) {
    const abs = resolve(opts.cwd, p);
    try {
      if (existsSync(abs) && statSync(abs).isDirectory()) addDir(abs);
      else files.push(abs);
    } catch {
      errors.push(`${abs}: cannot read`);
    }
  }
  for (const f of files) {
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(f, "utf8"));
    } catch (e) {
      errors.push(`${f}: ${(e as Error).message}`);
      continue;
    }
    const r = parseThemeJson(data, f);
    errors.push(...r.errors);
    if (r.theme) themes.set(r.theme.name, r.theme);
  }
  return { themes, errors };
}

/**
 * Themes by name: the resources plugin's discovered theme files (service "theme-paths": project,
 * agent dir, settings, packages, --theme; honours --no-themes) when it is installed, else the
 * usual folders, the `themes` setting and --theme.
 */
export function findThemes(kernel: Kernel, argv?: Record<string, unknown>): ReturnType<typeof discoverThemes> {
  const base = { agentDir: kernel.agentDir, cwd: kernel.cwd, configDir: kernel.app.configDir };
  const svc = kernel.service("theme-paths");
  if (svc) {
    try {
      return discoverThemes({ ...base, extraPaths: svc(), defaultDirs: false });
    } catch {
      /* fall back to our own discovery */
    }
  }
  const settings = kernel.settings.get();
  const cli = ([] as unknown[]).concat(argv?.theme ?? []).map(String);
  return discoverThemes({ ...base, extraPaths: [...(settings.themes ?? []), ...cli] });
}

