/**
 * The settings screen: a searchable list of settings with their current values; Enter or Space
 * moves the selected one to its next value (or opens its own picker), the selected entry's
 * description shows below the list. Entries this build does not act on are marked. Used by
 * /settings in the TUI and by `pi config` in a terminal (a layer: lines in, keys in, no blessed).
 */
import { fuzzyFilter } from "../../core/stores/index.js";
import type { SettingsManager } from "../../core/kernel/index.js";
import type { SettingEntry } from "../../core/kernel/lazy.js";
import type { KeyPress } from "./keys.js";
import { titleRule, type Layer, type LayerEnv } from "./layers.js";
import { NO_EFFECT_NOTE, settingRows } from "./settings-rows.js";
import { padToWidth, sanitize, truncate, visibleWidth, wrapText } from "./text.js";

export interface ScreenEntry {
  id: string;
  label: string;
  description: string;
  value(): string;
  /** Next value on Enter/Space; undefined = `open` handles it. */
  values?: string[];
  noEffect?: boolean;
}

export interface SettingsScreenOptions {
  title: string;
  entries: ScreenEntry[];
  /** A value was chosen (Enter/Space cycled to it). */
  change(entry: ScreenEntry, value: string): void;
  /** Enter on an entry without `values`: resolves when its own picker is done. */
  open?(entry: ScreenEntry): void;
  close(): void;
  maxVisible?: number;
  /** The key hint line (default: search, change, close). */
  hint?: string;
}

export class SettingsLayer implements Layer {
  placement: "panel" | "overlay" = "panel";
  query = "";
  index = 0;
  private top = 0;
  private filtered: ScreenEntry[];
  private done = false;

  constructor(private opts: SettingsScreenOptions) {
    this.filtered = opts.entries;
  }

  get selected(): ScreenEntry | undefined {
    return this.filtered[this.index];
  }

  setQuery(q: string): void {
    this.query = q;
    const t = q.trim();
    this.filtered = t ? fuzzyFilter(this.opts.entries, t, (e) => `${e.label} ${e.id}`) : this.opts.entries;
    this.index = 0;
    this.top = 0;
  }

  private close(): void {
    if (this.done) return;
    this.done = true;
    this.opts.close();
  }

  handleKey(k: KeyPress, env: LayerEnv): void {
    const kb = env.keys;
    const n = this.filtered.length;
    if (kb.matches(k, "tui.select.cancel") || k.id === "escape") {
      if (this.query) return this.setQuery("");
      return this.close();
    }
    if (kb.matches(k, "tui.select.confirm") || k.id === "space" || k.text === " ") {
      const e = this.selected;
      if (!e) return;
      if (e.values?.length) {
        const i = e.values.indexOf(e.value());
        this.opts.change(e, e.values[(i + 1) % e.values.length]!);
      } else this.opts.open?.(e);
      return;
    }
    const page = Math.max(1, (this.opts.maxVisible ?? 10) - 1);
    if (kb.matches(k, "tui.select.up") || k.id === "ctrl+p") this.index = n ? (this.index - 1 + n) % n : 0;
    else if (kb.matches(k, "tui.select.down") || k.id === "ctrl+n") this.index = n ? (this.index + 1) % n : 0;
    else if (kb.matches(k, "tui.select.pageUp")) this.index = Math.max(0, this.index - page);
    else if (kb.matches(k, "tui.select.pageDown")) this.index = Math.min(Math.max(0, n - 1), this.index + page);
    else if (k.id === "backspace") this.setQuery(Array.from(this.query).slice(0, -1).join(""));
    else if (k.id === "ctrl+u") this.setQuery("");
    else if (k.text && !/[\x00-\x1f]/.test(k.text)) this.setQuery(this.query + k.text);
  }

  render(width: number, maxRows: number, env: LayerEnv): string[] {
    const t = env.theme;
    const out = [titleRule(this.opts.title, width, t)];
    out.push(t.fg("accent", "› ") + sanitize(this.query, false) + "\x1b[7m \x1b[27m" + (this.query ? "" : t.fg("dim", " type to search")));
    const sel = this.selected;
    const desc = sel ? wrapText(sanitize(sel.description + (sel.noEffect ? NO_EFFECT_NOTE : ""), false), Math.max(10, width - 2)).slice(0, 3) : [];
    const maxVisible = Math.max(1, Math.min(this.opts.maxVisible ?? 10, maxRows - out.length - desc.length - 3));
    const n = this.filtered.length;
    if (this.index < this.top) this.top = this.index;
    if (this.index >= this.top + maxVisible) this.top = this.index - maxVisible + 1;
    if (this.top > Math.max(0, n - maxVisible)) this.top = Math.max(0, n - maxVisible);
    if (!n) out.push(t.fg("warning", "  (no setting matches)"));
    const labelW = Math.min(Math.max(0, ...this.opts.entries.map((e) => visibleWidth(e.label))) + 2, Math.floor(width * 0.5));
    const valueW = Math.min(16, Math.max(0, ...this.filtered.slice(this.top, this.top + maxVisible).map((e) => visibleWidth(sanitize(e.value(), false)))));
    for (let i = this.top; i < Math.min(n, this.top + maxVisible); i++) {
      const e = this.filtered[i]!;
      const on = i === this.index;
      const prefix = on ? t.fg("accent", "→ ") : "  ";
      const label = padToWidth(truncate(e.label, labelW - 1), labelW);
      const value = sanitize(e.value(), false);
      let line = prefix + (on ? t.bold(t.fg("accent", label)) : label) + (on ? t.fg("accent", value) : value);
      if (e.noEffect) line += " ".repeat(Math.max(0, valueW - visibleWidth(value))) + t.fg("dim", "  · no effect here");
      out.push(truncate(line, width));
    }
    out.push(t.fg("dim", `  (${n ? this.index + 1 : 0}/${n})`));
    out.push("");
    for (const d of desc) out.push("  " + t.fg("muted", d));
    out.push("");
    out.push(t.fg("dim", truncate(this.opts.hint ?? "Type to search · Enter/Space to change · Esc to close", width)));
    return out;
  }
}

/**
 * The catalogue's entries over one settings manager (settings-rows.ts: the rows the
 * SettingsSelectorComponent shows too): values read from the merged settings, changes written to
 * `scope`'s file (entries only the global file may set are left out of the project scope).
 * `themes` lists the theme names to cycle through.
 */
export function catalogEntries(settings: SettingsManager, scope: "global" | "project", themes: string[]): Array<ScreenEntry & { entry: SettingEntry }> {
  return settingRows(settings.get() as Record<string, unknown>, { scope, themes }).map((r) => ({
    entry: r.entry,
    id: r.id,
    label: r.label,
    description: r.description,
    noEffect: r.noEffect,
    value: () => r.entry.current(settings.get() as Record<string, unknown>),
    values: r.values,
  }));
}

/** Write an entry's chosen value into `scope`'s settings file. */
export function saveEntry(settings: SettingsManager, entry: SettingEntry, value: string, scope: "global" | "project"): boolean {
  if (!entry.patch) return false;
  return settings.update(entry.patch(value), scope);
}
