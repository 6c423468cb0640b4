/**
 * End to end, pi 1.6's MCP features through the real CLI (dist/bundle/cli.js):
 *   - OAuth for an HTTP server (tests/fixtures/mcp/http-server.mjs with `oauth: true`: an
 *     authorization server and an MCP endpoint that wants its bearer token): pi mcp login →
 *     a tool call in pi -p → the token expires and is refreshed → pi mcp logout → "needs sign-in";
 *     no token in the session file.
 *   - pi mcp add in 1.6's forms (--url, -- command, -l) and its help.
 *   - servers registered by an extension (pi.registerMcpServer) connect, their tools run;
 *     unregisterMcpServer drops them; mcp_servers_change fires.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { startMcpHttpServer, type McpHttpServer } from "./fixtures/mcp/http-server.mjs";
import { ROOT, makeE2eEnv, runCli, spawnCli, type E2eEnv } from "./helpers/e2e.js";
import { waitUntil } from "./helpers/system.js";

const STDIO = join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs");
const REGISTRAR = resolve(ROOT, "tests", "fixtures", "extensions", "mcp-registrar.ts");
/** No browser may open during the tests: the sign-in is completed by fetching the URL. */
const NO_BROWSER = { BROWSER: "", DISPLAY: "", WAYLAND_DISPLAY: "" };

let llm: LlmServer;
let secure: McpHttpServer;
let plain: McpHttpServer;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  llm = await startLlmServer({ script: { turns: [] } });
  secure = await startMcpHttpServer({ name: "secure", oauth: true });
  plain = await startMcpHttpServer({ name: "plain" });
});
afterAll(async () => {
  await llm.close();
  await secure.close();
  await plain.close();
});
afterEach(() => {
  while (envs.length) envs.pop()!.cleanup();
});

function env(settings: Record<string, unknown> = {}): E2eEnv {
  const e = makeE2eEnv(llm.url, { settings });
  envs.push(e);
  return e;
}

function script(turns: Array<{ text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> }>, turnBy?: "request") {
  llm.setScript({ turns, ...(turnBy ? { turnBy } : {}) });
  llm.reset();
}
const requests = () => llm.stats().requests.filter((r) => r.path === "/v1/chat/completions");
const toolMessages = (i: number) => requests()[i]!.body.messages.filter((m: any) => m.role === "tool");
const toolNames = (i: number): string[] => (requests()[i]!.body.tools ?? []).map((t: any) => t.function.name);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** Run `pi mcp login <name>` and complete the sign-in by fetching the URL it prints. */
async function login(e: E2eEnv, name: string): Promise<{ code: number | null; stdout: string; stderr: string; page: string }> {
  const child = spawnCli(["mcp", "login", name], e, NO_BROWSER);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c) => (stdout += c));
  child.stderr!.on("data", (c) => (stderr += c));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  child.stdin!.end();
  const url = await waitUntil(() => /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(stdout)?.[1], "the authorization URL on stdout", 120_000);
  // The fixture's /authorize redirects at once to the CLI's loopback listener.
  const page = await (await fetch(url)).text();
  const code = await exited;
  return { code, stdout, stderr, page };
}

type AuthFile = Record<string, { serverUrl: string; tokens?: { access_token: string; refresh_token?: string }; tokensExpireAt?: number; clientInformation?: { client_id: string } }>;

describe("OAuth for an HTTP MCP server", () => {
  it("login → a tool call works → expired token refreshed → logout → needs sign-in; tokens never in the session", async () => {
    const e = env();
    writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { secure: { url: secure.url, exposure: "direct" } } }));
    const authPath = join(e.agentDir, "mcp-auth.json");
    const key = `mcp__secure|${secure.url}`;
    const readAuth = () => JSON.parse(readFileSync(authPath, "utf8")) as AuthFile;

    // Sign in.
    const signIn = await login(e, "secure");
    expect(signIn.stderr).toBe("");
    expect(signIn.code).toBe(0);
    expect(signIn.page).toMatch(/Signed in/);
    expect(signIn.stdout).toContain(`Open this URL to sign in to MCP server "secure"`);
    expect(signIn.stdout).toContain(`Signed in to MCP server "secure"; credentials stored in ${authPath}`);
    expect(statSync(authPath).mode & 0o777).toBe(0o600);
    const first = readAuth()[key]!;
    expect(first.serverUrl).toBe(secure.url);
    expect(first.clientInformation!.client_id).toMatch(/^client-/);
    expect(secure.oauth!.issued(first.tokens!.access_token)).toBe(true);
    expect(secure.oauth!.stats()).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });

    // A tool call in pi -p sends the token.
    script([{ toolCalls: [{ name: "mcp__secure__add", arguments: { a: 2, b: 3 } }] }, { text: "done" }]);
    let r = await runCli(["-p", "add"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    expect(toolNames(0)).toContain("mcp__secure__add");
    expect(toolMessages(1)[0].content).toBe("5");
    expect(secure.oauth!.stats().lastBearer).toBe(first.tokens!.access_token);

    // The token expired (the server no longer takes it, the file says so): refreshed before connecting.
    secure.oauth!.expireAccessTokens();
    writeFileSync(authPath, JSON.stringify({ ...readAuth(), [key]: { ...first, tokensExpireAt: Date.now() - 1000 } }));
    const refreshes = secure.oauth!.stats().refreshes;
    script([{ toolCalls: [{ name: "mcp__secure__echo", arguments: { text: "after refresh" } }] }, { text: "done" }]);
    r = await runCli(["-p", "echo"], e);
    expect(r.stderr).toBe("");
    expect(toolMessages(1)[0].content).toBe("echo:after refresh");
    expect(secure.oauth!.stats().refreshes).toBe(refreshes + 1);
    const second = readAuth()[key]!;
    expect(second.tokens!.access_token).not.toBe(first.tokens!.access_token);
    expect(second.tokensExpireAt!).toBeGreaterThan(Date.now());

    // The server revokes it while the file still thinks it is valid: the 401 triggers a refresh.
    secure.oauth!.expireAccessTokens();
    script([{ toolCalls: [{ name: "mcp__secure__add", arguments: { a: 20, b: 22 } }] }, { text: "done" }]);
    r = await runCli(["-p", "add again"], e);
    expect(r.stderr).toBe("");
    expect(toolMessages(1)[0].content).toBe("42");
    expect(secure.oauth!.stats().refreshes).toBe(refreshes + 2);
    const third = readAuth()[key]!;

    // No token reached a session file, stdout or stderr.
    const sessions = filesUnder(join(e.agentDir, "sessions"));
    expect(sessions.length).toBeGreaterThan(0);
    const secrets = [first, second, third].flatMap((s) => [s.tokens!.access_token, s.tokens!.refresh_token!]);
    for (const f of sessions) {
      const text = readFileSync(f, "utf8");
      for (const s of secrets) expect(text).not.toContain(s);
    }
    for (const s of secrets) expect(r.stdout + r.stderr + signIn.stdout).not.toContain(s);

    // Sign out: the credentials are gone, and the server needs sign-in again; the run goes on.
    const out = await runCli(["mcp", "logout", "secure"], e);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`Signed out of MCP server "secure"`);
    expect(existsSync(authPath) ? readAuth()[key] : undefined).toBeUndefined();
    script([{ text: "answered anyway" }]);
    r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("answered anyway\n");
    expect(r.stderr).toMatch(/MCP server "secure" failed to start .*needs sign-in.*run "pi mcp login secure"/);
    expect(toolNames(0).some((n) => n.startsWith("mcp__secure__"))).toBe(false);
    const list = await runCli(["mcp", "list", "--json"], e);
    expect(list.code).toBe(1);
    expect(JSON.parse(list.stdout).servers[0]).toMatchObject({ name: "secure", state: "needs-auth", error: expect.stringMatching(/pi mcp login secure/) });
  });

  it("login refuses what it cannot sign in to, naming the server", async () => {
    const e = env();
    writeFileSync(
      join(e.agentDir, "mcp.json"),
      JSON.stringify({
        mcpServers: { local: { command: process.execPath, args: [STDIO] }, keyed: { url: plain.url, headers: { Authorization: "Bearer x" } }, open: { url: plain.url }, secure: { url: secure.url } },
      }),
    );
    let r = await runCli(["mcp", "login", "nosuch"], e, { env: NO_BROWSER });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no MCP server named "nosuch" \(configured: local, keyed, open, secure\)/);
    r = await runCli(["mcp", "login", "local"], e, { env: NO_BROWSER });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/MCP server "local" does not use OAuth/);
    r = await runCli(["mcp", "logout", "keyed"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/MCP server "keyed" does not use OAuth/);
    r = await runCli(["mcp", "login"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"mcp login" needs exactly one server name/);
    // A server without OAuth metadata: the failure names it; nothing is left in mcp-auth.json.
    r = await runCli(["mcp", "login", "open"], e, { env: NO_BROWSER });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/signing in to MCP server "open" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) failed: /);
    expect(existsSync(join(e.agentDir, "mcp-auth.json"))).toBe(false);
    // Nobody opens the URL: --timeout ends the sign-in with a message, and no half-finished state.
    r = await runCli(["mcp", "login", "secure", "--timeout", "2"], e, { env: NO_BROWSER });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Open this URL to sign in");
    expect(r.stderr).toMatch(/signing in to MCP server "secure" .* failed: the sign-in did not finish within 2 s \(--timeout\)/);
    expect(existsSync(join(e.agentDir, "mcp-auth.json"))).toBe(false);
  });
});

describe("pi mcp add in pi 1.6's forms", () => {
  it("--url, -- command, -l, replace, remove; the servers work", async () => {
    const e = env();
    const userFile = join(e.agentDir, "mcp.json");
    let r = await runCli(["mcp", "add", "docs", "--url", plain.url, "--bearer-token-env-var", "DOCS_TOKEN", "--header", "X-Team=core", "--exposure", "direct", "--description", "the docs"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Added global MCP server "docs" in ${userFile}.`);
    r = await runCli(["mcp", "add", "fs", "--env", "GREETING=hello", "--", process.execPath, STDIO, "--name", "fs"], e);
    expect(r.code).toBe(0);
    r = await runCli(["mcp", "add", "gone", "--", "true"], e);
    expect(r.code).toBe(0);
    r = await runCli(["mcp", "add", "gone", "--", "false"], e);
    expect(r.stdout).toContain(`Replaced global MCP server "gone"`);
    expect(JSON.parse(readFileSync(userFile, "utf8")).mcpServers).toEqual({
      docs: { url: plain.url, headers: { "X-Team": "core", Authorization: "Bearer ${DOCS_TOKEN}" }, exposure: "direct", description: "the docs" },
      fs: { command: process.execPath, args: [STDIO, "--name", "fs"], env: { GREETING: "hello" } },
      gone: { command: "false" },
    });
    expect(existsSync(join(e.agentDir, "settings.json")) && JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8")).mcpServers).toBeFalsy();

    r = await runCli(["mcp", "remove", "gone"], e);
    expect(r.code).toBe(0);
    r = await runCli(["mcp", "add", "-l", "proj", "--", process.execPath, STDIO], e);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(e.cwd, ".pi", "mcp.json"), "utf8")).mcpServers.proj).toEqual({ command: process.execPath, args: [STDIO] });
    r = await runCli(["mcp", "remove", "proj"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no MCP server "proj" in .*; it is in .*\.pi\/mcp\.json \(use -l\)/);
    expect((await runCli(["mcp", "remove", "-l", "proj"], e)).code).toBe(0);

    // fs has no exposure: pi 1.6's default "codemode" — the model reaches it from a script.
    script([{ toolCalls: [{ name: "codemode", arguments: { code: 'return await tools.mcp__fs__env({ name: "GREETING" });' } }] }, { text: "done" }]);
    r = await runCli(["-p", "env"], e, { env: { DOCS_TOKEN: "t-1" } });
    expect(r.stderr).toBe("");
    expect(toolMessages(1)[0].content).toMatch(/^Script completed in [\d.]+s\nhello$/);
    expect(toolNames(0).some((n) => n.startsWith("mcp__fs__"))).toBe(false);
    expect(toolNames(0)).toContain("mcp__docs__echo");
    const last = plain.stats().requests.filter((q) => q.method === "POST").at(-1)!;
    expect(last.headers.authorization).toBe("Bearer t-1");
    expect(last.headers["x-team"]).toBe("core");
  });

  it("help shows 1.6's forms; bad input exits 2 naming the option", async () => {
    const e = env();
    for (const args of [["mcp", "--help"], ["mcp", "add", "--help"]]) {
      const r = await runCli(args, e);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("pi mcp add <server> [options] -- <command> [args...]");
      expect(r.stdout).toContain("pi mcp add <server> [options] --url <url>");
      expect(r.stdout).toContain("pi mcp login <server> [-l] [--timeout <seconds>]");
      expect(r.stdout).toMatch(/-l, --local +Use the project's \.pi\/mcp\.json/);
    }
    let r = await runCli(["mcp", "add", "x", "--url", "ftp://host/mcp"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--url must be an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/host\/mcp"\)/);
    r = await runCli(["mcp", "add", "x", "--exposure", "sometimes", "--url", plain.url], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--exposure must be codemode, deferred, direct or hidden/);
    expect(existsSync(join(e.agentDir, "mcp.json"))).toBe(false);
  });
});

describe("MCP servers registered by an extension", () => {
  it("connect at start, their tools run; unregister drops them, a later registration connects; mcp_servers_change fires", async () => {
    // Declared to the model: mcp.toolMode set explicitly (the registered servers have no exposure).
    const e = env({ mcp: { toolMode: "auto" } });
    const log = join(e.root, "changes.jsonl");
    script([
      { toolCalls: [{ name: "mcp__ext__echo", arguments: { text: "from ext" } }] },
      { toolCalls: [{ name: "swap_mcp", arguments: {} }] },
      { text: "first done" },
      { toolCalls: [{ name: "mcp__late__echo", arguments: { text: "from late" } }] },
      { text: "second done" },
    ], "request");
    const r = await runCli(["--no-session", "-p", "-e", REGISTRAR, "use ext", "use late"], e, { env: { PI_E2E_MCP_STDIO: STDIO, PI_E2E_MCP_LOG: log } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("second done\n");
    expect(requests().length).toBe(5);
    expect(toolNames(0)).toEqual(expect.arrayContaining(["mcp__ext__echo", "swap_mcp"]));
    expect(toolMessages(1).at(-1).content).toBe("echo:from ext");
    expect(toolMessages(2).at(-1).content).toBe("swapped");
    // The second prompt: ext's tools are gone, late's are there and run.
    expect(toolNames(3)).toContain("mcp__late__echo");
    expect(toolNames(3).some((n) => n.startsWith("mcp__ext__"))).toBe(false);
    expect(toolMessages(4).at(-1).content).toBe("echo:from late");
    const changes = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(changes).toEqual([[], ["late"]]);
  });
});
