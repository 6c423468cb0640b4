/**
 * One provider request over node:http / node:https for the direct path (direct.ts), instead of
 * the global `fetch`. Node's fetch (undici) costs a process about 12 MiB and 100–200 ms of CPU to
 * load, compiles its HTTP parser to WebAssembly, and tiers that parser up on a background thread
 * that the process waits for before it exits (measured: 0.1–0.2 s after the last output); node:http
 * uses the parser built into Node.
 *
 * What goes on the wire is what fetch sends for the same call: the caller's headers plus the
 * ones undici adds (accept-language, sec-fetch-mode, accept-encoding, content-length; host and
 * connection from Node), keep-alive connections, and gzip / deflate / br bodies decoded. Response
 * headers come back as pi-ai's headersToRecord makes them from a fetch Response (lower-case
 * names in sorted order, repeated headers joined with ", ", set-cookie the last one).
 *
 * Timeouts are fetch's defaults as the SDK uses them: `timeoutMs` until the response headers
 * (the SDK's own timeout), then 300 s without data ends the body with "terminated" (undici's
 * body timeout).
 */
import type { IncomingMessage, ClientRequest } from "node:http";
import { createRequire } from "node:module";

// require, not import(): an ESM import of node:http builds its module facade by reading every
// export, and Node 22's node:http has lazy getters (WebSocket, …) that load undici.
const requireBuiltin = createRequire(import.meta.url);

export interface DirectResponse {
  status: number;
  statusText: string;
  /** As pi-ai's headersToRecord(response.headers). */
  headers: Record<string, string>;
  /** [name, value] pairs as fetch's Headers would hold them (for a Response built from this one). */
  headerList: [string, string][];
  /** The decoded body, one chunk per read; `cancel` drops the connection. */
  body: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): void };
}

/** undici's body timeout (Node's fetch default). */
const BODY_IDLE_MS = 300_000;

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
}

/** Response headers as fetch's Headers iterates them (sorted, joined; set-cookie kept apart). */
function headerList(raw: string[]): [string, string][] {
  const joined = new Map<string, string>();
  const cookies: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (name === "set-cookie") cookies.push(value);
    else joined.set(name, joined.has(name) ? `${joined.get(name)}, ${value}` : value);
  }
  const list: [string, string][] = [...joined];
  for (const c of cookies) list.push(["set-cookie", c]);
  return list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * Send the request; resolves at the response headers, rejects on a connection error, the
 * timeout (an Error whose message says "timed out") or the signal (an AbortError).
 */
/** node:http and node:https (https loads tls: only when a URL needs it). */
export function loadTransport(https = false): typeof import("node:http") {
  return (https ? requireBuiltin("node:https") : requireBuiltin("node:http")) as typeof import("node:http");
}

export async function sendDirect(
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal | undefined,
  timeoutMs: number,
  /** Called once the request has been handed to the socket (the server is working from then on). */
  onSent?: () => void,
): Promise<DirectResponse> {
  const u = new URL(url);
  const lib = loadTransport(u.protocol === "https:");
  if (signal?.aborted) throw abortError(signal);
  const payload = Buffer.from(body, "utf8");
  const all: Record<string, string | number> = { ...headers };
  const has = (n: string) => Object.keys(all).some((k) => k.toLowerCase() === n);
  if (!has("accept")) all.accept = "*/*";
  if (!has("accept-language")) all["accept-language"] = "*";
  if (!has("sec-fetch-mode")) all["sec-fetch-mode"] = "cors";
  if (!has("user-agent")) all["user-agent"] = "node";
  if (!has("accept-encoding")) all["accept-encoding"] = "gzip, deflate";
  all["content-length"] = payload.length;

  return new Promise<DirectResponse>((resolve, reject) => {
    let settled = false;
    let res: IncomingMessage | undefined;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      req.destroy();
      reject(error);
    };
    const onAbort = () => {
      const err = abortError(signal!);
      if (!settled) fail(err);
      else res?.destroy(err);
    };
    const timer = setTimeout(() => fail(new Error("Request timed out.")), timeoutMs);
    const cleanup = () => clearTimeout(timer);
    const req: ClientRequest = lib.request(u, { method: "POST", headers: all }, (r) => {
      res = r;
      settled = true;
      cleanup();
      const encoding = String(r.headers["content-encoding"] ?? "").trim().toLowerCase();
      // The body idle timeout applies to the socket from here on.
      const socket = r.socket;
      const onIdle = () => r.destroy(new Error("terminated"));
      socket?.setTimeout(BODY_IDLE_MS);
      socket?.on("timeout", onIdle);
      r.once("close", () => socket?.removeListener("timeout", onIdle));
      decode(r, encoding).then(
        (stream) => {
          const list = headerList(r.rawHeaders);
          resolve({
            status: r.statusCode ?? 0,
            statusText: r.statusMessage ?? "",
            headers: Object.fromEntries(list),
            headerList: list,
            body: chunks(stream, () => {
              signal?.removeEventListener("abort", onAbort);
              r.destroy();
            }),
          });
        },
        (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
      );
      r.once("close", () => signal?.removeEventListener("abort", onAbort));
    });
    req.on("error", (e) => fail(e));
    if (onSent) req.once("finish", onSent);
    signal?.addEventListener("abort", onAbort, { once: true });
    req.end(payload);
  });
}

type BodyStream = NodeJS.ReadableStream & { destroy(e?: Error): void };

/**
 * The body one network chunk per read, as the socket delivered it ('data' events: no copy, no
 * joining of buffered chunks), paused while chunks wait to be read (backpressure to the socket).
 */
function chunks(stream: BodyStream, drop: () => void): DirectResponse["body"] {
  const queue: Buffer[] = [];
  let ended = false;
  let failed: unknown;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  stream.on("data", (c: Buffer) => {
    queue.push(c);
    stream.pause();
    signal();
  });
  stream.on("end", () => {
    ended = true;
    signal();
  });
  stream.on("error", (e: unknown) => {
    failed ??= e;
    signal();
  });
  stream.on("close", () => {
    if (!ended) failed ??= Object.assign(new Error("aborted"), { code: "ECONNRESET" });
    signal();
  });
  return {
    read: async () => {
      for (;;) {
        if (queue.length) {
          const value = queue.shift()!;
          if (!queue.length && !ended) stream.resume();
          return { done: false, value };
        }
        if (failed !== undefined) {
          // As fetch's body: a connection lost mid-body is TypeError "terminated"; a server that
          // closed it is undici's SocketError "other side closed" underneath.
          const e = failed as Error & { code?: unknown };
          if (e?.name === "AbortError" || e?.message === "terminated") throw e;
          const cause = e?.message === "aborted" && e.code === "ECONNRESET" ? Object.assign(new Error("other side closed"), { name: "SocketError", code: "UND_ERR_SOCKET" }) : e;
          throw new TypeError("terminated", { cause });
        }
        if (ended) return { done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    cancel: () => {
      drop();
      stream.destroy();
    },
  };
}

async function decode(res: IncomingMessage, encoding: string): Promise<BodyStream> {
  if (!encoding || encoding === "identity") return res;
  const zlib = requireBuiltin("node:zlib") as typeof import("node:zlib");
  const inflate =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
      : encoding === "deflate"
        ? zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
        : encoding === "br"
          ? zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })
          : undefined;
  if (!inflate) return res; // unknown coding: passed through, as fetch does
  res.on("error", (e) => inflate.destroy(e));
  return res.pipe(inflate);
}
