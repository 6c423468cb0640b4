/**
 * Checks of a models.json provider entry (hand-written: typebox's compiler would cost ≈ 200 ms of
 * start-up). Problems make the entry unusable; unknown fields are warnings.
 */
import { THINKING_LEVELS } from "../../kernel/types.js";

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

const PROVIDER_KEYS = new Set(["name", "baseUrl", "api", "apiKey", "headers", "authHeader", "compat", "models", "modelOverrides"]);
const MODEL_KEYS = new Set(["id", "name", "api", "baseUrl", "reasoning", "thinkingLevelMap", "input", "cost", "contextWindow", "maxTokens", "headers", "compat"]);
const OVERRIDE_KEYS = new Set(["name", "reasoning", "thinkingLevelMap", "input", "cost", "contextWindow", "maxTokens", "headers", "compat"]);

/** Problems that make a provider entry unusable; unknown fields only go to `warnings`. */
export function validateProvider(name: string, raw: unknown, warnings: string[]): string[] {
  const errs: string[] = [];
  const at = (p: string) => `providers.${name}${p}`;
  if (!isObj(raw)) return [`${at("")}: must be an object`];
  for (const k of Object.keys(raw)) if (!PROVIDER_KEYS.has(k)) warnings.push(`${at("." + k)}: unknown field, ignored`);
  for (const k of ["name", "baseUrl", "api", "apiKey"]) {
    if (raw[k] !== undefined && (typeof raw[k] !== "string" || !raw[k])) errs.push(`${at("." + k)}: must be a non-empty string`);
  }
  if (raw.authHeader !== undefined && typeof raw.authHeader !== "boolean") errs.push(`${at(".authHeader")}: must be true or false`);
  checkHeaders(raw.headers, at(".headers"), errs);
  if (raw.compat !== undefined && !isObj(raw.compat)) errs.push(`${at(".compat")}: must be an object`);
  if (raw.models !== undefined) {
    if (!Array.isArray(raw.models)) errs.push(`${at(".models")}: must be an array`);
    else raw.models.forEach((m, i) => checkModel(m, at(`.models[${i}]`), MODEL_KEYS, true, errs, warnings));
  }
  if (raw.modelOverrides !== undefined) {
    if (!isObj(raw.modelOverrides)) errs.push(`${at(".modelOverrides")}: must be an object`);
    else for (const [id, o] of Object.entries(raw.modelOverrides)) checkModel(o, at(`.modelOverrides.${id}`), OVERRIDE_KEYS, false, errs, warnings);
  }
  const hasModels = Array.isArray(raw.models) && raw.models.length > 0;
  const hasOverrides = isObj(raw.modelOverrides) && Object.keys(raw.modelOverrides).length > 0;
  if (!errs.length && !hasModels && !raw.baseUrl && !raw.headers && !raw.compat && !hasOverrides && raw.apiKey === undefined) {
    errs.push(`${at("")}: needs "baseUrl", "headers", "compat", "modelOverrides" or "models"`);
  }
  return errs;
}

function checkHeaders(v: unknown, path: string, errs: string[]) {
  if (v === undefined) return;
  if (!isObj(v)) return void errs.push(`${path}: must be an object of strings`);
  for (const [k, x] of Object.entries(v)) if (typeof x !== "string") errs.push(`${path}.${k}: must be a string`);
}

function checkModel(m: unknown, path: string, keys: Set<string>, full: boolean, errs: string[], warnings: string[]) {
  if (!isObj(m)) return void errs.push(`${path}: must be an object`);
  for (const k of Object.keys(m)) if (!keys.has(k)) warnings.push(`${path}.${k}: unknown field, ignored`);
  if (full && (typeof m.id !== "string" || !m.id)) errs.push(`${path}.id: required, a non-empty string`);
  for (const k of ["name", "api", "baseUrl"]) {
    if (m[k] !== undefined && (typeof m[k] !== "string" || !m[k])) errs.push(`${path}.${k}: must be a non-empty string`);
  }
  if (m.reasoning !== undefined && typeof m.reasoning !== "boolean") errs.push(`${path}.reasoning: must be true or false`);
  if (m.input !== undefined && (!Array.isArray(m.input) || m.input.some((x) => x !== "text" && x !== "image"))) {
    errs.push(`${path}.input: must be an array of "text" and "image"`);
  }
  for (const k of ["contextWindow", "maxTokens"]) {
    if (m[k] !== undefined && (typeof m[k] !== "number" || !(Number(m[k]) > 0))) errs.push(`${path}.${k}: must be a positive number`);
  }
  if (m.cost !== undefined) {
    if (!isObj(m.cost)) errs.push(`${path}.cost: must be an object`);
    else
      for (const k of ["input", "output", "cacheRead", "cacheWrite"]) {
        const v = m.cost[k];
        if (v === undefined ? full : typeof v !== "number") errs.push(`${path}.cost.${k}: ${full ? "required, " : "must be "}a number`);
      }
  }
  if (m.thinkingLevelMap !== undefined) {
    if (!isObj(m.thinkingLevelMap)) errs.push(`${path}.thinkingLevelMap: must be an object`);
    else
      for (const [k, v] of Object.entries(m.thinkingLevelMap)) {
        if (!(THINKING_LEVELS as readonly string[]).includes(k)) errs.push(`${path}.thinkingLevelMap.${k}: unknown thinking level`);
        else if (v !== null && typeof v !== "string") errs.push(`${path}.thinkingLevelMap.${k}: must be a string or null`);
      }
  }
  checkHeaders(m.headers, `${path}.headers`, errs);
  if (m.compat !== undefined && !isObj(m.compat)) errs.push(`${path}.compat: must be an object`);
}

