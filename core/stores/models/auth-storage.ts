/**
 * Credentials: `<agentDir>/auth.json`, the reference's format —
 *   { "<provider>": { "type": "api_key", "key": "..." } | { "type": "oauth", "access", "refresh", "expires", ... } }
 *
 * - The file is created with mode 0600 (its folder 0700) on the first write; reading never
 *   creates it.
 * - A malformed file is a diagnostic naming the file and the position; its credentials are
 *   ignored and the file is never rewritten (writes are refused until it is fixed by hand).
 * - getApiKey(provider) resolves: runtime key (--api-key, never persisted) → auth.json
 *   (api_key value or OAuth token, refreshed when expired) → pi-ai's environment variable for
 *   the provider → the fallback resolver (the model registry's models.json keys) → undefined.
 * - A `key` may be "!command" (run once, stdout trimmed, cached), the name of an environment
 *   variable, or a literal (see config-value.ts).
 *
 * Writes re-read the file and change only the one provider, so entries another process wrote
 * meanwhile are kept; the write is atomic (temp file + rename). There is no cross-process lock.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { Diagnostic } from "../../kernel/types.js";
import { jsonErrorPosition } from "../../kernel/settings.js";
import { resolveConfigValue } from "./config-value.js";
import { envKeys as envKeyTable, loadEnvKeys } from "./builtin-catalog.js";
import { writeFileAtomic } from "../../kernel/fs-utils.js";

export interface ApiKeyCredential {
  type: "api_key";
  key: string;
}

export interface OAuthCredential {
  type: "oauth";
  access: string;
  refresh: string;
  /** Expiry, milliseconds since the epoch. */
  expires: number;
  [extra: string]: unknown;
}

export type AuthCredential = ApiKeyCredential | OAuthCredential;
export type AuthData = Record<string, AuthCredential>;

/** OAuth credentials as an OAuth provider sees them (without the `type` tag). */
export interface OAuthTokens {
  access: string;
  refresh: string;
  expires: number;
  [extra: string]: unknown;
}

/** The part of pi-ai's OAuthProviderInterface the storage needs. */
export interface OAuthProvider {
  id: string;
  name?: string;
  login?(callbacks: unknown): Promise<OAuthTokens>;
  refreshToken(credentials: OAuthTokens): Promise<OAuthTokens>;
  getApiKey(credentials: OAuthTokens): string;
  modifyModels?(models: Model<Api>[], credentials: OAuthTokens): Model<Api>[];
}

export type AuthSource = "runtime" | "stored" | "environment" | "fallback";

export interface AuthStatus {
  configured: boolean;
  source?: AuthSource;
  /** The environment variable name, or "--api-key". Never a key. */
  label?: string;
}

export interface AuthStorageOptions {
  /** Also told about every diagnostic (e.g. the kernel's diagnostic log). */
  report?: (d: Diagnostic) => void;
}

/** The last source of keys (the model registry's models.json / plugin provider keys). */
export interface FallbackResolver {
  /** Is a key configured? Must not run commands. */
  has(provider: string): boolean;
  /** Resolve the key (may run a command). */
  get(provider: string): Promise<string | undefined>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

export class AuthStorage {
  readonly diagnostics: Diagnostic[] = [];
  private data: AuthData = {};
  /** The file exists but did not parse (or is not an object): never write to it. */
  private broken = false;
  private readonly runtime = new Map<string, string>();
  private readonly oauthProviders = new Map<string, OAuthProvider>();
  /** pi-ai's built-in OAuth providers met so far (loaded on demand). */
  private readonly builtinOAuth = new Map<string, OAuthProvider>();
  private readonly refreshing = new Map<string, Promise<string | undefined>>();
  private fallback?: FallbackResolver;

  private constructor(
    /** The auth.json path, or undefined for in-memory storage. */
    readonly path: string | undefined,
    initial: AuthData | undefined,
    private readonly opts: AuthStorageOptions,
  ) {
    if (initial) this.data = this.sanitize(initial, "in-memory credentials");
    else this.reload();
  }

  /** Storage backed by `path` (usually `<agentDir>/auth.json`). */
  static create(path: string, opts: AuthStorageOptions = {}): AuthStorage {
    return new AuthStorage(path, undefined, opts);
  }

  /** Storage that never touches the disk (tests, SDK hosts). */
  static inMemory(data: AuthData = {}, opts: AuthStorageOptions = {}): AuthStorage {
    return new AuthStorage(undefined, structuredClone(data), opts);
  }

  private report(d: Diagnostic): void {
    this.diagnostics.push(d);
    try {
      this.opts.report?.(d);
    } catch {
      /* a failing listener must not break credential handling */
    }
  }

  /** Re-read auth.json. A malformed file leaves no stored credentials and a diagnostic. */
  reload(): void {
    if (!this.path) return;
    this.broken = false;
    this.data = {};
    if (!existsSync(this.path)) return;
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      this.broken = true;
      this.report({ level: "error", source: this.path, message: "cannot read credentials file", error });
      return;
    }
    if (!text.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      this.broken = true;
      this.report({
        level: "error",
        source: this.path,
        message: `malformed JSON at ${jsonErrorPosition(text, error)}; stored credentials are ignored and the file is not rewritten until it is fixed`,
      });
      return;
    }
    if (!isObj(parsed)) {
      this.broken = true;
      this.report({ level: "error", source: this.path, message: "credentials file must hold a JSON object; ignored" });
      return;
    }
    this.data = this.sanitize(parsed, this.path);
  }

  /** Keep well-formed entries; report the others (they stay untouched on disk). */
  private sanitize(raw: Obj, source: string): AuthData {
    const out: AuthData = {};
    for (const [provider, v] of Object.entries(raw)) {
      const why = credentialProblem(v);
      if (why) {
        this.report({ level: "warning", source, message: `credential "${provider}" ignored: ${why}` });
        continue;
      }
      out[provider] = v as AuthCredential;
    }
    return out;
  }

  // ---- runtime keys (--api-key) ----

  /** A key for this process only; it outranks everything and is never written to disk. */
  setRuntimeApiKey(provider: string, key: string): void {
    this.runtime.set(provider, key);
  }
  removeRuntimeApiKey(provider: string): void {
    this.runtime.delete(provider);
  }

  /** Last resort after the environment (the model registry sets this to its models.json keys). */
  setFallbackResolver(fn: FallbackResolver | undefined): void {
    this.fallback = fn;
  }

  // ---- stored credentials ----

  get(provider: string): AuthCredential | undefined {
    return this.data[provider];
  }
  has(provider: string): boolean {
    return provider in this.data;
  }
  list(): string[] {
    return Object.keys(this.data);
  }
  getAll(): AuthData {
    return { ...this.data };
  }
  /** True when the file exists but could not be used (and will not be written). */
  get isBroken(): boolean {
    return this.broken;
  }

  /** Store a credential. Returns false when it could not be persisted (kept in memory then). */
  set(provider: string, credential: AuthCredential): boolean {
    const why = credentialProblem(credential);
    if (why) throw new Error(`invalid credential for "${provider}": ${why}`);
    this.data[provider] = credential;
    return this.persist(provider, credential);
  }

  /** Forget a credential. Returns false when the file could not be updated. */
  remove(provider: string): boolean {
    delete this.data[provider];
    return this.persist(provider, undefined);
  }

  private persist(provider: string, credential: AuthCredential | undefined): boolean {
    if (!this.path) return true;
    const path = this.path;
    if (this.broken) {
      this.report({ level: "warning", source: path, message: `not saving credentials for "${provider}": the file did not parse; fix it by hand first` });
      return false;
    }
    try {
      let onDisk: Obj = {};
      if (existsSync(path)) {
        const text = readFileSync(path, "utf8");
        if (text.trim()) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (error) {
            this.broken = true;
            this.report({
              level: "error",
              source: path,
              message: `malformed JSON at ${jsonErrorPosition(text, error)} (changed by someone else?); not saving credentials for "${provider}"`,
            });
            return false;
          }
          if (!isObj(parsed)) {
            this.broken = true;
            this.report({ level: "error", source: path, message: `credentials file must hold a JSON object; not saving "${provider}"` });
            return false;
          }
          onDisk = parsed;
        }
      }
      if (credential) onDisk[provider] = credential;
      else delete onDisk[provider];
      writeFileAtomic(path, JSON.stringify(onDisk, null, 2) + "\n", { mode: 0o600, dirMode: 0o700 });
      return true;
    } catch (error) {
      this.report({ level: "error", source: path, message: `could not save credentials for "${provider}"`, error });
      return false;
    }
  }

  // ---- OAuth ----

  /** Make an OAuth provider known (extensions' registerProvider({oauth})). */
  registerOAuthProvider(provider: OAuthProvider): () => void {
    this.oauthProviders.set(provider.id, provider);
    return () => {
      if (this.oauthProviders.get(provider.id) === provider) this.oauthProviders.delete(provider.id);
    };
  }

  /** Registered providers first, then pi-ai's built-in ones (loaded on demand). */
  async getOAuthProvider(id: string): Promise<OAuthProvider | undefined> {
    const own = this.oauthProviders.get(id);
    if (own) return own;
    const known = this.builtinOAuth.get(id);
    if (known) return known;
    try {
      const p = (await builtinOAuthProviders()).find((b) => b.id === id);
      if (p) this.builtinOAuth.set(id, p);
      return p;
    } catch (error) {
      this.report({ level: "warning", source: this.path ?? "auth", message: "cannot load pi-ai's OAuth providers", error });
      return undefined;
    }
  }

  /** Every OAuth provider that can sign in: registered ones, then pi-ai's built-in ones. */
  async listOAuthProviders(): Promise<OAuthProvider[]> {
    const out = new Map<string, OAuthProvider>(this.oauthProviders);
    try {
      for (const p of await builtinOAuthProviders()) if (!out.has(p.id)) out.set(p.id, p);
    } catch (error) {
      this.report({ level: "warning", source: this.path ?? "auth", message: "cannot load pi-ai's OAuth providers", error });
    }
    return [...out.values()].filter((p) => typeof p.login === "function");
  }

  /** An OAuth provider known without loading anything (registered, or a built-in met before). */
  getOAuthProviderSync(id: string): OAuthProvider | undefined {
    return this.oauthProviders.get(id) ?? this.builtinOAuth.get(id);
  }

  /** Providers that have a stored OAuth credential. */
  oauthProviderIds(): string[] {
    return Object.keys(this.data).filter((k) => this.data[k]?.type === "oauth");
  }

  /** Run a provider's login flow and store the result. */
  async login(providerId: string, callbacks: unknown): Promise<void> {
    const p = await this.getOAuthProvider(providerId);
    if (!p?.login) throw new Error(`unknown OAuth provider: ${providerId}`);
    const tokens = await p.login(callbacks);
    this.set(providerId, { ...tokens, type: "oauth" });
  }

  logout(provider: string): boolean {
    return this.remove(provider);
  }

  private oauthKey(providerId: string, cred: OAuthCredential): Promise<string | undefined> {
    const running = this.refreshing.get(providerId);
    if (running) return running;
    const p = (async () => {
      const provider = await this.getOAuthProvider(providerId);
      if (!provider) {
        this.report({ level: "warning", source: this.path ?? "auth", message: `OAuth credential for "${providerId}" has no OAuth provider to use it` });
        return undefined;
      }
      if (Date.now() < cred.expires) return provider.getApiKey(stripType(cred));
      try {
        const fresh = await provider.refreshToken(stripType(cred));
        this.set(providerId, { ...fresh, type: "oauth" });
        return provider.getApiKey(fresh);
      } catch (error) {
        this.report({ level: "warning", source: this.path ?? "auth", message: `could not refresh the OAuth token for "${providerId}"; use /login again`, error });
        // Another process may have refreshed it meanwhile.
        this.reload();
        const again = this.data[providerId];
        if (again?.type === "oauth" && Date.now() < again.expires) return provider.getApiKey(stripType(again));
        return undefined;
      }
    })();
    this.refreshing.set(providerId, p);
    return p.finally(() => this.refreshing.delete(providerId));
  }

  // ---- resolution ----

  /** Is any credential configured (no commands run, no tokens refreshed)? */
  async hasAuth(provider: string): Promise<boolean> {
    return (await this.getAuthStatus(provider, true)).configured;
  }

  /** getAuthStatus, answered at once (the environment key table is read synchronously). */
  getAuthStatusSync(provider: string, includeFallback = true): AuthStatus {
    if (this.runtime.has(provider)) return { configured: true, source: "runtime", label: "--api-key" };
    if (this.data[provider]) return { configured: true, source: "stored" };
    let names: string[] | undefined;
    let fromEnv: string | undefined;
    try {
      names = envKeyTable.findEnvKeys(provider);
      fromEnv = envKeyTable.getEnvApiKey(provider);
    } catch {
      /* the table could not be read: the async path reports it */
    }
    if (names?.[0]) return { configured: true, source: "environment", label: names[0] };
    if (fromEnv) return { configured: true, source: "environment" };
    if (includeFallback && this.fallback?.has(provider)) return { configured: true, source: "fallback" };
    return { configured: false };
  }

  /** Where a provider's key would come from, without revealing or resolving it. */
  async getAuthStatus(provider: string, includeFallback = true): Promise<AuthStatus> {
    if (this.runtime.has(provider)) return { configured: true, source: "runtime", label: "--api-key" };
    if (this.data[provider]) return { configured: true, source: "stored" };
    const env = await this.envKeys();
    const names = env?.findEnvKeys(provider);
    if (names?.[0]) return { configured: true, source: "environment", label: names[0] };
    if (env?.getEnvApiKey(provider)) return { configured: true, source: "environment" };
    if (includeFallback && this.fallback?.has(provider)) return { configured: true, source: "fallback" };
    return { configured: false };
  }

  /**
   * The key for `provider`: runtime → auth.json → environment → fallback resolver.
   * `includeFallback: false` stops before the fallback (the registry orders models.json itself).
   */
  async getApiKey(provider: string, opts: { includeFallback?: boolean } = {}): Promise<string | undefined> {
    const runtime = this.runtime.get(provider);
    if (runtime) return runtime;
    const cred = this.data[provider];
    if (cred?.type === "api_key") {
      const key = await resolveConfigValue(cred.key, {
        cache: true,
        onError: (m) => this.report({ level: "warning", source: this.path ?? "auth", message: `key for "${provider}": ${m}` }),
      });
      if (key) return key;
    } else if (cred?.type === "oauth") {
      const key = await this.oauthKey(provider, cred);
      if (key) return key;
    }
    const env = await this.envKeys();
    const fromEnv = env?.getEnvApiKey(provider);
    if (fromEnv) return fromEnv;
    if (opts.includeFallback !== false && this.fallback) return (await this.fallback.get(provider)) ?? undefined;
    return undefined;
  }

  private async envKeys() {
    try {
      return await loadEnvKeys();
    } catch (error) {
      this.report({ level: "error", source: "model catalog", message: "cannot load the environment key table; environment variables are not consulted", error });
      return undefined;
    }
  }
}

function stripType(c: OAuthCredential): OAuthTokens {
  const { type: _type, ...rest } = c;
  return rest;
}

function credentialProblem(v: unknown): string | undefined {
  if (!isObj(v)) return "not an object";
  if (v.type === "api_key") return typeof v.key === "string" && v.key ? undefined : `"key" must be a non-empty string`;
  if (v.type === "oauth") {
    if (typeof v.access !== "string") return `"access" must be a string`;
    if (typeof v.expires !== "number") return `"expires" must be a number`;
    return undefined;
  }
  return `"type" must be "api_key" or "oauth"`;
}

// ---- pi-ai 1.6's built-in OAuth flows, seen through the OAuthProvider interface ----

/** The old-style login callbacks (extensions' and our /login's). */
interface LoginCallbacks {
  onAuth?(info: { url: string; instructions?: string }): void;
  onPrompt?(prompt: { message: string; placeholder?: string }): Promise<string>;
  onProgress?(message: string): void;
  onManualCodeInput?(): Promise<string>;
  onSelect?(prompt: { message: string; options: { id: string; label: string }[] }): Promise<string | undefined>;
  signal?: AbortSignal;
}

type AuthPrompt = { type: "text" | "secret" | "manual_code"; message: string; placeholder?: string } | { type: "select"; message: string; options: readonly { id: string; label: string }[] };
type AuthEvent =
  | { type: "info" | "progress"; message: string }
  | { type: "auth_url"; url: string; instructions?: string }
  | { type: "device_code"; userCode: string; verificationUri: string };

/** The part of pi-ai 1.6's OAuthAuth used here. */
export interface OAuthFlow {
  name: string;
  login(interaction: { signal: AbortSignal; prompt(p: AuthPrompt): Promise<string>; notify(e: AuthEvent): void }): Promise<OAuthTokens & { type?: string }>;
  refresh(credential: OAuthTokens & { type: "oauth" }, signal: AbortSignal): Promise<OAuthTokens & { type?: string }>;
}

/** pi-ai 1.6's interaction (prompt / notify) over the old callbacks. */
function interactionFrom(cb: LoginCallbacks) {
  const ask = (message: string, placeholder?: string) => {
    if (!cb.onPrompt) throw new Error("this login needs an answer, and no prompt is available");
    return cb.onPrompt({ message, ...(placeholder !== undefined ? { placeholder } : {}) });
  };
  return {
    signal: cb.signal ?? new AbortController().signal,
    async prompt(p: AuthPrompt): Promise<string> {
      if (p.type === "select") {
        const options = p.options.map((o) => ({ id: o.id, label: o.label }));
        const chosen = cb.onSelect ? await cb.onSelect({ message: p.message, options }) : await ask(`${p.message} (${options.map((o) => o.id).join(", ")})`);
        if (chosen === undefined) throw new Error("login cancelled");
        return chosen;
      }
      if (p.type === "manual_code" && cb.onManualCodeInput) return cb.onManualCodeInput();
      return ask(p.message, p.placeholder);
    },
    notify(e: AuthEvent): void {
      if (e.type === "auth_url") cb.onAuth?.({ url: e.url, ...(e.instructions ? { instructions: e.instructions } : {}) });
      else if (e.type === "device_code") cb.onAuth?.({ url: e.verificationUri, instructions: `Enter code: ${e.userCode}` });
      else cb.onProgress?.(e.message);
    },
  };
}

const untyped = ({ type: _type, ...tokens }: OAuthTokens & { type?: string }): OAuthTokens => tokens as OAuthTokens;

/** One of pi-ai 1.6's OAuth flows as an OAuthProvider (the API key is the access token). */
export function fromOAuthFlow(id: string, flow: OAuthFlow): OAuthProvider {
  return {
    id,
    name: flow.name,
    login: async (callbacks) => untyped(await flow.login(interactionFrom((callbacks ?? {}) as LoginCallbacks))),
    refreshToken: async (credentials) => untyped(await flow.refresh({ ...credentials, type: "oauth" }, new AbortController().signal)),
    getApiKey: (credentials) => credentials.access,
  };
}

let builtinFlows: Promise<OAuthProvider[]> | undefined;

/** pi-ai 1.6's providers that sign in with OAuth (its provider table loaded on first need). */
function builtinOAuthProviders(): Promise<OAuthProvider[]> {
  builtinFlows ??= import("@earendil-works/pi-ai/providers/all").then(
    (m) =>
      (m.builtinProviders() as unknown as { id: string; auth?: { oauth?: OAuthFlow } }[])
        .filter((p) => p.auth?.oauth)
        .map((p) => fromOAuthFlow(p.id, p.auth!.oauth!)),
    (error: unknown) => {
      builtinFlows = undefined;
      throw error;
    },
  );
  return builtinFlows;
}
