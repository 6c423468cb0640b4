/**
 * Reaching two leaf files of @mariozechner/pi-ai without its root module (which loads every
 * provider SDK and typebox, ≈ 270–330 ms):
 *
 * - dist/models.generated.js — the model catalog, one `export const MODELS = {...}` with no
 *   imports. Measured on this machine: root import ≈ 270 ms; this file by path: dynamic
 *   import ≈ 11 ms, require(esm) ≈ 20 ms, read + vm evaluation ≈ 11 ms. We need it
 *   synchronously (the registry's lookups are synchronous, like the reference's), so it is read
 *   and evaluated as a function body in the current realm (same speed as import, works under
 *   jest's VM modules too, where require(esm) is refused). If the file ever stops being a single
 *   `export const MODELS =` literal, require(esm) is the fallback (unflagged since Node 20.19,
 *   which our engines field requires). `preloadCatalog()` fills the same cache asynchronously.
 * - dist/env-api-keys.js — pi-ai's provider → environment variable mapping (with the
 *   Bedrock / Vertex ambient-credential checks). It has no static imports (≈ 4 ms), so importing
 *   it by path keeps the exact semantics of the installed pi-ai instead of a copied table that
 *   would drift with upgrades.
 *
 * Both files are not in pi-ai's `exports` map, so they are addressed by file URL, resolved from
 * the package's main entry.
 */
import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { runInThisContext } from "node:vm";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Api, Model } from "@mariozechner/pi-ai";

export type CatalogData = Record<string, Record<string, Model<Api>>>;

export interface EnvKeysModule {
  getEnvApiKey(provider: string): string | undefined;
  findEnvKeys(provider: string): string[] | undefined;
}

let distDir: string | undefined;

/** The absolute path of pi-ai's dist folder. */
export function piAiDistDir(): string {
  if (distDir) return distDir;
  try {
    const main = import.meta.resolve("@mariozechner/pi-ai");
    distDir = dirname(fileURLToPath(main));
    return distDir;
  } catch {
    // Fall back to walking up from this file (e.g. a runtime without import.meta.resolve).
    let d = dirname(fileURLToPath(import.meta.url));
    for (;;) {
      const candidate = join(d, "node_modules", "@mariozechner", "pi-ai", "dist");
      if (existsSync(candidate)) return (distDir = candidate);
      const up = dirname(d);
      if (up === d) throw new Error("cannot find @mariozechner/pi-ai (is it installed?)");
      d = up;
    }
  }
}

function distFile(name: string): string {
  return join(piAiDistDir(), name);
}

let catalog: CatalogData | undefined;

function checkCatalog(mod: unknown, file: string): CatalogData {
  const models = (mod as { MODELS?: unknown } | undefined)?.MODELS;
  if (!models || typeof models !== "object") throw new Error(`${file} does not export MODELS`);
  return models as CatalogData;
}

/** The built-in catalog, loaded on first call (synchronously). */
export function loadCatalogSync(): CatalogData {
  if (catalog) return catalog;
  const file = distFile("models.generated.js");
  const text = readFileSync(file, "utf8");
  const exportsCount = text.match(/^export\s/gm)?.length ?? 0;
  if (exportsCount === 1 && !/^import\s/m.test(text) && /^export const MODELS\s*=/m.test(text)) {
    const body = text.replace(/^export const MODELS\s*=/m, "return ");
    const fn = runInThisContext(`(function () {\n${body}\n})`, { filename: file }) as () => unknown;
    catalog = checkCatalog({ MODELS: fn() }, file);
  } else {
    const require = createRequire(import.meta.url);
    catalog = checkCatalog(require(file), file);
  }
  return catalog;
}

/** Load the catalog ahead of time without blocking (same cache as loadCatalogSync). */
export async function preloadCatalog(): Promise<CatalogData> {
  if (catalog) return catalog;
  const file = distFile("models.generated.js");
  const mod = await import(pathToFileURL(file).href);
  catalog ??= checkCatalog(mod, file);
  return catalog;
}

export function isCatalogLoaded(): boolean {
  return catalog !== undefined;
}

let envKeys: Promise<EnvKeysModule> | undefined;

/** pi-ai's env-api-keys module (loaded once). */
export function loadEnvKeys(): Promise<EnvKeysModule> {
  envKeys ??= (async () => {
    const mod = (await import(pathToFileURL(distFile("env-api-keys.js")).href)) as EnvKeysModule;
    if (typeof mod.getEnvApiKey !== "function") throw new Error("pi-ai's env-api-keys.js has no getEnvApiKey");
    // The module loads node:fs/os/path with dynamic imports at its top level (for its ambient
    // credential checks); let those settle before the first lookup.
    await new Promise((r) => setImmediate(r));
    return mod;
  })();
  return envKeys;
}
