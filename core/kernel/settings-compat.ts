/**
 * pi 1.6's settings keys as seen from here: the ones that map onto ours (aliases). Keys this
 * build accepts without acting on them are accepted silently and listed by the settings screens
 * (settings-catalog.ts). `$schema` is accepted anywhere. docs/pi-1.6-compat.md has the full table.
 */
import { THINKING_LEVELS } from "./types.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

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


/**
 * `modelThinkingLevels["provider/id"]` (1.6): the thinking level a model starts with when nothing
 * more specific (a flag, a `:level` suffix, a resumed session) says otherwise; beats
 * `defaultThinkingLevel`. Undefined when unset or not a level.
 */
export function modelThinkingLevel(settings: Obj, provider: string, id: string): string | undefined {
  const map = settings.modelThinkingLevels;
  if (!isObj(map)) return undefined;
  const v = map[`${provider}/${id}`];
  return typeof v === "string" && (THINKING_LEVELS as readonly string[]).includes(v) ? v : undefined;
}
