/**
 * The settings a user changes from a settings screen (the TUI's /settings and `pi config`): pi
 * 1.6's entries, each with its settings key, a one-line description, the values it cycles
 * through, and whether this build acts on it. A key this build accepts but does not act on is
 * listed (marked "no effect here") instead of being reported at start-up.
 */
import { THINKING_LEVELS } from "./types.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

export interface SettingEntry {
  /** Stable id (1.6's entry id). */
  id: string;
  /** Settings key as a dotted path ("compaction.enabled"). */
  key: string;
  label: string;
  description: string;
  /** The values Enter/Space cycles through; undefined for entries edited elsewhere. */
  values?: string[];
  /** The value shown, from the merged settings. */
  current(settings: Obj): string;
  /** The settings patch for a chosen value. */
  patch?(value: string): Obj;
  /** True when this build reads the key but nothing changes with it. */
  noEffect?: boolean;
  /** Only the global (agent-directory) settings may set it. */
  globalOnly?: boolean;
}

/** The value at a dotted path. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    if (!isObj(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** `{a: {b: v}}` for "a.b". */
export function pathPatch(path: string, value: unknown): Obj {
  const parts = path.split(".");
  let out: unknown = value;
  for (let i = parts.length - 1; i >= 0; i--) out = { [parts[i]!]: out };
  return out as Obj;
}

const bool = ["true", "false"];

function flag(id: string, key: string, label: string, description: string, dflt: boolean, extra: Partial<SettingEntry> = {}): SettingEntry {
  return {
    id,
    key,
    label,
    description,
    values: bool,
    current: (s) => String(typeof getPath(s, key) === "boolean" ? getPath(s, key) : dflt),
    patch: (v) => pathPatch(key, v === "true"),
    ...extra,
  };
}

function choice(id: string, key: string, label: string, description: string, values: string[], dflt: string, extra: Partial<SettingEntry> = {}): SettingEntry {
  return {
    id,
    key,
    label,
    description,
    values,
    current: (s) => {
      const v = getPath(s, key);
      return v === undefined || v === null ? dflt : String(v);
    },
    patch: (v) => pathPatch(key, /^\d+$/.test(v) ? Number(v) : v),
    ...extra,
  };
}

const IDLE_CHOICES: Array<[string, number]> = [
  ["30 sec", 30_000],
  ["1 min", 60_000],
  ["2 min", 120_000],
  ["5 min", 300_000],
  ["disabled", 0],
];

function idleLabel(v: unknown): string {
  if (v === undefined) return "5 min";
  if (v === 0 || (typeof v === "string" && v.trim().toLowerCase() === "disabled")) return "disabled";
  const hit = IDLE_CHOICES.find(([, ms]) => ms === v);
  return hit ? hit[0] : typeof v === "number" ? `${Math.round(v / 1000)} sec` : String(v);
}

/** pi 1.6's settings screen, in its order, with this build's two own entries after it. */
export const SETTINGS_CATALOG: SettingEntry[] = [
  flag("autocompact", "compaction.enabled", "Auto-compact", "Summarize older messages automatically when the context window fills up", true),
  flag("auto-resize-images", "images.autoResize", "Auto-resize images", "Scale images down to at most 2000×2000 pixels before a model sees them", true),
  flag("block-images", "images.blockImages", "Block images", "Never send images to a model provider", false),
  flag("skill-commands", "enableSkillCommands", "Skill commands", "Offer each skill as a /skill:name command", true),
  flag("show-hardware-cursor", "showHardwareCursor", "Show hardware cursor", "Show the terminal's own cursor rather than a drawn one", false),
  choice("editor-padding", "editorPaddingX", "Editor padding", "Columns of space left and right of the input editor (0–3)", ["0", "1", "2", "3"], "0", { noEffect: true }),
  choice("output-padding", "outputPad", "Output padding", "Columns of space beside messages, tool output and command output", ["0", "1"], "1", { noEffect: true }),
  choice("autocomplete-max-visible", "autocompleteMaxVisible", "Autocomplete max items", "How many completion entries are visible at once (3–20)", ["3", "5", "7", "10", "15", "20"], "5", { noEffect: true }),
  flag("clear-on-shrink", "terminal.clearOnShrink", "Clear on shrink", "Blank the rows left over when the drawn content gets shorter", false),
  flag("terminal-progress", "terminal.showTerminalProgress", "Terminal progress", "Report progress to the terminal's tab (OSC 9;4) while the agent works", false, { noEffect: true }),
  choice("steering-mode", "steeringMode", "Steering mode", "Messages typed while the agent works: one-at-a-time hands over one per turn, all hands them over together", ["one-at-a-time", "all"], "one-at-a-time"),
  choice("follow-up-mode", "followUpMode", "Follow-up mode", "Follow-up messages queued until the agent stops: one-at-a-time or all together", ["one-at-a-time", "all"], "one-at-a-time"),
  choice("transport", "transport", "Transport", "How to talk to providers that offer more than one transport", ["sse", "websocket", "websocket-cached", "auto"], "sse"),
  choice("share-destination", "sessionShareDestination", "Session share destination", "Where /share uploads a session: auto, a GitHub gist, or Radius", ["auto", "gist", "radius"], "auto", { noEffect: true }),
  {
    id: "http-idle-timeout",
    key: "httpIdleTimeoutMs",
    label: "HTTP idle timeout",
    description: "Give up on a provider request after this long without response data (disable it for slow local models)",
    values: IDLE_CHOICES.map(([l]) => l),
    current: (s) => idleLabel(getPath(s, "httpIdleTimeoutMs")),
    patch: (v) => ({ httpIdleTimeoutMs: IDLE_CHOICES.find(([l]) => l === v)?.[1] ?? 300_000 }),
  },
  choice("cache-warming-mode", "cacheWarming", "Cache warming", "Keep provider prompt caches warm: off, while streaming, or also between runs", ["off", "streaming", "idle"], "idle", { noEffect: true, globalOnly: true }),
  flag("hide-thinking", "hideThinkingBlock", "Hide thinking", "Leave the model's thinking out of the transcript", false),
  choice("mermaid-rendering", "markdown.mermaid", "Mermaid diagrams", "Draw ```mermaid blocks as text diagrams: off, once the block is complete, or while it streams", ["off", "final", "streaming"], "streaming"),
  flag("cache-miss-notices", "showCacheMissNotices", "Cache miss notices", "Note costly prompt-cache misses and provider recoveries in the transcript", false, { noEffect: true }),
  flag("collapse-changelog", "collapseChangelog", "Collapse changelog", "Show a short changelog after an update", false, { noEffect: true }),
  {
    id: "quiet-startup",
    key: "quietStartup",
    label: "Quiet startup",
    description: "Less output at start-up: true hides the header and the loaded resources, header keeps only the header",
    values: ["true", "header", "false"],
    current: (s) => String(getPath(s, "quietStartup") ?? false),
    patch: (v) => ({ quietStartup: v === "header" ? "header" : v === "true" }),
  },
  flag("install-telemetry", "enableInstallTelemetry", "Install telemetry", "Send an anonymous ping after an update (this build sends nothing)", true, { noEffect: true }),
  choice("default-project-trust", "defaultProjectTrust", "Default project trust", "What happens in a project nobody has decided about: ask, always trust, never trust", ["ask", "always", "never"], "ask", { globalOnly: true }),
  choice("double-escape-action", "doubleEscapeAction", "Double-escape action", "What Escape twice on an empty editor opens", ["tree", "fork", "none"], "tree"),
  choice("tree-filter-mode", "treeFilterMode", "Tree filter mode", "The filter /tree starts with", ["default", "no-tools", "user-only", "labeled-only", "all"], "default"),
  {
    id: "warnings",
    key: "warnings.anthropicExtraUsage",
    label: "Warnings",
    description: "Warn when an Anthropic subscription may be billed for extra usage",
    values: bool,
    current: (s) => String(getPath(s, "warnings.anthropicExtraUsage") ?? true),
    patch: (v) => ({ warnings: { anthropicExtraUsage: v === "true" } }),
    noEffect: true,
  },
  {
    id: "model-thinking",
    key: "modelThinkingLevels",
    label: "Default thinking level per model",
    description: "The thinking level a model starts with, by provider/model (Enter: pick a model and a level)",
    current: (s) => {
      const m = getPath(s, "modelThinkingLevels");
      const n = isObj(m) ? Object.keys(m).length : 0;
      return n ? `${n} model${n === 1 ? "" : "s"}` : "none";
    },
  },
  choice("tui-mode", "tuiMode", "TUI mode", "Screen layout: fullscreen draws on the alternate screen, regular keeps the terminal's scrollback (next start)", ["regular", "fullscreen"], "fullscreen"),
  choice("fullscreen-exit-output", "fullscreenExitOutput", "Fullscreen exit output", "On leaving fullscreen, print the transcript or only the resume hint", ["transcript", "resume-hint"], "transcript"),
  choice("fullscreen-scrollbar", "fullscreenScrollbar", "Fullscreen scrollbar", "When fullscreen shows a scrollbar", ["auto", "always", "hidden"], "auto"),
  flag("fullscreen-copy-on-select", "fullscreenCopyOnSelect", "Fullscreen copy on select", "Copy selected text as soon as it is selected in fullscreen mode", true),
  choice("fullscreen-wheel-scroll-lines", "fullscreenWheelScrollLines", "Fullscreen wheel scrolling", "Lines one mouse-wheel step scrolls in fullscreen mode (auto speeds up fast spins)", ["auto", "1", "2", "3", "5", "10"], "auto"),
  choice("theme", "theme", "Theme", "Colour theme of the terminal UI", ["dark", "light"], "dark"),
  // This build's own entries.
  flag("auto-retry", "retry.enabled", "Auto-retry", "Retry a failed model request after a transient error (rate limit, overload, network)", true),
  choice("default-thinking", "defaultThinkingLevel", "Default thinking level", "The thinking level a session starts with", [...THINKING_LEVELS], "medium"),
];

/** 1.6 keys this build accepts without acting on them and that no settings screen entry shows. */
export const SILENT_PI16_KEYS = [
  "externalEditor",
  "codemode",
  "terminal.hyperlinks",
  "terminal.images",
  "terminal.trueColor",
  "websocketConnectTimeoutMs",
  "selfUpdateCommand",
  "enableAnalytics",
  "lastChangelogVersion",
  "extensionChangelogVersions",
  "deviceId",
  "trackingId",
  "anthropicExtraUsage",
  "queueMode",
  "websockets",
];

/** Every 1.6 key (dotted) that is accepted here without an effect. */
export function noEffectKeys(): string[] {
  return [...SETTINGS_CATALOG.filter((e) => e.noEffect).map((e) => (e.id === "warnings" ? "warnings" : e.key)), ...SILENT_PI16_KEYS];
}

/** The no-effect keys a settings object sets. */
export function noEffectKeysIn(data: Obj): string[] {
  return noEffectKeys().filter((k) => getPath(data, k) !== undefined);
}

/** The next value in an entry's cycle. */
export function nextValue(entry: SettingEntry, settings: Obj): string | undefined {
  const values = entry.values;
  if (!values?.length) return undefined;
  const i = values.indexOf(entry.current(settings));
  return values[(i + 1) % values.length];
}

/** `pi config`'s printed list: every entry, its value and whether it acts here; `layer` is the file shown. */
export function formatSettingsList(settings: Obj, layer: Obj): string[] {
  const w = Math.max(...SETTINGS_CATALOG.map((e) => e.key.length));
  const v = Math.max(...SETTINGS_CATALOG.map((e) => e.current(settings).length));
  const lines = ["Settings (* = set in this settings file):"];
  for (const e of SETTINGS_CATALOG) {
    const mark = getPath(layer, e.key) !== undefined ? "*" : " ";
    lines.push(`  ${mark} ${e.key.padEnd(w)}  ${e.current(settings).padEnd(v)}  ${e.label}${e.noEffect ? "  (no effect here)" : ""}`);
  }
  const silent = SILENT_PI16_KEYS.filter((k) => getPath(layer, k) !== undefined);
  if (silent.length) lines.push(`  Also set, accepted without effect here: ${silent.join(", ")}`);
  return lines;
}
