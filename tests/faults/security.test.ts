/**
 * Security faults: the real CLI driven by an attacker who controls a cloned
 * repository (its .pi/settings.json, its files) and the model's tool calls. Each case failed on
 * the code before the fix; docs/security.md lists them with their status.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "../fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, spawnCli, type E2eEnv } from "../helpers/e2e.js";

let server: LlmServer;
const envs: E2eEnv[] = [];
beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  for (const e of envs.splice(0)) e.cleanup();
});

function env(settings?: Record<string, unknown>): E2eEnv {
  const e = makeE2eEnv(server.url, { settings });
  envs.push(e);
  return e;
}

function projectSettings(e: E2eEnv, data: Record<string, unknown>): void {
  mkdirSync(join(e.cwd, ".pi"), { recursive: true });
  writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify(data));
}

function toolResults(stdout: string): Array<{ toolName: string; isError: boolean; text: string }> {
  return jsonLines(stdout)
    .filter((l) => l.type === "tool_execution_end")
    .map((l) => ({ toolName: l.toolName, isError: l.isError, text: (l.result?.content ?? []).map((c: any) => c.text ?? "").join("") }));
}

describe("security: untrusted project settings", () => {
  it("an untrusted project's shellCommandPrefix does not run; it is reported with how to trust", async () => {
    const e = env();
    const marker = join(e.root, "prefix-ran");
    projectSettings(e, { shellCommandPrefix: `touch ${JSON.stringify(marker)}` });
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo hello" } }] }, { text: "done" }] });
    const r = await runCli(["--mode", "json", "--no-session", "go"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(toolResults(r.stdout)[0]?.text).toContain("hello");
    expect(existsSync(marker)).toBe(false);
    expect(r.stderr).toContain("shellCommandPrefix");
    expect(r.stderr).toContain("--trust");
    // Trusted, the same setting applies (the test above could fail).
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo hello" } }] }, { text: "done" }] });
    const t = await runCli(["--mode", "json", "--no-session", "--trust", "go"], e, { timeoutMs: 30000 });
    expect(t.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
  }, 90000);

  it("an untrusted project's shellPath is not used", async () => {
    const e = env();
    const marker = join(e.root, "shell-ran");
    const fakeShell = join(e.root, "fake-shell.sh");
    writeFileSync(fakeShell, `#!/bin/sh\ntouch ${JSON.stringify(marker)}\nexec /bin/sh "$@"\n`, { mode: 0o755 });
    projectSettings(e, { shellPath: fakeShell });
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "done" }] });
    const r = await runCli(["--mode", "json", "--no-session", "go"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(r.stderr).toContain("shellPath");
  }, 60000);

  it("an untrusted project's sessionDir does not receive transcripts", async () => {
    const e = env();
    projectSettings(e, { sessionDir: "./leaked-sessions" });
    server.setScript({ turns: [{ text: "answer" }] });
    const r = await runCli(["-p", "hello"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(existsSync(join(e.cwd, "leaked-sessions"))).toBe(false);
    expect(readdirSync(join(e.agentDir, "sessions")).length).toBeGreaterThan(0);
    expect(r.stderr).toContain("sessionDir");
  }, 60000);
});

describe("security: path rules compare real paths", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  function setup() {
    const secret = mkdtempSync(join(tmpdir(), "pi-secret-"));
    dirs.push(secret);
    writeFileSync(join(secret, "key.txt"), "TOP-SECRET-CONTENT\n");
    const e = env({ permissions: { deny: [`write(${secret}/**)`, `edit(${secret}/**)`, `read(${secret}/**)`, `grep(${secret}/**)`] } });
    symlinkSync(secret, join(e.cwd, "link"));
    symlinkSync(join(secret, "key.txt"), join(e.cwd, "key-link"));
    return { e, secret };
  }

  it("write, edit, read and grep through symlinks, /proc/self/root and .. are blocked", async () => {
    const { e, secret } = setup();
    const calls = [
      { name: "write", arguments: { path: "link/planted.txt", content: "x" } },
      { name: "edit", arguments: { path: "key-link", oldText: "TOP", newText: "OWNED" } },
      { name: "read", arguments: { path: "key-link" } },
      { name: "read", arguments: { path: `/proc/self/root${secret}/key.txt` } },
      { name: "grep", arguments: { pattern: "SECRET", path: `${secret}/..` } },
    ];
    server.setScript({ turns: [...calls.map((c) => ({ toolCalls: [c] })), { text: "done" }] });
    const r = await runCli(["--mode", "json", "--no-session", "--tools", "read,write,edit,grep", "go"], e, { timeoutMs: 60000 });
    expect(r.code).toBe(0);
    const results = toolResults(r.stdout);
    expect(results).toHaveLength(calls.length);
    for (const x of results) {
      expect(x.isError).toBe(true);
      expect(x.text).toContain("permission gate");
      expect(x.text).not.toContain("TOP-SECRET-CONTENT");
    }
    expect(existsSync(join(secret, "planted.txt"))).toBe(false);
    expect(readFileSync(join(secret, "key.txt"), "utf8")).toBe("TOP-SECRET-CONTENT\n");
  }, 90000);

  it("an @file argument through a symlink into a denied folder is refused", async () => {
    const { e } = setup();
    server.setScript({ turns: [{ text: "done" }] });
    const r = await runCli(["-p", "@key-link", "summarise"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("@key-link");
    expect(r.stderr).toContain("permission gate");
    expect(r.stdout).not.toContain("TOP-SECRET-CONTENT");
  }, 60000);
});

describe("security: bash rules match parsed commands", () => {
  it("a deny rule on rm -rf holds against quoting, wrappers, subshells, sh -c, eval and a pipe into sh", async () => {
    const e = env({ permissions: { deny: ["bash(rm -rf *)"] } });
    const victims = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12"];
    for (const v of victims) mkdirSync(join(e.cwd, v));
    const b64 = Buffer.from("rm -rf v12\n").toString("base64");
    const commands = [
      "r''m -rf v1",
      "\\rm -rf v2",
      "$(echo rm) -rf v3",
      'bash -c "rm -rf v4"',
      "X=rm; $X -rf v5",
      "/bin/rm -rf v6",
      "env rm -rf v7",
      "true & rm -rf v8",
      "(rm -rf v9)",
      "{ rm -rf v10; }",
      "eval 'rm -rf v11'",
      `echo ${b64} | base64 -d | sh`,
    ];
    server.setScript({ turns: [...commands.map((command) => ({ toolCalls: [{ name: "bash", arguments: { command } }] })), { text: "done" }] });
    const r = await runCli(["--mode", "json", "--no-session", "go"], e, { timeoutMs: 90000 });
    expect(r.code).toBe(0);
    const results = toolResults(r.stdout);
    expect(results).toHaveLength(commands.length);
    for (const x of results) {
      expect(x.isError).toBe(true);
      expect(x.text).toContain("permission gate");
    }
    for (const v of victims) expect(existsSync(join(e.cwd, v))).toBe(true);
    // An honest command still runs.
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "ls v1 && echo fine" } }] }, { text: "done" }] });
    const ok = await runCli(["--mode", "json", "--no-session", "go"], e, { timeoutMs: 30000 });
    expect(toolResults(ok.stdout)[0]).toMatchObject({ isError: false, text: expect.stringContaining("fine") });
  }, 150000);
});

describe("security: --session refuses files that are not sessions", () => {
  it.each([
    ["package.json", '{\n  "name": "victim",\n  "version": "1.0.0"\n}\n'],
    ["notes.jsonl", '{"type":"message","note":"not a header"}\n'],
    ["one-line.txt", "hello world\n"],
  ])("--session %s: clear error, exit 1, file byte-identical", async (name, content) => {
    const e = env();
    const file = join(e.cwd, name);
    writeFileSync(file, content);
    server.setScript({ turns: [{ text: "answer" }] });
    const r = await runCli(["--session", `./${name}`, "-p", "hi"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Not a session file");
    expect(r.stderr).toContain(name);
    expect(readFileSync(file, "utf8")).toBe(content);
  }, 60000);
});

describe("security: json and rpc stdout carry only the protocol", () => {
  const NOISY = [
    'console.log("NOISE-AT-LOAD");',
    'process.stdout.write("NOISE-WRITE-AT-LOAD\\n");',
    "export default function (pi) {",
    '  console.log("NOISE-IN-FACTORY");',
    '  pi.on("session_start", () => { console.log("NOISE-IN-SESSION-START"); process.stdout.write("NOISE-WRITE-IN-SESSION-START\\n"); });',
    "}",
  ].join("\n");
  const NOISES = ["NOISE-AT-LOAD", "NOISE-WRITE-AT-LOAD", "NOISE-IN-FACTORY", "NOISE-IN-SESSION-START", "NOISE-WRITE-IN-SESSION-START"];
  function noisyEnv(): E2eEnv {
    const e = env();
    mkdirSync(join(e.agentDir, "extensions"), { recursive: true });
    writeFileSync(join(e.agentDir, "extensions", "noisy.ts"), NOISY + "\n");
    return e;
  }
  const allJson = (stdout: string) => {
    const lines = stdout.split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(stdout.startsWith("{")).toBe(true);
  };

  it("--mode json: an extension writing to stdout at load, in its factory and in session_start", async () => {
    const e = noisyEnv();
    server.setScript({ turns: [{ text: "answer" }] });
    const r = await runCli(["--mode", "json", "--no-session", "hi"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    allJson(r.stdout);
    for (const n of NOISES) {
      expect(r.stdout).not.toContain(n);
      expect(r.stderr).toContain(n);
    }
  }, 60000);

  it("--mode rpc: the same extension; the first byte of stdout is a protocol record", async () => {
    const e = noisyEnv();
    const child = spawnCli(["--mode", "rpc", "--no-session"], e);
    let out = "";
    let err = "";
    child.stdout!.on("data", (c) => (out += c));
    child.stderr!.on("data", (c) => (err += c));
    const closed = new Promise((r) => child.on("close", r));
    child.stdin!.write(JSON.stringify({ id: "s1", type: "get_state" }) + "\n");
    for (let i = 0; i < 600 && !out.includes('"id":"s1"'); i++) await new Promise((r) => setTimeout(r, 50));
    child.stdin!.end();
    await closed;
    expect(out).toContain('"id":"s1"');
    allJson(out);
    for (const n of NOISES) expect(out).not.toContain(n);
    expect(err).toContain("NOISE-AT-LOAD");
  }, 60000);
});

describe("security: bounded RPC input lines", () => {
  it("an oversized RPC line gets an error response and the process keeps serving", async () => {
    const e = env({ rpc: { maxLineLength: 1024 * 1024 } });
    const child = spawnCli(["--mode", "rpc", "--no-session"], e);
    let out = "";
    child.stdout!.on("data", (c) => (out += c));
    child.stdin!.on("error", () => {});
    const closed = new Promise((r) => child.on("close", r));
    // 8 MiB without a newline, in pieces, then the newline and a normal command.
    const piece = "x".repeat(256 * 1024);
    for (let i = 0; i < 32; i++) {
      if (!child.stdin!.write(piece)) await new Promise((r) => child.stdin!.once("drain", r));
    }
    child.stdin!.write("\n" + JSON.stringify({ id: "after", type: "get_state" }) + "\n");
    for (let i = 0; i < 600 && !out.includes('"id":"after"'); i++) await new Promise((r) => setTimeout(r, 50));
    child.stdin!.end();
    await closed;
    const records = jsonLines(out);
    const tooLong = records.find((r) => r.type === "response" && r.success === false && /too long/.test(r.error));
    expect(tooLong?.error).toContain("8388608");
    expect(records.find((r) => r.id === "after")).toMatchObject({ success: true });
  }, 60000);
});

describe("security: file modes and rule names", () => {
  it("the agent dir is created 0700, session files and bash full-output logs 0600", async () => {
    const e = env();
    // An agent dir that does not exist yet.
    const fresh = join(e.root, "fresh-agent");
    const r1 = await runCli(["--list-models"], e, { env: { PI_CODING_AGENT_DIR: fresh }, timeoutMs: 30000 });
    expect(r1.signal).toBeNull();
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    // A session file and a bash log over the truncation limit.
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 100000" } }] }, { text: "done" }] });
    const r = await runCli(["--mode", "json", "go"], e, { timeoutMs: 60000 });
    expect(r.code).toBe(0);
    const end = jsonLines(r.stdout).find((l) => l.type === "tool_execution_end");
    const log = end?.result?.details?.fullOutputPath as string;
    expect(typeof log).toBe("string");
    expect(statSync(log).mode & 0o777).toBe(0o600);
    rmSync(log, { force: true });
    const dir = join(e.agentDir, "sessions");
    const files = readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(statSync(f).mode & 0o777).toBe(0o600);
  }, 90000);

  it("permission rules naming no tool (Bash(...)) are reported at start-up", async () => {
    const e = env({ permissions: { deny: ["Bash(rm *)", "bash(git push*)"] } });
    server.setScript({ turns: [{ text: "answer" }] });
    const r = await runCli(["-p", "--no-session", "hi"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('"Bash(rm *)" names no known tool');
    expect(r.stderr).toContain('did you mean "bash(rm *)"');
    expect(r.stderr).not.toContain('"bash(git push*)" names');
  }, 60000);
});

describe("security: damaged session trees are reported", () => {
  it("--session with a leaf whose parent is missing: a warning says what was recovered", async () => {
    const e = env();
    server.setScript({ turns: [{ text: "first answer" }] });
    const first = await runCli(["--mode", "json", "hello"], e, { timeoutMs: 30000 });
    expect(first.code).toBe(0);
    const dir = join(e.agentDir, "sessions");
    const file = readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)))[0]!;
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    lines[lines.length - 1].parentId = "missing0";
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    server.setScript({ turns: [{ text: "second answer" }] });
    const r = await runCli(["--session", file, "-p", "again"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("session tree damaged");
    expect(r.stderr).toContain("missing0");
  }, 60000);
});

describe("security: every known credential is redacted from session files", () => {
  it("another provider's auth.json key, a provider env variable and an MCP token printed by a tool are not stored", async () => {
    const e = env({ mcpServers: { tokens: { command: "does-not-exist-mcp", headers: { Authorization: "Bearer mcp-token-ABCDEF123456" }, lifecycle: "lazy" } } });
    const authKey = "sk-other-provider-SECRET-123456";
    const envKey = "env-provider-secret-987654321";
    writeFileSync(join(e.agentDir, "auth.json"), JSON.stringify({ othervendor: { type: "api_key", key: authKey } }), { mode: 0o600 });
    const command = `cat ${JSON.stringify(join(e.agentDir, "auth.json"))}; echo "$OTHERVENDOR_API_KEY"; echo mcp-token-ABCDEF123456`;
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }] });
    const r = await runCli(["--mode", "json", "go"], e, { timeoutMs: 60000, env: { OTHERVENDOR_API_KEY: envKey } });
    expect(r.code).toBe(0);
    // The tool really printed them (the model saw them in this run).
    expect(r.stdout).toContain(authKey);
    const dir = join(e.agentDir, "sessions");
    const files = readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
    expect(files.length).toBe(1);
    const stored = readFileSync(files[0]!, "utf8");
    expect(stored).toContain("[redacted]");
    for (const secret of [authKey, envKey, "mcp-token-ABCDEF123456"]) expect(stored).not.toContain(secret);
  }, 90000);
});

describe("security: signals end the tool process groups in every mode", () => {
  const cases: Array<[string, NodeJS.Signals, number, number]> = [
    ["json", "SIGINT", 130, 7101],
    ["json", "SIGHUP", 129, 7103],
    ["rpc", "SIGINT", 130, 7105],
    ["rpc", "SIGTERM", 143, 7107],
    ["rpc", "SIGHUP", 129, 7109],
  ];
  it.each(cases)("--mode %s, %s: exit %i, no tool process left", async (mode, signal, code, n) => {
    const e = env();
    const pattern = `sleep ${n}[01]`;
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n}0 & sleep ${n}1; wait` } }] }, { text: "unused" }] });
    const child = mode === "rpc" ? spawnCli(["--mode", "rpc", "--no-session"], e) : spawnCli(["--mode", "json", "--no-session", "hang"], e);
    if (mode === "rpc") child.stdin!.write(JSON.stringify({ id: "p", type: "prompt", message: "hang" }) + "\n");
    else child.stdin!.end();
    let out = "";
    child.stdout!.on("data", (c) => (out += c));
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    const running = () => spawnSync("pgrep", ["-f", pattern]).stdout.toString().trim();
    for (let i = 0; i < 400 && !(out.includes("tool_execution_start") && running().split("\n").filter(Boolean).length >= 2); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(running()).not.toBe("");
    child.kill(signal);
    expect(await exited).toBe(code);
    let left = running();
    for (let i = 0; i < 100 && left; i++) {
      await new Promise((r) => setTimeout(r, 50));
      left = running();
    }
    expect(left).toBe("");
  }, 60000);
});

describe("security: extension handlers are bounded and isolated", () => {
  it("a handler that never settles times out with a diagnostic naming extension and event; throws and rejections in its timers are reported, not fatal", async () => {
    const e = env({ extensionHandlerTimeoutMs: 1500 });
    mkdirSync(join(e.agentDir, "extensions"), { recursive: true });
    writeFileSync(
      join(e.agentDir, "extensions", "stuck.ts"),
      [
        "export default function (pi: any) {",
        "  pi.on(\"before_agent_start\", () => new Promise(() => {}));",
        "  pi.on(\"agent_start\", () => {",
        "    setTimeout(() => { Promise.reject(new Error(\"boom-in-timer\")); }, 5);",
        "    setTimeout(() => { throw new Error(\"throw-in-timer\"); }, 10);",
        "  });",
        "}",
        "",
      ].join("\n"),
    );
    server.setScript({ turns: [{ text: "the answer", delayMs: 300 }] });
    const r = await runCli(["-p", "--no-session", "hi"], e, { timeoutMs: 60000 });
    expect(r.stdout).toContain("the answer");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/stuck\.ts.*"before_agent_start" handler did not finish within 1500 ms/);
    expect(r.stderr).toContain("boom-in-timer");
    expect(r.stderr).toContain("throw-in-timer");
    expect(r.stderr).toContain("isolated");
  }, 90000);
});

describe("security: the read tool streams", () => {
  it("a file over 2 GiB is read with offset and limit (sparse fixture)", async () => {
    const { createReadTool } = await import("../../plugins/tools/read.js");
    const { openSync, writeSync, closeSync } = await import("node:fs");
    const dir = mkdtempSync(join(tmpdir(), "pi-read-huge-"));
    try {
      const file = join(dir, "huge.log");
      const fd = openSync(file, "w");
      // Over 8 KiB of text first (the binary check looks at the head), then a hole, then text.
      writeSync(fd, Array.from({ length: 300 }, (_, i) => `head line ${i + 1} ${"-".repeat(30)}`).join("\n") + "\n");
      // A hole of 2.1 GiB of spaces would take real disk; a sparse hole reads as NUL bytes in one long line.
      const tail = "\nafter the hole 1\nafter the hole 2\n";
      writeSync(fd, tail, Math.floor(2.1 * 1024 ** 3), "utf8");
      closeSync(fd);
      expect(statSync(file).size).toBeGreaterThan(2 * 1024 ** 3);
      const tool = createReadTool(dir);
      const run = async (args: Record<string, unknown>) =>
        ((await tool.execute("id", { path: "huge.log", ...args } as any, undefined, undefined, undefined as any)).content[0] as { text: string }).text;
      const dashes = "-".repeat(30);
      expect(await run({ limit: 2 })).toBe(`head line 1 ${dashes}\nhead line 2 ${dashes}\n\n[302 more lines in file. Use offset=3 to continue.]`);
      expect(await run({ offset: 302, limit: 2 })).toBe("after the hole 1\nafter the hole 2\n\n[1 more lines in file. Use offset=304 to continue.]");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300000);
});
