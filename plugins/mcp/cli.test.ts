/**
 * `pi mcp add | remove | list | get` against a kernel whose agent dir and project are temp folders.
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kernel, type SubcommandContext } from "../../core/kernel.js";
import { SettingsManager } from "../../core/settings.js";
import { defineApp } from "../../core/config.js";
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
      project: false,
      force: false,
      config: { command: "npx", args: ["-y", "@scope/server", "--root", "/tmp"], env: { A: "1", B: "x=y" } },
    });
    expect(parseAddArgs(["--project", "s", "--", "node", "--inspect", "x.js"]).config).toEqual({ command: "node", args: ["--inspect", "x.js"] });
  });

  it("a url with headers and an explicit transport", () => {
    expect(parseAddArgs(["-H", "Authorization: Bearer ${TOKEN}", "web", "https://h/mcp"]).config).toEqual({ url: "https://h/mcp", headers: { Authorization: "Bearer ${TOKEN}" } });
    expect(parseAddArgs(["-t", "sse", "old", "http://h/sse"]).config).toEqual({ type: "sse", url: "http://h/sse" });
    expect(parseAddArgs(["j", "--json", '{"url":"http://h"}']).config).toEqual({ url: "http://h" });
  });

  it("bad input names the problem", () => {
    expect(() => parseAddArgs([])).toThrow(/needs a server name/);
    expect(() => parseAddArgs(["x"])).toThrow(/needs a command or a url/);
    expect(() => parseAddArgs(["-t", "websocket", "x", "y"])).toThrow(/--transport must be stdio, http or sse/);
    expect(() => parseAddArgs(["--env", "NOEQUALS", "x", "y"])).toThrow(/KEY=VALUE/);
    expect(() => parseAddArgs(["--bogus", "x", "y"])).toThrow(/unknown option --bogus/);
    expect(() => parseAddArgs(["-t", "http", "x", "node"])).toThrow(/needs an http\(s\) url/);
    expect(() => parseAddArgs(["x", "http://h", "extra"])).toThrow(/takes no arguments/);
    expect(() => parseAddArgs(["x", "--json", "[1]"])).toThrow(/must be a JSON object/);
  });
});

describe("pi mcp", () => {
  it("add, list, get, remove (global settings), keeping other settings", async () => {
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ theme: "light" }));
    const add = await run("add", "--env", "GREETING=hi", "demo", process.execPath, STDIO);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain(`Added MCP server "demo" to ${join(agentDir, "settings.json")}`);
    const s = readJson(join(agentDir, "settings.json"));
    expect(s.theme).toBe("light");
    expect(s.mcpServers.demo).toEqual({ command: process.execPath, args: [STDIO], env: { GREETING: "hi" } });

    const dup = await run("add", "demo", "node");
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists.*--force/);

    const list = await run("list");
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`demo: connected (default, global)\n  ${process.execPath} ${STDIO}`);

    const get = await run("get", "demo", "--json");
    expect(get.code).toBe(0);
    const info = JSON.parse(get.stdout);
    expect(info.status).toBe("connected");
    expect(info.tools.map((t: { name: string }) => t.name)).toContain("mcp__demo__echo");

    const rm = await run("remove", "demo");
    expect(rm.code).toBe(0);
    expect(readJson(join(agentDir, "settings.json"))).toEqual({ theme: "light", mcpServers: {} });
    const again = await run("remove", "demo");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no MCP server "demo"/);
  });

  it("--project writes .mcp.json; list shows it as untrusted without the trust service", async () => {
    const add = await run("add", "--project", "web", "http://127.0.0.1:1/mcp");
    expect(add.code).toBe(0);
    expect(readJson(join(cwd, ".mcp.json"))).toEqual({ mcpServers: { web: { url: "http://127.0.0.1:1/mcp" } } });
    const list = await run("list");
    expect(list.stdout).toMatch(/web: untrusted \(default, project\)\n {2}http:\/\/127\.0\.0\.1:1\/mcp\n {2}project not trusted; To trust it, run pi with --trust/);
    const wrong = await run("remove", "web");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/it is in .*\.mcp\.json/);
    expect((await run("remove", "--project", "web")).code).toBe(0);
  });

  it("get reports a server that fails to start; a malformed settings file is never rewritten", async () => {
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ mcpServers: { bad: { command: "pi-no-such-command-xyz" } } }));
    const get = await run("get", "bad");
    expect(get.code).toBe(1);
    expect(get.stdout).toMatch(/failed to connect: cannot start "pi-no-such-command-xyz": command not found/);
    writeFileSync(join(agentDir, "settings.json"), "{ not json");
    const add = await run("add", "x", "node");
    expect(add.code).toBe(1);
    expect(add.stderr).toMatch(/malformed JSON .*not changed/);
    expect(readFileSync(join(agentDir, "settings.json"), "utf8")).toBe("{ not json");
  });

  it("usage errors exit 2 with the usage", async () => {
    const r = await run("frobnicate");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command "mcp frobnicate"[\s\S]*Usage:/);
    expect((await run("get")).code).toBe(2);
    expect((await run("--help")).code).toBe(0);
  });
});
