/**
 * `pi mcp add | remove | list | get` against a kernel whose agent dir and project are temp folders.
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kernel, type SubcommandContext, SettingsManager, defineApp } from "../../core/kernel/index.js";
import { parseAddArgs, runMcpSubcommand } from "./cli.js";

const STDIO = fileURLToPath(new URL("../../tests/fixtures/mcp/stdio-server.mjs", import.meta.url));

let root: string;
let agentDir: string;
let cwd: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pi-mcp-cli-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  mkdirSync(agentDir);
  mkdirSync(cwd);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A fresh kernel each time, as each `pi mcp …` run is a fresh process. */
async function run(...args: string[]) {
  const settings = await SettingsManager.load({ agentDir, cwd });
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0-test"), cwd, agentDir, settings });
  let stdout = "";
  let stderr = "";
  const ctx: SubcommandContext = { kernel, cwd, stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s + "\n") };
  const code = await runMcpSubcommand(args, ctx);
  return { code, stdout, stderr };
}
const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8"));

describe("parseAddArgs", () => {
  it("a command with options before the name and server arguments after the command", () => {
    expect(parseAddArgs(["--env", "A=1", "--env=B=x=y", "files", "npx", "-y", "@scope/server", "--root", "/tmp"])).toEqual({
      name: "files",
      target: "user",
      config: { command: "npx", args: ["-y", "@scope/server", "--root", "/tmp"], env: { A: "1", B: "x=y" } },
    });
    expect(parseAddArgs(["--project", "s", "--", "node", "--inspect", "x.js"]).config).toEqual({ command: "node", args: ["--inspect", "x.js"] });
  });

  it("a url with headers and an explicit transport", () => {
    expect(parseAddArgs(["-H", "Authorization: Bearer ${TOKEN}", "web", "https://h/mcp"]).config).toEqual({ url: "https://h/mcp", headers: { Authorization: "Bearer ${TOKEN}" } });
    expect(parseAddArgs(["-t", "sse", "old", "http://h/sse"]).config).toEqual({ type: "sse", url: "http://h/sse" });
    expect(parseAddArgs(["j", "--json", '{"url":"http://h"}']).config).toEqual({ url: "http://h" });
  });

  it("pi 1.6's forms: --url with auth options, -- command, -l", () => {
    expect(parseAddArgs(["docs", "--url", "https://h/mcp", "--header", "X-A=1", "--bearer-token-env-var", "TOK", "--oauth-client-id", "cid", "--oauth-callback-port", "8765", "--exposure", "deferred", "--description", "d"])).toEqual({
      name: "docs",
      target: "user",
      config: { url: "https://h/mcp", headers: { "X-A": "1", Authorization: "Bearer ${TOK}" }, oauth: { clientId: "cid", callbackPort: 8765 }, exposure: "deferred", description: "d" },
    });
    expect(parseAddArgs(["-l", "fs", "--cwd", "sub", "--", "npx", "-y", "srv", "--flag"])).toEqual({ name: "fs", target: "local", config: { command: "npx", args: ["-y", "srv", "--flag"], cwd: "sub" } });
    expect(() => parseAddArgs(["x", "--url", "https://h", "--", "cmd"])).toThrow(/a url server takes no arguments/);
    expect(() => parseAddArgs(["x", "--oauth-callback-port", "99999", "--url", "https://h"])).toThrow(/port number/);
    expect(() => parseAddArgs(["x", "--oauth-client-id", "c", "--", "cmd"])).toThrow(/are for --url servers/);
  });

  it("bad input names the problem", () => {
    expect(() => parseAddArgs([])).toThrow(/needs a server name/);
    expect(() => parseAddArgs(["x"])).toThrow(/needs --url <url> or -- <command>/);
    expect(() => parseAddArgs(["-t", "websocket", "x", "y"])).toThrow(/--transport must be stdio, http or sse/);
    expect(() => parseAddArgs(["--env", "NOEQUALS", "x", "y"])).toThrow(/KEY=VALUE/);
    expect(() => parseAddArgs(["--bogus", "x", "y"])).toThrow(/unknown option --bogus/);
    expect(() => parseAddArgs(["-t", "http", "x", "node"])).toThrow(/needs an http\(s\) url/);
    expect(() => parseAddArgs(["x", "http://h", "extra"])).toThrow(/takes no arguments/);
    expect(() => parseAddArgs(["x", "--json", "[1]"])).toThrow(/must be a JSON object/);
  });
});

describe("pi mcp", () => {
  it("add, list, get, remove (<agentDir>/mcp.json), keeping other keys; a server in settings.json is removed from there", async () => {
    writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ $schema: "x" }));
    // A long connect timeout: the machine running the tests may be busy.
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ theme: "light", mcp: { connectTimeoutMs: 120_000 }, mcpServers: { old: { command: "node" } } }));
    const add = await run("add", "--env", "GREETING=hi", "demo", process.execPath, STDIO);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain(`Added global MCP server "demo" in ${join(agentDir, "mcp.json")}.`);
    const s = readJson(join(agentDir, "mcp.json"));
    expect(s.$schema).toBe("x");
    expect(s.mcpServers.demo).toEqual({ command: process.execPath, args: [STDIO], env: { GREETING: "hi" } });

    // pi 1.6: add replaces a server of the same name (--force is accepted and changes nothing).
    const dup = await run("add", "--force", "demo", "node");
    expect(dup.code).toBe(0);
    expect(dup.stdout).toContain(`Replaced global MCP server "demo"`);
    expect(readJson(join(agentDir, "mcp.json")).mcpServers.demo).toEqual({ command: "node" });
    expect((await run("add", "demo", process.execPath, STDIO)).code).toBe(0);
    expect((await run("remove", "old")).code).toBe(0);
    expect(readJson(join(agentDir, "settings.json"))).toEqual({ theme: "light", mcp: { connectTimeoutMs: 120_000 }, mcpServers: {} });

    const list = await run("list");
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`demo: connected (codemode, global)\n  ${process.execPath} ${STDIO}`);

    const get = await run("get", "demo", "--json");
    expect(get.code).toBe(0);
    const info = JSON.parse(get.stdout);
    expect(info.status).toBe("connected");
    expect(info.tools.map((t: { name: string }) => t.name)).toContain("mcp__demo__echo");

    const rm = await run("remove", "demo");
    expect(rm.code).toBe(0);
    expect(readJson(join(agentDir, "mcp.json"))).toEqual({ $schema: "x", mcpServers: {} });
    const again = await run("remove", "demo");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no MCP server "demo"/);
  });

  it("--project writes .mcp.json; list shows it as untrusted without the trust service", async () => {
    const add = await run("add", "--project", "web", "http://127.0.0.1:1/mcp");
    expect(add.code).toBe(0);
    expect(readJson(join(cwd, ".mcp.json"))).toEqual({ mcpServers: { web: { url: "http://127.0.0.1:1/mcp" } } });
    const list = await run("list");
    expect(list.stdout).toMatch(/web: untrusted \(codemode, project\)\n {2}http:\/\/127\.0\.0\.1:1\/mcp\n {2}project not trusted; To trust it, run pi with --trust/);
    const wrong = await run("remove", "web");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/it is in .*\.mcp\.json \(use -l\)/);
    expect((await run("remove", "--project", "web")).code).toBe(0);
  });

  it("get reports a server that fails to start; a malformed settings file is never rewritten", async () => {
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ mcpServers: { bad: { command: "pi-no-such-command-xyz" } } }));
    const get = await run("get", "bad");
    expect(get.code).toBe(1);
    expect(get.stdout).toMatch(/failed to connect: cannot start "pi-no-such-command-xyz": command not found/);
    writeFileSync(join(agentDir, "mcp.json"), "{ not json");
    const add = await run("add", "x", "node");
    expect(add.code).toBe(1);
    expect(add.stderr).toMatch(/malformed JSON .*not changed/);
    expect(readFileSync(join(agentDir, "mcp.json"), "utf8")).toBe("{ not json");
  });

  it("usage errors exit 2 with the usage", async () => {
    const r = await run("frobnicate");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command "mcp frobnicate"[\s\S]*Usage:/);
    expect((await run("get")).code).toBe(2);
    expect((await run("--help")).code).toBe(0);
  });
});
