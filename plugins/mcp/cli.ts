/**
 * `pi mcp …`: list, show, add, remove, sign in and out (help.ts has the usage).
 *
 *   pi mcp list [--json]          connect to every enabled server (pi 1.6's shape with --json)
 *   pi mcp get <name> [--json]    one server: configuration, then connects and lists its tools
 *   pi mcp add … / remove …       cli-edit.ts (pi 1.6's forms and ours)
 *   pi mcp login / logout …       cli-auth.ts (OAuth for HTTP servers)
 */
import type { SubcommandContext } from "../../core/kernel/index.js";
import { describeTarget, loadMcpConfig, toolExposureOf, type McpServerEntry } from "./config.js";
import { mcpToolName } from "./names.js";
import { McpNeedsSignInError } from "./oauth.js";
import { addServer, removeServer, UsageError } from "./cli-edit.js";
export { parseAddArgs } from "./cli-edit.js";

import { MCP_USAGE as USAGE } from "./help.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);


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
        if (rest.includes("--help") || rest.includes("-h")) return out(USAGE.replace(/\bpi\b/g, app)), 0;
        return addServer(rest, ctx, out);
      case "remove":
      case "rm":
        return removeServer(rest, ctx, out);
      case "login":
        if (rest.includes("--help") || rest.includes("-h")) return out(USAGE.replace(/\bpi\b/g, app)), 0;
        return await (await import("./cli-auth.js")).login(rest, ctx, out);
      case "logout":
        if (rest.includes("--help") || rest.includes("-h")) return out(USAGE.replace(/\bpi\b/g, app)), 0;
        return await (await import("./cli-auth.js")).logout(rest, ctx, out);
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
  /** Tools whose exposure differs from the server's (from `toolExposure`), by listed name. */
  toolExposure?: Record<string, string>;
  error?: string;
}

/** An HTTP 401 from a server: it wants OAuth sign-in. */
export function needsAuth(message: string): boolean {
  return /^needs sign-in|\b401\b|unauthori[sz]ed|invalid_token/i.test(message);
}

const needsAuthHint = (name: string) => new McpNeedsSignInError(name).message;

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
  // Without an exposure: pi 1.6's "codemode", unless the user set mcp.toolMode.
  const toolMode = s.toolMode === "direct" || s.toolMode === "search" || s.toolMode === "auto" ? `mcp.toolMode ${s.toolMode}` : "codemode";
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
          exposure: e.spec?.exposure ?? (typeof raw.exposure === "string" ? raw.exposure : toolMode),
          transport: e.spec ? describeTarget(e.spec) : String(raw.command ?? raw.url ?? ""),
          tools: [] as string[],
        };
        if (e.state === "disabled") return { ...base, state: "disabled" };
        if (e.state === "untrusted") return { ...base, state: "untrusted", error: e.problem };
        const timeoutMs = e.spec!.connectTimeoutMs ?? (typeof s.connectTimeoutMs === "number" && s.connectTimeoutMs > 0 ? s.connectTimeoutMs : MCP_DEFAULTS.connectTimeoutMs);
        try {
          const conn = await connectServer(e.spec!, { timeoutMs, clientName: ctx.kernel.app.name, clientVersion: ctx.kernel.app.version, agentDir: ctx.kernel.agentDir });
          const taken = new Set<string>();
          const tools = conn.tools.map((t) => mcpToolName(e.name, t.name, taken));
          const differing = conn.tools.flatMap((t, i) => {
            const own = toolExposureOf(e.spec!, t.name) ?? base.exposure;
            return own === base.exposure ? [] : [[tools[i]!, own] as const];
          });
          await conn.close();
          return { ...base, state: "connected", tools, ...(differing.length ? { toolExposure: Object.fromEntries(differing) } : {}) };
        } catch (err) {
          const message = (err as Error).message;
          if (e.spec!.transport !== "stdio" && needsAuth(message)) return { ...base, state: "needs-auth", error: needsAuthHint(e.name) };
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
    const tools = x.tools.map((t) => (x.toolExposure?.[t] ? `${t} [${x.toolExposure[t]}]` : t));
    out(`${x.name}: ${x.state} (${x.exposure}, ${x.scope})\n  ${x.transport}${tools.length ? `\n  tools: ${tools.join(", ")}` : ""}${x.error ? `\n  ${x.error}` : ""}`);
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
      const conn = await connectServer(entry.spec!, { timeoutMs, clientName: ctx.kernel.app.name, clientVersion: ctx.kernel.app.version, agentDir: ctx.kernel.agentDir });
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

