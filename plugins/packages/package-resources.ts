/**
 * What a package provides. A package.json "pi" manifest naming any of `extensions`, `skills`,
 * `prompts`, `themes` (paths or globs relative to the package root, `!glob` to leave some out)
 * decides; without one the conventional folders are read:
 *
 *   extensions/   .ts and .js files, and sub-folders with a "pi" manifest or an index.ts/js
 *   skills/       folders with a SKILL.md (searched recursively) and .md files at the top
 *   prompts/      .md files          themes/   .json files
 *
 * A folder with neither (a plain extension folder) counts as one extension when it has an
 * index.ts or index.js. The settings filter of the package (object form of a `packages` entry)
 * then enables or disables single resources; disabled ones are still listed (for `pi config`).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { dirEntries, pathKind, resourceFiles } from "../../core/kernel/index.js";
import { applyPatterns, expandGlob, hasGlob, isOverride } from "./filters.js";

export const RESOURCE_TYPES = ["extensions", "skills", "prompts", "themes"] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export interface PackageResource {
  type: ResourceType;
  /** Absolute path of the file. */
  path: string;
  /** Path relative to the package root (posix separators). */
  rel: string;
  enabled: boolean;
}

export type PackageFilter = Partial<Record<ResourceType, string[]>>;

export function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The "pi" manifest when it names at least one resource type. */
export function readManifest(root: string): Partial<Record<ResourceType, string[]>> | undefined {
  const pi = readJson(join(root, "package.json"))?.pi;
  if (!pi || typeof pi !== "object") return undefined;
  const m = pi as Record<string, unknown>;
  if (!RESOURCE_TYPES.some((t) => Array.isArray(m[t]))) return undefined;
  const out: Partial<Record<ResourceType, string[]>> = {};
  for (const t of RESOURCE_TYPES) if (Array.isArray(m[t])) out[t] = (m[t] as unknown[]).filter((x): x is string => typeof x === "string");
  return out;
}

/** A folder's own extension entry points: its "pi".extensions, else index.ts / index.js. */
function extensionEntries(dir: string): string[] | undefined {
  const m = readManifest(dir);
  if (m?.extensions?.length) {
    const found = m.extensions.filter((e) => !isOverride(e)).map((e) => resolve(dir, e)).filter((p) => existsSync(p));
    if (found.length) return found;
  }
  for (const f of ["index.ts", "index.js"]) if (existsSync(join(dir, f))) return [join(dir, f)];
  return undefined;
}

function extensionFiles(dir: string): string[] {
  const own = extensionEntries(dir);
  if (own) return own;
  const out: string[] = [];
  for (const e of dirEntries(dir)) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    if (e.kind === "file" && /\.(ts|js)$/.test(e.name)) out.push(e.path);
    else if (e.kind === "dir") out.push(...(extensionEntries(e.path) ?? []));
  }
  return out;
}

/** The files a path contributes as resources of `type` (a file is itself; a folder is searched). */
export function filesOf(type: ResourceType, path: string): string[] {
  if (type !== "extensions") return resourceFiles(type, path);
  const k = pathKind(path);
  return k === "file" ? [path] : k === "dir" ? extensionFiles(path) : [];
}

function fromEntries(root: string, type: ResourceType, entries: string[]): string[] {
  const sources = entries.filter((e) => !isOverride(e));
  const paths = sources.flatMap((e) => (hasGlob(e) ? expandGlob(root, e) : [resolve(root, e)]));
  const files = [...new Set(paths.flatMap((p) => filesOf(type, p)))];
  const overrides = entries.filter(isOverride);
  if (!overrides.length) return files;
  const kept = applyPatterns(files, overrides, root);
  return files.filter((f) => kept.has(f));
}

const posixRel = (root: string, p: string) => relative(root, p).split(sep).join("/");

/** Every resource of the package at `root`, with `enabled` set by `filter`. */
export function collectPackageResources(root: string, filter?: PackageFilter): PackageResource[] {
  const out: PackageResource[] = [];
  let st;
  try {
    st = statSync(root);
  } catch {
    return out;
  }
  if (st.isFile()) return [{ type: "extensions", path: root, rel: posixRel(root, root) || root.split(sep).pop()!, enabled: true }];
  const manifest = readManifest(root);
  let any = false;
  for (const type of RESOURCE_TYPES) {
    let files: string[];
    if (manifest) files = fromEntries(root, type, manifest[type] ?? []);
    else files = existsSync(join(root, type)) ? filesOf(type, join(root, type)) : [];
    if (files.length) any = true;
    const patterns = filter?.[type];
    const enabled = patterns === undefined ? new Set(files) : patterns.length === 0 ? new Set<string>() : applyPatterns(files, patterns, root);
    for (const f of files) out.push({ type, path: f, rel: posixRel(root, f), enabled: enabled.has(f) });
  }
  if (!any && !manifest) {
    const own = extensionEntries(root);
    if (own) {
      const patterns = filter?.extensions;
      const enabled = patterns === undefined ? new Set(own) : patterns.length === 0 ? new Set<string>() : applyPatterns(own, patterns, root);
      for (const f of own) out.push({ type: "extensions", path: f, rel: posixRel(root, f), enabled: enabled.has(f) });
    }
  }
  return out;
}
