/**
 * The `pi auth` commands. Output and exit codes follow pi 1.6: `check` prints ready / not_ready /
 * invalid and exits 0 / 1 / 2; the print commands write the secret alone to stdout; errors are
 * "Error: …" on stderr with exit 1; logout of nothing stored is not an error.
 */
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { SubcommandContext, AnyModel } from "../../core/kernel/index.js";
import { AuthStorage, type OAuthCredential, ModelRegistry } from "../../core/stores/index.js";

const COMMANDS = ["login", "logout", "print-api-key", "print-bearer-token", "check"];

class AuthError extends Error {
  constructor(
    message: string,
    readonly code = 1,
  ) {
    super(message);
  }
}

/** "30m", "1h", "45s", "500ms" (or plain milliseconds) in milliseconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new AuthError(`--min-expiry "${s}": expected a duration such as 30m, 1h, 45s or 500ms`);
  const n = Number(m[1]);
  const unit = m[2] ?? "ms";
  return n * (unit === "h" ? 3_600_000 : unit === "m" ? 60_000 : unit === "s" ? 1000 : 1);
}

/** The agent folder exists with mode 0700 (created so when missing). */
export function ensureAgentDir(dir: string): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
}

export async function runAuthCommand(args: string[], ctx: SubcommandContext): Promise<number> {
  try {
    return await run(args, ctx);
  } catch (e) {
    if (e instanceof AuthError) {
      ctx.stderr(e.message.startsWith("Usage:") ? e.message : `Error: ${e.message}`);
      return e.code;
    }
    if (e instanceof TypeError && (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      ctx.stderr(`Error: ${e.message} (see pi auth --help)`);
      return 2;
    }
    throw e;
  }
}

async function run(args: string[], ctx: SubcommandContext): Promise<number> {
  const [command, ...rest] = args;
  if (!command) throw new AuthError(`Usage: pi auth <${COMMANDS.join("|")}> (see pi auth --help)`, 2);
  if (!COMMANDS.includes(command)) {
    throw new AuthError(`Unknown auth command "${command}". Use ${COMMANDS.map((c) => `"pi auth ${c}"`).join(", ")}.`, 2);
  }
  const { kernel } = ctx;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      provider: { type: "string" },
      model: { type: "string" },
      json: { type: "boolean" },
      credentials: { type: "boolean" },
      "no-refresh": { type: "boolean" },
      "min-expiry": { type: "string" },
      "api-key": { type: "boolean" },
      "no-browser": { type: "boolean" },
    },
  });
  const authFile = join(kernel.agentDir, "auth.json");
  const auth = AuthStorage.create(authFile, { report: (d) => kernel.diagnostics.report(d) });
  const registry = ModelRegistry.forKernel(kernel, { authStorage: auth });

  if (command === "logout") {
    const provider = positionals[0];
    if (!provider) throw new AuthError("Usage: pi auth logout <provider>");
    const had = auth.get(provider);
    if (!had) {
      ctx.stdout(`No stored credentials for ${provider}. Environment variables and models.json are unchanged.\n`);
      return 0;
    }
    auth.logout(provider);
    ctx.stdout(`Removed the stored ${had.type === "oauth" ? "OAuth credentials" : "API key"} for ${provider}. Environment variables and models.json are unchanged.\n`);
    return 0;
  }

  if (command === "login") {
    const provider = positionals[0];
    if (!provider) throw new AuthError("Usage: pi auth login <provider> [--api-key] [--no-browser]");
    if (values["api-key"] && values["no-browser"]) throw new AuthError("--no-browser cannot be combined with --api-key", 2);
    ensureAgentDir(kernel.agentDir);
    const oauth = values["api-key"] ? undefined : await auth.getOAuthProvider(provider);
    if (oauth?.login) {
      const { oauthLogin } = await import("./login.js");
      try {
        await oauthLogin(auth, provider, ctx, { noBrowser: !!values["no-browser"] });
      } catch (e) {
        // Sign-in problems (no terminal, cancelled, the provider refused) are one line, no stack.
        throw new AuthError(e instanceof Error ? e.message : String(e), (e as { code?: number }).code === 130 ? 130 : 1);
      }
      ctx.stdout(`Logged in to ${provider}. Credentials saved to ${authFile}\n`);
      return 0;
    }
    const { readSecret } = await import("./login.js");
    const key = (await readSecret(`API key for ${provider}: `)).trim();
    if (!key) throw new AuthError(`no API key given for ${provider}; nothing saved`);
    if (!auth.set(provider, { type: "api_key", key })) throw new AuthError(`could not write ${authFile}`);
    ctx.stdout(`Saved the API key for ${provider} to ${authFile}\n`);
    return 0;
  }

  // check, print-api-key, print-bearer-token: --provider and/or --model.
  if (values.provider === undefined && values.model === undefined) {
    throw new AuthError(`Auth ${command === "check" ? "checks" : "commands"} require --provider <provider> or --model <model>`, command === "check" ? 2 : 1);
  }
  let provider = values.provider;
  let model: AnyModel | undefined;
  if (values.model !== undefined) {
    model = findModel(registry, values.model, values.provider);
    if (!model) {
      if (command === "check") return report(ctx, !!values.json, { status: "not_ready", provider: provider ?? values.model, reason: "model_not_found" });
      throw new AuthError(`Model "${values.model}" not found. Use --list-models to see available models.`);
    }
    provider = model.provider;
  }
  const known = registry.getAll().some((m) => m.provider === provider) || auth.has(provider!) || !!(await auth.getOAuthProvider(provider!));
  if (!known) {
    if (command === "check") return report(ctx, !!values.json, { status: "not_ready", provider: provider!, reason: "provider_not_found" });
    throw new AuthError(`Unknown provider "${provider}". Use --list-models to see available providers.`);
  }
  const stored = auth.get(provider!);

  if (command === "print-bearer-token") {
    if (stored?.type !== "oauth") throw new AuthError(`Provider "${provider}" is not configured with an OAuth bearer token`);
    const minMs = values["min-expiry"] ? parseDuration(values["min-expiry"]) : 0;
    const token = await bearerToken(auth, provider!, stored, minMs);
    if (!token) throw new AuthError(`could not refresh the OAuth token for "${provider}"; log in again with pi auth login ${provider}`);
    ctx.stdout(token + "\n");
    return 0;
  }

  if (command === "check" && auth.isBroken) {
    return report(ctx, !!values.json, { status: "invalid", provider: provider!, reason: "auth_file_unreadable" });
  }
  if (command === "check" && values["no-refresh"] && stored?.type === "oauth" && Date.now() >= stored.expires) {
    return report(ctx, !!values.json, { status: "not_ready", provider: provider!, reason: "credentials_expired" });
  }
  const keyless = registry.isKeyless(provider!);
  const key = model ? await registry.getApiKey(model) : await registry.getApiKeyForProvider(provider!);

  if (command === "print-api-key") {
    if (!key) throw new AuthError("No usable API key is configured");
    ctx.stdout(key + "\n");
    return 0;
  }
  // check
  if (!key && !keyless) return report(ctx, !!values.json, { status: "not_ready", provider: provider!, reason: "credentials_not_configured" });
  const authType = keyless && !key ? "none" : stored?.type === "oauth" ? "oauth" : "api_key";
  return report(ctx, !!values.json, { status: "ready", provider: provider!, authType, ...(values.credentials && key ? { credentials: key } : {}) });
}

interface CheckResult {
  status: "ready" | "not_ready" | "invalid";
  provider: string;
  reason?: string;
  authType?: string;
  credentials?: string;
}

function report(ctx: SubcommandContext, json: boolean, r: CheckResult): number {
  if (json) ctx.stdout(JSON.stringify(r) + "\n");
  else ctx.stdout((r.credentials ?? r.status) + "\n");
  return r.status === "ready" ? 0 : r.status === "not_ready" ? 1 : 2;
}

function findModel(registry: ModelRegistry, pattern: string, provider?: string): AnyModel | undefined {
  const all = registry.getAll();
  const slash = pattern.indexOf("/");
  if (slash > 0 && !provider) {
    const hit = registry.find(pattern.slice(0, slash), pattern.slice(slash + 1));
    if (hit) return hit;
  }
  const inScope = provider ? all.filter((m) => m.provider === provider) : all;
  return inScope.find((m) => m.id === pattern) ?? inScope.find((m) => m.id.toLowerCase() === pattern.toLowerCase());
}

async function bearerToken(auth: AuthStorage, provider: string, cred: OAuthCredential, minMs: number): Promise<string | undefined> {
  if (minMs > 0 && cred.expires - Date.now() < minMs) {
    const p = await auth.getOAuthProvider(provider);
    if (!p) return undefined;
    const { type: _t, ...tokens } = cred;
    try {
      const fresh = await p.refreshToken(tokens);
      auth.set(provider, { ...fresh, type: "oauth" });
      if (fresh.expires - Date.now() < minMs) throw new AuthError(`the refreshed token for "${provider}" expires before ${minMs} ms`);
      return fresh.access;
    } catch (e) {
      if (e instanceof AuthError) throw e;
      return undefined;
    }
  }
  await auth.getApiKey(provider); // refreshes when expired
  const now = auth.get(provider);
  return now?.type === "oauth" && Date.now() < now.expires ? now.access : undefined;
}
