/**
 * Search mode: one tool, `mcp`, stands for every MCP tool, so a hundred server tools cost the
 * prompt one schema instead of a hundred.
 *
 *   {action: "search", query?: "words", server?: "name", limit?: 10}  → matching tools, one line each
 *   {action: "describe", tool: "mcp__srv__name"}                         → that tool's description and JSON Schema
 *   {action: "call", tool: "mcp__srv__name", arguments: {...}}           → runs it, its result is this tool's result
 *
 * `tool` accepts the registered name (as search prints it) or "server/tool".
 */
import type { AgentToolResult, AgentToolUpdateCallback, ToolDefinition, ToolExecutionContext } from "../../core/kernel/index.js";

export const SEARCH_TOOL_NAME = "mcp";

export interface SearchEntry {
  /** Registered name, e.g. mcp__github__create_issue. */
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface SearchHost {
  entries(): SearchEntry[];
  /** Servers with their tool counts, for the description. */
  servers(): Array<{ name: string; tools: number; status: string }>;
  call(
    entry: SearchEntry,
    args: Record<string, unknown>,
    toolCallId: string,
    signal: AbortSignal | undefined,
    onUpdate: AgentToolUpdateCallback | undefined,
    ctx: ToolExecutionContext | undefined,
  ): Promise<AgentToolResult>;
}

interface SearchParams {
  action: "search" | "describe" | "call";
  query?: string;
  server?: string;
  tool?: string;
  arguments?: Record<string, unknown>;
  limit?: number;
}

const words = (s: string) => s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);

/** Score entries against a query: name words count three times, description words once. */
export function searchEntries(entries: SearchEntry[], query: string | undefined, server?: string, limit = 10): SearchEntry[] {
  const pool = server ? entries.filter((e) => e.server === server) : entries;
  const q = words(query ?? "");
  if (!q.length) return pool.slice(0, limit);
  const scored = pool
    .map((e, i) => {
      const nameWords = new Set(words(`${e.server} ${e.tool}`));
      const desc = e.description.toLowerCase();
      let score = 0;
      for (const w of q) {
        if (nameWords.has(w)) score += 3;
        else if ([...nameWords].some((n) => n.startsWith(w) || w.startsWith(n))) score += 2;
        if (desc.includes(w)) score += 1;
      }
      return { e, score, i };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i);
  return scored.slice(0, limit).map((x) => x.e);
}

function oneLine(s: string, max = 140): string {
  const l = (s ?? "").replace(/\s+/g, " ").trim();
  return l.length > max ? l.slice(0, max - 1) + "…" : l;
}

function paramSummary(schema: Record<string, unknown>): string {
  const props = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  const req = new Set((schema.required as string[] | undefined) ?? []);
  const parts = Object.entries(props).map(([k, v]) => `${k}${req.has(k) ? "" : "?"}${typeof v?.type === "string" ? `: ${v.type}` : ""}`);
  return parts.length ? `(${parts.join(", ")})` : "()";
}

function findEntry(entries: SearchEntry[], ref: string | undefined, server: string | undefined): SearchEntry {
  if (!ref) throw new Error(`"tool" is required: give a tool name as "search" lists it (e.g. mcp__server__tool)`);
  const byName = entries.find((e) => e.name === ref);
  if (byName) return byName;
  const slash = ref.indexOf("/");
  const s = slash > 0 ? ref.slice(0, slash) : server;
  const t = slash > 0 ? ref.slice(slash + 1) : ref;
  const hit = entries.find((e) => e.tool === t && (s === undefined || e.server === s));
  if (hit) return hit;
  const near = searchEntries(entries, ref, undefined, 3).map((e) => e.name);
  throw new Error(`no MCP tool "${ref}"${near.length ? `; did you mean ${near.join(", ")}?` : ""} (use action "search" to find tools)`);
}

export function createSearchTool(host: SearchHost): ToolDefinition<SearchParams> {
  const servers = host.servers();
  const total = servers.reduce((n, s) => n + s.tools, 0);
  const list = servers.map((s) => `${s.name} (${s.tools} tool${s.tools === 1 ? "" : "s"}${s.status === "connected" ? "" : `, ${s.status}`})`).join(", ");
  return {
    name: SEARCH_TOOL_NAME,
    label: "MCP",
    description:
      `Find and run tools of the connected MCP servers: ${list}. ` +
      `action "search" lists tools matching a query (and/or one server); "describe" shows a tool's parameters; ` +
      `"call" runs a tool with "arguments" that follow its parameters.`,
    promptSnippet: `Search, describe and call ${total} tools of the MCP servers ${servers.map((s) => s.name).join(", ")}`,
    promptGuidelines: [`To use an MCP tool, call mcp with action "search" first, then "describe" it if you need its parameters, then "call" it.`],
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["search", "describe", "call"], description: "What to do" },
        query: { type: "string", description: "search: words to look for in tool names and descriptions" },
        server: { type: "string", description: "search: only this server's tools" },
        tool: { type: "string", description: "describe/call: the tool name as search shows it" },
        arguments: { type: "object", description: "call: the tool's arguments", additionalProperties: true },
        limit: { type: "integer", description: "search: most results (default 10)" },
      },
      required: ["action"],
    },
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const entries = host.entries();
      switch (params.action) {
        case "search": {
          const found = searchEntries(entries, params.query, params.server, Math.max(1, Math.min(params.limit ?? 10, 50)));
          if (params.server && !entries.some((e) => e.server === params.server)) {
            throw new Error(`no MCP server "${params.server}" with tools; servers: ${host.servers().map((s) => s.name).join(", ") || "none"}`);
          }
          const text = found.length
            ? found.map((e) => `${e.name} ${paramSummary(e.inputSchema)}: ${oneLine(e.description)}`).join("\n")
            : `No MCP tool matches "${params.query ?? ""}". ${entries.length} tools exist; try other words or search by server.`;
          return { content: [{ type: "text", text }], details: { action: "search", results: found.map((e) => e.name) } };
        }
        case "describe": {
          const e = findEntry(entries, params.tool, params.server);
          const text = `${e.name} (tool "${e.tool}" of MCP server "${e.server}")\n${e.description}\nParameters (JSON Schema):\n${JSON.stringify(e.inputSchema, null, 2)}`;
          return { content: [{ type: "text", text }], details: { action: "describe", tool: e.name } };
        }
        case "call": {
          const e = findEntry(entries, params.tool, params.server);
          const args = params.arguments ?? {};
          if (typeof args !== "object" || Array.isArray(args)) throw new Error(`"arguments" must be an object`);
          return host.call(e, args, toolCallId, signal, onUpdate, ctx);
        }
        default:
          throw new Error(`unknown action ${JSON.stringify((params as { action?: unknown }).action)}; use "search", "describe" or "call"`);
      }
    },
  };
}
