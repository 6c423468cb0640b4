/**
 * One live MCP client: connect over stdio, streamable HTTP or SSE (streamable HTTP first, SSE
 * when the server answers 4xx and no "type" was given), list the tools, call them, notice when
 * the server goes away, close.
 *
 * The MCP SDK is imported here only, and only inside connectServer(): nothing loads it until a
 * configured server is contacted.
 */
import { isCommandValue, resolveConfigValue } from "../../core/stores/index.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerSpec, McpTransport } from "./config.js";
import type { McpCallResult } from "./content.js";
import { McpNeedsSignInError, usesOAuth } from "./oauth.js";
import { wrapCommand } from "../../core/kernel/index.js";

export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface ConnectOptions {
  timeoutMs: number;
  clientName: string;
  clientVersion: string;
  /** Aborts a connection attempt in progress (shutdown). */
  signal?: AbortSignal;
  /** Where stored OAuth credentials live (mcp-auth.json); without it no OAuth token is sent. */
  agentDir?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  /** How the timeout is configured, for the message (default "setting mcp.callTimeoutMs"). */
  timeoutSource?: string;
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
}

/** Raised for failures the user should read as one line (no stack needed). */
export class McpConnectError extends Error {}

const STDERR_KEEP = 4000;

/** Server processes still running; terminated if this process exits without closing them. */
const livePids = new Set<number>();
let exitHooked = false;
function track(pid: number | null | undefined): void {
  if (!pid) return;
  livePids.add(pid);
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", () => {
      for (const p of livePids) safeKill(p, "SIGTERM");
    });
  }
}
function untrack(pid: number | null): void {
  if (pid) livePids.delete(pid);
}

export interface McpConnection {
  readonly transport: McpTransport;
  readonly serverInfo?: { name: string; version: string };
  readonly instructions?: string;
  tools: McpToolInfo[];
  /** The last lines the server wrote to stderr (stdio). */
  stderrTail(): string;
  callTool(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<McpCallResult>;
  /** Called once when the server goes away by itself (exit, crash, lost HTTP connection). */
  onLost?: (reason: string) => void;
  /** Called when the server announces a changed tool list (already re-listed). */
  onToolsChanged?: (tools: McpToolInfo[]) => void;
  close(): Promise<void>;
  readonly closed: boolean;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: () => string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new McpConnectError(what())), ms);
    const onAbort = () => reject(new McpConnectError("cancelled (shutting down)"));
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Connect, initialise and list the tools, all within `timeoutMs`. */
export async function connectServer(spec: McpServerSpec, opts: ConnectOptions): Promise<McpConnection> {
  const started = Date.now();
  const left = () => Math.max(1, opts.timeoutMs - (Date.now() - started));
  const seconds = (opts.timeoutMs / 1000).toLocaleString("en", { maximumFractionDigits: 1 });
  const timeoutText = () => `did not answer within ${seconds} s (${spec.connectTimeoutMs ? `its connectTimeoutMs` : `setting mcp.connectTimeoutMs`})`;

  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  let stderr = "";
  const appendStderr = (chunk: unknown) => {
    stderr = (stderr + String(chunk)).slice(-STDERR_KEEP);
  };
  const tail = () => stderr.trim().split("\n").slice(-5).join("\n");

  let toolsChanged: ((tools: McpToolInfo[]) => void) | undefined;
  const makeClient = (): Client =>
    new Client(
      { name: opts.clientName, version: opts.clientVersion },
      {
        capabilities: {},
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (!error && tools) toolsChanged?.(tools.map(toToolInfo));
            },
          },
        },
      },
    );

  let transportKind: McpTransport = spec.transport;
  let client: Client;
  let transport: Transport;
  let pid: number | null = null;

  const attempt = async (kind: McpTransport): Promise<void> => {
    client = makeClient();
    transport = await createTransport(kind);
    try {
      // The SDK's own request timeout is a little later, so the clearer message below wins.
      await withTimeout(client.connect(transport, { timeout: left() + 1000 }), left(), timeoutText, opts.signal);
    } catch (e) {
      await closeQuietly(client, transport, pid);
      throw e;
    }
  };

  // (1.6 compat) env and headers values that are a whole `!command` run now (like models.json's).
  const resolveValues = async (rec: Record<string, string> | undefined, what: string): Promise<Record<string, string> | undefined> => {
    if (!rec || !Object.values(rec).some(isCommandValue)) return rec;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(rec)) {
      if (!isCommandValue(v)) {
        out[k] = v;
        continue;
      }
      let why = "";
      const r = await resolveConfigValue(v, { onError: (m) => (why = m) });
      if (r === undefined) throw new Error(`${what}.${k}: ${why || `command "${v.slice(1)}" gave no value`}`);
      out[k] = r;
    }
    return out;
  };

  const createTransport = async (kind: McpTransport): Promise<Transport> => {
    if (kind === "stdio") {
      const env = await resolveValues(spec.env, "env");
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      // Servers get the user's environment plus their own "env" (as other agents do), through the
      // kernel's command wrapper (with the OS sandbox on, they run inside it).
      const run = wrapCommand({ file: spec.command!, args: spec.args ?? [], cwd: spec.cwd ?? process.cwd(), env: { ...process.env, ...env }, explicitEnv: env }, "mcp");
      const t = new StdioClientTransport({
        command: run.file,
        args: run.args,
        env: run.env as Record<string, string>,
        cwd: run.cwd,
        stderr: "pipe",
      });
      t.stderr?.on("data", appendStderr);
      const start = t.start.bind(t);
      t.start = async () => {
        await start();
        pid = t.pid;
        track(pid);
      };
      return t;
    }
    const url = new URL(spec.url!);
    const headers = await resolveValues(spec.headers, "headers");
    const requestInit = headers && Object.keys(headers).length ? { headers } : undefined;
    // (1.6 compat) OAuth: the stored token of this server (refreshed when expired), if any.
    const authProvider = opts.agentDir && usesOAuth(spec) ? await oauthProvider(spec, opts) : undefined;
    if (kind === "sse") {
      const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
      return new SSEClientTransport(url, { requestInit, authProvider });
    }
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    return new StreamableHTTPClientTransport(url, { requestInit, authProvider });
  };

  try {
    try {
      await attempt(spec.transport);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      const http4xx = typeof code === "number" && code >= 400 && code < 500 && code !== 401 && code !== 403;
      if (spec.transport === "http" && spec.fallbackToSse && http4xx && left() > 1) {
        transportKind = "sse";
        await attempt("sse");
      } else throw e;
    }
  } catch (e) {
    throw new McpConnectError(describeConnectError(spec, e, tail()));
  }

  // Tools (all pages).
  const tools: McpToolInfo[] = [];
  try {
    if (client!.getServerCapabilities()?.tools) {
      let cursor: string | undefined;
      do {
        const page = await withTimeout(client!.listTools(cursor ? { cursor } : undefined, { timeout: left() + 1000 }), left(), timeoutText, opts.signal);
        tools.push(...page.tools.map(toToolInfo));
        cursor = page.nextCursor;
      } while (cursor);
    }
  } catch (e) {
    await closeQuietly(client!, transport!, pid);
    throw new McpConnectError(`listing its tools failed: ${describeConnectError(spec, e, tail())}`);
  }

  return makeConnection(client!, transport!, transportKind, tools, tail, () => pid, (fn) => (toolsChanged = fn));
}

async function oauthProvider(spec: McpServerSpec, opts: ConnectOptions) {
  const { connectionAuth } = await import("./oauth.js");
  let config = spec.oauth;
  if (config?.clientSecret && isCommandValue(config.clientSecret)) {
    let why = "";
    const secret = await resolveConfigValue(config.clientSecret, { onError: (m) => (why = m) });
    if (secret === undefined) throw new Error(`oauth.clientSecret: ${why || "the command gave no value"}`);
    config = { ...config, clientSecret: secret };
  }
  return connectionAuth({ agentDir: opts.agentDir!, name: spec.name, url: spec.url!, config, clientName: opts.clientName });
}

function toToolInfo(t: { name: string; title?: string; description?: string; inputSchema: unknown; annotations?: unknown }): McpToolInfo {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: (t.inputSchema && typeof t.inputSchema === "object" ? t.inputSchema : { type: "object", properties: {} }) as Record<string, unknown>,
    annotations: t.annotations as Record<string, unknown> | undefined,
  };
}

function describeConnectError(spec: McpServerSpec, e: unknown, stderrTail: string): string {
  const code = (e as { code?: unknown }).code;
  let msg = message(e);
  if (spec.transport !== "stdio" && (code === 401 || (e as Error)?.name === "UnauthorizedError")) {
    msg = usesOAuth(spec) ? new McpNeedsSignInError(spec.name).message : `the server answered 401 Unauthorized: check the Authorization header of its configuration`;
  }
  if (code === "ENOENT" && spec.transport === "stdio") msg = `cannot start "${spec.command}": command not found (ENOENT)${spec.cwd ? ` in ${spec.cwd}` : ""}`;
  else if (code === "EACCES" && spec.transport === "stdio") msg = `cannot start "${spec.command}": permission denied (EACCES)`;
  else if (/Connection closed/i.test(msg) && spec.transport === "stdio") msg = "the server process exited during start-up";
  else if (/fetch failed|ECONNREFUSED/i.test(msg) || (e as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") msg = `cannot reach ${spec.url}: ${message((e as { cause?: unknown }).cause ?? e)}`;
  if (stderrTail) msg += `\n  server stderr: ${stderrTail.replace(/\n/g, "\n  ")}`;
  return msg;
}

async function closeQuietly(client: Client, transport: Transport, pid: number | null): Promise<void> {
  const done = client.close().catch(() => transport.close().catch(() => {}));
  await settleOrKill(done, pid);
  untrack(pid);
}

/** Wait for a close; a process that has not gone after a grace period is terminated, then killed. */
async function settleOrKill(done: Promise<unknown>, pid: number | null): Promise<void> {
  if (pid === null) {
    await Promise.race([done, new Promise((r) => setTimeout(r, 1500).unref())]);
    return;
  }
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const term = setTimeout(() => alive() && safeKill(pid, "SIGTERM"), 300);
  const kill = setTimeout(() => alive() && safeKill(pid, "SIGKILL"), 1500);
  term.unref();
  kill.unref();
  await Promise.race([done, new Promise((r) => setTimeout(r, 2000).unref())]);
  clearTimeout(term);
  clearTimeout(kill);
  if (alive()) safeKill(pid, "SIGKILL");
}

function safeKill(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

function makeConnection(
  client: Client,
  transport: Transport,
  kind: McpTransport,
  tools: McpToolInfo[],
  tail: () => string,
  pid: () => number | null,
  setToolsChanged: (fn: (tools: McpToolInfo[]) => void) => void,
): McpConnection {
  let closing = false;
  let lostReason: string | undefined;
  const inflight = new Set<AbortController>();
  let probing = false;

  const lost = (reason: string) => {
    if (closing || lostReason) return;
    lostReason = reason;
    for (const ac of inflight) ac.abort(new Error(reason));
    conn.onLost?.(reason);
    void client.close().catch(() => {});
  };

  client.onclose = () => {
    if (kind === "stdio") untrack(pid());
    if (closing) return;
    const t = tail();
    lost(kind === "stdio" ? `the server process exited${t ? `; its stderr: ${t}` : ""}` : "the connection closed");
  };
  client.onerror = (e) => {
    if (closing || lostReason || kind === "stdio") return;
    const msg = message(e);
    if (/Maximum reconnection attempts/i.test(msg)) lost(`lost the connection (${msg})`);
    else if (/SSE stream disconnected|terminated|ECONNRESET|socket/i.test(msg) && inflight.size && !probing) {
      // A cut stream during a call: is the server still there?
      probing = true;
      client
        .ping({ timeout: 3000 })
        .catch((err) => lost(`lost the connection: ${message(err)}`))
        .finally(() => (probing = false));
    }
  };

  const conn: McpConnection = {
    transport: kind,
    serverInfo: client.getServerVersion(),
    instructions: client.getInstructions(),
    tools,
    stderrTail: tail,
    get closed() {
      return closing || lostReason !== undefined;
    },
    async callTool(name, args, opts) {
      if (lostReason) throw new Error(lostReason);
      if (closing) throw new Error("the connection is closed");
      const ac = new AbortController();
      const onAbort = () => ac.abort(opts.signal?.reason ?? new Error("aborted"));
      if (opts.signal?.aborted) onAbort();
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      inflight.add(ac);
      try {
        return (await client.callTool({ name, arguments: args }, undefined, {
          signal: ac.signal,
          timeout: opts.timeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: opts.onProgress ? (p) => opts.onProgress!({ progress: p.progress, total: p.total, message: p.message }) : undefined,
        })) as McpCallResult;
      } catch (e) {
        if (opts.signal?.aborted) throw new Error("aborted");
        if (lostReason) throw new Error(lostReason);
        const msg = message(e);
        const code = (e as { code?: unknown }).code;
        if (code === -32001 || /Request timed out/.test(msg)) {
          throw new Error(`no answer within ${(opts.timeoutMs / 1000).toLocaleString("en", { maximumFractionDigits: 1 })} s (${opts.timeoutSource ?? "setting mcp.callTimeoutMs"}); the request was cancelled`);
        }
        if (/Connection closed/.test(msg)) {
          const t = tail();
          throw new Error(`the server closed the connection during the call${kind === "stdio" ? " (its process exited)" : ""}${t ? `; its stderr: ${t}` : ""}`);
        }
        if (kind !== "stdio" && /fetch failed|ECONNRESET|ECONNREFUSED|socket|other side closed|terminated/i.test(`${msg} ${message((e as { cause?: unknown }).cause ?? "")}`)) {
          // The request itself failed (the server went away before answering): is it still there?
          const alive = await client.ping({ timeout: 3000 }).then(
            () => true,
            () => false,
          );
          if (!alive) {
            lost(`lost the connection: ${msg}`);
            throw new Error(lostReason ?? `lost the connection: ${msg}`);
          }
        }
        throw e;
      } finally {
        opts.signal?.removeEventListener("abort", onAbort);
        inflight.delete(ac);
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      for (const ac of inflight) ac.abort(new Error("the MCP connection was closed"));
      const t = transport as { terminateSession?: () => Promise<void> };
      if (kind === "http" && !lostReason && typeof t.terminateSession === "function") {
        // Tell a stateful HTTP server the session is over (briefly; it may be gone).
        await Promise.race([t.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, 500).unref())]);
      }
      await settleOrKill(client.close().catch(() => {}), pid());
      untrack(pid());
    },
  };
  setToolsChanged((t) => {
    conn.tools = t;
    conn.onToolsChanged?.(t);
  });
  return conn;
}
