/**
 * pi 1.6's extension factories for MCP and tool search (`createMcpExtension`,
 * `createToolSearchExtension`), over pi-kernel's MCP plugin (plugins/mcp) — not a second MCP
 * client. A host passes them in `extensionFactories` as it would to 1.6.
 *
 * - MCP here is a built-in plugin of every kernel (CLI and SDK), reading `mcp.json`, `.mcp.json`
 *   and the settings' `mcpServers` by itself. `createMcpExtension()` therefore adds no second
 *   connection: without options it only checks the plugin is there; with `loadConfig` it hands
 *   the servers that function returns to the plugin (`pi.registerMcpServer`) when the session
 *   starts, so they connect, get their exposure and reach the model like configured servers.
 * - `createToolSearchExtension()` registers 1.6's `tool_search` tool: it ranks the tools that are
 *   registered but not declared to the model (MCP tools with `deferred` / `codemode` exposure, or
 *   behind our `mcp` search tool) and activates the matches for the next model call.
 *
 * See docs/extensions.md ("MCP and tool search factories") for what differs from 1.6.
 */
import { Type } from "typebox";
import type { ExtensionAPI, ExtensionContext, ExtensionFactory, ToolInfo } from "../extensions/types.js";
import { searchEntries, type SearchEntry } from "./search-tool.js";

// ---- createMcpExtension ----------------------------------------------------------------------------

/** One server as 1.6's `loadConfig` returns it. */
export interface McpServerEntry {
  name: string;
  /** An `mcpServers` entry: command/args/env/cwd or url/headers, enabled, exposure, toolExposure, … */
  config: Record<string, unknown>;
  source?: string;
  scope?: "global" | "project" | "extension";
  override?: string;
}

export interface LoadedMcpConfig {
  servers: McpServerEntry[];
  /** Accepted, not applied: `autoEnableCodemode` is read from the mcp.json files (plugins/mcp/config.ts). */
  autoEnableCodemode?: boolean;
  /** Problems found while loading; each is shown as a warning. */
  errors?: string[];
  projectConfig?: string;
}

export interface McpExtensionOptions {
  /** Servers to connect, instead of (in 1.6) / besides (here) the ones of the config files. */
  loadConfig?: (ctx: ExtensionContext) => LoadedMcpConfig;
  /**
   * 1.6: how long the first prompt waits for servers with direct tools. Here the first prompt
   * waits until every server's connection attempt settled, bounded by `mcp.connectTimeoutMs`.
   */
  startupWaitMs?: number;
  /** Not available here: transports are the plugin's (stdio, streamable HTTP, SSE). */
  createTransport?: unknown;
  /** Not available here: OAuth credentials are the plugin's (`<agentDir>/mcp-auth.json`). */
  credentials?: unknown;
  /** Not available here: server log messages go to the diagnostics. */
  logPath?: string;
  /** Not available here: sign-in is `pi mcp login <server>`. */
  openUrl?: unknown;
  /** Not available here: `pi mcp add/remove` edit the config files. */
  updateConfig?: unknown;
}

const UNSUPPORTED_MCP_OPTIONS = ["createTransport", "credentials", "logPath", "openUrl", "updateConfig"] as const;

function notify(ctx: ExtensionContext | undefined, text: string, level: "warning" | "error"): void {
  const ui = (ctx as { ui?: { notify?(m: string, l: string): void } } | undefined)?.ui;
  if (typeof ui?.notify === "function") ui.notify(text, level);
  else console.error(text);
}

/**
 * An extension factory bringing 1.6's MCP options to pi-kernel's MCP plugin. Options that would
 * replace a part of the plugin (transports, credentials, the log file, the browser, config
 * editing) are refused here with an error naming them.
 */
export function createMcpExtension(options: McpExtensionOptions = {}): ExtensionFactory {
  if (options === null || typeof options !== "object") throw new TypeError("createMcpExtension: options must be an object");
  const refused = UNSUPPORTED_MCP_OPTIONS.filter((k) => options[k] !== undefined);
  if (refused.length) {
    throw new TypeError(
      `createMcpExtension: ${refused.join(", ")} ${refused.length === 1 ? "is" : "are"} not supported: MCP servers connect through pi-kernel's MCP plugin ` +
        `(its own stdio/HTTP transports, credentials in <agentDir>/mcp-auth.json, sign-in with \`pi mcp login\`)`,
    );
  }
  if (options.loadConfig !== undefined && typeof options.loadConfig !== "function") throw new TypeError("createMcpExtension: loadConfig must be a function");
  if (options.startupWaitMs !== undefined && !(typeof options.startupWaitMs === "number" && options.startupWaitMs >= 0)) {
    throw new TypeError(`createMcpExtension: startupWaitMs must be a number of milliseconds >= 0, got ${JSON.stringify(options.startupWaitMs)}`);
  }
  return (pi: ExtensionAPI) => {
    const registered = new Set<string>();
    pi.on("session_start", (_event: unknown, ctx: ExtensionContext) => {
      if (!options.loadConfig) return;
      let loaded: LoadedMcpConfig;
      try {
        loaded = options.loadConfig(ctx);
      } catch (e) {
        notify(ctx, `MCP: loadConfig failed: ${(e as Error)?.message ?? String(e)}`, "error");
        return;
      }
      for (const problem of loaded?.errors ?? []) notify(ctx, `MCP: ${problem}`, "warning");
      const servers = Array.isArray(loaded?.servers) ? loaded.servers : [];
      const wanted = new Set<string>();
      for (const entry of servers) {
        const name = entry?.name;
        try {
          if (typeof name !== "string" || !entry.config || typeof entry.config !== "object") throw new TypeError("a server needs a name and a config object");
          pi.registerMcpServer(name, { ...entry.config });
          wanted.add(name);
          registered.add(name);
        } catch (e) {
          notify(ctx, `MCP: server ${JSON.stringify(name)} from loadConfig skipped: ${(e as Error).message}`, "warning");
        }
      }
      // A later session start (new session, resume) re-reads: servers no longer returned go.
      for (const name of [...registered]) {
        if (wanted.has(name)) continue;
        pi.unregisterMcpServer(name);
        registered.delete(name);
      }
    });
  };
}

// ---- createToolSearchExtension ---------------------------------------------------------------------

export const TOOL_SEARCH_TOOL_NAME = "tool_search";
export const DEFAULT_TOOL_SEARCH_LIMIT = 8;

type SearchableInfo = ToolInfo & { exposure?: string };

/** A tool `tool_search` may load: not declared yet, and deferred (an MCP tool, or one marked deferred/codemode). */
function searchable(tool: SearchableInfo, active: ReadonlySet<string>): boolean {
  if (active.has(tool.name) || tool.name === TOOL_SEARCH_TOOL_NAME) return false;
  if (tool.exposure !== undefined) return tool.exposure === "deferred" || tool.exposure === "codemode";
  return tool.name.startsWith("mcp__");
}

function entryOf(tool: ToolInfo): SearchEntry {
  const parts = tool.name.split("__");
  const isMcp = parts[0] === "mcp" && parts.length >= 3;
  return {
    name: tool.name,
    server: isMcp ? parts[1]! : "",
    tool: isMcp ? parts.slice(2).join("__") : tool.name,
    description: `${tool.description ?? ""} ${schemaWords(tool.parameters)}`,
    inputSchema: (tool.parameters ?? {}) as Record<string, unknown>,
  };
}

/** Property names and descriptions of a JSON schema, so a query can match what a tool takes. */
function schemaWords(schema: unknown, depth = 0): string {
  if (!schema || typeof schema !== "object" || depth > 4) return "";
  const s = schema as { properties?: Record<string, unknown>; description?: unknown; items?: unknown };
  const out: string[] = [];
  if (depth > 0 && typeof s.description === "string") out.push(s.description);
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(k.replace(/[_-]+/g, " "), schemaWords(v, depth + 1));
  if (s.items) out.push(schemaWords(s.items, depth + 1));
  return out.filter(Boolean).join(" ");
}

const TOOL_SEARCH_DESCRIPTION =
  "Find tools that are not loaded yet and load them. Some tools, such as the tools of MCP servers, are not declared to you " +
  "up front: describe what you need in a few words, and the best matches become callable from your next tool call. " +
  `Use ${TOOL_SEARCH_TOOL_NAME} to discover MCP tools.`;

/** 1.6's `tool_search` tool over the session's tools (`pi` gives getAllTools/getActiveTools/setActiveTools). */
export function createToolSearchToolDefinition(tools: Pick<ExtensionAPI, "getAllTools" | "getActiveTools" | "setActiveTools">) {
  return {
    name: TOOL_SEARCH_TOOL_NAME,
    label: TOOL_SEARCH_TOOL_NAME,
    description: TOOL_SEARCH_DESCRIPTION,
    promptSnippet: "Find tools that are not loaded yet (MCP tools) and load the matches",
    parameters: Type.Object({
      query: Type.String({ description: "What the tool should do, in a few words" }),
      limit: Type.Optional(Type.Number({ description: `How many tools to load at most (default ${DEFAULT_TOOL_SEARCH_LIMIT})` })),
    }),
    async execute(_id: string, params: { query?: unknown; limit?: unknown }) {
      const query = typeof params?.query === "string" ? params.query.trim() : "";
      if (!query) throw new Error("tool_search needs a query (a non-empty string)");
      const limit = params.limit ?? DEFAULT_TOOL_SEARCH_LIMIT;
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) throw new Error(`tool_search: limit must be a positive integer, got ${JSON.stringify(limit)}`);
      const activeNames = tools.getActiveTools();
      const active = new Set(activeNames);
      const candidates = (tools.getAllTools() as SearchableInfo[]).filter((t) => searchable(t, active));
      const found = searchEntries(candidates.map(entryOf), query, undefined, limit);
      if (found.length) tools.setActiveTools([...activeNames, ...found.map((e) => e.name)]);
      const byName = new Map(candidates.map((t) => [t.name, t]));
      const lines = found.map((e) => `- ${e.name}: ${(byName.get(e.name)?.description ?? "").trim().split(/\r?\n/)[0]}`);
      const text = found.length
        ? `Loaded ${found.length} tool${found.length === 1 ? "" : "s"}; ${found.length === 1 ? "it is" : "they are"} callable from your next call:\n${lines.join("\n")}`
        : candidates.length
          ? "No matching tools found."
          : "No tools are waiting to be loaded (every tool is already declared, or no MCP server has deferred tools).";
      return { content: [{ type: "text" as const, text }], details: { loaded: found.map((e) => e.name) } };
    },
  };
}

/** An extension factory registering `tool_search`. */
export function createToolSearchExtension(): ExtensionFactory {
  return (pi: ExtensionAPI) => {
    pi.registerTool(createToolSearchToolDefinition(pi) as Parameters<ExtensionAPI["registerTool"]>[0]);
  };
}
