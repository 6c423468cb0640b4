/**
 * pi's theme helpers for extensions that build pi-tui components (`getMarkdownTheme()`,
 * `getSelectListTheme()`, `getSettingsListTheme()`, `getEditorTheme()` and the DynamicBorder
 * component, as the reference package exports them): each reads the TUI's active theme (the
 * built-in dark one when no TUI runs). Pure functions over theme.ts: no blessed, no pi-tui.
 */
import { builtinTheme, type Theme } from "./theme.js";

let active: Theme | undefined;

/** The TUI calls this when it starts and whenever the theme changes. */
export function setActiveTheme(theme: Theme | undefined): void {
  active = theme;
}

function current(): Theme {
  return (active ??= builtinTheme("dark"));
}

/** The active theme (the built-in dark one when no TUI runs): for the package's exported helpers. */
export const getActiveTheme = current;

export function getMarkdownTheme() {
  const t = current();
  return {
    heading: (s: string) => t.bold(t.fg("mdHeading", s)),
    link: (s: string) => t.fg("mdLink", s),
    linkUrl: (s: string) => t.fg("mdLinkUrl", s),
    code: (s: string) => t.fg("mdCode", s),
    codeBlock: (s: string) => t.fg("mdCodeBlock", s),
    codeBlockBorder: (s: string) => t.fg("mdCodeBlockBorder", s),
    quote: (s: string) => t.italic(t.fg("mdQuote", s)),
    quoteBorder: (s: string) => t.fg("mdQuoteBorder", s),
    hr: (s: string) => t.fg("mdHr", s),
    listBullet: (s: string) => t.fg("mdListBullet", s),
    bold: (s: string) => t.bold(s),
    italic: (s: string) => t.italic(s),
    strikethrough: (s: string) => t.strikethrough(s),
    underline: (s: string) => t.underline(s),
  };
}

export function getSelectListTheme() {
  const t = current();
  return {
    selectedPrefix: (s: string) => t.fg("accent", s),
    selectedText: (s: string) => t.fg("accent", s),
    description: (s: string) => t.fg("muted", s),
    scrollInfo: (s: string) => t.fg("dim", s),
    noMatch: (s: string) => t.fg("warning", s),
  };
}

export function getSettingsListTheme() {
  const t = current();
  return {
    label: (s: string, selected: boolean) => (selected ? t.fg("accent", s) : s),
    value: (s: string, selected: boolean) => (selected ? t.fg("accent", s) : t.fg("muted", s)),
    description: (s: string) => t.fg("dim", s),
    cursor: t.fg("accent", "→ "),
    hint: (s: string) => t.fg("dim", s),
  };
}

export function getEditorTheme() {
  const t = current();
  return { borderColor: (s: string) => t.fg("border", s), selectList: getSelectListTheme() };
}

/** A full-width horizontal rule (pi's DynamicBorder). */
export class DynamicBorder {
  constructor(private readonly color: (s: string) => string = (s) => current().fg("border", s)) {}
  invalidate(): void {}
  render(width: number): string[] {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}
