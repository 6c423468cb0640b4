/**
 * `pi mcp …`: list, show, add and remove MCP servers.
 *
 *   pi mcp list [--json]
 *   pi mcp get <name> [--json]               configuration, then connects and lists its tools
 *   pi mcp add [options] <name> <command|url> [args...]
 *       --project            write the project's .mcp.json instead of the global settings
 *       -t, --transport T    stdio | http | sse (default: stdio for a command, http→sse fallback for a url)
 *       --env KEY=VALUE      environment for a stdio server (repeatable; no -e: that is pi's --extension)
 *       -H, --header "K: V"  HTTP header (repeatable)
 *       --cwd DIR            working folder of a stdio server
 *       --json '{...}'       the whole server configuration as JSON (instead of <command|url>)
 *       --force              replace a server of the same name
 *     Everything after <command|url> (or after `--`) is passed to the server as arguments.
 *   pi mcp remove [--project] <name>
 *
 * add/remove edit `mcpServers` in <agentDir>/settings.json, or .mcp.json with --project; a file
 * that does not parse is never rewritten.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SubcommandContext } from "../../core/kernel.js";
import { jsonErrorPosition } from "../../core/settings.js";
import { describeTarget, loadMcpConfig, MCP_JSON, parseServer, type McpServerEntry } from "./config.js";
import { mcpToolName } from "./names.js";
import { writeFileAtomic } from "../../core/fs-utils.js";

import { MCP_USAGE as USAGE } from "./help.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

class UsageError extends Error {}

export async function runMcpSubcommand(args: string[], ctx: SubcommandContext): Promise<number> {
  const out = (s: string) => ctx.stdout(s.endsWith("\n") ? s : s + "\n");
  const [sub, ...rest] = args;
  const app = ctx.kernel.app.name;
  try {
    switch (sub) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        out(USAGE.replace(/\bpi\b/g, app));
        return sub === undefined ? 1 : 0;
      case "list":
      case "ls":
        return await list(rest, ctx, out);
      case "get":
        return await get(rest, ctx, out);
      case "add":
        return add(rest, ctx, out);
      case "remove":
      case "rm":
        return remove(rest, ctx, out);
      default:
        throw new UsageError(`unknown command "mcp ${sub}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      ctx.stderr(`${app} mcp: ${e.message}\n${USAGE.replace(/\bpi\b/g, app)}`);
      return 2;
    }
    ctx.stderr(`${app} mcp: ${(e as Error).message}`);
    return 1;
  }
}

// ---- list / get ----------------------------------------------------------------------------

function entryLine(e: McpServerEntry): string {
  const target = e.spec ? describeTarget(e.spec) : isObj(e.raw) ? String(e.raw.command ?? e.raw.url ?? "") : "";
  const state = e.state === "ok" ? "" : ` [${e.state}${e.problem ? `: ${e.problem}` : ""}]`;
  return `${e.name}  ${e.spec?.transport ?? (isObj(e.raw) && e.raw.url ? "http" : "stdio")}  ${target}${state}\n    ${e.scope}: ${e.source}`;
}

/** One server as `pi mcp list` reports it (pi 1.6's shape). */
interface ListedServer {
  name: string;
  scope: "global" | "project";
  source: string;
  enabled: boolean;
  exposure: string;
  transport: string;
  state: "connected" | "failed" | "disabled" | "needs-auth" | "untrusted";
  tools: string[];
  error?: string;
}

/** An HTTP 401 from a server: it wants OAuth sign-in. */
export function needsAuth(message: string): boolean {
  return /\b401\b|unauthori[sz]ed|invalid_token/i.test(message);
}

export const NEEDS_AUTH_HINT = "the server requires OAuth sign-in and no token is stored; MCP OAuth sign-in (pi mcp login) is not available in this build yet — give the server an Authorization header in mcp.json (a ${VAR} or a !command value)";

async function list(args: string[], ctx: SubcommandContext, out: (s: string) => void): Promise<number> {
  const json = args.includes("--json");
  const unknown = args.filter((a) => a !== "--json");
  if (unknown.length) throw new UsageError(`unexpected argument "${unknown[0]}" for "mcp list"`);
  const config = await loadMcpConfig(ctx.kernel);
  const errors = config.diagnostics.filter((d) => d.level === "error" && !d.message.startsWith("MCP server")).map((d) => d.message);
  for (const e of config.entries) if (e.state === "invalid") errors.push(`${e.source}: server "${e.name}": ${e.problem}`);
  const { connectServer } = await import("./connection.js");
  const { MCP_DEFAULTS } = await import("./manager.js");
  const s = (ctx.kernel.settings.get().mcp ?? {}) as Obj;
  const servers: ListedServer[] = await Promise.all(
    config.entries
      .filter((e) => e.state !== "invalid")
      .map(async (e): Promise<ListedServer> => {
        const raw = isObj(e.raw) ? e.raw : {};
        const base = {
          name: e.name,
          scope: e.scope === "user" ? ("global" as const) : ("project" as const),
          source: e.source,
          enabled: e.state !== "disabled",
          exposure: e.spec?.exposure ?? (typeof raw.exposure === "string" ? raw.exposure : "default"),
          transport: e.spec ? describeTarget(e.spec) : String(raw.command ?? raw.url ?? ""),
          tools: [] as string[],
        };
        if (e.state === "disabled") return { ...base, state: "disabled" };
        if (e.state === "untrusted") return { ...base, state: "untrusted", error: e.problem };
        const timeoutMs = e.spec!.connectTimeoutMs ?? (typeof s.connectTimeoutMs === "number" && s.connectTimeoutMs > 0 ? s.connectTimeoutMs : MCP_DEFAULTS.connectTimeoutMs);
        try {
          const conn = await connectServer(e.spec!, { timeoutMs, clientName: ctx.kernel.app.name, clientVersion: ctx.kernel.app.version });
          const taken = new Set<string>();
          const tools = conn.tools.map((t) => mcpToolName(e.name, t.name, taken));
          await conn.close();
          return { ...base, state: "connected", tools };
        } catch (err) {
          const message = (err as Error).message;
          if (e.spec!.transport !== "stdio" && needsAuth(message)) return { ...base, state: "needs-auth", error: NEEDS_AUTH_HINT };
          return { ...base, state: "failed", error: message };
        }
      }),
  );
  const failed = errors.length > 0 || servers.some((x) => x.enabled && x.state !== "connected" && x.state !== "untrusted");
  if (json) {
    out(JSON.stringify({ servers, errors }, null, 2));
    return failed ? 1 : 0;
  }
  if (!servers.length && !errors.length) {
    out(`No MCP servers configured. Add one with: ${ctx.kernel.app.name} mcp add <name> <command|url> [args...]`);
    return 0;
  }
  for (const x of servers) {
    out(`${x.name}: ${x.state} (${x.exposure}, ${x.scope})\n  ${x.transport}${x.tools.length ? `\n  tools: ${x.tools.join(", ")}` : ""}${x.error ? `\n  ${x.error}` : ""}`);
  }
  for (const m of errors) ctx.stderr(`config error: ${m}`);
  for (const d of config.diagnostics) if (d.level === "warning" && !d.message.startsWith("MCP server")) ctx.stderr(`warning: ${d.message}`);
  return failed ? 1 : 0;
}

async function get(args: string[], ctx: SubcommandContext, out: (s: string) => void): Promise<number> {
  const json = args.includes("--json");
  const names = args.filter((a) => a !== "--json");
  if (names.length !== 1) throw new UsageError(`"mcp get" needs exactly one server name`);
  const name = names[0]!;
  const config = await loadMcpConfig(ctx.kernel);
  const entry = config.entries.find((e) => e.name === name);
  if (!entry) throw new Error(`no MCP server "${name}" is configured${config.entries.length ? ` (configured: ${config.entries.map((e) => e.name).join(", ")})` : ""}`);
  const report: Obj = { name, scope: entry.scope, source: entry.source, state: entry.state, config: entry.raw };
  if (entry.problem) report.problem = entry.problem;
  if (entry.state === "ok") {
    const { connectServer } = await import("./connection.js");
    const { MCP_DEFAULTS } = await import("./manager.js");
    const s = (ctx.kernel.settings.get().mcp ?? {}) as Obj;
    const timeoutMs = entry.spec!.connectTimeoutMs ?? (typeof s.connectTimeoutMs === "number" && s.connectTimeoutMs > 0 ? s.connectTimeoutMs : MCP_DEFAULTS.connectTimeoutMs);
    try {
      const conn = await connectServer(entry.spec!, { timeoutMs, clientName: ctx.kernel.app.name, clientVersion: ctx.kernel.app.version });
      const taken = new Set<string>();
      report.status = "connected";
      report.transport = conn.transport;
      report.serverInfo = conn.serverInfo;
      if (conn.instructions) report.instructions = conn.instructions;
      report.tools = conn.tools.map((t) => ({ name: mcpToolName(name, t.name, taken), tool: t.name, description: t.description ?? "" }));
      await conn.close();
    } catch (e) {
      report.status = "failed";
      report.error = (e as Error).message;
    }
  }
  if (json) {
    out(JSON.stringify(report, null, 2));
    return report.status === "failed" ? 1 : 0;
  }
  out(entryLine(entry));
  out(`  config: ${JSON.stringify(entry.raw)}`);
  if (report.status === "connected") {
    const info = report.serverInfo as { name?: string; version?: string } | undefined;
    out(`  connected over ${report.transport}${info?.name ? ` to ${info.name} ${info.version ?? ""}`.trimEnd() : ""}`);
    const tools = report.tools as Array<{ name: string; description: string }>;
    out(`  ${tools.length} tool${tools.length === 1 ? "" : "s"}:`);
    for (const t of tools) out(`    ${t.name}  ${t.description.split("\n")[0]!.slice(0, 100)}`);
  } else if (report.status === "failed") {
    out(`  failed to connect: ${report.error}`);
    return 1;
  }
  return 0;
}

// ---- add / remove --------------------------------------------------------------------------

interface ConfigFile {
  path: string;
  data: Obj;
  /** Where the servers live inside `data`. */
  servers: Obj;
}

function readConfigFile(path: string): ConfigFile {
  let data: Obj = {};
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8");
    if (text.trim()) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new Error(`${path} has malformed JSON at ${jsonErrorPosition(text, e)}; fix it by hand first (it was not changed)`);
      }
      if (!isObj(parsed)) throw new Error(`${path} must hold a JSON object; fix it by hand first (it was not changed)`);
      data = parsed;
    }
  }
  if (data.mcpServers !== undefined && !isObj(data.mcpServers)) throw new Error(`"mcpServers" in ${path} is not an object; fix it by hand first`);
  const servers = (data.mcpServers as Obj | undefined) ?? {};
  return { path, data, servers };
}

function writeConfigFile(f: ConfigFile): void {
  f.data.mcpServers = f.servers;
  writeFileAtomic(f.path, JSON.stringify(f.data, null, 2) + "\n");
}

function targetFile(ctx: SubcommandContext, project: boolean): string {
  return project ? join(ctx.cwd, MCP_JSON) : join(ctx.kernel.agentDir, "settings.json");
}

function takeValue(args: string[], i: number, flag: string): string {
  const v = args[i + 1];
  if (v === undefined) throw new UsageError(`${flag} needs a value`);
  return v;
}

/** Parse `mcp add` arguments into a server configuration as it will be written. */
export function parseAddArgs(args: string[]): { name: string; project: boolean; force: boolean; config: Obj } {
  let project = false;
  let force = false;
  let transport: string | undefined;
  let cwd: string | undefined;
  let json: string | undefined;
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positionals: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    // Once the name and command/url are known, the rest belongs to the server.
    if (positionals.length >= 2 || (positionals.length >= 1 && json !== undefined)) break;
    if (a === "--") {
      i++;
      break;
    }
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const inline = eq > 0 ? a.slice(eq + 1) : undefined;
    const value = () => {
      if (inline !== undefined) return inline;
      const v = takeValue(args, i, flag);
      i++;
      return v;
    };
    switch (flag) {
      case "--project":
        project = true;
        break;
      case "--scope": {
        const v = value();
        if (v !== "project" && v !== "user") throw new UsageError(`--scope must be "user" or "project"`);
        project = v === "project";
        break;
      }
      case "--force":
      case "-f":
        force = true;
        break;
      case "-t":
      case "--transport":
        transport = value();
        if (!["stdio", "http", "sse"].includes(transport)) throw new UsageError(`--transport must be stdio, http or sse (got "${transport}")`);
        break;
      case "--env": {
        const v = value();
        const k = v.indexOf("=");
        if (k <= 0) throw new UsageError(`--env needs KEY=VALUE (got "${v}")`);
        env[v.slice(0, k)] = v.slice(k + 1);
        break;
      }
      case "-H":
      case "--header": {
        const v = value();
        const k = v.indexOf(":");
        if (k <= 0) throw new UsageError(`--header needs "Name: value" (got "${v}")`);
        headers[v.slice(0, k).trim()] = v.slice(k + 1).trim();
        break;
      }
      case "--cwd":
        cwd = value();
        break;
      case "--json":
        json = value();
        break;
      default:
        if (a.startsWith("-") && a.length > 1) throw new UsageError(`unknown option ${a} for "mcp add"`);
        positionals.push(a);
    }
  }
  const rest = args.slice(i);
  // `add <name> -- <command> args…`: the command comes after the `--`.
  if (positionals.length === 1 && json === undefined && rest.length) positionals.push(rest.shift()!);
  const [name, target] = positionals;
  if (!name) throw new UsageError(`"mcp add" needs a server name`);
  let config: Obj;
  if (json !== undefined) {
    if (target !== undefined || rest.length) throw new UsageError(`--json replaces <command|url> and its arguments`);
    try {
      const parsed = JSON.parse(json);
      if (!isObj(parsed)) throw new Error("not an object");
      config = parsed;
    } catch (e) {
      throw new UsageError(`--json must be a JSON object (${(e as Error).message})`);
    }
  } else {
    if (!target) throw new UsageError(`"mcp add ${name}" needs a command or a url`);
    const isUrl = /^https?:\/\//i.test(target);
    const kind = transport ?? (isUrl ? undefined : "stdio");
    if ((kind === "http" || kind === "sse") && !isUrl) throw new UsageError(`--transport ${kind} needs an http(s) url, not "${target}"`);
    if (kind === "stdio" && isUrl) throw new UsageError(`--transport stdio needs a command, not a url`);
    if (kind === "stdio" || !isUrl) {
      if (Object.keys(headers).length) throw new UsageError(`--header is for url servers`);
      config = { command: target, args: rest };
      if (Object.keys(env).length) config.env = env;
      if (cwd !== undefined) config.cwd = cwd;
    } else {
      if (rest.length) throw new UsageError(`a url server takes no arguments (got "${rest.join(" ")}")`);
      if (Object.keys(env).length) throw new UsageError(`--env is for stdio servers`);
      config = { ...(kind ? { type: kind } : {}), url: target };
      if (Object.keys(headers).length) config.headers = headers;
    }
  }
  return { name, project, force, config };
}

function add(args: string[], ctx: SubcommandContext, out: (s: string) => void): number {
  const { name, project, force, config } = parseAddArgs(args);
  // Check the shape now (variables may be unset here; they are expanded when the server starts).
  const anyEnv = new Proxy({}, { get: () => "x" }) as NodeJS.ProcessEnv;
  const checked = parseServer(name, config, { scope: project ? "project" : "user", source: "", baseDir: ctx.cwd, env: anyEnv });
  if (checked.state === "invalid") throw new Error(`not added: MCP server "${name}" ${checked.problem}`);
  const file = readConfigFile(targetFile(ctx, project));
  if (file.servers[name] !== undefined && !force) {
    throw new Error(`an MCP server "${name}" already exists in ${file.path}; use --force to replace it, or remove it first`);
  }
  file.servers = { ...file.servers, [name]: config };
  writeConfigFile(file);
  out(`Added MCP server "${name}" to ${file.path}: ${JSON.stringify(config)}`);
  if (project) out(`Project servers start only in a trusted project (--trust or "trustedProjects" in ${join(ctx.kernel.agentDir, "settings.json")}).`);
  return 0;
}

function remove(args: string[], ctx: SubcommandContext, out: (s: string) => void): number {
  let project = false;
  const names: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--project") project = true;
    else if (a === "--scope" || a.startsWith("--scope=")) {
      const v = a === "--scope" ? args[++i] : a.slice("--scope=".length);
      if (v !== "project" && v !== "user") throw new UsageError(`--scope must be "user" or "project"`);
      project = v === "project";
    } else if (a.startsWith("-") && a.length > 1) throw new UsageError(`unknown option ${a} for "mcp remove"`);
    else names.push(a);
  }
  if (names.length !== 1) throw new UsageError(`"mcp remove" needs exactly one server name`);
  const name = names[0]!;
  const file = readConfigFile(targetFile(ctx, project));
  if (file.servers[name] === undefined) {
    const other = targetFile(ctx, !project);
    let hint = "";
    try {
      if (readConfigFile(other).servers[name] !== undefined) hint = `; it is in ${other}${project ? "" : " (use --project)"}`;
    } catch {
      /* the other file is not our concern here */
    }
    throw new Error(`no MCP server "${name}" in ${file.path}${hint}`);
  }
  const { [name]: _gone, ...restServers } = file.servers;
  file.servers = restServers;
  writeConfigFile(file);
  out(`Removed MCP server "${name}" from ${file.path}`);
  return 0;
}
