/**
 * The settings screen's rows, the one model behind the TUI's /settings (and `pi config`) and the
 * exported SettingsSelectorComponent: the entries of the settings catalog, in its order, each
 * with its label, description, value and the values Enter cycles through. A setting added to
 * the catalog shows in both. The component is handed pi 1.6's SettingsConfig (its own field
 * names) and reports changes through SettingsCallbacks; the mapping between those and the
 * catalog's settings keys is here too.
 */
import { getPath, pathPatch, SETTINGS_CATALOG, type SettingEntry } from "../../core/kernel/lazy.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

/** What the description of an entry this build does not act on ends with. */
export const NO_EFFECT_NOTE = " (accepted; no effect in this build)";

export interface SettingRow {
  entry: SettingEntry;
  id: string;
  label: string;
  description: string;
  noEffect?: boolean;
  /** The value shown. */
  value: string;
  /** The values Enter/Space cycles through (the shown value among them); undefined for an entry with its own picker. */
  values?: string[];
}

/** The values an entry offers: its catalog values (the theme: the themes there are), with the current value among them. */
export function entryValues(e: SettingEntry, current: string, themes: readonly string[] = []): string[] | undefined {
  if (e.id === "theme") return [...new Set([...themes, current])];
  if (!e.values) return undefined;
  return e.values.includes(current) ? [...e.values] : [current, ...e.values];
}

/** One catalog entry as a row over `settings` (the merged settings object). */
export function settingRow(e: SettingEntry, settings: Obj, themes: readonly string[] = []): SettingRow {
  const value = e.current(settings);
  return { entry: e, id: e.id, label: e.label, description: e.description, noEffect: e.noEffect, value, values: entryValues(e, value, themes) };
}

/** The rows for one settings file: every catalog entry (those only the global file may set left out of the project's). */
export function settingRows(settings: Obj, opts: { scope?: "global" | "project"; themes?: readonly string[] } = {}): SettingRow[] {
  return SETTINGS_CATALOG.filter((e) => opts.scope !== "project" || !e.globalOnly).map((e) => settingRow(e, settings, opts.themes));
}

// ---- pi 1.6's SettingsConfig and SettingsCallbacks ------------------------------------------------

/**
 * pi 1.6's SettingsConfig names for settings keys whose last part is not the name (a dotted
 * name reaches into an object of the config); null: the config has none.
 */
const CONFIG_FIELDS: Record<string, string | null> = {
  autocompact: "autoCompact",
  "auto-resize-images": "autoResizeImages",
  "cache-warming-mode": "cacheWarmingMode",
  "mermaid-rendering": "mermaidRenderingMode",
  warnings: "warnings.anthropicExtraUsage",
  theme: "currentTheme",
  "auto-retry": null,
  "default-thinking": null,
  "model-thinking": null,
};

/** The SettingsConfig field an entry reads (dotted into an object), if the config has one. */
export function configField(e: SettingEntry): string | undefined {
  const named = CONFIG_FIELDS[e.id];
  if (named === null) return undefined;
  return named ?? e.key.split(".").at(-1);
}

/** The SettingsCallbacks function an entry's change goes to: on<Field>Change (the theme: onThemeChange). */
export function configCallback(e: SettingEntry): string | undefined {
  if (e.id === "theme") return "onThemeChange";
  const field = configField(e)?.split(".")[0];
  return field ? `on${field[0]!.toUpperCase()}${field.slice(1)}Change` : undefined;
}

/** A SettingsConfig as a settings object (the catalog's keys), with the fields it carries. */
export function settingsFromConfig(config: Obj): Obj {
  let out: Obj = {};
  for (const e of SETTINGS_CATALOG) {
    const field = configField(e);
    const v = field === undefined ? undefined : getPath(config, field);
    if (v !== undefined) out = merge(out, pathPatch(e.key, v));
  }
  return out;
}

function merge(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObj(v) && isObj(out[k]) ? merge(out[k] as Obj, v) : v;
  return out;
}

/** The rows a SettingsConfig carries values for, in the catalog's order. */
export function configRows(config: Obj): SettingRow[] {
  const settings = settingsFromConfig(config);
  const themes = Array.isArray(config.availableThemes) ? (config.availableThemes as unknown[]).map(String) : [];
  return SETTINGS_CATALOG.filter((e) => {
    const field = configField(e);
    return field !== undefined && e.values !== undefined && getPath(config, field) !== undefined;
  }).map((e) => settingRow(e, settings, themes));
}

/**
 * The argument a chosen value goes to its callback with, typed as the setting is (boolean,
 * number, name; a nested field: its object with the value changed).
 */
export function configArgument(e: SettingEntry, value: string, config: Obj): unknown {
  const typed = e.patch ? getPath(e.patch(value), e.key) : value;
  const field = configField(e);
  if (!field?.includes(".")) return typed;
  const [top, ...rest] = field.split(".");
  return merge(isObj(config[top!]) ? (config[top!] as Obj) : {}, pathPatch(rest.join("."), typed));
}
