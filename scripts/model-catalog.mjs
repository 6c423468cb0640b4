#!/usr/bin/env node
/**
 * Writes the built-in model catalog the CLI reads at run time (dist/model-catalog/), from the
 * public API of the installed @earendil-works/pi-ai (the library behind pi 1.6):
 *
 *  - models.json: { source, providers: { <provider>: { <model id>: Model } } } — every chat model
 *    of every built-in provider (`getBuiltinProviders()` / `getBuiltinModels()` of its
 *    `./providers/all` entry), in the library's order;
 *  - providers.json: { source, providers: { <provider>: [start, end] } } — where each provider's
 *    `{ <model id>: Model }` object sits in models.json, in bytes;
 *  - env-keys.json: { source, providers: { <provider>: { vars, keyVars } } } — the environment
 *    variables that configure each provider (`findEnvKeys()` of its `./compat` entry): `vars` are
 *    all of them (status display), `keyVars` those that give the API key, in priority
 *    order, `requires` what the provider needs besides the key (its auth's resolve()). The providers of @mariozechner/pi-ai 0.73.1 (our streaming layer) that 1.6 renamed
 *    (e.g. azure-openai-responses) keep their variables, so custom models under an old provider
 *    name still find their key.
 *
 * Run by scripts/bundle.mjs on every build, so the catalog follows the installed library: after
 * an upgrade, `npm run build` regenerates it. Nothing here runs at CLI start-up; the CLI reads the
 * JSON only when it needs a built-in model (core/stores/models/builtin-catalog.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A process.env stand-in where exactly the given variables are set (to their own names). */
function envWith(names) {
  const set = new Set(names);
  const on = (k) => typeof k === "string" && (set.has(k) || set.has("*"));
  return new Proxy({}, {
    get: (_t, k) => (on(k) ? k : undefined),
    has: (_t, k) => on(k),
    ownKeys: () => [...set],
    getOwnPropertyDescriptor: (_t, k) => (on(k) ? { value: k, enumerable: true, configurable: true } : undefined),
  });
}

function envTable(providers, findEnvKeys, getEnvApiKey, into) {
  for (const p of providers) {
    if (into[p]) continue;
    const vars = findEnvKeys(p, envWith(["*"])) ?? [];
    const keyVars = vars.filter((v) => getEnvApiKey(p, envWith([v])) === v);
    if (vars.length) into[p] = { vars, keyVars };
  }
}

/**
 * Variables a provider needs besides its key (e.g. Cloudflare's account id), found through the
 * provider's own auth: resolve() with only the key set; when that is not enough, with every
 * variable it asked for set.
 */
async function requiredVars(provider, entry) {
  const resolve = provider.auth?.apiKey?.resolve;
  const key = entry?.keyVars[0];
  if (typeof resolve !== "function" || !key) return [];
  const run = async (names) => {
    const asked = [];
    const env = envWith(names);
    const ctx = { env: async (n) => (asked.push(n), env[n]), fileExists: async () => false };
    const r = await resolve({ ctx, signal: new AbortController().signal }).catch(() => undefined);
    return { ok: !!r, asked };
  };
  const alone = await run([key]);
  if (alone.ok) return [];
  const all = await run([...new Set([key, ...alone.asked])]);
  return all.ok ? [...new Set(alone.asked)].filter((n) => !entry.vars.includes(n)) : [];
}

export async function writeModelCatalog(outDir = join(root, "dist", "model-catalog")) {
  const { PI_AI_VERSION } = await import("@earendil-works/pi-ai/utils/version");
  const source = `@earendil-works/pi-ai@${PI_AI_VERSION}`;
  const { getBuiltinProviders, getBuiltinModels, builtinProviders } = await import("@earendil-works/pi-ai/providers/all");
  const compat = await import("@earendil-works/pi-ai/compat");

  const models = {};
  let count = 0;
  for (const provider of getBuiltinProviders()) {
    const byId = {};
    for (const m of getBuiltinModels(provider)) {
      const { type: _type, ...model } = m;
      byId[model.id] = model;
      count++;
    }
    if (Object.keys(byId).length) models[provider] = byId;
  }

  const env = {};
  envTable(getBuiltinProviders(), compat.findEnvKeys, compat.getEnvApiKey, env);
  for (const provider of builtinProviders()) {
    const requires = await requiredVars(provider, env[provider.id]);
    if (requires.length) env[provider.id].requires = requires;
  }
  // The 0.73.1 streaming layer's provider names (public root entry, build time only).
  // Its functions read process.env itself: they run against the stand-in, then process.env is restored.
  const old = await import("@mariozechner/pi-ai");
  const withEnv = (fn) => (p, e) => {
    const saved = process.env;
    process.env = e;
    try {
      return fn(p);
    } finally {
      process.env = saved;
    }
  };
  envTable(old.getProviders(), withEnv(old.findEnvKeys), withEnv(old.getEnvApiKey), env);

  mkdirSync(outDir, { recursive: true });
  // models.json is written in parts so that providers.json can say where each provider's models
  // are (byte offsets): looking up one built-in model then parses ~20 KB instead of ~1 MB.
  let text = `{"source":${JSON.stringify(source)},"providers":{`;
  const spans = {};
  for (const [i, [provider, byId]] of Object.entries(models).entries()) {
    text += `${i ? "," : ""}${JSON.stringify(provider)}:`;
    const start = Buffer.byteLength(text);
    text += JSON.stringify(byId);
    spans[provider] = [start, Buffer.byteLength(text)];
  }
  text += "}}";
  if (text !== JSON.stringify({ source, providers: models })) throw new Error("model catalog: models.json written in parts differs from the whole");
  writeFileSync(join(outDir, "models.json"), text);
  writeFileSync(join(outDir, "providers.json"), JSON.stringify({ source, providers: spans }));
  writeFileSync(join(outDir, "env-keys.json"), JSON.stringify({ source, providers: env }, null, 1));
  return { source, providers: Object.keys(models).length, models: count };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await writeModelCatalog(process.argv[2]);
  console.log(`model catalog: ${r.models} models of ${r.providers} providers from ${r.source}`);
}
