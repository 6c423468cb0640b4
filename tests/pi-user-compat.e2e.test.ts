/**
 * End to end: a pi 1.6 user's command lines, settings, trust decisions, MCP configuration and
 * credentials against the real CLI (dist/bundle/cli.js), the loopback LLM server and throwaway
 * agent dirs. docs/pi-1.6-compat.md is the table these check.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { createServer, type Server } from "node:http";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { ROOT, makeE2eEnv, runCli as runCliRaw, type E2eEnv } from "./helpers/e2e.js";

const STDIO = join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs");
const stdio = (...args: string[]) => ({ command: process.execPath, args: [STDIO, ...args] });

// Several CLI runs per test on a shared, busy machine.
jest.setTimeout(180_000);

/** The CLI with a generous limit: MCP servers start in these runs. */
const runCli = (args: string[], e: Pick<E2eEnv, "env" | "cwd">, opts: { input?: string } = {}) => runCliRaw(args, e, { timeoutMs: 120_000, ...opts });

let llm: LlmServer;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  llm = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await llm.close();
});
afterEach(() => {
  while (envs.length) envs.pop()!.cleanup();
});

function env(settings: Record<string, unknown> = {}): E2eEnv {
  const e = makeE2eEnv(llm.url, { settings });
  envs.push(e);
  return e;
}

const requests = () => llm.stats().requests.filter((r) => r.path === "/v1/chat/completions");
const toolNames = (i = 0): string[] => (requests()[i]!.body.tools ?? []).map((t: any) => t.function.name);
const systemPrompt = (i = 0): string => {
  const m = requests()[i]!.body.messages.find((x: any) => x.role === "system" || x.role === "developer");
  return typeof m.content === "string" ? m.content : m.content.map((c: any) => c.text).join("");
};
function answer(text = "ok") {
  llm.setScript({ default: { text } });
  llm.reset();
}

function sessionFiles(agentDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(".jsonl")) out.push(p);
    }
  };
  walk(join(agentDir, "sessions"));
  return out;
}

describe("1. command line", () => {
  it("--tools with * patterns picks matching tools; +name/-name change the defaults; -xt removes last", async () => {
    const e = env();
    answer();
    expect((await runCli(["-p", "-t", "re*,bash", "hi"], e)).code).toBe(0);
    expect(toolNames().sort()).toEqual(["bash", "read"]);

    answer();
    const r = await runCli(["-p", "--tools", "+grep,-write", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames().sort()).toEqual(["bash", "edit", "grep", "read"]);

    answer();
    expect((await runCli(["-p", "-xt", "b*,edit", "hi"], e)).code).toBe(0);
    expect(toolNames().sort()).toEqual(["read", "write"]);

    answer();
    expect((await runCli(["-p", "-nt", "hi"], e)).code).toBe(0);
    expect(toolNames()).toEqual([]);

    answer();
    expect((await runCli(["-p", "-nbt", "hi"], e)).code).toBe(0);
    expect(toolNames()).toEqual([]);
  });

  it("--tools mixing plain names and +/- entries is an error; nothing is sent", async () => {
    const e = env();
    answer();
    const r = await runCli(["-p", "--tools", "read,+grep", "hi"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--tools cannot mix plain names with \+name\/-name entries/);
    expect(requests()).toHaveLength(0);
  });

  it("defaultTools with +/- entries changes the default set", async () => {
    const e = env({ defaultTools: ["+ls", "-bash"] });
    answer();
    expect((await runCli(["-p", "hi"], e)).code).toBe(0);
    expect(toolNames().sort()).toEqual(["edit", "ls", "read", "write"]);
  });

  it("--name / -n writes the session name; --session-id creates then reopens that session", async () => {
    const e = env();
    answer("first");
    const r1 = await runCli(["-p", "-n", "Refactor auth", "--session-id", "my-session.1", "hello"], e);
    expect(r1.stderr).toBe("");
    expect(r1.code).toBe(0);
    const files = sessionFiles(e.agentDir);
    expect(files).toHaveLength(1);
    const lines = readFileSync(files[0]!, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "session", id: "my-session.1" });
    expect(lines.find((l) => l.type === "session_info")).toMatchObject({ name: "Refactor auth" });

    answer("second");
    const r2 = await runCli(["-p", "--session-id", "my-session.1", "again"], e);
    expect(r2.code).toBe(0);
    expect(sessionFiles(e.agentDir)).toHaveLength(1);
    expect(JSON.stringify(requests()[0]!.body.messages)).toContain("hello");

    const bad = await runCli(["-p", "--session-id", "-bad-", "x"], e);
    expect(bad.code).not.toBe(0);
    const clash = await runCli(["-p", "--session-id", "abc", "-c", "x"], e);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/--session-id cannot be combined with --continue/);
  });

  it("--append-system-prompt repeats; --system-prompt replaces the whole prompt; --thinking max is accepted", async () => {
    const e = env();
    answer();
    const r = await runCli(["-p", "--append-system-prompt", "FIRST-APPEND", "--append-system-prompt", "SECOND-APPEND", "--thinking", "max", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(systemPrompt()).toContain("FIRST-APPEND");
    expect(systemPrompt()).toContain("SECOND-APPEND");

    answer();
    expect((await runCli(["-p", "--system-prompt", "ONLY-THIS-PROMPT", "hi"], e)).code).toBe(0);
    expect(systemPrompt().startsWith("ONLY-THIS-PROMPT")).toBe(true);
  });

  it("1.6 flags without a prompt of their own are parsed, not sent as messages", async () => {
    const e = env();
    answer();
    const r = await runCli(["-p", "--tui-mode", "regular", "--use-theme", "dark", "-e", "builtin:mcp", "--no-mcp", "-na", "the only message"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const users = requests()[0]!.body.messages.filter((m: any) => m.role === "user");
    expect(users).toHaveLength(1);
    expect(JSON.stringify(users[0])).toContain("the only message");
    expect(JSON.stringify(users[0])).not.toMatch(/regular|dark|builtin/);
  });

  it("-e builtin:<unknown> is an error naming the known ones", async () => {
    const r = await runCli(["-p", "-e", "builtin:nope", "x"], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/builtin:nope.*builtin:mcp/);
  });

  it("<subcommand> --help prints that subcommand's help", async () => {
    const e = env();
    const auth = await runCli(["auth", "--help"], e);
    expect(auth.code).toBe(0);
    expect(auth.stdout).toMatch(/pi auth print-api-key/);
    const install = await runCli(["install", "--help"], e);
    expect(install.code).toBe(0);
    expect(install.stdout).toMatch(/^Usage:\n {2}pi install <source>/);
  });
});

describe("2. unknown input is an error, never a prompt", () => {
  it("an unknown long flag exits 2 naming it and the closest known flag", async () => {
    const e = env();
    answer();
    const r = await runCli(["--modle", "mock/mock-model", "-p", "hi"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option --modle \(closest known option: --mode/);
    expect(requests()).toHaveLength(0);
  });

  it("an unknown short flag exits 2 too", async () => {
    const e = env();
    answer();
    const r = await runCli(["-xz", "-p", "hi"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option -xz \(closest known option: -/);
    expect(requests()).toHaveLength(0);
  });

  it("a mistyped subcommand is an error, not a prompt; `--` sends the word as a message", async () => {
    const e = env();
    answer();
    const r = await runCli(["auht", "print-api-key", "--provider", "mock"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command "auht" \(did you mean "auth"\?\)/);
    expect(requests()).toHaveLength(0);

    answer("fine");
    const ok = await runCli(["-p", "--", "auht"], e);
    expect(ok.code).toBe(0);
    expect(JSON.stringify(requests()[0]!.body.messages)).toContain("auht");
  });

  it("flags an extension registers are known (not reported as unknown)", async () => {
    const e = env();
    const ext = join(e.root, "flag-ext.ts");
    writeFileSync(ext, `export default function (pi) { pi.registerFlag("plan", { type: "boolean", description: "plan mode" }); }\n`);
    answer();
    const r = await runCli(["-e", ext, "--plan", "-p", "hi"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});

describe("3. settings", () => {
  it("1.6 keys without an effect here are accepted silently; $schema is accepted", async () => {
    const e = env({ $schema: "https://example.invalid/settings.schema.json", cacheWarming: "idle", enableInstallTelemetry: false, warnings: { anthropicExtraUsage: false }, collapseChangelog: true, fullscreenScrollbar: "always", markdown: { mermaid: "off" }, retry: { enabled: true, maxRetries: 3, baseDelayMs: 10, maxAgentDelayMs: 50, provider: { maxRetries: 0 } } });
    const models = JSON.parse(readFileSync(join(e.agentDir, "models.json"), "utf8"));
    writeFileSync(join(e.agentDir, "models.json"), JSON.stringify({ $schema: "https://example.invalid/models.schema.json", ...models }));
    answer("still works");
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("still works\n");
    expect(r.stderr).toBe("");
  });
});

describe("4. project trust", () => {
  function projectServer(e: E2eEnv) {
    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    // Declared to the model, so a request shows whether the server started.
    writeFileSync(join(e.cwd, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { proj: { ...stdio(), exposure: "direct" } } }));
  }

  it("-a trusts, -na declines (beating trust.json), trust.json and defaultProjectTrust decide otherwise", async () => {
    const e = env();
    projectServer(e);
    answer();
    let r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames()).not.toContain("mcp__proj__echo");
    expect(r.stderr).toMatch(/not trusted/);

    answer();
    r = await runCli(["-p", "-a", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames()).toContain("mcp__proj__echo");

    writeFileSync(join(e.agentDir, "trust.json"), JSON.stringify({ [e.root]: true }));
    answer();
    expect((await runCli(["-p", "hi"], e)).code).toBe(0);
    expect(toolNames()).toContain("mcp__proj__echo");

    answer();
    expect((await runCli(["-p", "-na", "hi"], e)).code).toBe(0);
    expect(toolNames()).not.toContain("mcp__proj__echo");

    writeFileSync(join(e.agentDir, "trust.json"), JSON.stringify({ [e.cwd]: false }));
    const settings = JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8"));
    writeFileSync(join(e.agentDir, "settings.json"), JSON.stringify({ ...settings, defaultProjectTrust: "always" }));
    answer();
    expect((await runCli(["-p", "hi"], e)).code).toBe(0);
    expect(toolNames()).not.toContain("mcp__proj__echo");

    writeFileSync(join(e.agentDir, "trust.json"), "{}");
    answer();
    expect((await runCli(["-p", "hi"], e)).code).toBe(0);
    expect(toolNames()).toContain("mcp__proj__echo");
  });
});

describe("5. MCP configuration", () => {
  it("<agentDir>/mcp.json servers reach the model; a trusted project's .pi/mcp.json can disable one; --no-mcp drops them", async () => {
    const e = env();
    writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify({ $schema: "x", mcpServers: { demo: { ...stdio(), exposure: "direct", timeout: 30 } } }));
    answer();
    let r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames()).toEqual(expect.arrayContaining(["read", "mcp__demo__echo"]));

    answer();
    r = await runCli(["-p", "--no-mcp", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames().filter((n) => n.startsWith("mcp"))).toEqual([]);

    answer();
    r = await runCli(["-p", "-xt", "mcp__*", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames().filter((n) => n.startsWith("mcp"))).toEqual([]);

    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    writeFileSync(join(e.cwd, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { demo: { enabled: false } } }));
    answer();
    r = await runCli(["-p", "-a", "hi"], e);
    expect(r.code).toBe(0);
    expect(toolNames().filter((n) => n.startsWith("mcp"))).toEqual([]);
  });

  it("exposure: hidden tools are not registered, toolExposure direct declares one, codemode leaves the rest to the codemode tool", async () => {
    const e = env();
    writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { demo: { ...stdio(), exposure: "codemode", toolExposure: { echo: "direct", "a*": "hidden" } } } }));
    answer();
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    const names = toolNames();
    expect(names).toContain("mcp__demo__echo");
    expect(names).not.toContain("mcp__demo__add");
    expect(names.filter((n) => n.startsWith("mcp"))).toEqual(["mcp__demo__echo"]);
    expect(names).toContain("codemode");
  });

  it("pi mcp list --json: 1.6's shape, connects each server, exits 1 when one fails", async () => {
    const e = env();
    writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { demo: stdio(), off: { command: "x", enabled: false }, broken: { command: join(e.root, "no-such-binary") } } }));
    const r = await runCli(["mcp", "list", "--json"], e);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    const by = Object.fromEntries(j.servers.map((s: any) => [s.name, s]));
    expect(by.demo).toMatchObject({ scope: "global", source: join(e.agentDir, "mcp.json"), enabled: true, state: "connected" });
    expect(by.demo.tools).toContain("mcp__demo__echo");
    // No exposure configured: pi 1.6's default.
    expect(by.demo.exposure).toBe("codemode");
    expect(by.off).toMatchObject({ enabled: false, state: "disabled" });
    expect(by.broken.state).toBe("failed");
    expect(j.errors).toEqual([]);
  });

  it("a malformed mcp.json is reported with its file and position; other servers still work", async () => {
    const e = env({ mcpServers: { demo: { ...stdio(), exposure: "direct" } } });
    writeFileSync(join(e.agentDir, "mcp.json"), '{"mcpServers": {"a": {"command": "x",}}}');
    answer();
    const r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(join(e.agentDir, "mcp.json"));
    expect(r.stderr).toMatch(/malformed JSON at line 1, column \d+/);
    expect(toolNames()).toContain("mcp__demo__echo");
    const list = await runCli(["mcp", "list", "--json"], e);
    expect(list.code).toBe(1);
    expect(JSON.parse(list.stdout).errors.join("\n")).toMatch(/mcp\.json: malformed JSON at line 1/);
  });

  describe("an HTTP server that needs OAuth", () => {
    let http: Server;
    let url = "";
    beforeAll(async () => {
      http = createServer((_req, res) => {
        res.writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer realm="mcp"' });
        res.end(JSON.stringify({ error: "invalid_token" }));
      });
      await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
      url = `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`;
    });
    afterAll(async () => {
      await new Promise<void>((r) => http.close(() => r()));
    });

    it("with no token: reported as needing sign-in (session and pi mcp list), the run goes on", async () => {
      const e = env();
      writeFileSync(join(e.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { secure: { url, type: "http" } } }));
      answer("answered anyway");
      const r = await runCli(["-p", "hi"], e);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("answered anyway\n");
      expect(r.stderr).toMatch(/secure.*needs sign-in/);
      const list = await runCli(["mcp", "list", "--json"], e);
      expect(list.code).toBe(1);
      expect(JSON.parse(list.stdout).servers[0]).toMatchObject({ name: "secure", state: "needs-auth" });
    });
  });
});

describe("6. credentials: pi auth", () => {
  it("login with an API key (stdin), 0600 file in a 0700 dir; check, print-api-key, logout", async () => {
    const e = env();
    const agentDir = join(e.root, "fresh-agent");
    const run = (args: string[], input?: string) => runCli(args, { cwd: e.cwd, env: { ...e.env, PI_CODING_AGENT_DIR: agentDir } }, { input });

    let r = await run(["auth", "check", "--provider", "openai", "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ status: "not_ready", provider: "openai", reason: "credentials_not_configured" });

    r = await run(["auth", "login", "openai", "--api-key"], "sk-test-123\n");
    expect(r.code).toBe(0);
    expect(statSync(agentDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(agentDir, "auth.json")).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(agentDir, "auth.json"), "utf8"))).toEqual({ openai: { type: "api_key", key: "sk-test-123" } });

    r = await run(["auth", "check", "--provider", "openai"]);
    expect([r.code, r.stdout]).toEqual([0, "ready\n"]);
    r = await run(["auth", "check", "--provider", "openai", "--json", "--credentials"]);
    expect(JSON.parse(r.stdout)).toEqual({ status: "ready", provider: "openai", authType: "api_key", credentials: "sk-test-123" });
    r = await run(["auth", "print-api-key", "--model", "openai/gpt-4o"]);
    expect([r.code, r.stdout]).toEqual([0, "sk-test-123\n"]);
    r = await run(["auth", "print-bearer-token", "--provider", "openai"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not configured with an OAuth bearer token/);

    r = await run(["auth", "logout", "openai"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(agentDir, "auth.json"), "utf8"))).toEqual({});
    r = await run(["auth", "logout", "openai"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/No stored credentials/);
  });

  it("bad input: no provider, unknown provider, unknown command, unknown option", async () => {
    const e = env();
    let r = await runCli(["auth", "check"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/require --provider <provider> or --model <model>/);
    r = await runCli(["auth", "check", "--provider", "nosuch", "--json"], e);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "not_ready", reason: "provider_not_found" });
    r = await runCli(["auth", "print-api-key", "--provider", "nosuch"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Unknown provider "nosuch"/);
    r = await runCli(["auth", "frob"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown auth command "frob"/);
    r = await runCli(["auth", "check", "--bogus"], e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--bogus/);
  });

  it("models.json providers resolve: check and print-api-key for the scripted provider", async () => {
    const e = env();
    const r = await runCli(["auth", "print-api-key", "--provider", "mock"], e);
    expect([r.code, r.stdout]).toEqual([0, "MOCK_KEY_VALUE_123\n"]);
    const c = await runCli(["auth", "check", "--model", "mock/mock-model", "--json"], e);
    expect(c.code).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ status: "ready", provider: "mock" });
  });
});
