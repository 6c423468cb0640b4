/**
 * The MCP manager: the configured servers, their connections, and their tools in the kernel.
 *
 * At each session start it re-reads the configuration, keeps the connections that still fit,
 * connects the rest (all at once, each within `mcp.connectTimeoutMs`), then registers the
 * tools and makes them active on the bound session. A server that fails to start, times out
 * or dies later is a diagnostic and a status line, never a crash; `/mcp reconnect` and the
 * next session start try again.
 *
 * Exposure (pi 1.6): a tool's `exposure` (server or `toolExposure`) decides how the model reaches
 * it. "codemode" — the default — registers it inactive, callable from `codemode` scripts (the
 * loop's nested calls reach registered `codemode`/`deferred` tools), and turns the `codemode`
 * tool on unless mcp.json says `autoEnableCodemode: false`; "deferred" registers it inactive
 * and turns `tool_search` on; "direct" declares it; "hidden" does not register it.
 *
 * Tool modes (`mcp.toolMode`), only when the user set one: tools without an exposure follow it —
 * "direct" — one tool per MCP tool; "search" — the single `mcp` tool (search-tool.ts) is active
 * and the MCP tools stay registered but inactive; "auto" — search when there are more than
 * `mcp.searchThreshold` (40) MCP tools. Without `codemode` and `tool_search` registered (an SDK
 * host without them, both built-in extensions off), codemode/deferred tools go behind `mcp` too.
 */
import { filterLateTools, type Kernel, type PluginApi, type AgentToolResult, type AgentToolUpdateCallback, type ToolDefinition, type ToolExposure, type ToolExecutionContext } from "../../core/kernel/index.js";
import { describeTarget, loadMcpConfig, specKey, toolExposureOf, type McpExposure, type McpServerEntry, type McpTransport } from "./config.js";
import type { McpConnection, McpToolInfo } from "./connection.js";
import { DEFAULT_MAX_RESULT_CHARS, toToolResult } from "./content.js";
import { MCP_TOOL_PREFIX, mcpToolName, sanitizeName } from "./names.js";
import { McpNeedsSignInError, usesOAuth } from "./oauth.js";
import { createSearchTool, SEARCH_TOOL_NAME, type SearchEntry } from "./search-tool.js";

export type McpToolMode = "direct" | "search" | "auto";

export interface McpSettings {
  connectTimeoutMs: number;
  callTimeoutMs: number;
  toolMode: McpToolMode;
  /** Whether the user set mcp.toolMode; otherwise servers without an exposure get "codemode" (pi 1.6). */
  toolModeSet: boolean;
  searchThreshold: number;
  maxResultChars: number;
}

export const MCP_DEFAULTS: Readonly<McpSettings> = Object.freeze({
  connectTimeoutMs: 10_000,
  callTimeoutMs: 120_000,
  toolMode: "auto",
  toolModeSet: false,
  searchThreshold: 40,
  maxResultChars: DEFAULT_MAX_RESULT_CHARS,
});

/** pi 1.6's built-in tools that reach tools not declared to the model. */
export const CODEMODE_TOOL = "codemode";
export const TOOL_SEARCH_TOOL = "tool_search";

export type McpServerStatus = "connecting" | "connected" | "failed" | "disabled" | "invalid" | "untrusted";

/** What `/mcp`, `pi mcp list` and tests see of one server. */
export interface McpServerView {
  name: string;
  scope: "user" | "project";
  source: string;
  status: McpServerStatus;
  transport?: McpTransport;
  target?: string;
  error?: string;
  /** How its tools reach the model by default: an exposure, or `toolMode <mode>` when mcp.toolMode decides. */
  exposure?: string;
  /** MCP tool name → registered tool name, and the tool's exposure when it differs from the server's. */
  tools: Array<{ tool: string; name: string; description?: string; exposure?: string }>;
  serverInfo?: { name: string; version: string };
}

interface ServerState {
  entry: McpServerEntry;
  key: string;
  status: McpServerStatus;
  error?: string;
  conn?: McpConnection;
  /** Last known tools (kept after the server dies, so calls fail with a clear message). */
  tools: McpToolInfo[];
  attempt: number;
}

interface Registered {
  server: string;
  tool: McpToolInfo;
  /** undefined: follows mcp.toolMode. */
  exposure?: McpExposure;
}

/** Characters of one server's line in the `mcp_servers` section, and of the whole section. */
const MAX_SERVER_ABOUT = 250;
const MAX_SERVERS_SECTION = 4096;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function num(v: unknown, fallback: number, min = 1): number {
  return typeof v === "number" && Number.isFinite(v) && v >= min ? v : fallback;
}

export class McpManager {
  private readonly servers = new Map<string, ServerState>();
  private toolScope: PluginApi | undefined;
  /** Registered tool name → its server and MCP tool. */
  private registered = new Map<string, Registered>();
  /** Names this manager made active on the session last time. */
  private activated = new Set<string>();
  private pending: Promise<void> = Promise.resolve();
  private shutdownAc = new AbortController();
  private reported = new Set<string>();
  private effectiveMode: "direct" | "search" = "direct";
  private syncing = 0;
  /** `autoEnableCodemode` of the mcp.json files, as last loaded. */
  private autoEnableCodemode = true;
  private warnedUnreachable = false;

  constructor(
    private readonly kernel: Kernel,
    private readonly api: PluginApi,
  ) {}

  // ---- settings -------------------------------------------------------------------------------

  settings(): McpSettings {
    const s = (this.kernel.settings.get().mcp ?? {}) as Partial<Record<keyof McpSettings, unknown>>;
    const mode = s.toolMode === "direct" || s.toolMode === "search" || s.toolMode === "auto" ? s.toolMode : MCP_DEFAULTS.toolMode;
    if (s.toolMode !== undefined && s.toolMode !== mode) this.reportOnce("warning", `setting mcp.toolMode ${JSON.stringify(s.toolMode)} is not "direct", "search" or "auto"; using "auto"`);
    return {
      connectTimeoutMs: num(s.connectTimeoutMs, MCP_DEFAULTS.connectTimeoutMs),
      callTimeoutMs: num(s.callTimeoutMs, MCP_DEFAULTS.callTimeoutMs),
      toolMode: mode,
      toolModeSet: s.toolMode === mode,
      searchThreshold: num(s.searchThreshold, MCP_DEFAULTS.searchThreshold, 0),
      maxResultChars: num(s.maxResultChars, MCP_DEFAULTS.maxResultChars, 100),
    };
  }

  /** "direct" or "search", as last applied. */
  get mode(): "direct" | "search" {
    return this.effectiveMode;
  }

  // ---- life cycle -----------------------------------------------------------------------------

  /** Start syncing with the configuration (session start); does not wait. */
  start(): Promise<void> {
    // One sync at a time: a reconnect during start-up waits for the start to settle first.
    const run = this.pending.catch(() => {}).then(() => this.sync());
    this.pending = run;
    return run;
  }

  /** Resolves when every connection attempt started so far has settled. */
  async whenSettled(): Promise<void> {
    let p: Promise<void>;
    do {
      p = this.pending;
      await p.catch(() => {});
    } while (p !== this.pending);
  }

  /** Re-read the configuration; connect what is new, changed or not connected; drop what is gone. */
  async sync(): Promise<void> {
    if (this.shutdownAc.signal.aborted) this.shutdownAc = new AbortController();
    const ac = this.shutdownAc;
    this.syncing++;
    try {
      const config = await loadMcpConfig(this.kernel);
      for (const d of config.diagnostics) this.reportOnce(d.level, d.message);
      this.autoEnableCodemode = config.autoEnableCodemode ?? true;
      const seen = new Set<string>();
      const jobs: Promise<void>[] = [];
      for (const entry of config.entries) {
        seen.add(entry.name);
        const key = specKey(entry.spec);
        let st = this.servers.get(entry.name);
        if (st && (st.key !== key || entry.state !== "ok")) {
          await this.disconnect(st);
          st = undefined;
        }
        if (!st) {
          st = { entry, key, status: entry.state === "ok" ? "connecting" : entry.state, error: entry.problem, tools: [], attempt: 0 };
          this.servers.set(entry.name, st);
        } else st.entry = entry;
        if (entry.state !== "ok") continue;
        if (st.status === "connected" && st.conn && !st.conn.closed) continue;
        jobs.push(this.connect(st));
      }
      for (const [name, st] of this.servers) {
        if (seen.has(name)) continue;
        await this.disconnect(st);
        this.servers.delete(name);
      }
      // From the configuration, before the servers connect (pi 1.6).
      this.ensureDiscoveryActive();
      this.updateStatusLine();
      await Promise.all(jobs);
    } finally {
      this.syncing--;
    }
    if (!ac.signal.aborted) this.applyTools();
  }

  /** Reconnect one server (even when connected), or every server that is not connected. */
  async reconnect(name?: string): Promise<void> {
    if (name !== undefined) {
      await this.whenSettled();
      const st = this.servers.get(name);
      if (!st) {
        // Maybe it was just added to the configuration.
        await this.start();
        if (!this.servers.has(name)) throw new Error(`no MCP server "${name}" is configured${this.servers.size ? ` (configured: ${[...this.servers.keys()].join(", ")})` : ""}`);
        return;
      }
      await this.disconnect(st);
      st.key = "";
    }
    await this.start();
  }

  /** Close every connection (session end, exit). */
  async shutdown(): Promise<void> {
    this.shutdownAc.abort();
    await Promise.all([...this.servers.values()].map((st) => this.disconnect(st)));
    this.toolScope?.dispose();
    this.toolScope = undefined;
    this.registered.clear();
    this.activated.clear();
    this.kernel.service("ui")?.setStatus?.("mcp", undefined);
  }

  private async connect(st: ServerState): Promise<void> {
    const spec = st.entry.spec!;
    const attempt = ++st.attempt;
    st.status = "connecting";
    st.error = undefined;
    this.updateStatusLine();
    const s = this.settings();
    try {
      const { connectServer } = await import("./connection.js");
      const conn = await connectServer(spec, {
        timeoutMs: spec.connectTimeoutMs ?? s.connectTimeoutMs,
        clientName: this.kernel.app.name,
        clientVersion: this.kernel.app.version,
        signal: this.shutdownAc.signal,
        agentDir: this.kernel.agentDir,
      });
      if (attempt !== st.attempt || this.shutdownAc.signal.aborted || this.servers.get(spec.name) !== st) {
        await conn.close();
        return;
      }
      st.conn = conn;
      st.status = "connected";
      st.tools = conn.tools;
      conn.onLost = (reason) => {
        if (st.conn !== conn) return;
        st.status = "failed";
        st.error = reason;
        this.api.report("error", `MCP server "${spec.name}" stopped: ${reason}. Its tools fail until it is back; retry with /mcp reconnect ${spec.name} or a new session`);
        this.updateStatusLine();
      };
      conn.onToolsChanged = (tools) => {
        if (st.conn !== conn) return;
        st.tools = tools;
        if (!this.syncing) this.applyTools();
      };
      this.api.report("info", `MCP server "${spec.name}" connected over ${conn.transport} with ${conn.tools.length} tool${conn.tools.length === 1 ? "" : "s"}`);
    } catch (e) {
      if (attempt !== st.attempt) return;
      st.status = "failed";
      st.error = message(e);
      // (1.6 compat) an HTTP server that answers 401 wants OAuth sign-in.
      if (usesOAuth(spec) && !st.error.startsWith("needs sign-in") && /\b401\b|unauthori[sz]ed|invalid_token/i.test(st.error)) {
        st.error = new McpNeedsSignInError(spec.name).message;
      }
      if (!this.shutdownAc.signal.aborted) {
        this.api.report("error", `MCP server "${spec.name}" failed to start (${describeTarget(spec)}): ${st.error}`);
      }
    }
    this.updateStatusLine();
  }

  private async disconnect(st: ServerState): Promise<void> {
    st.attempt++;
    const conn = st.conn;
    st.conn = undefined;
    if (st.status === "connected" || st.status === "connecting") st.status = "failed";
    st.error ??= "disconnected";
    if (conn) await conn.close().catch(() => {});
  }

  // ---- tools ----------------------------------------------------------------------------------

  /** The exposure of a tool: its own or its server's, else "codemode" unless mcp.toolMode was set (undefined: follow it). */
  private exposureOf(entry: McpServerEntry, tool: string | undefined, s: McpSettings): McpExposure | undefined {
    const own = entry.spec ? (tool === undefined ? entry.spec.exposure : toolExposureOf(entry.spec, tool)) : undefined;
    return own ?? (s.toolModeSet ? undefined : "codemode");
  }

  /** Whether `codemode` or `tool_search` is registered, so tools not declared to the model can be reached. */
  private hasReachingTool(): boolean {
    return this.kernel.tools.has(CODEMODE_TOOL) || this.kernel.tools.has(TOOL_SEARCH_TOOL);
  }

  /**
   * pi 1.6: turn on the tool that reaches the configured servers' undeclared tools — `codemode`
   * for `codemode` exposure (unless autoEnableCodemode is false), `tool_search` for `deferred` —
   * and warn once when neither is on. Never turns a tool off; `--tools -codemode`, `-xt`, `-nt`
   * keep it off.
   */
  private ensureDiscoveryActive(): void {
    const session = this.session();
    if (!session || !this.hasReachingTool()) return;
    const s = this.settings();
    const exposures = new Set<McpExposure | undefined>();
    for (const st of this.servers.values()) {
      if (st.entry.state !== "ok") continue;
      exposures.add(this.exposureOf(st.entry, undefined, s));
      for (const e of Object.values(st.entry.spec?.toolExposure ?? {})) exposures.add(e);
    }
    const needsCodemode = exposures.has("codemode");
    const needsToolSearch = exposures.has("deferred");
    if (!needsCodemode && !needsToolSearch) return;
    const hasCodemode = this.kernel.tools.has(CODEMODE_TOOL);
    const hasToolSearch = this.kernel.tools.has(TOOL_SEARCH_TOOL);
    const active = session.getActiveToolNames();
    const wanted: string[] = [];
    if (needsCodemode && hasCodemode && this.autoEnableCodemode && !active.includes(CODEMODE_TOOL)) wanted.push(CODEMODE_TOOL);
    if (needsToolSearch && hasToolSearch && !active.includes(TOOL_SEARCH_TOOL)) wanted.push(TOOL_SEARCH_TOOL);
    const add = filterLateTools(wanted, this.kernel.service("argv")?.flags);
    if (add.length) {
      session.setActiveTools([...active, ...add]);
      session.invalidateSystemPrompt?.();
    }
    const reachable = [...active, ...add];
    if ((hasCodemode && reachable.includes(CODEMODE_TOOL)) || (hasToolSearch && reachable.includes(TOOL_SEARCH_TOOL))) return;
    if (this.warnedUnreachable) return;
    this.warnedUnreachable = true;
    const reason = needsCodemode && hasCodemode && !this.autoEnableCodemode ? " (autoEnableCodemode is false)" : "";
    this.api.report("warning", `MCP tools are only reachable from the codemode or tool_search tool, but neither is active${reason}; they cannot be called.`);
  }

  /**
   * pi 1.6's `mcp_servers` system prompt section: the enabled servers whose tools are not
   * declared (`codemode` / `deferred` exposure), how they are reached, and one line on each —
   * its `description`, else the first line of its instructions. Undefined when there are none,
   * or when those tools sit behind the `mcp` tool (no codemode or tool_search registered).
   */
  serversSection(): string | undefined {
    if (!this.hasReachingTool()) return undefined;
    const s = this.settings();
    const listed: Array<{ name: string; via: "codemode" | "tool_search"; about: string }> = [];
    for (const st of this.servers.values()) {
      if (st.entry.state !== "ok") continue;
      const exposures = new Set([this.exposureOf(st.entry, undefined, s), ...Object.values(st.entry.spec?.toolExposure ?? {})]);
      if (!exposures.has("codemode") && !exposures.has("deferred")) continue;
      const about = (st.entry.spec?.description ?? st.conn?.instructions ?? "").trim().split("\n")[0]!.trim();
      listed.push({ name: `${MCP_TOOL_PREFIX}${sanitizeName(st.entry.name)}`, via: exposures.has("codemode") ? "codemode" : "tool_search", about });
    }
    if (!listed.length) return undefined;
    listed.sort((a, b) => a.name.localeCompare(b.name));
    const vias = new Set(listed.map((l) => l.via));
    let intro = "MCP servers whose tools are not declared to you.";
    if (vias.has("codemode")) intro += " Call the tools of `codemode` servers from codemode scripts (find them with searchTools() or ALL_TOOLS).";
    if (vias.has("tool_search")) intro += " Load the tools of `tool_search` servers with `tool_search`.";
    const clip = (t: string) => (t.length > MAX_SERVER_ABOUT ? `${t.slice(0, MAX_SERVER_ABOUT - 1).trimEnd()}…` : t);
    const lines = [intro];
    for (const [i, l] of listed.entries()) {
      const line = `- ${l.name} (${l.via})${l.about ? `: ${clip(l.about)}` : ""}`;
      if ([...lines, line].join("\n").length > MAX_SERVERS_SECTION) {
        lines.push(`- … ${listed.length - i} more; find their tools with searchTools()`);
        break;
      }
      lines.push(line);
    }
    return lines.join("\n");
  }

  /** Register the tools of every server that has some, by their exposure, and activate the declared ones. */
  applyTools(): void {
    const s = this.settings();
    const withTools = [...this.servers.values()].filter((st) => st.tools.length && st.entry.state === "ok");
    const total = withTools.reduce((n, st) => n + st.tools.length, 0);
    const mode = s.toolMode === "auto" ? (total > s.searchThreshold ? "search" : "direct") : s.toolMode;
    // Without codemode and tool_search, tools that are not declared are reached through `mcp`.
    const reaching = this.hasReachingTool();

    const session = this.session();
    const before = session?.getActiveToolNames() ?? [];
    const ours = new Set([...this.registered.keys(), ...this.activated]);
    if (this.effectiveMode === "search" && this.toolScope) ours.add(SEARCH_TOOL_NAME);
    this.toolScope?.dispose();
    this.toolScope = undefined;
    this.registered = new Map();
    this.effectiveMode = mode;
    const kept = before.filter((n) => !ours.has(n));
    if (!total) {
      this.activate(session, kept, []);
      return;
    }
    const scope = this.kernel.scope(this.api.name);
    this.toolScope = scope;
    const taken = new Set<string>();
    const names: string[] = [];
    // hidden = not registered; direct = declared; codemode / deferred = registered, not declared,
    // callable from codemode (and loadable by tool_search); no exposure = follows mcp.toolMode.
    const direct: string[] = [];
    let behindSearchTool = 0;
    for (const st of withTools) {
      for (const tool of st.tools) {
        const exposure = this.exposureOf(st.entry, tool.name, s);
        if (exposure === "hidden") continue;
        const name = mcpToolName(st.entry.name, tool.name, taken);
        const declared = exposure === "direct" || (exposure === undefined && mode === "direct");
        const indirect = exposure === "codemode" || exposure === "deferred";
        const toolExposure: ToolExposure | undefined = declared ? "direct" : indirect && reaching ? exposure : undefined;
        if (scope.registerTool(this.toolDefinition(name, st.entry.name, tool, toolExposure))) {
          this.registered.set(name, { server: st.entry.name, tool, exposure });
          names.push(name);
          if (declared) direct.push(name);
          else if (!toolExposure) behindSearchTool++;
        }
      }
    }
    this.effectiveMode = behindSearchTool ? "search" : "direct";
    // Undeclared tools that were active (loaded by tool_search) stay active when the tools are re-registered.
    const loaded = names.filter((n) => before.includes(n) && !direct.includes(n) && this.kernel.tools.get(n)?.exposure !== undefined);
    if (behindSearchTool) {
      const ok = scope.registerTool(createSearchTool({ entries: () => this.searchEntries(), servers: () => this.serverCounts(), call: (...a) => this.callThroughKernel(...a) }));
      this.activate(session, kept, ok ? [SEARCH_TOOL_NAME, ...direct, ...loaded] : [...direct, ...loaded]);
    } else {
      this.activate(session, kept, [...direct, ...loaded]);
    }
  }

  private session(): { getActiveToolNames(): string[]; setActiveTools(names: string[]): void; invalidateSystemPrompt?(): void } | undefined {
    if (!this.kernel.isBound) return undefined;
    return this.kernel.bound("mcp").session;
  }

  /** Active tools = the non-MCP ones kept + `wanted`, limited by `--tools` / `--no-tools`. */
  private activate(session: ReturnType<McpManager["session"]>, kept: string[], wanted: string[]): void {
    // --tools keeps MCP tools unless an entry starts with mcp__; -nt, -xt.
    const flags = this.kernel.service("argv")?.flags;
    const add = filterLateTools(wanted, flags);
    this.activated = new Set(add);
    if (!session) return;
    session.setActiveTools([...kept, ...add.filter((n) => !kept.includes(n))]);
    session.invalidateSystemPrompt?.();
  }

  private toolDefinition(name: string, server: string, tool: McpToolInfo, exposure: ToolExposure | undefined): ToolDefinition {
    const description = tool.description?.trim() || `Tool "${tool.name}" of the MCP server "${server}"`;
    const first = description.split("\n")[0]!.trim();
    const parameters = { ...tool.inputSchema };
    delete parameters.$schema;
    if (parameters.type === undefined) parameters.type = "object";
    return {
      name,
      label: `${server}: ${tool.title ?? tool.name}`,
      description,
      promptSnippet: first.length > 160 ? first.slice(0, 159) + "…" : first,
      parameters,
      ...(exposure ? { exposure } : {}),
      execute: (_id, params, signal, onUpdate) => this.callTool(server, tool.name, (params ?? {}) as Record<string, unknown>, signal, onUpdate),
    };
  }

  /** Call an MCP tool directly (a registered tool's execute). */
  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal | undefined,
    onUpdate?: AgentToolUpdateCallback,
  ): Promise<AgentToolResult> {
    const st = this.servers.get(server);
    const conn = st?.conn;
    if (!st || !conn || st.status !== "connected") {
      throw new Error(`MCP server "${server}" is not connected${st?.error ? ` (${st.error})` : ""}; retry with /mcp reconnect ${server}`);
    }
    const s = this.settings();
    let result;
    try {
      result = await conn.callTool(tool, args, {
        signal,
        timeoutMs: st.entry.spec?.callTimeoutMs ?? s.callTimeoutMs,
        timeoutSource: st.entry.spec?.callTimeoutMs ? "its callTimeoutMs" : undefined,
        onProgress: onUpdate
          ? (p) => onUpdate({ content: [{ type: "text", text: `${p.message ?? "progress"} (${p.progress}${p.total !== undefined ? `/${p.total}` : ""})` }], details: { progress: p } })
          : undefined,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new Error(`MCP tool "${tool}" on server "${server}" failed: ${message(e)}`);
    }
    return toToolResult(server, tool, result, s.maxResultChars);
  }

  private searchEntries(): SearchEntry[] {
    return [...this.registered].map(([name, r]) => ({
      name,
      server: r.server,
      tool: r.tool.name,
      description: r.tool.description ?? "",
      inputSchema: r.tool.inputSchema,
    }));
  }

  private serverCounts() {
    return [...this.servers.values()]
      .filter((st) => st.tools.length && st.entry.state === "ok")
      .map((st) => ({ name: st.entry.name, tools: st.tools.length, status: st.status }));
  }

  /**
   * Search mode's "call": the permission gate and tool_call taps see the real tool name, and
   * tool middleware applies, as if the model had called the tool directly.
   */
  private async callThroughKernel(
    entry: SearchEntry,
    args: Record<string, unknown>,
    toolCallId: string,
    signal: AbortSignal | undefined,
    onUpdate: AgentToolUpdateCallback | undefined,
    ctx: ToolExecutionContext | undefined,
  ): Promise<AgentToolResult> {
    const hooks = this.kernel.hooks;
    const input = { ...args };
    if (hooks.tool_call.isUsed()) {
      let r;
      try {
        r = await hooks.tool_call.promise({ type: "tool_call", toolCallId, toolName: entry.name, input });
      } catch (e) {
        throw new Error(`${entry.name} was blocked: ${message(e)}`);
      }
      if (r?.block) throw new Error(r.reason ? `${entry.name} was blocked: ${r.reason}` : `${entry.name} was blocked`);
    }
    const tool = this.kernel.tools.get(entry.name);
    if (!tool) throw new Error(`the MCP tool ${entry.name} is no longer registered`);
    return tool.execute(toolCallId, input, signal, onUpdate, ctx);
  }

  // ---- status ---------------------------------------------------------------------------------

  list(): McpServerView[] {
    const s = this.settings();
    const serverExposure = (entry: McpServerEntry) => this.exposureOf(entry, undefined, s) ?? `mcp.toolMode ${s.toolMode}`;
    const byServer = new Map<string, McpServerView["tools"]>();
    for (const [name, r] of this.registered) {
      const l = byServer.get(r.server) ?? [];
      const own = r.exposure ?? `mcp.toolMode ${s.toolMode}`;
      const st = this.servers.get(r.server);
      l.push({ tool: r.tool.name, name, description: r.tool.description, ...(st && own !== serverExposure(st.entry) ? { exposure: own } : {}) });
      byServer.set(r.server, l);
    }
    return [...this.servers.values()].map((st) => ({
      name: st.entry.name,
      scope: st.entry.scope,
      source: st.entry.source,
      status: st.status,
      ...(st.entry.state === "ok" ? { exposure: serverExposure(st.entry) } : {}),
      transport: st.conn?.transport ?? st.entry.spec?.transport,
      target: st.entry.spec ? describeTarget(st.entry.spec) : undefined,
      error: st.status === "connected" ? undefined : st.error,
      tools: byServer.get(st.entry.name) ?? [],
      serverInfo: st.conn?.serverInfo,
    }));
  }

  private statusText(): string | undefined {
    const runnable = [...this.servers.values()].filter((st) => st.entry.state === "ok");
    if (!runnable.length) return undefined;
    const connected = runnable.filter((st) => st.status === "connected").length;
    const failed = runnable.filter((st) => st.status === "failed").map((st) => st.entry.name);
    const connecting = runnable.some((st) => st.status === "connecting");
    let text = `MCP ${connected}/${runnable.length}`;
    if (connecting) text += " connecting…";
    if (failed.length) text += ` · failed: ${failed.join(", ")}`;
    return text;
  }

  private updateStatusLine(): void {
    try {
      this.kernel.service("ui")?.setStatus?.("mcp", this.statusText());
    } catch {
      /* a UI that fails to draw a status must not break MCP */
    }
  }

  private reportOnce(level: "error" | "warning" | "info", msg: string): void {
    const k = `${level}:${msg}`;
    if (this.reported.has(k)) return;
    this.reported.add(k);
    this.api.report(level, msg);
  }
}

/** The text `/mcp` shows. */
export function formatStatus(views: McpServerView[], mode: "direct" | "search"): string {
  if (!views.length) return "No MCP servers are configured. Add one with `pi mcp add <name> <command|url>` or in .mcp.json.";
  const toolCount = views.reduce((n, v) => n + v.tools.length, 0);
  const lines = [`MCP servers (${toolCount} tools${mode === "search" ? `; tools that follow mcp.toolMode are reached through the "${SEARCH_TOOL_NAME}" tool` : ""}):`];
  for (const v of views) {
    const info = v.serverInfo ? ` ${v.serverInfo.name} ${v.serverInfo.version}` : "";
    const exposure = v.exposure ? ` — exposure: ${v.exposure}` : "";
    lines.push(`  ${v.name} — ${v.status}${v.transport ? ` (${v.transport})` : ""}${info}${exposure} — ${v.scope}: ${v.source}`);
    if (v.target) lines.push(`    ${v.target}`);
    if (v.error) lines.push(`    ${v.error.replace(/\n/g, "\n    ")}`);
    if (v.tools.length) lines.push(`    tools: ${v.tools.map((t) => (t.exposure ? `${t.name} (${t.exposure})` : t.name)).join(", ")}`);
  }
  return lines.join("\n");
}
