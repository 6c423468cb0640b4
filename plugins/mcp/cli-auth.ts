/**
 * `pi mcp login <server> [-l] [--timeout <seconds>]` and `pi mcp logout <server> [-l]` (pi 1.6):
 * sign in to an HTTP MCP server with OAuth, or delete its stored credentials
 * (`<agentDir>/mcp-auth.json`). `-l` requires the server to come from the project's files.
 */
import type { SubcommandContext } from "../../core/kernel/index.js";
import { isCommandValue, resolveConfigValue } from "../../core/stores/index.js";
import { loadMcpConfig, type McpServerEntry } from "./config.js";
import { UsageError, scopeArgs } from "./cli-edit.js";
import { McpAuthStore, usesOAuth } from "./oauth.js";

async function findOAuthServer(ctx: SubcommandContext, args: string[], cmd: "login" | "logout"): Promise<{ entry: McpServerEntry; rest: string[] }> {
  const { target, rest } = scopeArgs(args, cmd);
  const names = rest.filter((a) => !a.startsWith("-"));
  if (names.length !== 1) throw new UsageError(`"mcp ${cmd}" needs exactly one server name`);
  const name = names[0]!;
  const config = await loadMcpConfig(ctx.kernel);
  const entry = config.entries.find((e) => e.name === name && (target === "user" || e.scope === "project"));
  if (!entry) {
    const known = config.entries.map((e) => e.name);
    throw new Error(`no ${target === "user" ? "" : "project "}MCP server named "${name}"${known.length ? ` (configured: ${known.join(", ")})` : ""}`);
  }
  if (entry.state === "untrusted") throw new Error(`MCP server "${name}" is in ${entry.source}, and this project is not trusted (-a / --trust)`);
  if (entry.state === "invalid") throw new Error(`MCP server "${name}" is misconfigured: ${entry.problem}`);
  const raw = entry.raw as Record<string, unknown>;
  const spec = entry.spec;
  const isHttp = spec ? spec.transport !== "stdio" : typeof raw?.url === "string";
  const headers = spec?.headers ?? (raw?.headers as Record<string, string> | undefined);
  if (!isHttp || !usesOAuth({ transport: "http", headers })) {
    throw new Error(`MCP server "${name}" does not use OAuth: only HTTP servers without an Authorization header do`);
  }
  return { entry, rest: rest.filter((a) => a !== name) };
}

function serverUrl(entry: McpServerEntry): string {
  return entry.spec?.url ?? String((entry.raw as Record<string, unknown>).url);
}

export async function login(args: string[], ctx: SubcommandContext, out: (s: string) => void): Promise<number> {
  // --timeout <seconds> (the whole sign-in; default 300, as pi 1.6).
  let timeoutMs = 300_000;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--timeout" || a.startsWith("--timeout=")) {
      const v = a === "--timeout" ? args[++i] : a.slice("--timeout=".length);
      const n = Number(v);
      if (!v || !Number.isFinite(n) || n <= 0) throw new UsageError(`--timeout needs a number of seconds (got "${v ?? ""}")`);
      timeoutMs = n * 1000;
    } else if (a.startsWith("-") && a !== "-l" && a !== "--local" && a !== "--project" && !a.startsWith("--scope")) {
      throw new UsageError(`unknown option ${a} for "mcp login"`);
    } else rest.push(a);
  }
  const { entry } = await findOAuthServer(ctx, rest, "login");
  if (entry.state === "disabled") throw new Error(`MCP server "${entry.name}" is disabled ("enabled": false); enable it first`);
  let config = entry.spec?.oauth;
  if (config?.clientRegistration === "cimd") {
    throw new Error(`MCP server "${entry.name}": oauth.clientRegistration "cimd" (pi's Client ID Metadata Document) is not available in this build; use "dcr" or "auto"`);
  }
  if (config?.clientSecret && isCommandValue(config.clientSecret)) {
    let why = "";
    const secret = await resolveConfigValue(config.clientSecret, { onError: (m) => (why = m) });
    if (secret === undefined) throw new Error(`MCP server "${entry.name}": oauth.clientSecret: ${why || "the command gave no value"}`);
    config = { ...config, clientSecret: secret };
  }
  const { loginMcpServer } = await import("./login.js");
  const result = await loginMcpServer({
    agentDir: ctx.kernel.agentDir,
    name: entry.name,
    url: serverUrl(entry),
    config,
    clientName: ctx.kernel.app.name,
    timeoutMs,
    print: (s) => out(s),
  });
  const where = new McpAuthStore(ctx.kernel.agentDir).path;
  out(result === "refreshed" ? `Signed in to MCP server "${entry.name}" (the stored token was refreshed); credentials in ${where}.` : `Signed in to MCP server "${entry.name}"; credentials stored in ${where}.`);
  return 0;
}

export async function logout(args: string[], ctx: SubcommandContext, out: (s: string) => void): Promise<number> {
  const { entry } = await findOAuthServer(ctx, args, "logout");
  const store = new McpAuthStore(ctx.kernel.agentDir);
  if (store.remove(entry.name, serverUrl(entry))) out(`Signed out of MCP server "${entry.name}": its stored OAuth credentials were deleted from ${store.path}.`);
  else out(`MCP server "${entry.name}" has no stored OAuth credentials.`);
  return 0;
}
