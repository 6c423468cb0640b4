/**
 * The built-in model catalog and the environment-key table, read from JSON files that the build
 * writes from @earendil-works/pi-ai's public API (scripts/model-catalog.mjs →
 * dist/model-catalog/{models,env-keys}.json). No pi-ai module is loaded at run time for either:
 *
 * - models.json (≈ 1 MB, 1,698 models of pi 1.6's catalog) is read and parsed synchronously
 *   when the whole list is needed (listing, availability); finding one model reads only its
 *   provider's part (≈ 12 KB for anthropic), located by providers.json. The registry's lookups are
 *   synchronous, like the reference's. Importing pi-ai's `./providers/all` entry instead costs
 *   ≈ 4× as long (it loads every provider factory) and is asynchronous only.
 * - env-keys.json (≈ 5 KB) maps a provider to the environment variables that configure it; the
 *   two providers with ambient credentials (Amazon Bedrock, Google Vertex) are checked here as
 *   pi-ai documents them.
 *
 * The files are found from this module's own location, walking up to the package root (the same
 * code runs from sources under jest, from dist/ and from dist/bundle/chunks/).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Api, Model } from "@mariozechner/pi-ai";

export type CatalogData = Record<string, Record<string, Model<Api>>>;

export interface EnvKeysModule {
  getEnvApiKey(provider: string): string | undefined;
  findEnvKeys(provider: string): string[] | undefined;
}

/** Where the build writes the catalog, relative to the package root. */
export const CATALOG_DIR = join("dist", "model-catalog");

let dir: string | undefined;

/** The folder holding the generated catalog files. Throws, naming the build step, when absent. */
export function catalogDir(): string {
  if (dir) return dir;
  let d = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(d, CATALOG_DIR);
    if (existsSync(join(candidate, "models.json"))) return (dir = candidate);
    const up = dirname(d);
    if (up === d) throw new Error(`the built-in model catalog (${CATALOG_DIR}/models.json) is missing; run \`npm run build\``);
    d = up;
  }
}

function readJson(name: string): { source?: string; providers?: unknown } {
  const file = join(catalogDir(), name);
  const data = JSON.parse(readFileSync(file, "utf8")) as { source?: string; providers?: unknown };
  if (!data || typeof data.providers !== "object" || data.providers === null) throw new Error(`${file}: no "providers" object`);
  return data;
}

let catalog: CatalogData | undefined;
let catalogSource: string | undefined;

/** The built-in catalog, loaded on first call (synchronously). */
export function loadCatalogSync(): CatalogData {
  if (catalog) return catalog;
  const data = readJson("models.json");
  catalogSource = data.source;
  catalog = data.providers as CatalogData;
  return catalog;
}

/** Which library version the catalog was generated from (after it has loaded). */
export function loadedCatalogSource(): string | undefined {
  return catalogSource;
}

export function isCatalogLoaded(): boolean {
  return catalog !== undefined;
}

let spans: Record<string, [number, number]> | undefined;
const providerParts = new Map<string, Record<string, Model<Api>> | undefined>();

/**
 * One provider's built-in models (undefined when the catalog has no such provider), reading only
 * that provider's bytes of models.json, which providers.json locates. Once the whole catalog is
 * loaded, it answers. Throws, like loadCatalogSync, when the files cannot be read or parsed.
 */
export function loadCatalogProviderSync(provider: string): Record<string, Model<Api>> | undefined {
  if (catalog) return Object.hasOwn(catalog, provider) ? catalog[provider] : undefined;
  if (providerParts.has(provider)) return providerParts.get(provider);
  spans ??= readJson("providers.json").providers as Record<string, [number, number]>;
  const span = Object.hasOwn(spans, provider) ? spans[provider] : undefined;
  let models: Record<string, Model<Api>> | undefined;
  if (span) {
    const [start, end] = span;
    const file = join(catalogDir(), "models.json");
    const buf = Buffer.allocUnsafe(end - start);
    const fd = openSync(file, "r");
    try {
      if (readSync(fd, buf, 0, buf.length, start) !== buf.length) throw new Error(`${file}: shorter than providers.json says; run \`npm run build\``);
    } finally {
      closeSync(fd);
    }
    models = JSON.parse(buf.toString("utf8")) as Record<string, Model<Api>>;
  }
  providerParts.set(provider, models);
  return models;
}

interface EnvEntry {
  /** Every variable that configures the provider (status display). */
  vars: string[];
  /** The variables that give the API key, in priority order. */
  keyVars: string[];
  /** What the provider needs besides the key (e.g. Cloudflare's account id). */
  requires?: string[];
}

let envTable: Record<string, EnvEntry> | undefined;

function table(): Record<string, EnvEntry> {
  envTable ??= readJson("env-keys.json").providers as Record<string, EnvEntry>;
  return envTable;
}

const env = (name: string): string | undefined => process.env[name] || undefined;

/** Google Vertex with Application Default Credentials, a project and a location. */
function vertexAmbient(): boolean {
  const adc = env("GOOGLE_APPLICATION_CREDENTIALS") ?? join(homedir(), ".config", "gcloud", "application_default_credentials.json");
  return existsSync(adc) && !!(env("GOOGLE_CLOUD_PROJECT") || env("GCLOUD_PROJECT")) && !!env("GOOGLE_CLOUD_LOCATION");
}

/** Amazon Bedrock with a profile, IAM keys, a bearer token, a container role or web identity. */
function bedrockAmbient(): boolean {
  return !!(
    env("AWS_PROFILE") ||
    (env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) ||
    env("AWS_BEARER_TOKEN_BEDROCK") ||
    env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") ||
    env("AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
    env("AWS_WEB_IDENTITY_TOKEN_FILE")
  );
}

const AMBIENT: Readonly<Record<string, () => boolean>> = { "google-vertex": vertexAmbient, "amazon-bedrock": bedrockAmbient };

/** The environment-key lookups over the generated table (synchronous; read once). */
export const envKeys: EnvKeysModule = {
  findEnvKeys(provider) {
    const entry = table()[provider];
    if (entry?.requires?.some((v) => !env(v))) return undefined;
    const found = (entry?.vars ?? []).filter((v) => env(v));
    return found.length ? found : undefined;
  },
  getEnvApiKey(provider) {
    const entry = table()[provider];
    if (entry?.requires?.some((v) => !env(v))) return undefined;
    for (const v of entry?.keyVars ?? []) {
      const value = env(v);
      if (value) return value;
    }
    return AMBIENT[provider]?.() ? "<authenticated>" : undefined;
  },
};

/** Every environment variable a built-in provider reads, with the provider's name (for --help). */
export function providerEnvVars(): Array<{ name: string; provider: string }> {
  const out: Array<{ name: string; provider: string }> = [];
  const seen = new Set<string>();
  try {
    for (const [provider, e] of Object.entries(table())) {
      for (const v of e.vars) if (!seen.has(v)) (seen.add(v), out.push({ name: v, provider }));
    }
  } catch {
    // no catalogue next to the bundle: --help lists only the app's own variables
  }
  // Credentials found without a key variable (vertexAmbient, bedrockAmbient below).
  const ambient: Array<[string, string]> = [
    ["AWS_PROFILE", "amazon-bedrock"],
    ["AWS_ACCESS_KEY_ID", "amazon-bedrock"],
    ["AWS_SECRET_ACCESS_KEY", "amazon-bedrock"],
    ["AWS_BEARER_TOKEN_BEDROCK", "amazon-bedrock"],
    ["AWS_REGION", "amazon-bedrock"],
    ["GOOGLE_APPLICATION_CREDENTIALS", "google-vertex"],
    ["GOOGLE_CLOUD_PROJECT", "google-vertex"],
    ["GOOGLE_CLOUD_LOCATION", "google-vertex"],
  ];
  for (const [name, provider] of ambient) if (!seen.has(name)) (seen.add(name), out.push({ name, provider }));
  return out;
}

/** Every variable the environment-key table names for any provider (keys, tokens, and what configures them). */
export function providerEnvNames(): string[] {
  const names = new Set<string>();
  for (const entry of Object.values(table())) for (const v of [...entry.keyVars, ...entry.vars]) names.add(v);
  return [...names];
}

/** The environment-key table (kept async for the auth storage's lazy path). */
export async function loadEnvKeys(): Promise<EnvKeysModule> {
  table();
  return envKeys;
}
