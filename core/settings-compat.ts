/**
 * pi 1.6's settings keys as seen from here: the ones that map onto ours (aliases), and the ones
 * this build does not support yet, reported once per file at start-up rather than ignored
 * silently. `$schema` is accepted anywhere. docs/pi-1.6-compat.md has the full table.
 */
import type { Diagnostic } from "./types.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

/** 1.6 keys (dotted paths) with no behaviour here yet. */
export const UNSUPPORTED_PI16_KEYS = [
  "showCacheMissNotices",
  "cacheWarming",
  "externalEditor",
  "codemode",
  "sessionShareDestination",
  "compaction.modelOverrides",
  "editorPaddingX",
  "outputPad",
  "autocompleteMaxVisible",
  "terminal.showTerminalProgress",
  "terminal.hyperlinks",
  "terminal.images",
  "terminal.trueColor",
  "markdown.mermaid",
  "websocketConnectTimeoutMs",
  "selfUpdateCommand",
  "collapseChangelog",
  "enableInstallTelemetry",
  "enableAnalytics",
  "warnings",
];

function has(data: Obj, path: string): boolean {
  let cur: unknown = data;
  for (const part of path.split(".")) {
    if (!isObj(cur) || !(part in cur)) return false;
    cur = cur[part];
  }
  return true;
}

/** The unsupported 1.6 keys a settings object sets. */
export function unsupportedKeys(data: Obj): string[] {
  return UNSUPPORTED_PI16_KEYS.filter((k) => has(data, k));
}

/** One warning per file naming every unsupported key it sets (nothing when there are none). */
export function reportUnsupported(data: Obj, source: string | undefined, diagnostics: Diagnostic[]): void {
  const keys = unsupportedKeys(data);
  if (!keys.length || !source) return;
  diagnostics.push({
    level: "warning",
    source,
    message: `settings key${keys.length === 1 ? "" : "s"} ${keys.map((k) => `"${k}"`).join(", ")} (pi 1.6) ${keys.length === 1 ? "is" : "are"} not supported by this build and ${keys.length === 1 ? "has" : "have"} no effect (see docs/pi-1.6-compat.md)`,
  });
}

/** 1.6 names for keys we have under another name, applied to the merged settings. */
export function applyPi16Aliases(m: Obj): Obj {
  delete m.$schema;
  const retry = m.retry;
  if (isObj(retry) && typeof retry.maxAgentDelayMs === "number") {
    m.retry = { ...retry, maxDelayMs: retry.maxAgentDelayMs };
  }
  // httpIdleTimeoutMs is also the provider SDK's request timeout unless retry.provider.timeoutMs
  // says otherwise (1.6); 0 / "disabled" means none. plugins/network applies it to the sockets.
  const idle = m.httpIdleTimeoutMs;
  const idleMs = typeof idle === "number" && Number.isFinite(idle) && idle >= 0 ? Math.floor(idle) : typeof idle === "string" && idle.trim().toLowerCase() === "disabled" ? 0 : undefined;
  const r = isObj(m.retry) ? m.retry : {};
  const provider = isObj(r.provider) ? r.provider : {};
  if (idleMs !== undefined && provider.timeoutMs === undefined) {
    m.retry = { ...r, provider: { ...provider, timeoutMs: idleMs === 0 ? 2_147_483_647 : idleMs } };
  }
  return m;
}

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];

/**
 * `modelThinkingLevels["provider/id"]` (1.6): the thinking level a model starts with when nothing
 * more specific (a flag, a `:level` suffix, a resumed session) says otherwise; beats
 * `defaultThinkingLevel`. 1.6's `max` is our `xhigh`. Undefined when unset or not a level.
 */
export function modelThinkingLevel(settings: Obj, provider: string, id: string): string | undefined {
  const map = settings.modelThinkingLevels;
  if (!isObj(map)) return undefined;
  const v = map[`${provider}/${id}`];
  const level = v === "max" ? "xhigh" : v;
  return typeof level === "string" && LEVELS.includes(level) ? level : undefined;
}
