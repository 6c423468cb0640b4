/**
 * Turning what a person types into models, with the reference's rules:
 *
 * - `--model` (resolveCliModel): `provider/id`, an exact id, or a partial id/name ("sonnet"),
 *   with an optional `:<thinking level>` suffix ("sonnet:high"). Ids may contain colons and
 *   slashes (OpenRouter's "openai/gpt-4o:extended"), so the full text is tried first and the
 *   suffix is only split off when that fails. Partial matches prefer aliases (ids without a
 *   -YYYYMMDD date) and then the highest-sorting id. With `--provider`, an unknown id falls
 *   back to the provider's default model with that id (a "custom model id" warning).
 * - `--models` / `enabledModels` (resolveModelScope): comma-separated patterns, each a model
 *   pattern as above or a glob over "provider/id" or "id" (`*sonnet*`, `anthropic/*:high`).
 * - `--list-models [search]` (listModels): the table the reference prints (provider, model,
 *   context, max-out, thinking, images), fuzzy-filtered and sorted by provider then id.
 * - findInitialModel: CLI → scoped models → settings default → the first available model
 *   among the known providers' defaults → the first available model → none.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { THINKING_LEVELS, type ThinkingLevel } from "../../kernel/types.js";
import type { ModelRegistry } from "./model-registry.js";

type AnyModel = Model<Api>;

export const DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium";

/** Each built-in provider's default model (pi 1.6's table, matching its catalog). */
export const defaultModelPerProvider: Readonly<Record<string, string>> = Object.freeze({
  "amazon-bedrock": "us.anthropic.claude-opus-5-5",
  "ant-ling": "Ring-2.6-1T",
  anthropic: "claude-opus-5-5",
  openai: "gpt-6.2-sol",
  azure: "gpt-6.2-sol",
  "openai-codex": "gpt-6.2-sol",
  radius: "balanced",
  nvidia: "nvidia/nemotron-3.5-super-vl-120b-a12b",
  deepseek: "deepseek-v4-pro",
  google: "gemini-4-argon",
  "google-vertex": "gemini-4-argon",
  "github-copilot": "gpt-6.1-sol",
  openrouter: "moonshotai/kimi-k2.7-code",
  "vercel-ai-gateway": "zai/glm-5.3",
  xai: "grok-4.7",
  groq: "openai/gpt-oss-120b",
  cerebras: "gpt-oss-120b",
  zai: "glm-5.3",
  "zai-coding-cn": "glm-5.3",
  mistral: "devstral-medium-latest",
  minimax: "MiniMax-M3",
  "minimax-cn": "MiniMax-M3",
  moonshotai: "kimi-k2.7-code",
  "moonshotai-cn": "kimi-k2.7-code",
  huggingface: "moonshotai/Kimi-K2.7-Code",
  fireworks: "accounts/fireworks/models/kimi-k3",
  together: "moonshotai/Kimi-K3",
  baseten: "zai-org/GLM-5.3",
  opencode: "kimi-k2.7-code",
  "opencode-go": "kimi-k3.1-pro",
  "kimi-coding": "kimi-for-coding",
  meta: "muse-spark-1.3",
  "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.7-code",
  "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.7-code",
  "qwen-token-plan": "qwen3.8-max",
  "qwen-token-plan-cn": "qwen3.8-max",
  "qwen-token-plan-individual": "qwen3.8-max",
  "qwen-token-plan-individual-cn": "qwen3.8-max",
  xiaomi: "mimo-v2.6-pro",
  "xiaomi-token-plan-cn": "mimo-v2.6-pro",
  "xiaomi-token-plan-ams": "mimo-v2.6-pro",
  "xiaomi-token-plan-sgp": "mimo-v2.6-pro",
});

export function isThinkingLevel(s: string): s is ThinkingLevel {
  return (THINKING_LEVELS as readonly string[]).includes(s);
}

/** A level as pi 1.6 writes it on the command line, in patterns and settings (clamped per model later); undefined for any other name. */
export function parseThinkingLevel(s: string): ThinkingLevel | undefined {
  return isThinkingLevel(s) ? s : undefined;
}

const sameModel = (a: AnyModel, b: AnyModel) => a.provider === b.provider && a.id === b.id;

/** An id without a date suffix (or ending in -latest) is an alias. */
function isAlias(id: string): boolean {
  return id.endsWith("-latest") || !/-\d{8}$/.test(id);
}

/**
 * An exact reference: "provider/id" or a bare id (case-insensitive). A bare id that exists
 * under several providers is ambiguous: no match.
 */
export function findExactModelReferenceMatch(reference: string, models: readonly AnyModel[]): AnyModel | undefined {
  const ref = reference.trim();
  if (!ref) return undefined;
  const lower = ref.toLowerCase();
  const canonical = models.filter((m) => `${m.provider}/${m.id}`.toLowerCase() === lower);
  if (canonical.length) return canonical.length === 1 ? canonical[0] : undefined;
  const slash = ref.indexOf("/");
  if (slash > 0) {
    const provider = ref.slice(0, slash).trim().toLowerCase();
    const id = ref.slice(slash + 1).trim().toLowerCase();
    if (provider && id) {
      const hits = models.filter((m) => m.provider.toLowerCase() === provider && m.id.toLowerCase() === id);
      if (hits.length) return hits.length === 1 ? hits[0] : undefined;
    }
  }
  const byId = models.filter((m) => m.id.toLowerCase() === lower);
  return byId.length === 1 ? byId[0] : undefined;
}

/** Exact reference, else the best partial match on id or name. */
function matchOne(pattern: string, models: readonly AnyModel[]): AnyModel | undefined {
  const exact = findExactModelReferenceMatch(pattern, models);
  if (exact) return exact;
  const p = pattern.toLowerCase();
  if (!p) return undefined;
  const hits = models.filter((m) => m.id.toLowerCase().includes(p) || m.name?.toLowerCase().includes(p));
  if (!hits.length) return undefined;
  const aliases = hits.filter((m) => isAlias(m.id));
  const pool = aliases.length ? aliases : hits;
  return [...pool].sort((a, b) => b.id.localeCompare(a.id))[0];
}

export interface ParsedModelPattern {
  model?: AnyModel;
  thinkingLevel?: ThinkingLevel;
  warning?: string;
}

/**
 * Match a pattern, splitting `:<level>` suffixes off from the right only when the full text
 * matches nothing. An invalid suffix is a warning (scope lists) or no match (strict, --model).
 */
export function parseModelPattern(
  pattern: string,
  models: readonly AnyModel[],
  opts: { allowInvalidThinkingLevelFallback?: boolean } = {},
): ParsedModelPattern {
  const direct = matchOne(pattern, models);
  if (direct) return { model: direct };
  const colon = pattern.lastIndexOf(":");
  if (colon < 0) return {};
  const prefix = pattern.slice(0, colon);
  const suffix = pattern.slice(colon + 1);
  const level = parseThinkingLevel(suffix);
  if (level) {
    const inner = parseModelPattern(prefix, models, opts);
    if (!inner.model) return inner;
    return { model: inner.model, thinkingLevel: inner.warning ? undefined : level, warning: inner.warning };
  }
  if (opts.allowInvalidThinkingLevelFallback === false) return {};
  const inner = parseModelPattern(prefix, models, opts);
  if (!inner.model) return inner;
  return { model: inner.model, warning: `Invalid thinking level "${suffix}" in pattern "${pattern}". Using the default instead.` };
}

// ---- globs -------------------------------------------------------------------------------------

export function isGlobPattern(p: string): boolean {
  return /[*?[]/.test(p);
}

/** A case-insensitive RegExp for a glob: `*` and `?` stay within a path segment, `**` crosses `/`. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        re += ".*";
        i++;
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "i");
}

// ---- scopes (--models, enabledModels) ------------------------------------------------------------

export interface ScopedModel {
  model: AnyModel;
  thinkingLevel?: ThinkingLevel;
}

/** "a,b" or ["a,b","c"] → ["a","b","c"]. */
export function parseModelList(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = typeof value === "string" ? [value] : value;
  return parts.flatMap((p) => p.split(",")).map((p) => p.trim()).filter(Boolean);
}

/** Resolve scope patterns against `models` (normally the available ones), keeping pattern order. */
export function resolveModelScope(patterns: readonly string[], models: readonly AnyModel[]): { scoped: ScopedModel[]; warnings: string[] } {
  const scoped: ScopedModel[] = [];
  const warnings: string[] = [];
  const add = (model: AnyModel, thinkingLevel?: ThinkingLevel) => {
    if (!scoped.some((s) => sameModel(s.model, model))) scoped.push(thinkingLevel ? { model, thinkingLevel } : { model });
  };
  for (const pattern of patterns) {
    if (isGlobPattern(pattern)) {
      let glob = pattern;
      let level: ThinkingLevel | undefined;
      const colon = pattern.lastIndexOf(":");
      if (colon >= 0 && parseThinkingLevel(pattern.slice(colon + 1))) {
        level = parseThinkingLevel(pattern.slice(colon + 1));
        glob = pattern.slice(0, colon);
      }
      const re = globToRegExp(glob);
      const hits = models.filter((m) => re.test(`${m.provider}/${m.id}`) || re.test(m.id));
      if (!hits.length) warnings.push(`No models match pattern "${pattern}"`);
      for (const m of hits) add(m, level);
      continue;
    }
    const r = parseModelPattern(pattern, models);
    if (r.warning) warnings.push(r.warning);
    if (!r.model) {
      warnings.push(`No models match pattern "${pattern}"`);
      continue;
    }
    add(r.model, r.thinkingLevel);
  }
  return { scoped, warnings };
}

/** resolveModelScope over the registry's available models. */
export async function resolveModelScopeFromRegistry(patterns: readonly string[], registry: ModelRegistry) {
  return resolveModelScope(patterns, await registry.getAvailable());
}

// ---- --model / --provider ----------------------------------------------------------------------

export interface CliModelResult {
  model?: AnyModel;
  thinkingLevel?: ThinkingLevel;
  warning?: string;
  error?: string;
}

/**
 * Resolve `--model` (and `--provider`) against all models — not only those with a key, so that
 * `--api-key` can be used on a first run.
 */
/**
 * One model of several providers' matches: a sole provider wins; else the one match whose provider
 * has credentials; else ambiguous (named in the error).
 */
function byCredentials(matches: readonly AnyModel[], usable: ((provider: string) => boolean) | undefined, text: string): { model?: AnyModel; error?: string } {
  if (new Set(matches.map((m) => m.provider)).size <= 1) return { model: matches[0] };
  const withKey = usable ? matches.filter((m) => usable(m.provider)) : [];
  if (withKey.length === 1) return { model: withKey[0] };
  const names = matches.map((m) => `${m.provider}/${m.id}`).sort((a, b) => a.localeCompare(b)).join(", ");
  const hint = withKey.length ? "More than one matching provider is authenticated." : "No matching provider is authenticated.";
  return { error: `Model "${text}" is ambiguous across providers: ${names}. ${hint} Use --provider or provider/model.` };
}

export function resolveCliModel(opts: {
  cliProvider?: string;
  cliModel?: string;
  modelRegistry?: ModelRegistry;
  models?: readonly AnyModel[];
  /** Whether a provider has credentials: breaks ties between providers offering a match (pi 1.6). */
  usable?: (provider: string) => boolean;
}): CliModelResult {
  const { cliProvider, cliModel } = opts;
  if (!cliModel) return {};
  const all = opts.models ?? opts.modelRegistry?.getAll() ?? [];
  if (!all.length) return { error: "No models available. Check your installation or add models to models.json." };
  const providers = new Map<string, string>();
  for (const m of all) providers.set(m.provider.toLowerCase(), m.provider);

  let provider = cliProvider ? providers.get(cliProvider.toLowerCase()) : undefined;
  if (cliProvider && !provider) return { error: `Unknown provider "${cliProvider}". Use --list-models to see available providers and models.` };

  const exactFull = (): { model?: AnyModel; error?: string } | undefined => {
    const lower = cliModel.toLowerCase();
    const full = all.find((m) => `${m.provider}/${m.id}`.toLowerCase() === lower);
    if (full) return { model: full };
    const raw = all.filter((m) => m.id.toLowerCase() === lower);
    return raw.length ? byCredentials(raw, opts.usable, cliModel) : undefined;
  };

  let pattern = cliModel;
  let inferred = false;
  if (!provider) {
    // "provider/pattern" when the prefix names a provider (preferred over ids containing slashes)
    const slash = cliModel.indexOf("/");
    if (slash > 0) {
      const canonical = providers.get(cliModel.slice(0, slash).toLowerCase());
      if (canonical) {
        provider = canonical;
        pattern = cliModel.slice(slash + 1);
        inferred = true;
      }
    }
    if (!provider) {
      const exact = exactFull();
      if (exact) return exact;
    }
  } else if (cliModel.toLowerCase().startsWith(`${provider.toLowerCase()}/`)) {
    pattern = cliModel.slice(provider.length + 1);
  }

  let candidates = provider ? all.filter((m) => m.provider === provider) : all;
  if (!provider && opts.usable) {
    // Partial matches on several providers: those with credentials first (pi 1.6).
    const lower = pattern.toLowerCase();
    const hits = all.filter((m) => m.id.toLowerCase().includes(lower) || m.name?.toLowerCase().includes(lower));
    if (new Set(hits.map((m) => m.provider)).size > 1 && hits.some((m) => opts.usable!(m.provider))) candidates = all.filter((m) => opts.usable!(m.provider));
  }
  const r = parseModelPattern(pattern, candidates, { allowInvalidThinkingLevelFallback: false });
  if (r.model) {
    // The same id on several providers is not decided by catalog order.
    if (!provider) {
      const tied = byCredentials(candidates.filter((m) => m.id === r.model!.id), opts.usable, cliModel);
      if (tied.error) return { error: tied.error };
    }
    return { model: r.model, thinkingLevel: r.thinkingLevel, warning: r.warning };
  }

  if (inferred) {
    // "openai/gpt-4o:extended" may be an OpenRouter id that merely looks like provider/id.
    const exact = exactFull();
    if (exact) return exact;
    const again = parseModelPattern(cliModel, all, { allowInvalidThinkingLevelFallback: false });
    if (again.model) return { model: again.model, thinkingLevel: again.thinkingLevel, warning: again.warning };
  }

  if (provider) {
    const own = all.filter((m) => m.provider === provider);
    const defId = defaultModelPerProvider[provider];
    const base = (defId && own.find((m) => m.id === defId)) || own[0];
    if (base) {
      const note = `Model "${pattern}" not found for provider "${provider}". Using custom model id.`;
      return { model: { ...base, id: pattern, name: pattern }, warning: r.warning ? `${r.warning} ${note}` : note };
    }
  }
  return { warning: r.warning, error: `Model "${provider ? `${provider}/${pattern}` : cliModel}" not found. Use --list-models to see available models.` };
}

// ---- the model to start with ---------------------------------------------------------------------

export interface InitialModelOptions {
  modelRegistry: ModelRegistry;
  cliProvider?: string;
  cliModel?: string;
  /** From --models / enabledModels; the first one wins unless continuing a session. */
  scopedModels?: readonly ScopedModel[];
  isContinuing?: boolean;
  /** settings.defaultProvider / defaultModel / defaultThinkingLevel */
  defaultProvider?: string;
  defaultModel?: string;
  defaultThinkingLevel?: ThinkingLevel;
  /** settings.modelThinkingLevels (1.6): the level a given model starts with, over defaultThinkingLevel. */
  modelThinkingLevel?: (model: AnyModel) => ThinkingLevel | undefined;
  /** The level a continued session recorded (its thinking_level_change): over both settings, under a `:level` suffix (1.6). */
  sessionThinkingLevel?: ThinkingLevel;
}

export interface InitialModel {
  model?: AnyModel;
  thinkingLevel: ThinkingLevel;
  warning?: string;
  /** --model did not resolve (the caller exits with it). */
  error?: string;
}

export async function findInitialModel(opts: InitialModelOptions): Promise<InitialModel> {
  const registry = opts.modelRegistry;
  const fallback = (m: AnyModel | undefined, d = opts.defaultThinkingLevel ?? DEFAULT_THINKING_LEVEL) => opts.sessionThinkingLevel ?? ((m && opts.modelThinkingLevel?.(m)) || d);
  if (opts.cliModel) {
    const withKey = opts.cliProvider ? undefined : new Set((await registry.getAvailable()).map((m) => m.provider));
    const r = resolveCliModel({ cliProvider: opts.cliProvider, cliModel: opts.cliModel, modelRegistry: registry, usable: withKey && ((p) => withKey.has(p)) });
    if (r.error) return { thinkingLevel: DEFAULT_THINKING_LEVEL, error: r.error, warning: r.warning };
    if (r.model) return { model: r.model, thinkingLevel: r.thinkingLevel ?? fallback(r.model), warning: r.warning };
  }
  if (opts.scopedModels?.length && !opts.isContinuing) {
    const first = opts.scopedModels[0]!;
    return { model: first.model, thinkingLevel: first.thinkingLevel ?? fallback(first.model) };
  }
  if (opts.defaultProvider && opts.defaultModel) {
    const found = registry.find(opts.defaultProvider, opts.defaultModel);
    if (found) return { model: found, thinkingLevel: fallback(found) };
  }
  const available = await registry.getAvailable();
  for (const [provider, id] of Object.entries(defaultModelPerProvider)) {
    const hit = available.find((m) => m.provider === provider && m.id === id);
    if (hit) return { model: hit, thinkingLevel: fallback(hit, DEFAULT_THINKING_LEVEL) };
  }
  return { model: available[0], thinkingLevel: fallback(available[0], DEFAULT_THINKING_LEVEL) };
}

// ---- --list-models ---------------------------------------------------------------------------------

/**
 * Subsequence match: every query character appears in order. Lower scores are better; runs of
 * consecutive characters and matches at word starts are rewarded, gaps are penalised.
 */
export function fuzzyMatch(query: string, text: string): { matches: boolean; score: number } {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  if (!q) return { matches: true, score: 0 };
  let qi = 0;
  let score = 0;
  let prev = -2;
  let run = 0;
  for (let i = 0; i < t.length && qi < q.length; i++) {
    if (t[i] !== q[qi]) continue;
    if (i === prev + 1) {
      run++;
      score -= 4 * run;
    } else {
      run = 0;
      if (prev >= 0) score += 2 * (i - prev - 1);
    }
    if (i === 0 || /[\s\-_./:]/.test(t[i - 1]!)) score -= 8;
    score += i * 0.05;
    prev = i;
    qi++;
  }
  if (qi < q.length) return { matches: false, score: 0 };
  if (q === t) score -= 100;
  return { matches: true, score };
}

/** Keep items matching every whitespace-separated token of `query`, best first. */
export function fuzzyFilter<T>(items: readonly T[], query: string, text: (item: T) => string): T[] {
  const tokens = query.trim().split(/\s+/).filter(Boolean);
  if (!tokens.length) return [...items];
  const scored: Array<{ item: T; score: number }> = [];
  for (const item of items) {
    const s = text(item);
    let total = 0;
    let ok = true;
    for (const tok of tokens) {
      const m = fuzzyMatch(tok, s);
      if (!m.matches) {
        ok = false;
        break;
      }
      total += m.score;
    }
    if (ok) scored.push({ item, score: total });
  }
  return scored.sort((a, b) => a.score - b.score).map((x) => x.item);
}

/** 200000 → "200K", 1000000 → "1M", 1048576 → "1.0M". */
export function formatTokenCount(n: number): string {
  if (n >= 1_000_000) {
    const v = n / 1_000_000;
    return Number.isInteger(v) ? `${v}M` : `${v.toFixed(1)}M`;
  }
  if (n >= 1_000) {
    const v = n / 1_000;
    return Number.isInteger(v) ? `${v}K` : `${v.toFixed(1)}K`;
  }
  return String(n);
}

/** The --list-models table (header + one line per model), sorted by provider then id. */
export function formatModelTable(models: readonly AnyModel[]): string {
  const sorted = [...models].sort((a, b) => a.provider.localeCompare(b.provider) || a.id.localeCompare(b.id));
  const rows = [
    ["provider", "model", "context", "max-out", "thinking", "images"],
    ...sorted.map((m) => [
      m.provider,
      m.id,
      formatTokenCount(m.contextWindow),
      formatTokenCount(m.maxTokens),
      m.reasoning ? "yes" : "no",
      m.input.includes("image") ? "yes" : "no",
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join("  ")).join("\n") + "\n";
}

export const NO_MODELS_MESSAGE =
  "No models available. Log in with /login, set a provider's API key environment variable (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY), or add models to models.json in the agent directory.";

/**
 * What `--list-models [search]` prints: `stdout` (the table or a message) and `stderr` (a
 * models.json warning). Lists the available models (those with a key), as the reference does.
 */
export async function listModels(registry: ModelRegistry, search?: string): Promise<{ stdout: string; stderr: string; count: number }> {
  const err = registry.getError();
  const stderr = err ? `Warning: errors loading models.json:\n${err}\n` : "";
  const available = await registry.getAvailable();
  if (!available.length) return { stdout: NO_MODELS_MESSAGE + "\n", stderr, count: 0 };
  const shown = search ? fuzzyFilter(available, search, (m) => `${m.provider} ${m.id}`) : available;
  if (!shown.length) return { stdout: `No models matching "${search}"\n`, stderr, count: 0 };
  return { stdout: formatModelTable(shown), stderr, count: shown.length };
}
