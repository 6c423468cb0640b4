/**
 * `pi mcp add` and `pi mcp remove`: edit the file that declares MCP servers.
 *
 * pi 1.6's forms (its `pi mcp --help`):
 *   pi mcp add <server> [options] -- <command> [args...]      stdio
 *   pi mcp add <server> [options] --url <url>                  streamable HTTP
 *     --env KEY=VALUE  --cwd DIR  --header KEY=VALUE  --bearer-token-env-var NAME
 *     --oauth-client-id ID  --oauth-client-secret S  --oauth-callback-port N
 *     --oauth-client-name NAME  --oauth-client-registration auto|cimd|dcr
 *     --exposure codemode|deferred|direct|hidden  --description TEXT
 *   -l, --local: the project's .pi/mcp.json instead of <agentDir>/mcp.json
 * Ours, kept: `<name> <command|url> [args...]` (no `--`), `-t/--transport stdio|http|sse`,
 * `-H "Name: value"`, `--json '{...}'`, `--project` (the project's .mcp.json), `--scope
 * user|project`, `--force` (accepted; add replaces a server of the same name, as in 1.6).
 *
 * remove looks in the target file, then in the other file of the same scope (settings.json's
 * mcpServers for the user; .mcp.json / .pi/mcp.json for the project). A file that does not
 * parse is never rewritten.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type SubcommandContext, jsonErrorPosition, writeFileAtomic } from "../../core/kernel/index.js";
import { MCP_JSON, parseServer } from "./config.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

export class UsageError extends Error {}

/** Where a server is written: 1.6's user mcp.json, 1.6's project .pi/mcp.json, or our .mcp.json. */
export type AddTarget = "user" | "local" | "project";

interface ConfigFile {
  path: string;
  data: Obj;
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
  return { path, data, servers: (data.mcpServers as Obj | undefined) ?? {} };
}

function writeConfigFile(f: ConfigFile): void {
  f.data.mcpServers = f.servers;
  writeFileAtomic(f.path, JSON.stringify(f.data, null, 2) + "\n");
}

function configDir(ctx: SubcommandContext): string {
  return (ctx.kernel.app as { configDir?: string }).configDir ?? ".pi";
}

export function targetPath(ctx: SubcommandContext, target: AddTarget): string {
  if (target === "local") return join(ctx.cwd, configDir(ctx), "mcp.json");
  if (target === "project") return join(ctx.cwd, MCP_JSON);
  return join(ctx.kernel.agentDir, "mcp.json");
}

/** Files of the same scope that remove also looks in. */
function sameScopeFiles(ctx: SubcommandContext, target: AddTarget): string[] {
  if (target === "user") return [targetPath(ctx, "user"), join(ctx.kernel.agentDir, "settings.json")];
  return target === "local" ? [targetPath(ctx, "local"), targetPath(ctx, "project")] : [targetPath(ctx, "project"), targetPath(ctx, "local")];
}

const EXPOSURES = ["codemode", "codemode-deferred", "deferred", "direct", "hidden"];

/** Parse `mcp add` arguments into a server configuration as it will be written. */
export function parseAddArgs(args: string[]): { name: string; target: AddTarget; config: Obj } {
  let target: AddTarget = "user";
  let transport: string | undefined;
  let url: string | undefined;
  let cwd: string | undefined;
  let json: string | undefined;
  let bearerVar: string | undefined;
  let exposure: string | undefined;
  let description: string | undefined;
  const oauth: Obj = {};
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positionals: string[] = [];
  let rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // Once the name and command/url are known, the rest belongs to the server.
    if (positionals.length >= 2) {
      rest = args.slice(i);
      break;
    }
    if (a === "--") {
      rest = args.slice(i + 1);
      break;
    }
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const inline = eq > 0 ? a.slice(eq + 1) : undefined;
    const value = () => {
      if (inline !== undefined) return inline;
      const v = args[i + 1];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      i++;
      return v;
    };
    switch (flag) {
      case "-l":
      case "--local":
        target = "local";
        break;
      case "--project":
        target = "project";
        break;
      case "--scope": {
        const v = value();
        if (v !== "project" && v !== "user" && v !== "local") throw new UsageError(`--scope must be "user", "local" or "project"`);
        target = v;
        break;
      }
      case "--force":
      case "-f":
        break;
      case "-t":
      case "--transport":
        transport = value();
        if (!["stdio", "http", "sse"].includes(transport)) throw new UsageError(`--transport must be stdio, http or sse (got "${transport}")`);
        break;
      case "--url":
        url = value();
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
        // pi 1.6 writes KEY=VALUE; ours "Name: value". The first separator decides.
        const v = value();
        const c = v.indexOf(":");
        const e = v.indexOf("=");
        const k = c > 0 && (e < 0 || c < e) ? c : e;
        if (k <= 0) throw new UsageError(`--header needs KEY=VALUE or "Name: value" (got "${v}")`);
        headers[v.slice(0, k).trim()] = v.slice(k + 1).trim();
        break;
      }
      case "--bearer-token-env-var":
        bearerVar = value();
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(bearerVar)) throw new UsageError(`--bearer-token-env-var needs an environment variable name (got "${bearerVar}")`);
        break;
      case "--oauth-client-id":
        oauth.clientId = value();
        break;
      case "--oauth-client-secret":
        oauth.clientSecret = value();
        break;
      case "--oauth-client-name":
        oauth.clientName = value();
        break;
      case "--oauth-callback-port": {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--oauth-callback-port needs a port number (got "${v}")`);
        oauth.callbackPort = n;
        break;
      }
      case "--oauth-client-registration": {
        const v = value();
        if (!["auto", "cimd", "dcr"].includes(v)) throw new UsageError(`--oauth-client-registration must be auto, cimd or dcr (got "${v}")`);
        oauth.clientRegistration = v;
        break;
      }
      case "--exposure":
        exposure = value();
        if (!EXPOSURES.includes(exposure)) throw new UsageError(`--exposure must be codemode, deferred, direct or hidden (got "${exposure}")`);
        break;
      case "--description":
        description = value();
        break;
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
  // `add <name> -- <command> args…`: the command comes after the `--`.
  if (positionals.length === 1 && json === undefined && url === undefined && rest.length) positionals.push(rest.shift()!);
  const [name, given] = positionals;
  if (!name) throw new UsageError(`"mcp add" needs a server name`);
  const target0 = url ?? given;
  let config: Obj;
  if (json !== undefined) {
    if (target0 !== undefined || rest.length) throw new UsageError(`--json replaces <command|url> and its arguments`);
    try {
      const parsed = JSON.parse(json);
      if (!isObj(parsed)) throw new Error("not an object");
      config = parsed;
    } catch (e) {
      throw new UsageError(`--json must be a JSON object (${(e as Error).message})`);
    }
  } else {
    if (url !== undefined && given !== undefined) throw new UsageError(`--url replaces <command>; give one`);
    if (!target0) throw new UsageError(`"mcp add ${name}" needs --url <url> or -- <command> [args...]`);
    const isUrl = /^https?:\/\//i.test(target0);
    if (url !== undefined && !isUrl) throw new UsageError(`--url must be an http:// or https:// URL (got "${url}")`);
    const kind = transport ?? (isUrl ? undefined : "stdio");
    if ((kind === "http" || kind === "sse") && !isUrl) throw new UsageError(`--transport ${kind} needs an http(s) url, not "${target0}"`);
    if (kind === "stdio" && isUrl) throw new UsageError(`--transport stdio needs a command, not a url`);
    if (kind === "stdio" || !isUrl) {
      if (Object.keys(headers).length || bearerVar || Object.keys(oauth).length) throw new UsageError(`--header, --bearer-token-env-var and --oauth-* are for --url servers`);
      config = { command: target0 };
      if (rest.length) config.args = rest;
      if (Object.keys(env).length) config.env = env;
      if (cwd !== undefined) config.cwd = cwd;
    } else {
      if (rest.length) throw new UsageError(`a url server takes no arguments (got "${rest.join(" ")}")`);
      if (Object.keys(env).length || cwd !== undefined) throw new UsageError(`--env and --cwd are for stdio servers`);
      config = { ...(kind ? { type: kind } : {}), url: target0 };
      if (bearerVar) headers.Authorization = `Bearer \${${bearerVar}}`;
      if (Object.keys(headers).length) config.headers = headers;
      if (Object.keys(oauth).length) config.oauth = oauth;
    }
    if (exposure !== undefined) config.exposure = exposure;
    if (description !== undefined) config.description = description;
  }
  return { name, target, config };
}

export function addServer(args: string[], ctx: SubcommandContext, out: (s: string) => void): number {
  const { name, target, config } = parseAddArgs(args);
  // Check the shape now (variables may be unset here; they are expanded when the server starts).
  const anyEnv = new Proxy({}, { get: () => "x" }) as NodeJS.ProcessEnv;
  const checked = parseServer(name, config, { scope: target === "user" ? "user" : "project", source: "", baseDir: ctx.cwd, env: anyEnv });
  if (checked.state === "invalid") throw new Error(`not added: MCP server "${name}" ${checked.problem}`);
  const file = readConfigFile(targetPath(ctx, target));
  const replaced = file.servers[name] !== undefined;
  file.servers = { ...file.servers, [name]: config };
  writeConfigFile(file);
  const app = ctx.kernel.app.name;
  out(`${replaced ? "Replaced" : "Added"} ${target === "user" ? "global" : "project"} MCP server "${name}" in ${file.path}.`);
  if (target !== "user") out(`Project servers start only in a trusted project (-a / --trust, or answer the trust prompt).`);
  out(`Check it with: ${app} mcp list`);
  return 0;
}

/** `-l`/`--local`, `--project`, `--scope X`: which files; the other arguments. */
export function scopeArgs(args: string[], cmd: string): { target: AddTarget; rest: string[] } {
  let target: AddTarget = "user";
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-l" || a === "--local") target = "local";
    else if (a === "--project") target = "project";
    else if (a === "--scope" || a.startsWith("--scope=")) {
      const v = a === "--scope" ? args[++i] : a.slice("--scope=".length);
      if (v !== "project" && v !== "user" && v !== "local") throw new UsageError(`--scope must be "user", "local" or "project"`);
      target = v;
    } else if (a.startsWith("-") && a.length > 1 && cmd !== "login") throw new UsageError(`unknown option ${a} for "mcp ${cmd}"`);
    else rest.push(a);
  }
  return { target, rest };
}

export function removeServer(args: string[], ctx: SubcommandContext, out: (s: string) => void): number {
  const { target, rest: names } = scopeArgs(args, "remove");
  if (names.length !== 1) throw new UsageError(`"mcp remove" needs exactly one server name`);
  const name = names[0]!;
  const files = sameScopeFiles(ctx, target);
  for (const path of files) {
    const file = readConfigFile(path);
    if (file.servers[name] === undefined) continue;
    const { [name]: _gone, ...restServers } = file.servers;
    file.servers = restServers;
    writeConfigFile(file);
    out(`Removed ${target === "user" ? "global" : "project"} MCP server "${name}" from ${file.path}.`);
    return 0;
  }
  // Maybe it lives in the other scope.
  const other = target === "user" ? sameScopeFiles(ctx, "local") : sameScopeFiles(ctx, "user");
  let hint = "";
  for (const path of other) {
    try {
      if (readConfigFile(path).servers[name] !== undefined) hint = `; it is in ${path}${target === "user" ? " (use -l)" : " (drop -l)"}`;
    } catch {
      /* the other file is not our concern here */
    }
  }
  throw new Error(`no MCP server "${name}" in ${files.join(" or ")}${hint}`);
}
