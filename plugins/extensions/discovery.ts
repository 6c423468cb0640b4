/**
 * Where extensions come from. In a folder: `*.ts` / `*.js` files, and one level of
 * sub-folders, each loaded through its `package.json` `pi.extensions` list or else its
 * `index.ts` / `index.js`.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { expandHome } from "../../core/kernel/index.js";

export type ExtensionOrigin = "cli" | "project" | "global" | "settings" | "project-settings" | "package" | "inline";

export interface ExtensionCandidate {
  /** Absolute path of the module (or `<inline:n>`). */
  path: string;
  origin: ExtensionOrigin;
  /** For inline factories. */
  factory?: (pi: any) => unknown;
}

export function resolveFrom(base: string, p: string): string {
  const e = expandHome(p.trim());
  return isAbsolute(e) ? e : resolve(base, e);
}

function isExtensionFile(name: string): boolean {
  return (name.endsWith(".ts") || name.endsWith(".js") || name.endsWith(".mts") || name.endsWith(".mjs")) && !name.endsWith(".d.ts");
}

function readPiExtensions(dir: string): string[] | undefined {
  const pkg = join(dir, "package.json");
  if (!existsSync(pkg)) return undefined;
  try {
    const json = JSON.parse(readFileSync(pkg, "utf8")) as { pi?: { extensions?: unknown } };
    const list = json?.pi?.extensions;
    if (!Array.isArray(list)) return undefined;
    const out = list.filter((x): x is string => typeof x === "string").map((x) => resolve(dir, x)).filter((p) => existsSync(p));
    return out.length ? out : undefined;
  } catch {
    return undefined;
  }
}

/** The entry points of one extension folder: `pi.extensions` in package.json, else index.ts|js. */
export function entriesOfFolder(dir: string): string[] | undefined {
  const declared = readPiExtensions(dir);
  if (declared) return declared;
  for (const index of ["index.ts", "index.js", "index.mts", "index.mjs"]) {
    const p = join(dir, index);
    if (existsSync(p)) return [p];
  }
  return undefined;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Every extension in a folder such as `.pi/extensions/` (one level deep). */
export function discoverInFolder(dir: string): string[] {
  if (!isDir(dir)) return [];
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const p = join(dir, name);
    if (isDir(p)) {
      const entries = entriesOfFolder(p);
      if (entries) out.push(...entries);
    } else if (isExtensionFile(name)) {
      out.push(p);
    }
  }
  return out;
}

/**
 * A path given on the command line or in settings: a file, or a folder (its entries, or every
 * extension in it). Returns undefined when nothing exists there.
 */
export function expandPath(p: string): string[] | undefined {
  if (!existsSync(p)) return undefined;
  if (isDir(p)) return entriesOfFolder(p) ?? discoverInFolder(p);
  return [p];
}

export function realKey(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}
