/**
 * MCP server configuration: where servers are declared, the shared `mcpServers` format,
 * environment-variable expansion, and project trust.
 *
 * Sources, lowest precedence first (a later one replaces an earlier server of the same name):
 *   1. `mcpServers` in the global settings (`<agentDir>/settings.json`)         scope "user"
 *   2. `<agentDir>/mcp.json` (pi 1.6's user file)                              scope "user"
 *   3. `mcpServers` in the project settings (`.pi/settings.json`)               scope "project"
 *   4. `.mcp.json` in the project folder                                        scope "project"
 *   5. `.pi/mcp.json` in the project folder (pi 1.6's project file)             scope "project"
 * Before all of them (so any file wins): servers extensions registered with
 * `pi.registerMcpServer` (kernel service "extension-mcp-servers"), scope "user".
 * Project servers start only when the project is trusted (kernel service "project-trust").
 * A project entry with no "command", "url" or "type" overrides only "enabled", "exposure" and
 * "toolExposure" of the user server of the same name (pi 1.6), keeping the rest.
 *
 * pi 1.6's keys: "timeout" (seconds, per request), "enabled", "exposure" ("codemode" (default),
 * "codemode-deferred", "deferred", "direct", "hidden"), "toolExposure" ({tool or * pattern:
 * exposure}), "description"; beside "mcpServers" in an mcp.json, "autoEnableCodemode" (boolean;
 * the project's wins). Exposure: direct = the tool is declared to the model; codemode = callable
 * from `codemode` scripts, not declared (the `codemode` tool is turned on unless
 * autoEnableCodemode is false); deferred = loaded by `tool_search` (turned on); hidden = not
 * registered. A server without "exposure" gets "codemode", as in pi 1.6 — unless the user set
 * mcp.toolMode, which then decides for it (direct / search through our `mcp` tool / auto).
 * env and headers values that are a whole `!command` are run (like models.json's) when the
 * server connects.
 *
 * One server (the format Claude Code, Cursor and others share):
 *   {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "${TOKEN}"}, "cwd": "."}     stdio
 *   {"url": "https://host/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}}           HTTP
 *   "type": "stdio" | "http" | "sse" is optional: a url server without it tries streamable
 *   HTTP and falls back to the legacy SSE transport. "disabled": true (or "enabled": false)
 *   keeps a server configured but off. "connectTimeoutMs" / "callTimeoutMs" override the settings
 *   mcp.connectTimeoutMs / mcp.callTimeoutMs for that server. Other keys are ignored.
 * Values of command, args, env, cwd, url and headers expand ${VAR} and ${VAR:-default}; a
 * variable that is unset and has no default makes that server invalid (a diagnostic says which).
 *
 * No MCP SDK here: this module is loaded by `pi mcp …` and at session start.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { expandHome, jsonErrorPosition, type KernelServices, type ServiceName, PROJECT_MCP_JSON } from "../../core/kernel/index.js";
import type { McpOAuthConfig } from "./oauth.js";

export type McpScope = "user" | "project";
export type McpTransport = "stdio" | "http" | "sse";

/** A usable server, values expanded. */
export interface McpServerSpec {
  name: string;
  scope: McpScope;
  /** The file it came from. */
  source: string;
  /** "http" with `fallbackToSse` is a url server without an explicit type. */
  transport: McpTransport;
  fallbackToSse: boolean;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Per-server overrides of the mcp.* settings. */
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** pi 1.6's exposure of the server's tools, and per-tool overrides (names or * patterns). */
  exposure?: McpExposure;
  toolExposure?: Record<string, McpExposure>;
  description?: string;
  /** pi 1.6's OAuth settings of an HTTP server (oauth.ts); clientSecret may be ${VAR} or !command. */
  oauth?: McpOAuthConfig;
}

export type McpExposure = "codemode" | "deferred" | "direct" | "hidden";
const EXPOSURES: Record<string, McpExposure> = { codemode: "codemode", "codemode-deferred": "codemode", deferred: "deferred", direct: "direct", hidden: "hidden" };

/** A tool's exposure: an exact toolExposure key, else the first matching pattern, else the server's. */
export function toolExposureOf(spec: Pick<McpServerSpec, "exposure" | "toolExposure">, tool: string): McpExposure | undefined {
  const map = spec.toolExposure ?? {};
  if (map[tool]) return map[tool];
  for (const [k, v] of Object.entries(map)) {
    if (k.includes("*") && new RegExp(`^${k.split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(tool)) return v;
  }
  return spec.exposure;
}

export type McpEntryState = "ok" | "disabled" | "invalid" | "untrusted";

/** One configured server as found (valid or not). */
export interface McpServerEntry {
  name: string;
  scope: McpScope;
  source: string;
  state: McpEntryState;
  spec?: McpServerSpec;
  /** Why it is invalid or untrusted. */
  problem?: string;
  /** The configuration as written (for `pi mcp get`). */
  raw: unknown;
}

export interface McpConfigDiagnostic {
  level: "error" | "warning" | "info";
  message: string;
}

export interface McpConfig {
  entries: McpServerEntry[];
  diagnostics: McpConfigDiagnostic[];
  /** Whether the project is trusted (undefined when there are no project servers). */
  projectTrusted?: boolean;
  /**
   * pi 1.6's `autoEnableCodemode` from `<agentDir>/mcp.json`, then the trusted project's
   * `.pi/mcp.json` (which wins); undefined when neither sets it (then codemode is turned on).
   */
  autoEnableCodemode?: boolean;
}

export const MCP_JSON = PROJECT_MCP_JSON;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

// ---- environment variables ---------------------------------------------------------------

export class MissingEnvError extends Error {
  constructor(
    readonly variable: string,
    readonly where: string,
  ) {
    super(`environment variable ${variable} is not set (used in ${where}); set it, or write \${${variable}:-default}`);
  }
}

const ENV_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Expand ${VAR} and ${VAR:-default}. An unset VAR without a default throws MissingEnvError. */
export function expandEnv(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(ENV_RE, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (v !== undefined && v !== "") return v;
    if (fallback !== undefined) return fallback;
    if (v !== undefined) return v;
    throw new MissingEnvError(name, where);
  });
}

// ---- one server --------------------------------------------------------------------------

export interface ParseContext {
  scope: McpScope;
  source: string;
  /** Folder that relative `cwd` values are resolved against. */
  baseDir: string;
  env: NodeJS.ProcessEnv;
}

function stringRecord(v: unknown, what: string): Record<string, string> {
  if (v === undefined) return {};
  if (!isObj(v)) throw new Error(`"${what}" must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === "number" || typeof x === "boolean") out[k] = String(x);
    else if (typeof x === "string") out[k] = x;
    else throw new Error(`"${what}.${k}" must be a string`);
  }
  return out;
}

/** Check and expand one server's configuration. */
export function parseServer(name: string, raw: unknown, ctx: ParseContext): McpServerEntry {
  const base = { name, scope: ctx.scope, source: ctx.source, raw };
  const invalid = (problem: string): McpServerEntry => ({ ...base, state: "invalid", problem });
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) return invalid(`the server name "${name}" may only use letters, digits, "_", "-" and "."`);
  if (!isObj(raw)) return invalid("its configuration must be an object");
  if (raw.disabled === true || raw.enabled === false) return { ...base, state: "disabled" };
  const type = raw.type ?? raw.transport;
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (typeof raw.enabled === "boolean" || raw.enabled === undefined) {
    /* fine */
  } else return invalid(`"enabled" must be true or false`);
  if (type !== undefined && !["stdio", "http", "sse", "streamable-http", "streamableHttp"].includes(String(type))) {
    return invalid(`unknown "type": ${JSON.stringify(type)} (expected "stdio", "http" or "sse")`);
  }
  if (hasCommand && hasUrl) return invalid(`it has both "command" and "url"; keep one`);
  const timeouts: Pick<McpServerSpec, "connectTimeoutMs" | "callTimeoutMs" | "exposure" | "toolExposure" | "description"> = {};
  for (const k of ["connectTimeoutMs", "callTimeoutMs"] as const) {
    const v = raw[k];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) return invalid(`"${k}" must be a positive number of milliseconds`);
    timeouts[k] = v;
  }
  // pi 1.6: "timeout" in seconds (per request); "exposure", "toolExposure", "description".
  if (raw.timeout !== undefined) {
    if (typeof raw.timeout !== "number" || !Number.isFinite(raw.timeout) || raw.timeout <= 0) return invalid(`"timeout" must be a positive number of seconds`);
    timeouts.callTimeoutMs ??= raw.timeout * 1000;
  }
  if (raw.exposure !== undefined) {
    const e = EXPOSURES[String(raw.exposure)];
    if (!e) return invalid(`unknown "exposure": ${JSON.stringify(raw.exposure)} (expected "codemode", "deferred", "direct" or "hidden")`);
    timeouts.exposure = e;
  }
  if (raw.toolExposure !== undefined) {
    if (!isObj(raw.toolExposure)) return invalid(`"toolExposure" must be an object of tool name: exposure`);
    const map: Record<string, McpExposure> = {};
    for (const [k, v] of Object.entries(raw.toolExposure)) {
      const e = EXPOSURES[String(v)];
      if (!e) return invalid(`unknown exposure for tool "${k}" in "toolExposure": ${JSON.stringify(v)}`);
      map[k] = e;
    }
    timeouts.toolExposure = map;
  }
  if (raw.description !== undefined) {
    if (typeof raw.description !== "string") return invalid(`"description" must be a string`);
    timeouts.description = raw.description;
  }
  const expand = (v: string, where: string) => (v.startsWith("!") && /^(env|headers)\./.test(where) ? v : expandEnv(v, ctx.env, where));
  try {
    if (hasCommand || type === "stdio") {
      if (type !== undefined && type !== "stdio") return invalid(`"type": "${String(type)}" needs a "url", not a "command"`);
      if (typeof raw.command !== "string" || !raw.command.trim()) return invalid(`"command" must be a non-empty string`);
      if (raw.args !== undefined && (!Array.isArray(raw.args) || raw.args.some((a) => typeof a !== "string" && typeof a !== "number"))) {
        return invalid(`"args" must be an array of strings`);
      }
      if (raw.cwd !== undefined && typeof raw.cwd !== "string") return invalid(`"cwd" must be a string`);
      const env = stringRecord(raw.env, "env");
      const spec: McpServerSpec = {
        name,
        scope: ctx.scope,
        source: ctx.source,
        transport: "stdio",
        fallbackToSse: false,
        command: expand(raw.command, "command"),
        args: ((raw.args as unknown[] | undefined) ?? []).map((a, i) => expand(String(a), `args[${i}]`)),
        env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, expand(v, `env.${k}`)])),
        ...timeouts,
      };
      if (typeof raw.cwd === "string") {
        const c = expandHome(expand(raw.cwd, "cwd"));
        spec.cwd = isAbsolute(c) ? c : resolve(ctx.baseDir, c);
      }
      return { ...base, state: "ok", spec };
    }
    if (hasUrl) {
      if (typeof raw.url !== "string" || !raw.url.trim()) return invalid(`"url" must be a non-empty string`);
      const url = expand(raw.url, "url");
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return invalid(`"url" is not a valid URL: ${url}`);
      }
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return invalid(`"url" must be http:// or https:// (got ${parsed.protocol})`);
      const headers = stringRecord(raw.headers, "headers");
      const oauth = parseOAuth(raw.oauth, (v, w) => (v.startsWith("!") ? v : expandEnv(v, ctx.env, w)));
      if (typeof oauth === "string") return invalid(oauth);
      const transport: McpTransport = type === "sse" ? "sse" : "http";
      return {
        ...base,
        state: "ok",
        spec: {
          name,
          scope: ctx.scope,
          source: ctx.source,
          transport,
          fallbackToSse: type === undefined,
          url,
          headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, expand(v, `headers.${k}`)])),
          ...(oauth ? { oauth } : {}),
          ...timeouts,
        },
      };
    }
    return invalid(`it needs a "command" (stdio) or a "url" (HTTP)`);
  } catch (e) {
    return invalid(e instanceof Error ? e.message : String(e));
  }
}

/** Check pi 1.6's `oauth` object; a string is the problem. */
function parseOAuth(v: unknown, expand: (v: string, where: string) => string): McpOAuthConfig | string | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) return `"oauth" must be an object`;
  const o: McpOAuthConfig = {};
  for (const k of ["clientId", "clientSecret", "callbackUrl", "clientName", "scope"] as const) {
    if (v[k] === undefined) continue;
    if (typeof v[k] !== "string" || !v[k]) return `"oauth.${k}" must be a non-empty string`;
    o[k] = k === "clientSecret" ? expand(v[k], "oauth.clientSecret") : (v[k] as string);
  }
  if (v.callbackPort !== undefined) {
    if (typeof v.callbackPort !== "number" || !Number.isInteger(v.callbackPort) || v.callbackPort < 1 || v.callbackPort > 65535) return `"oauth.callbackPort" must be a port number (1-65535)`;
    o.callbackPort = v.callbackPort;
  }
  if (v.clientRegistration !== undefined) {
    if (v.clientRegistration !== "auto" && v.clientRegistration !== "dcr" && v.clientRegistration !== "cimd") return `"oauth.clientRegistration" must be "auto", "dcr" or "cimd"`;
    o.clientRegistration = v.clientRegistration;
  }
  if (v.authServerMetadataUrl !== undefined) return `"oauth.authServerMetadataUrl" is not supported by this build (the authorization server is found through the server's metadata)`;
  return o;
}

// ---- all servers -------------------------------------------------------------------------

export interface McpJsonFile {
  path: string;
  servers?: Obj;
  /** Set when the file exists but cannot be used. */
  error?: string;
  /** pi 1.6's `autoEnableCodemode` beside `mcpServers` (mcp.json files); a string says why it is unusable. */
  autoEnableCodemode?: boolean | { invalid: string };
}

/** Read `.mcp.json` in `dir` (or another file name there); undefined when there is none. */
export function readMcpJson(dir: string, file: string = MCP_JSON): McpJsonFile | undefined {
  const path = join(dir, file);
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    return { path, error: `cannot read it: ${(e as Error).message}` };
  }
  if (!text.trim()) return { path, servers: {} };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return { path, error: `malformed JSON at ${jsonErrorPosition(text, e)}` };
  }
  if (!isObj(data)) return { path, error: "it must hold a JSON object" };
  const auto = data.autoEnableCodemode;
  const autoEnable = auto === undefined ? {} : { autoEnableCodemode: typeof auto === "boolean" ? auto : { invalid: `autoEnableCodemode must be true or false, got ${JSON.stringify(auto)}` } };
  // (1.6 compat) a "$schema" key and other top-level keys are allowed.
  if (data.mcpServers === undefined) return { path, servers: {}, ...autoEnable };
  if (!isObj(data.mcpServers)) return { path, error: `"mcpServers" must be an object` };
  return { path, servers: data.mcpServers, ...autoEnable };
}

export interface CollectInput {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `mcpServers` of the global settings and where they live. */
  user?: { servers: unknown; path: string };
  /** `mcpServers` of the project settings layer. */
  projectSettings?: { servers: unknown; path: string };
  mcpJson?: McpJsonFile;
  /** pi 1.6's `<agentDir>/mcp.json` and the project's `.pi/mcp.json`. */
  userMcpJson?: McpJsonFile;
  /** Servers extensions registered (pi.registerMcpServer): lowest precedence, no trust needed. */
  extensionServers?: Array<{ name: string; config: Record<string, unknown>; extensionPath: string }>;
  projectMcpJson?: McpJsonFile;
  /** Whether project servers may start. */
  trusted: boolean;
  /** How to trust the project, for the diagnostic. */
  trustHint: string;
}

/** Every configured server, last source wins per name; untrusted project servers are marked. */
export function collectServers(input: CollectInput): McpConfig {
  const diagnostics: McpConfigDiagnostic[] = [];
  const byName = new Map<string, McpServerEntry>();
  const add = (servers: unknown, scope: McpScope, source: string) => {
    if (servers === undefined || servers === null) return;
    if (!isObj(servers)) {
      diagnostics.push({ level: "error", message: `"mcpServers" in ${source} must be an object; ignored` });
      return;
    }
    for (const [name, raw0] of Object.entries(servers)) {
      let raw = raw0;
      const prev0 = byName.get(name);
      // A project entry without command/url/type only overrides enabled/exposure/toolExposure.
      if (scope === "project" && isObj(raw) && raw.command === undefined && raw.url === undefined && raw.type === undefined && prev0 && isObj(prev0.raw)) {
        if (!input.trusted) {
          diagnostics.push({ level: "warning", message: `the override of MCP server "${name}" in ${source} is ignored: the project is not trusted` });
          continue;
        }
        const merged: Obj = { ...prev0.raw };
        for (const k of ["enabled", "disabled", "exposure", "toolExposure"]) if (raw[k] !== undefined) merged[k] = raw[k];
        if (raw.enabled === true) delete merged.disabled;
        const e = parseServer(name, merged, { scope: prev0.scope, source: prev0.source, baseDir: input.cwd, env: input.env });
        byName.set(name, { ...e, source: `${prev0.source} (overridden by ${source})` });
        continue;
      }
      let entry = parseServer(name, raw, { scope, source, baseDir: input.cwd, env: input.env });
      if (scope === "project" && !input.trusted && entry.state !== "disabled") {
        entry = { ...entry, state: "untrusted", spec: undefined, problem: `project not trusted; ${input.trustHint}` };
      }
      const prev = byName.get(name);
      if (prev && entry.state === "untrusted" && prev.scope === "user") {
        // An untrusted project cannot replace a server the user configured.
        diagnostics.push({ level: "warning", message: `MCP server "${name}" in ${source} is ignored: the project is not trusted (using the one from ${prev.source})` });
        continue;
      }
      if (prev) diagnostics.push({ level: "info", message: `MCP server "${name}" from ${source} replaces the one from ${prev.source}` });
      byName.set(name, entry);
    }
  };
  const addFile = (f: McpJsonFile | undefined, scope: McpScope) => {
    if (!f) return;
    if (f.error) diagnostics.push({ level: "error", message: `${f.path}: ${f.error}; its MCP servers are ignored` });
    else add(f.servers, scope, f.path);
  };
  for (const x of input.extensionServers ?? []) add({ [x.name]: x.config }, "user", `extension ${x.extensionPath}`);
  if (input.user) add(input.user.servers, "user", input.user.path);
  addFile(input.userMcpJson, "user");
  if (input.projectSettings) add(input.projectSettings.servers, "project", input.projectSettings.path);
  addFile(input.mcpJson, "project");
  addFile(input.projectMcpJson, "project");
  const entries = [...byName.values()];
  for (const e of entries) {
    if (e.state === "invalid") diagnostics.push({ level: "error", message: `MCP server "${e.name}" (${e.source}) is misconfigured: ${e.problem}` });
  }
  const untrusted = entries.filter((e) => e.state === "untrusted");
  if (untrusted.length) {
    diagnostics.push({
      level: "warning",
      message: `skipped ${untrusted.length} project MCP server${untrusted.length === 1 ? "" : "s"} (${untrusted.map((e) => e.name).join(", ")}): this project is not trusted. ${input.trustHint}`,
    });
  }
  const hasProject = entries.some((e) => e.scope === "project");
  let autoEnableCodemode: boolean | undefined;
  for (const f of [input.userMcpJson, input.trusted ? input.projectMcpJson : undefined]) {
    const v = f?.autoEnableCodemode;
    if (typeof v === "boolean") autoEnableCodemode = v;
    else if (v) diagnostics.push({ level: "error", message: `${f!.path}: ${v.invalid}; ignored` });
  }
  return { entries, diagnostics, projectTrusted: hasProject ? input.trusted : undefined, ...(autoEnableCodemode === undefined ? {} : { autoEnableCodemode }) };
}

/** Whether any server is configured anywhere (cheap: used to decide whether to load the rest). */
export function hasAnyServer(input: Pick<CollectInput, "user" | "projectSettings" | "mcpJson" | "userMcpJson" | "projectMcpJson" | "extensionServers">): boolean {
  const n = (v: unknown) => (isObj(v) ? Object.keys(v).length : v === undefined ? 0 : 1);
  const f = (x: McpJsonFile | undefined) => (x ? (x.error ? 1 : n(x.servers)) : 0);
  return (input.extensionServers?.length ?? 0) + n(input.user?.servers) + n(input.projectSettings?.servers) + f(input.mcpJson) + f(input.userMcpJson) + f(input.projectMcpJson) > 0;
}

/** A stable fingerprint of a spec: a changed configuration reconnects. */
export function specKey(spec: McpServerSpec | undefined): string {
  return spec ? JSON.stringify([spec.transport, spec.fallbackToSse, spec.command, spec.args, spec.env, spec.cwd, spec.url, spec.headers, spec.connectTimeoutMs, spec.callTimeoutMs, spec.exposure, spec.toolExposure, spec.oauth]) : "";
}

/** Describe where a server runs, for listings. */
export function describeTarget(spec: Pick<McpServerSpec, "transport" | "command" | "args" | "url" | "fallbackToSse">): string {
  if (spec.transport === "stdio") return [spec.command, ...(spec.args ?? [])].map((a) => (/\s/.test(a ?? "") ? JSON.stringify(a) : a)).join(" ");
  return `${spec.url}${spec.fallbackToSse ? "" : ` (${spec.transport})`}`;
}

// ---- from the kernel -----------------------------------------------------------------------

/** The kernel service another plugin provides (`--trust`, the `trustedProjects` setting, the TUI prompt). */
export type { ProjectTrust } from "../../core/kernel/index.js";

interface KernelLike {
  cwd: string;
  agentDir: string;
  app: { name: string };
  settings: { getGlobal(): Obj; getProject(): Obj; projectPath(): string | undefined };
  service<K extends ServiceName>(name: K): KernelServices[K] | undefined;
}

/**
 * Servers a run mode adds for this process — an ACP client's session/new
 * `mcpServers` — through the service "mcp-extra-servers" (settings format, user scope; they win
 * over a settings server of the same name).
 */
function withExtraServers(kernel: KernelLike, user: CollectInput["user"]): CollectInput["user"] {
  const extra = kernel.service("mcp-extra-servers")?.();
  if (!extra || !Object.keys(extra).length) return user;
  const own = user && isObj(user.servers) ? user.servers : {};
  return { servers: { ...own, ...extra }, path: user ? `${user.path} and the ACP client` : "the ACP client (session/new mcpServers)" };
}

/** The sources of a kernel, without deciding trust yet. */
export function kernelSources(kernel: KernelLike): Pick<CollectInput, "user" | "projectSettings" | "mcpJson" | "userMcpJson" | "projectMcpJson" | "extensionServers"> {
  const g = kernel.settings.getGlobal();
  const p = kernel.settings.getProject();
  const configDir = (kernel.app as { configDir?: string }).configDir ?? ".pi";
  return {
    user: withExtraServers(kernel, g.mcpServers !== undefined ? { servers: g.mcpServers, path: join(kernel.agentDir, "settings.json") } : undefined),
    userMcpJson: readMcpJson(kernel.agentDir, "mcp.json"),
    projectSettings: p.mcpServers !== undefined ? { servers: p.mcpServers, path: kernel.settings.projectPath() ?? join(kernel.cwd, ".pi", "settings.json") } : undefined,
    mcpJson: readMcpJson(kernel.cwd),
    projectMcpJson: readMcpJson(join(kernel.cwd, configDir), "mcp.json"),
    // servers extensions registered with pi.registerMcpServer.
    extensionServers: kernel.service("extension-mcp-servers")?.list(),
  };
}

export function trustHint(kernel: KernelLike): string {
  return `To trust it, run ${kernel.app.name} with --trust, or add ${JSON.stringify(kernel.cwd)} to "trustedProjects" in ${join(kernel.agentDir, "settings.json")}`;
}

/** Whether the project is trusted: the "project-trust" service decides; without it, it is not. */
export async function isProjectTrusted(kernel: KernelLike): Promise<boolean> {
  const trust = kernel.service("project-trust");
  if (!trust || typeof trust.isTrusted !== "function") return false;
  try {
    return !!(await trust.isTrusted(kernel.cwd));
  } catch {
    return false;
  }
}

/** Load every configured server of this kernel's project and user. */
export async function loadMcpConfig(kernel: KernelLike, env: NodeJS.ProcessEnv = process.env): Promise<McpConfig> {
  const sources = kernelSources(kernel);
  const needsTrust =
    hasAnyServer({ projectSettings: sources.projectSettings, mcpJson: sources.mcpJson, projectMcpJson: sources.projectMcpJson }) || sources.projectMcpJson?.autoEnableCodemode !== undefined;
  const trusted = needsTrust ? await isProjectTrusted(kernel) : false;
  return collectServers({ cwd: kernel.cwd, env, ...sources, trusted, trustHint: trustHint(kernel) });
}
