/**
 * OAuth for HTTP MCP servers, on the MCP SDK's client auth (`auth()`: discovery, dynamic client
 * registration, PKCE, code exchange, refresh). This module keeps pi 1.6's credential file and
 * gives the SDK a provider over it; the sign-in itself (loopback listener, browser) is login.ts.
 *
 * Credentials: `<agentDir>/mcp-auth.json` (pi 1.6's file and format), one object per server,
 * keyed `mcp__<name with "-" as "_">|<url>`: {serverUrl, clientInformation, tokens,
 * tokensExpireAt (ms since the epoch), discovery}. The file is written 0600 in a 0700 folder; its
 * values never reach a session file, a diagnostic or a log.
 *
 * A connection never starts a browser: it sends the stored access token (refreshed first when it
 * has expired), lets the SDK refresh after a 401, and fails with McpNeedsSignInError when only a
 * new sign-in would help.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/kernel/index.js";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

export const MCP_AUTH_FILE = "mcp-auth.json";

/** One server's stored OAuth state (pi 1.6's McpOAuthState). */
export interface McpOAuthState {
  serverUrl: string;
  clientInformation?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  tokensExpireAt?: number;
  discovery?: OAuthDiscoveryState;
}

/** The `oauth` object of a server's configuration (pi 1.6's keys). */
export interface McpOAuthConfig {
  clientId?: string;
  clientSecret?: string;
  callbackPort?: number;
  callbackUrl?: string;
  clientName?: string;
  scope?: string;
  clientRegistration?: "auto" | "dcr" | "cimd";
}

/** Raised when the server wants a (new) sign-in: the user runs `pi mcp login <name>`. */
export class McpNeedsSignInError extends Error {
  constructor(readonly server: string) {
    super(`needs sign-in: the server requires OAuth and no usable token is stored; run "pi mcp login ${server}"`);
  }
}

/** Whether OAuth applies to a server: HTTP and no Authorization header of its own (pi 1.6). */
export function usesOAuth(spec: { transport: string; headers?: Record<string, string> }): boolean {
  return spec.transport !== "stdio" && !Object.keys(spec.headers ?? {}).some((k) => k.toLowerCase() === "authorization");
}

export function storeKey(name: string, serverUrl: string): string {
  return `mcp__${name.replace(/-/g, "_")}|${String(new URL(serverUrl))}`;
}

type States = Record<string, McpOAuthState>;

/** `<agentDir>/mcp-auth.json`. */
export class McpAuthStore {
  readonly path: string;
  constructor(agentDir: string) {
    this.path = join(agentDir, MCP_AUTH_FILE);
  }

  private read(): States {
    if (!existsSync(this.path)) return {};
    const text = readFileSync(this.path, "utf8");
    if (!text.trim()) return {};
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      // Never echo the content: it holds tokens.
      throw new Error(`${this.path} is not valid JSON; fix or delete it (pi mcp logout <server> rewrites it)`);
    }
    return data && typeof data === "object" && !Array.isArray(data) ? (data as States) : {};
  }

  private write(states: States): void {
    if (!Object.keys(states).length) {
      rmSync(this.path, { force: true });
      return;
    }
    writeFileAtomic(this.path, JSON.stringify(states, null, 2) + "\n", { mode: 0o600, dirMode: 0o700 });
  }

  load(name: string, serverUrl: string): McpOAuthState | undefined {
    const states = this.read();
    // pi 1.6 also reads a key by URL alone (written by its older versions).
    return states[storeKey(name, serverUrl)] ?? states[String(new URL(serverUrl))];
  }

  update(name: string, serverUrl: string, fn: (s: McpOAuthState) => McpOAuthState): void {
    const states = this.read();
    const key = storeKey(name, serverUrl);
    const legacy = String(new URL(serverUrl));
    const current = states[key] ?? states[legacy] ?? { serverUrl: legacy };
    delete states[legacy];
    states[key] = fn({ ...current });
    this.write(states);
  }

  /** Delete a server's credentials; whether there were any. */
  remove(name: string, serverUrl: string): boolean {
    const states = this.read();
    const keys = [storeKey(name, serverUrl), String(new URL(serverUrl))].filter((k) => k in states);
    if (!keys.length) return false;
    for (const k of keys) delete states[k];
    this.write(states);
    return true;
  }
}

export interface ProviderOptions {
  store: McpAuthStore;
  name: string;
  serverUrl: string;
  config?: McpOAuthConfig;
  clientName: string;
  /** Sign-in: the loopback redirect URI and what to do with the authorization URL. Absent for connections. */
  signIn?: { redirectUrl: string; onRedirect(url: URL): void };
}

/** The SDK's OAuthClientProvider over the credential file. */
export class StoredOAuthProvider implements OAuthClientProvider {
  private verifier?: string;
  private stateValue?: string;
  constructor(private readonly o: ProviderOptions) {}

  private get stored(): McpOAuthState | undefined {
    return this.o.store.load(this.o.name, this.o.serverUrl);
  }
  private save(fn: (s: McpOAuthState) => McpOAuthState): void {
    this.o.store.update(this.o.name, this.o.serverUrl, fn);
  }

  get redirectUrl(): string {
    if (this.o.signIn) return this.o.signIn.redirectUrl;
    // A connection only refreshes: the registered redirect URI keeps the registration usable.
    const info = this.stored?.clientInformation as { redirect_uris?: string[] } | undefined;
    return info?.redirect_uris?.[0] ?? "http://127.0.0.1/callback";
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.o.config?.clientSecret;
    return {
      client_name: this.o.config?.clientName ?? this.o.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: secret ? "client_secret_post" : "none",
      ...(this.o.config?.scope ? { scope: this.o.config.scope } : {}),
    };
  }

  state(): string {
    this.stateValue ??= cryptoRandom();
    return this.stateValue;
  }
  /** The state sent with the authorization request (checked on the callback). */
  get expectedState(): string | undefined {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const c = this.o.config;
    if (c?.clientId) return { client_id: c.clientId, ...(c.clientSecret ? { client_secret: c.clientSecret } : {}) };
    return this.stored?.clientInformation;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    if (this.o.config?.clientId) return;
    this.save((s) => ({ ...s, clientInformation: info }));
  }

  tokens(): OAuthTokens | undefined {
    const s = this.stored;
    if (!s?.tokens) return undefined;
    // Tokens written by pi 1.6 carry no issuer: bind them to the server discovery found.
    const issuer = (s.tokens as { issuer?: string }).issuer ?? s.discovery?.authorizationServerUrl;
    return issuer ? ({ ...s.tokens, issuer } as OAuthTokens) : s.tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.save((s) => ({ ...s, tokens, tokensExpireAt: typeof tokens.expires_in === "number" ? Date.now() + tokens.expires_in * 1000 : undefined }));
  }

  redirectToAuthorization(url: URL): void {
    if (!this.o.signIn) throw new McpNeedsSignInError(this.o.name);
    this.o.signIn.onRedirect(url);
  }
  saveCodeVerifier(v: string): void {
    this.verifier = v;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error("no PKCE code verifier: the sign-in was not started here");
    return this.verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "verifier") {
      this.verifier = undefined;
      return;
    }
    this.save((s) => {
      const n = { ...s };
      if (scope === "all" || scope === "tokens") {
        delete n.tokens;
        delete n.tokensExpireAt;
      }
      if (scope === "all" || scope === "client") delete n.clientInformation;
      if (scope === "all" || scope === "discovery") delete n.discovery;
      return n;
    });
  }

  saveDiscoveryState(d: OAuthDiscoveryState): void {
    this.save((s) => ({ ...s, discovery: d }));
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.stored?.discovery;
  }
}

function cryptoRandom(): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
}

/**
 * For a connection: the provider to give the transport, or undefined when OAuth does not apply or
 * nothing is stored (then a 401 reads as "needs sign-in"). An expired access token is refreshed
 * first (the SDK's auth() with the stored refresh token).
 */
export async function connectionAuth(opts: { agentDir: string; name: string; url: string; config?: McpOAuthConfig; clientName: string }): Promise<StoredOAuthProvider | undefined> {
  const store = new McpAuthStore(opts.agentDir);
  const state = store.load(opts.name, opts.url);
  if (!state?.tokens) return undefined;
  const provider = new StoredOAuthProvider({ store, name: opts.name, serverUrl: opts.url, config: opts.config, clientName: opts.clientName });
  if (state.tokensExpireAt !== undefined && state.tokensExpireAt <= Date.now() + 5000) {
    if (!state.tokens.refresh_token) throw new McpNeedsSignInError(opts.name);
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    const r = await auth(provider, { serverUrl: opts.url });
    if (r !== "AUTHORIZED") throw new McpNeedsSignInError(opts.name);
  }
  return provider;
}
