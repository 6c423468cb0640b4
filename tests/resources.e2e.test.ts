/**
 * End to end: the real CLI against the loopback LLM server. Context files, skills and prompt
 * templates reach the model; pi install / list / config / remove manage local packages (a folder
 * and a tarball made with `npm pack`, no network).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}
const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\nInstructions for ${name}.\n`;

/** The system prompt and the last user text of the n-th recorded chat request. */
function request(n: number): { system: string; user: string } {
  const body = server.stats().requests.filter((r: any) => r.path === "/v1/chat/completions")[n]!.body;
  const text = (c: unknown) => (typeof c === "string" ? c : (c as Array<{ text?: string }>).map((p) => p.text ?? "").join(""));
  const system = body.messages.filter((m: any) => m.role === "system" || m.role === "developer").map((m: any) => text(m.content)).join("\n");
  const users = body.messages.filter((m: any) => m.role === "user");
  return { system, user: text(users[users.length - 1].content) };
}

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
  e = makeE2eEnv(server.url);
  // HOME points into the throwaway folder so ~/.agents/skills of the machine stays out.
  e.env.HOME = e.root;
  e.env.npm_config_cache = join(e.root, "npm-cache");
  e.env.npm_config_offline = "true";
  e.env.npm_config_update_notifier = "false";
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

describe("resources reach the model", () => {
  it("system prompt holds AGENTS.md text and the skill entry; /mytemplate a b is expanded", async () => {
    write(join(e.agentDir, "AGENTS.md"), "GLOBAL-RULE-123");
    write(join(e.cwd, "AGENTS.md"), "PROJECT-RULE-456");
    write(join(e.agentDir, "skills", "checker", "SKILL.md"), skillMd("checker", "Checks the build output"));
    write(join(e.cwd, ".pi", "prompts", "mytemplate.md"), "---\ndescription: test template\n---\nFirst=$1 Second=$2 All=[$@]");
    server.reset();
    const r = await runCli(["-p", "/mytemplate a b"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("ok\n");
    const { system, user } = request(0);
    expect(system).toContain("GLOBAL-RULE-123");
    expect(system).toContain("PROJECT-RULE-456");
    expect(system.indexOf("GLOBAL-RULE-123")).toBeLessThan(system.indexOf("PROJECT-RULE-456"));
    expect(system).toContain("<name>checker</name>");
    expect(system).toContain("<description>Checks the build output</description>");
    expect(system).toContain(join(e.agentDir, "skills", "checker", "SKILL.md"));
    expect(system).toContain(`Current working directory: ${e.cwd}`);
    expect(user).toBe("First=a Second=b All=[a b]");
  });

  it("/skill:name inlines the skill; --no-skills with --skill keeps only that one; --no-context-files drops AGENTS.md", async () => {
    write(join(e.cwd, "extra", "only", "SKILL.md"), skillMd("only", "Given on the command line"));
    server.reset();
    let r = await runCli(["-p", "/skill:checker please"], e);
    expect(r.code).toBe(0);
    let req = request(0);
    expect(req.user).toContain('<skill name="checker"');
    expect(req.user).toContain("Instructions for checker.");
    expect(req.user.endsWith("please")).toBe(true);

    server.reset();
    r = await runCli(["-p", "--no-skills", "--skill", "extra/only", "--no-context-files", "hi"], e);
    expect(r.code).toBe(0);
    req = request(0);
    expect(req.system).toContain("<name>only</name>");
    expect(req.system).not.toContain("<name>checker</name>");
    expect(req.system).not.toContain("PROJECT-RULE-456");
  });
});

describe("RPC", () => {
  it("get_commands lists prompt templates and skills with source, location and path", async () => {
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
    await client.start();
    try {
      const commands = await client.getCommands();
      expect(commands.find((c) => c.name === "mytemplate")).toEqual({
        name: "mytemplate",
        description: "test template",
        source: "prompt",
        location: "project",
        path: join(e.cwd, ".pi", "prompts", "mytemplate.md"),
        // pi 1.6's provenance record
        sourceInfo: { path: join(e.cwd, ".pi", "prompts", "mytemplate.md"), source: "local", scope: "project", origin: "top-level" },
      });
      expect(commands.find((c) => c.name === "skill:checker")).toMatchObject({ source: "skill", location: "user", description: "Checks the build output" });
    } finally {
      await client.stop();
    }
  });
});

describe("pi install / list / config / remove", () => {
  it("installs a local folder, lists it, disables one of its skills, removes it", async () => {
    const pkg = join(e.root, "folder-pkg");
    write(join(pkg, "package.json"), JSON.stringify({ name: "folder-pkg", version: "1.0.0", pi: { kernel: "^1.0.0" } }));
    write(join(pkg, "skills", "alpha", "SKILL.md"), skillMd("alpha", "Alpha from the folder package"));
    write(join(pkg, "skills", "beta", "SKILL.md"), skillMd("beta", "Beta from the folder package"));

    let r = await runCli(["install", pkg], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Installing");
    expect(r.stdout).toContain(`Installed ${pkg}`);
    const settings = () => JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8"));
    expect(settings().packages).toEqual(["../folder-pkg"]);

    r = await runCli(["list"], e);
    expect(r.stdout).toContain("User packages:\n  ../folder-pkg\n    " + pkg);

    r = await runCli(["config", "disable", "../folder-pkg", "skills/beta"], e);
    expect(r.code).toBe(0);
    expect(settings().packages).toEqual([{ source: "../folder-pkg", skills: ["-skills/beta/SKILL.md"] }]);
    r = await runCli(["config"], e);
    expect(r.stdout).toContain("[x] skills/alpha");
    expect(r.stdout).toContain("[ ] skills/beta");

    server.reset();
    r = await runCli(["-p", "hi"], e);
    expect(r.code).toBe(0);
    const { system } = request(0);
    expect(system).toContain("<name>alpha</name>");
    expect(system).not.toContain("<name>beta</name>");

    r = await runCli(["remove", pkg], e);
    expect(r.code).toBe(0);
    expect(settings().packages).toEqual([]);
    r = await runCli(["remove", pkg], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no package matching");
  });

  it("installs an npm tarball; an incompatible one is refused and settings stay as they were", async () => {
    const mk = (dir: string, version: string, kernel: string) => {
      write(join(dir, "package.json"), JSON.stringify({ name: "packed-pkg", version, pi: { kernel, prompts: ["prompts"] } }));
      write(join(dir, "prompts", "packed.md"), `Packed template v${version} for $1`);
      const out = execFileSync("npm", ["pack", "--json", "--pack-destination", e.root], { cwd: dir, env: e.env, stdio: ["ignore", "pipe", "pipe"] }).toString();
      return join(e.root, JSON.parse(out)[0].filename);
    };
    const good = mk(join(e.root, "packed-v1"), "1.0.0", "^1.0.0");
    const bad = mk(join(e.root, "packed-v2"), "2.0.0", "^7.0.0");

    let r = await runCli(["install", `npm:${good}`], e);
    expect(r.code).toBe(0);
    const installed = join(e.agentDir, "npm", "node_modules", "packed-pkg");
    expect(existsSync(join(installed, "prompts", "packed.md"))).toBe(true);
    const settingsBefore = readFileSync(join(e.agentDir, "settings.json"), "utf8");

    r = await runCli(["install", `npm:${bad}`], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refused: packed-pkg@2.0.0 needs kernel API ^7.0.0");
    expect(readFileSync(join(e.agentDir, "settings.json"), "utf8")).toBe(settingsBefore);
    expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version).toBe("1.0.0");

    server.reset();
    r = await runCli(["-p", "/packed x1"], e);
    expect(r.code).toBe(0);
    expect(request(0).user).toBe("Packed template v1.0.0 for x1");
  });

  it("-e npm:<tarball> installs under <agentDir>/tmp/extensions for this run only", async () => {
    const src = join(e.root, "temp-src");
    write(join(src, "package.json"), JSON.stringify({ name: "temp-pkg", version: "1.0.0", pi: { extensions: ["ext.ts"], prompts: ["prompts"] } }));
    write(join(src, "ext.ts"), "export default function () {}\n");
    write(join(src, "prompts", "tempt.md"), "Temporary template for $1");
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", e.root], { cwd: src, env: e.env, stdio: ["ignore", "pipe", "pipe"] }).toString();
    const tgz = join(e.root, JSON.parse(out)[0].filename);
    const tmp = join(e.root, "os-tmp");
    mkdirSync(tmp, { recursive: true });
    const settingsBefore = readFileSync(join(e.agentDir, "settings.json"), "utf8");
    // Node's compile cache would be a new, cold one in this temp folder, warmed after the run by a
    // detached process still writing there when the test's folder is removed: off for these runs.
    const noCache = { NODE_DISABLE_COMPILE_CACHE: "1" };
    server.reset();
    let r = await runCli(["-e", `npm:${tgz}`, "-p", "/tempt z"], e, { env: { TMPDIR: tmp, PI_OFFLINE: "", ...noCache } });
    expect(r.stderr).not.toContain("error");
    expect(r.code).toBe(0);
    expect(request(0).user).toBe("Temporary template for z");
    // Under the agent dir (owner-only), not in the shared temp folder.
    expect(existsSync(join(e.agentDir, "tmp", "extensions", "npm"))).toBe(true);
    expect(existsSync(join(tmp, "pi-extensions"))).toBe(false);
    expect(readFileSync(join(e.agentDir, "settings.json"), "utf8")).toBe(settingsBefore);
    server.reset();
    r = await runCli(["-p", "/tempt z"], e, { env: { TMPDIR: tmp, ...noCache } });
    expect(r.code).toBe(0);
    expect(request(0).user).toBe("/tempt z");
  });

  it("a project package is not loaded in an untrusted project, and says so", async () => {
    const pkg = join(e.root, "proj-pkg");
    write(join(pkg, "prompts", "projtpl.md"), "project package template");
    let r = await runCli(["install", "-l", pkg], e);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(e.cwd, ".pi", "settings.json"), "utf8")).packages).toEqual(["../../proj-pkg"]);
    server.reset();
    r = await runCli(["-p", "/projtpl"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("only in a trusted project");
    expect(request(0).user).toBe("/projtpl");
  });
});
