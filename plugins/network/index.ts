/**
 * network: pi 1.6's HTTP settings for the requests this process makes with `fetch` (provider
 * SDKs, MCP over HTTP).
 *
 *   httpProxy           a proxy URL, read from the GLOBAL settings only (a cloned project must not
 *                       be able to route your API keys through its own proxy). Applied as 1.6 does:
 *                       it fills HTTP_PROXY and HTTPS_PROXY when those are not set already.
 *   httpIdleTimeoutMs   the HTTP header and body idle timeout (ms; 0 or "disabled" = none;
 *                       default 300000, which is also Node's own default).
 *
 * When a proxy variable (HTTP_PROXY, HTTPS_PROXY, lower case too) or httpIdleTimeoutMs is set, undici's
 * EnvHttpProxyAgent (honouring NO_PROXY) becomes the global dispatcher, with those timeouts, and
 * undici's fetch the global fetch, so dispatcher and fetch are the same implementation on Node 20
 * and 22 (measured: importing undici costs ~0.3-1 s on a loaded machine, so only then). Otherwise
 * nothing is loaded and Node's fetch is used as it is. This happens at session_start, before the
 * first request of the run.
 */
import { type PluginApi, definePlugin } from "../../core/kernel/index.js";

/** 1.6's default, and Node's own headers/body timeout. */
export const DEFAULT_HTTP_IDLE_TIMEOUT_MS = 300_000;

/** A timeout setting: a non-negative number, 0 or "disabled" for none; undefined when invalid. */
export function parseTimeoutSetting(value: unknown): number | undefined {
  if (typeof value === "string") {
    const t = value.trim();
    if (t.toLowerCase() === "disabled") return 0;
    if (!t) return undefined;
    return parseTimeoutSetting(Number(t));
  }
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  return Math.floor(value);
}

const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];

export interface NetworkConfig {
  proxy?: string;
  idleTimeoutMs?: number;
  problems: string[];
}

/** What the settings ask for (problems name the key and why it is ignored). */
export function readNetworkSettings(globalSettings: Record<string, unknown>, merged: Record<string, unknown>): NetworkConfig {
  const out: NetworkConfig = { problems: [] };
  const proxy = globalSettings.httpProxy;
  if (proxy !== undefined) {
    const p = typeof proxy === "string" ? proxy.trim() : "";
    let ok = false;
    try {
      ok = !!p && /^(https?|socks5?):$/.test(new URL(p).protocol);
    } catch {
      ok = false;
    }
    if (ok) out.proxy = p;
    else out.problems.push(`httpProxy: ${JSON.stringify(proxy)} is not a proxy URL (http://host:port); ignored`);
  }
  if (merged.httpIdleTimeoutMs !== undefined) {
    const t = parseTimeoutSetting(merged.httpIdleTimeoutMs);
    if (t === undefined) out.problems.push(`httpIdleTimeoutMs: ${JSON.stringify(merged.httpIdleTimeoutMs)} is not a number of milliseconds, 0 or "disabled"; the default (${DEFAULT_HTTP_IDLE_TIMEOUT_MS}) applies`);
    else out.idleTimeoutMs = t;
  }
  return out;
}

let installed: { key: string } | undefined;

/** The fetch call in progress (so the dispatcher can abort exactly that fetch with a clear reason). */
interface FetchContext {
  abort: AbortController;
}

/**
 * Make undici's proxy-aware agent (with the timeouts) the global dispatcher, and undici's fetch
 * the global fetch. A fetch whose server stops sending is aborted with a reason that says so
 * (undici alone ends the body with a bare "terminated"); the message keeps that word, so the
 * agent's retry still treats it as transient.
 */
export async function installDispatcher(idleTimeoutMs: number): Promise<void> {
  const key = `${idleTimeoutMs}|${PROXY_VARS.map((k) => process.env[k] ?? "").join("|")}`;
  if (installed?.key === key) return;
  const undici = await import("undici");
  const { AsyncLocalStorage } = await import("node:async_hooks");
  const current = new AsyncLocalStorage<FetchContext>();
  // undici takes 0 as "no timeout".
  const agent = new undici.EnvHttpProxyAgent({ headersTimeout: idleTimeoutMs, bodyTimeout: idleTimeoutMs, allowH2: false, proxyTunnel: true });
  // An internal client error while a body is torn down must not crash the process; the
  // request's own promise or stream reports it.
  (agent as unknown as NodeJS.EventEmitter).on("error", () => {});
  const timeoutReason = (origin: unknown, code: string): Error | undefined => {
    const what = code === "UND_ERR_BODY_TIMEOUT" ? "no data" : code === "UND_ERR_HEADERS_TIMEOUT" ? "no response headers" : undefined;
    if (!what) return undefined;
    const from = typeof origin === "string" ? origin : origin instanceof URL ? origin.origin : "the server";
    return new Error(`terminated: ${what} from ${from} for ${idleTimeoutMs} ms (httpIdleTimeoutMs); the request was abandoned`);
  };
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    const ctx = current.getStore();
    if (!ctx) return dispatch(opts, handler);
    const onTimeout = (error: unknown) => {
      const reason = timeoutReason(opts.origin, (error as { code?: string })?.code ?? "");
      if (reason && !ctx.abort.signal.aborted) ctx.abort.abort(reason);
    };
    const wrapped = new Proxy(handler, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== "function") return value;
        if (prop === "onResponseError" || prop === "onError") {
          return (...args: unknown[]) => {
            onTimeout(args[args.length - 1]);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
    return dispatch(opts, wrapped);
  });
  undici.setGlobalDispatcher(dispatcher);
  const baseFetch = undici.fetch as unknown as typeof fetch;
  const piFetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
    const abort = new AbortController();
    const callerSignal = init?.signal ?? (input && typeof input === "object" && "signal" in input ? (input as Request).signal : undefined);
    const signal = callerSignal ? AbortSignal.any([callerSignal, abort.signal]) : abort.signal;
    return current.run({ abort }, () => baseFetch(input, { ...init, signal }));
  };
  if (!installed && typeof undici.install === "function") undici.install();
  globalThis.fetch = piFetch as typeof fetch;
  installed = { key };
}

export function setupNetwork(api: PluginApi): void {
  const kernel = api.kernel;
  let reported = false;
  api.on("session_start", async () => {
    const cfg = readNetworkSettings(kernel.settings.getGlobal(), kernel.settings.get() as Record<string, unknown>);
    if (!reported) {
      reported = true;
      for (const p of cfg.problems) api.report("warning", `settings: ${p}`);
      const project = kernel.settings.getProject();
      if (project.httpProxy !== undefined) {
        api.report("warning", `settings: httpProxy in the project settings (${kernel.settings.projectPath() ?? ".pi/settings.json"}) is ignored; it is read from the global settings only`);
      }
    }
    if (cfg.proxy) {
      process.env.HTTP_PROXY ??= cfg.proxy;
      process.env.HTTPS_PROXY ??= cfg.proxy;
    }
    const proxied = PROXY_VARS.some((k) => !!process.env[k]);
    if (!proxied && cfg.idleTimeoutMs === undefined) return;
    try {
      await installDispatcher(cfg.idleTimeoutMs ?? DEFAULT_HTTP_IDLE_TIMEOUT_MS);
    } catch (error) {
      api.report("error", `cannot apply the HTTP proxy/timeout settings: ${(error as Error).message ?? String(error)}`);
    }
  });
}

export default definePlugin({
  name: "network",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "httpProxy and httpIdleTimeoutMs for the process's HTTP requests",
  setup: setupNetwork,
});
