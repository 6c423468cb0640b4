/**
 * Security faults: what runs inside the agent's process and beside it — a codemode script that
 * never yields, writes that go straight to descriptor 1, ACP input without a newline, tool
 * processes that leave their process group, a provider error that echoes the key, file modes.
 * Each case failed on the code before the fix; docs/security.md lists them.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "../fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, spawnCli, type E2eEnv } from "../helpers/e2e.js";

let server: LlmServer;
const envs: E2eEnv[] = [];
const children: ChildProcess[] = [];
beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const e of envs.splice(0)) e.cleanup();
});

function env(settings?: Record<string, unknown>): E2eEnv {
  const e = makeE2eEnv(server.url, { settings });
  envs.push(e);
  return e;
}

async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
};

/** An RPC child with its stdout records collected. */
function rpc(e: E2eEnv, args: string[] = []) {
  const child = spawnCli(["--mode", "rpc", "--no-session", ...args], e);
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (c) => (out += c));
  child.stderr!.on("data", (c) => (err += c));
  child.stdin!.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on("exit", (code, signal) => r({ code, signal })));
  return {
    child,
    exited,
    send: (v: unknown) => child.stdin!.write(JSON.stringify(v) + "\n"),
    records: () => jsonLines(out.split("\n").filter((l) => l.startsWith("{")).join("\n")),
    out: () => out,
    err: () => err,
  };
}

describe("security: a codemode script that never yields", () => {
  it("while (true) {} is ended by abort, and the agent answers RPC meanwhile and ends on SIGTERM", async () => {
    const e = env();
    // pi 1.6's codemode tool, as an extension adds it (createCodemodeExtension from the package);
    // like the built-in one it starts inactive, so the run turns it on.
    mkdirSync(join(e.agentDir, "extensions"), { recursive: true });
    writeFileSync(join(e.agentDir, "extensions", "codemode.ts"), 'import { createCodemodeExtension } from "@earendil-works/pi-coding-agent";\nexport default createCodemodeExtension();\n');
    server.setScript({ turns: [{ toolCalls: [{ name: "codemode", arguments: { code: 'text("spinning");\nwhile (true) {}' } }] }, { text: "stopped" }] });
    const r = rpc(e, ["--tools", "+codemode"]);
    r.send({ id: "p", type: "prompt", message: "go" });
    await until(() => r.records().some((x) => x.type === "tool_execution_start" && x.toolName === "codemode"), "the script to start");
    // The event loop is free: a command is answered while the script spins.
    r.send({ id: "s", type: "get_state" });
    await until(() => r.records().some((x) => x.id === "s" && x.type === "response"), "get_state to be answered while the script runs", 30_000);
    r.send({ id: "a", type: "abort" });
    await until(() => r.records().some((x) => x.type === "tool_execution_end" && x.toolName === "codemode"), "the script to end on abort", 30_000);
    const end = r.records().find((x) => x.type === "tool_execution_end" && x.toolName === "codemode");
    expect(end.isError).toBe(true);
    expect(JSON.stringify(end.result)).toContain("aborted");
    r.child.stdin!.end();
    await r.exited;
    // Again, and this time SIGTERM ends the process.
    server.setScript({ turns: [{ toolCalls: [{ name: "codemode", arguments: { code: "for (;;) {}" } }] }, { text: "stopped" }] });
    const t = rpc(e, ["--tools", "+codemode"]);
    t.send({ id: "p2", type: "prompt", message: "again" });
    await until(() => t.records().some((x) => x.type === "tool_execution_start" && x.toolName === "codemode"), "the second script to start");
    t.child.kill("SIGTERM");
    const done = await Promise.race([t.exited, new Promise<"hung">((res) => setTimeout(() => res("hung"), 30_000))]);
    expect(done).toEqual({ code: 143, signal: null });
  }, 120_000);
});

describe("security: protocol stdout against writes to descriptor 1", () => {
  const EXT = [
    'import { writeSync, createWriteStream } from "node:fs";',
    'import * as fs from "node:fs";',
    'import { spawnSync, spawn, execSync, execFileSync } from "node:child_process";',
    "export default function (pi) {",
    '  pi.on("session_start", async () => {',
    '    writeSync(1, "FD1-WRITESYNC\\n");',
    '    fs.writeSync(1, Buffer.from("FD1-BUFFER\\n"));',
    '    fs.writeFileSync(1, "FD1-WRITEFILE\\n");',
    '    await new Promise((r) => fs.write(1, "FD1-WRITE-ASYNC\\n", () => r()));',
    '    createWriteStream(null, { fd: 1, autoClose: false }).write("FD1-STREAM\\n");',
    '    spawnSync("sh", ["-c", "echo CHILD-SPAWNSYNC"], { stdio: "inherit" });',
    '    spawnSync("sh", ["-c", "echo CHILD-FD-LIST"], { stdio: [0, 1, 2] });',
    '    spawnSync("sh", ["-c", "echo CHILD-STREAM"], { stdio: ["ignore", process.stdout, "inherit"] });',
    '    execSync("echo CHILD-EXECSYNC", { stdio: "inherit" });',
    '    execFileSync("sh", ["-c", "echo CHILD-EXECFILESYNC"], { stdio: "inherit" });',
    '    await new Promise((r) => spawn("sh", ["-c", "echo CHILD-SPAWN"], { stdio: "inherit" }).on("exit", r));',
    "  });",
    "}",
  ].join("\n");
  const MARKS = ["FD1-WRITESYNC", "FD1-BUFFER", "FD1-WRITEFILE", "FD1-WRITE-ASYNC", "FD1-STREAM", "CHILD-SPAWNSYNC", "CHILD-FD-LIST", "CHILD-STREAM", "CHILD-EXECSYNC", "CHILD-EXECFILESYNC", "CHILD-SPAWN"];
  function noisy(): E2eEnv {
    const e = env();
    mkdirSync(join(e.agentDir, "extensions"), { recursive: true });
    writeFileSync(join(e.agentDir, "extensions", "fd1.ts"), EXT + "\n");
    return e;
  }

  it("--mode json: fs.writeSync(1, …), fd-1 streams and children with inherited stdout reach stderr, not the protocol", async () => {
    const e = noisy();
    server.setScript({ turns: [{ text: "answer" }] });
    const r = await runCli(["--mode", "json", "--no-session", "hi"], e, { timeoutMs: 60000 });
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    for (const m of MARKS) {
      expect(r.stdout).not.toContain(m);
      expect(r.stderr).toContain(m);
    }
  }, 90000);

  it("--mode rpc: the same; every stdout line is a protocol record", async () => {
    const e = noisy();
    const r = rpc(e);
    r.send({ id: "s", type: "get_state" });
    await until(() => r.out().includes('"id":"s"') && MARKS.every((m) => r.err().includes(m)), "get_state and the noise on stderr");
    r.child.stdin!.end();
    await r.exited;
    for (const l of r.out().split("\n").filter(Boolean)) expect(() => JSON.parse(l)).not.toThrow();
    for (const m of MARKS) expect(r.out()).not.toContain(m);
  }, 90000);
});

describe("security: ACP input lines are bounded", () => {
  it("a line longer than acp.maxLineLength is dropped as it arrives and answered with an error; the agent keeps serving", async () => {
    const e = env({ acp: { maxLineLength: 1024 * 1024 } });
    const child = spawnCli(["--mode", "acp"], e);
    children.push(child);
    let out = "";
    child.stdout!.on("data", (c) => (out += c));
    child.stdin!.on("error", () => {});
    const piece = "x".repeat(256 * 1024);
    for (let i = 0; i < 32; i++) {
      if (!child.stdin!.write(piece)) await new Promise((r) => child.stdin!.once("drain", r));
    }
    child.stdin!.write("\n" + JSON.stringify({ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }) + "\n");
    await until(() => out.includes('"id":7'), "the initialize answer after the oversized line");
    const records = jsonLines(out);
    const tooLong = records.find((r) => r.error && /too long/.test(r.error.message));
    expect(tooLong?.error.message).toContain("8388608");
    expect(tooLong?.error.message).toContain("acp.maxLineLength");
    expect(records.find((r) => r.id === 7)?.result).toBeDefined();
    child.stdin!.end();
  }, 90000);
});

describe("security: tool processes that leave the process group", () => {
  it("SIGTERM to pi ends a setsid child and a double-fork orphan of the running bash command", async () => {
    const e = env();
    const p1 = join(e.root, "p1");
    const p2 = join(e.root, "p2");
    const command = `setsid sleep 300 & echo $! > ${p1}; setsid sh -c 'sleep 300 & echo $! > ${p2}'; sleep 300`;
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }] });
    const child = spawnCli(["--mode", "json", "--no-session", "go"], e);
    children.push(child);
    child.stdin!.end();
    const exited = new Promise((r) => child.on("exit", r));
    let log = "";
    child.stdout!.on("data", (c) => (log += c));
    child.stderr!.on("data", (c) => (log += c));
    const pidIn = (f: string) => (existsSync(f) ? Number(readFileSync(f, "utf8").trim()) || 0 : 0);
    await until(() => pidIn(p1) > 0 && pidIn(p2) > 0, "the bash command's children").catch((error: Error) => {
      throw new Error(`${error.message}; the CLI printed:\n${log.slice(-3000)}`);
    });
    const pids = [pidIn(p1), pidIn(p2)];
    for (const p of pids) expect(alive(p)).toBe(true);
    child.kill("SIGTERM");
    await exited;
    await until(() => pids.every((p) => !alive(p)), "the children that left the group to end", 15_000);
  }, 90000);
});

describe("security: credentials in diagnostics", () => {
  it("a provider error that echoes the API key is printed with the key redacted", async () => {
    const e = env();
    server.setScript({ turns: [{ error: { status: 401, times: "always", message: "invalid x-api-key: MOCK_KEY_VALUE_123 is not valid" } }] });
    const r = await runCli(["-p", "hi"], e, { timeoutMs: 60000 });
    expect(r.stderr + r.stdout).toContain("invalid x-api-key");
    expect(r.stderr).not.toContain("MOCK_KEY_VALUE_123");
    expect(r.stdout).not.toContain("MOCK_KEY_VALUE_123");
    const j = await runCli(["--mode", "json", "--no-session", "hi"], e, { timeoutMs: 60000 });
    expect(j.stdout).toContain("invalid x-api-key");
    expect(j.stderr).not.toContain("MOCK_KEY_VALUE_123");
    expect(j.stdout).not.toContain("MOCK_KEY_VALUE_123"); // the protocol events too
  }, 90000);
});

describe("security: saving a setting keeps the file private", () => {
  it("settings.json and mcp.json written 0600 stay 0600 after pi changes them", async () => {
    const e = env({ mcpServers: { old: { command: "true" } } });
    const settings = join(e.agentDir, "settings.json");
    const mcp = join(e.agentDir, "mcp.json");
    writeFileSync(mcp, JSON.stringify({ mcpServers: {} }), { mode: 0o600 });
    chmodSync(settings, 0o600);
    chmodSync(mcp, 0o600);
    const add = await runCli(["mcp", "add", "demo", "--", "node", "server.js"], e, { timeoutMs: 30000 });
    expect([add.code, Object.keys(JSON.parse(readFileSync(mcp, "utf8")).mcpServers)]).toEqual([0, ["demo"]]);
    expect(statSync(mcp).mode & 0o777).toBe(0o600);
    const remove = await runCli(["mcp", "remove", "old"], e, { timeoutMs: 30000 });
    expect([remove.code, JSON.parse(readFileSync(settings, "utf8")).mcpServers?.old]).toEqual([0, undefined]);
    expect(statSync(settings).mode & 0o777).toBe(0o600);
  }, 60000);
});
