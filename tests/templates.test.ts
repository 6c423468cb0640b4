/**
 * `pi new <kind> <dir>` for every template (extension, cli, plugin), end to end with the built
 * CLI: scaffold into a temp folder, `npm install --offline` (the host is a `file:` dependency)
 * and `npm test`; the custom CLI also answers --version and its own --help. Needs a fresh build.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/e2e.js";

const CLI = join(ROOT, "dist", "bundle", "cli.js");
const root = mkdtempSync(join(tmpdir(), "pi-templates-"));
const agentDir = join(root, "agent");
mkdirSync(agentDir);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env: NodeJS.ProcessEnv = {
  ...process.env,
  PI_CODING_AGENT_DIR: agentDir,
  PI_OFFLINE: "1",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 170_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Scaffold `kind` into <root>/<dir>, install, test; returns the folder and the test output. */
async function scaffoldAndTest(kind: string, dir: string) {
  const target = join(root, dir);
  const created = await run(process.execPath, [CLI, "new", kind, target], root);
  expect([created.code, created.stderr]).toEqual([0, ""]);
  expect(created.stdout).toContain(`"${dir}" in ${dir}`);
  expect(created.stdout).toContain("npm install && npm test");
  const pkg = JSON.parse(readFileSync(join(target, "package.json"), "utf8"));
  expect(pkg.name).toBe(dir);
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  expect(deps["pi-kernel"]).toBe(`file:${ROOT}`);
  expect(existsSync(join(target, ".gitignore"))).toBe(true);
  const install = await run("npm", ["install", "--offline"], target);
  expect([install.code, install.stderr]).toEqual([0, expect.any(String)]);
  const test = await run("npm", ["test"], target);
  expect([test.code, test.stdout]).toEqual([0, expect.stringMatching(/# fail 0/)]);
  return { target, test };
}

describe("pi new: every template passes its own tests straight after scaffolding", () => {
  it("extension, cli and plugin", async () => {
    const [ext, cli, plugin] = await Promise.all([scaffoldAndTest("extension", "team-ext"), scaffoldAndTest("cli", "team-cli"), scaffoldAndTest("plugin", "team-plugin")]);
    expect(ext.test.stdout).toMatch(/# pass 2/);
    expect(cli.test.stdout).toMatch(/# pass 3/);
    expect(plugin.test.stdout).toMatch(/# pass 3/);

    // The custom CLI: its version, and its own name in --help (env variable and folders).
    const version = await run(process.execPath, ["bin/cli.js", "--version"], cli.target);
    expect([version.code, version.stdout]).toEqual([0, "0.1.0\n"]);
    const help = await run(process.execPath, ["bin/cli.js", "--help"], cli.target);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("team-cli 0.1.0");
    expect(help.stdout).toContain("TEAM_CLI_CODING_AGENT_DIR");

    // A kind that does not exist, and a folder that is not empty.
    const unknown = await run(process.execPath, [CLI, "new", "widget", join(root, "w")], root);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown kind "widget"');
    expect(unknown.stderr).toMatch(/extension .*\n.*cli .*\n.*plugin /);
    const again = await run(process.execPath, [CLI, "new", "cli", cli.target], root);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists and is not empty");
  });
});
