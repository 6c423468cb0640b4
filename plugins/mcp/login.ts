/**
 * `pi mcp login <server>`: sign in to an HTTP MCP server with OAuth (authorization code + PKCE
 * through the MCP SDK's auth(), dynamic client registration when no clientId is configured).
 *
 * A loopback listener on 127.0.0.1 (port 0, or the server's oauth.callbackPort / callbackUrl)
 * receives the redirect at /callback. The authorization URL is printed; a browser is opened only
 * when one is available ($BROWSER, macOS, Windows, or xdg-open with a display), so a script or a
 * test completes the sign-in by fetching the URL. Stored tokens that can still be refreshed make
 * the sign-in finish without a browser (as pi 1.6 does).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpAuthStore, StoredOAuthProvider, type McpOAuthConfig } from "./oauth.js";

export interface LoginOptions {
  agentDir: string;
  name: string;
  url: string;
  config?: McpOAuthConfig;
  clientName: string;
  timeoutMs: number;
  /** Where the user reads the URL (stderr in the CLI) and progress. */
  print(text: string): void;
}

export async function loginMcpServer(o: LoginOptions): Promise<"refreshed" | "signed-in"> {
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  const store = new McpAuthStore(o.agentDir);
  const before = store.load(o.name, o.url);
  const cb = await listen(o.config);
  const deadline = new Promise<never>((_, reject) => {
    const t = setTimeout(() => reject(new Error(`the sign-in did not finish within ${Math.round(o.timeoutMs / 1000)} s (--timeout)`)), o.timeoutMs);
    t.unref();
  });
  try {
    const provider = new StoredOAuthProvider({
      store,
      name: o.name,
      serverUrl: o.url,
      config: o.config,
      clientName: o.clientName,
      signIn: {
        redirectUrl: cb.redirectUrl,
        onRedirect: (url) => {
          o.print(`Open this URL to sign in to MCP server "${o.name}":\n  ${url.href}\nWaiting for the browser to return to ${cb.redirectUrl} …`);
          void openBrowser(url.href);
        },
      },
    });
    const first = await Promise.race([auth(provider, { serverUrl: o.url }), deadline]);
    if (first === "AUTHORIZED") return "refreshed";
    const response = await Promise.race([cb.response, deadline]);
    if (response.error) throw new Error(`the authorization server refused: ${response.error}${response.errorDescription ? ` (${response.errorDescription})` : ""}`);
    if (!response.code) throw new Error("the redirect carried no authorization code");
    if (response.state !== provider.expectedState) throw new Error("the redirect's state does not match this sign-in (a stale or forged redirect); try again");
    const second = await Promise.race([auth(provider, { serverUrl: o.url, authorizationCode: response.code }), deadline]);
    if (second !== "AUTHORIZED") throw new Error("the authorization server did not issue a token");
    return "signed-in";
  } catch (e) {
    // Leave no half-finished state (discovery, a registration) behind a failed first sign-in.
    if (!before) store.remove(o.name, o.url);
    const msg = e instanceof Error ? e.message : String(e);
    throw new Error(`signing in to MCP server "${o.name}" (${o.url}) failed: ${msg.replace(/\s*Raw body:[\s\S]*$/, "")}`);
  } finally {
    await cb.close();
  }
}

interface CallbackResponse {
  code?: string;
  state?: string;
  error?: string;
  errorDescription?: string;
}

/** A loopback HTTP listener for the redirect. */
async function listen(config: McpOAuthConfig | undefined): Promise<{ redirectUrl: string; response: Promise<CallbackResponse>; close(): Promise<void> }> {
  let host = "127.0.0.1";
  let path = "/callback";
  let port = config?.callbackPort ?? 0;
  let fixedUrl: URL | undefined;
  if (config?.callbackUrl) {
    fixedUrl = new URL(config.callbackUrl);
    if (fixedUrl.protocol !== "http:" || !["localhost", "127.0.0.1", "[::1]"].includes(fixedUrl.hostname)) {
      throw new Error(`oauth.callbackUrl must be http:// on localhost, 127.0.0.1 or [::1] (got ${config.callbackUrl})`);
    }
    host = fixedUrl.hostname === "[::1]" ? "::1" : fixedUrl.hostname === "localhost" ? "127.0.0.1" : fixedUrl.hostname;
    path = fixedUrl.pathname || "/";
    if (fixedUrl.port) port = Number(fixedUrl.port);
  }
  let resolve!: (r: CallbackResponse) => void;
  const response = new Promise<CallbackResponse>((r) => (resolve = r));
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    if (u.pathname !== path) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const p = u.searchParams;
    const r: CallbackResponse = { code: p.get("code") ?? undefined, state: p.get("state") ?? undefined, error: p.get("error") ?? undefined, errorDescription: p.get("error_description") ?? undefined };
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" });
    res.end(r.error ? `<p>MCP sign-in failed: ${escapeHtml(r.error)}. You may close this page.</p>` : "<p>Signed in to the MCP server. You may close this page.</p>");
    resolve(r);
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", (e) => fail(new Error(`cannot listen for the OAuth redirect on ${host}:${port}: ${(e as Error).message}`)));
    server.listen(port, host, () => ok());
  });
  const actual = (server.address() as AddressInfo).port;
  let redirectUrl: string;
  if (fixedUrl) {
    if (!fixedUrl.port) fixedUrl.port = String(actual);
    redirectUrl = fixedUrl.href; // as written (with the port added when it had none)
  } else redirectUrl = `http://127.0.0.1:${actual}/callback`;
  return {
    redirectUrl,
    response,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Open a browser only where one is available; the URL is printed either way. */
async function openBrowser(url: string): Promise<void> {
  let cmd: string | undefined;
  let args: string[] = [url];
  if (process.env.BROWSER) cmd = process.env.BROWSER;
  else if (process.platform === "darwin") cmd = "open";
  else if (process.platform === "win32") {
    cmd = "cmd";
    args = ["/c", "start", "", url];
  } else if (process.env.DISPLAY || process.env.WAYLAND_DISPLAY) cmd = "xdg-open";
  if (!cmd) return;
  try {
    const { spawn } = await import("node:child_process");
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    /* no browser: the URL is printed */
  }
}
