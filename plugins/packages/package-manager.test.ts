/**
 * PackageManager against local fixtures only: a fake npm (settings npmCommand) for most cases,
 * the real npm with tarballs made by `npm pack` for the staged-install guarantees, and a git
 * repository created on disk.
 */
import { describe, it, expect, afterEach, beforeEach } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SettingsManager } from "../../core/kernel/index.js";
import { PackageManager, packageManagerOf } from "./package-manager.js";

const FAKE_NPM = resolve(process.cwd(), "tests", "fixtures", "fake-npm.mjs");
const HOST = { appName: "pi", appVersion: "0.5.0", kernelApiVersion: "1.0.0" };

let root: string;
let agentDir: string;
let cwd: string;
let registry: string;
let npmLog: string;
let logs: string[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pkgmgr-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  registry = join(root, "registry");
  npmLog = join(root, "npm.log");
  logs = [];
  for (const d of [agentDir, cwd, registry]) mkdirSync(d, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}
function pkgFolder(dir: string, pkg: Record<string, unknown>, files: Record<string, string> = {}) {
  write(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  for (const [rel, text] of Object.entries(files)) write(join(dir, rel), text);
  return dir;
}
const skill = (name: string) => `---\nname: ${name}\ndescription: ${name} skill\n---\nbody\n`;

async function manager(settings: { global?: Record<string, unknown>; project?: Record<string, unknown> } = {}, opts: { fake?: boolean; env?: NodeJS.ProcessEnv; offline?: boolean } = {}) {
  const fake = opts.fake ?? true;
  write(join(agentDir, "settings.json"), JSON.stringify({ ...(fake ? { npmCommand: [process.execPath, FAKE_NPM] } : {}), ...settings.global }));
  if (settings.project) write(join(cwd, ".pi", "settings.json"), JSON.stringify(settings.project));
  const sm = await SettingsManager.load({ agentDir, cwd });
  const pm = new PackageManager({
    cwd,
    agentDir,
    configDir: ".pi",
    settings: sm,
    host: HOST,
    env: { ...process.env, FAKE_NPM_REGISTRY: registry, FAKE_NPM_LOG: npmLog, npm_config_cache: join(root, "npm-cache"), ...opts.env },
    tempRoot: join(root, "tmp"),
    log: (l) => logs.push(l),
    output: () => undefined,
    offline: opts.offline,
  });
  return { pm, sm };
}
const globalSettings = () => JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
const npmCalls = (): string[][] => (existsSync(npmLog) ? readFileSync(npmLog, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).argv) : []);

describe("install, update, remove (fake npm)", () => {
  beforeEach(() => {
    pkgFolder(join(registry, "demo"), { name: "demo", version: "1.0.0", pi: { skills: ["skills"] } }, { "skills/hello/SKILL.md": skill("hello") });
    pkgFolder(join(registry, "pinned@1.0.0"), { name: "pinned", version: "1.0.0" }, { "prompts/p.md": "pinned prompt" });
    pkgFolder(join(registry, "too-new"), { name: "too-new", version: "3.0.0", pi: { kernel: "^2.0.0" } }, { "prompts/x.md": "x" });
  });

  it("installs into the agent dir's npm prefix, records the source, and resolves its resources", async () => {
    const { pm } = await manager();
    const dir = await pm.install("npm:demo");
    expect(dir).toBe(join(agentDir, "npm", "node_modules", "demo"));
    expect(existsSync(join(dir, "skills", "hello", "SKILL.md"))).toBe(true);
    expect(globalSettings().packages).toEqual(["npm:demo"]);
    expect(logs[0]).toBe("Installing npm:demo…");
    expect(npmCalls()[0]!.slice(0, 3)).toEqual(["install", "demo", "--prefix"]);
    // pi's peer semantics: npm neither installs nor solves the peers (the host serves pi's packages).
    expect(npmCalls()[0]).toContain("--legacy-peer-deps");
    // No staging folders are left behind.
    expect(readdirSync(agentDir).filter((n) => n.includes("staging") || n.includes(".old-"))).toEqual([]);
    const [r] = await pm.resolve({ trusted: false });
    expect(r).toMatchObject({ status: "ok", root: dir, scope: "user" });
    expect(r!.resources.map((x) => x.rel)).toEqual(["skills/hello/SKILL.md"]);
  });

  it("a failed install leaves the previous install and the settings as they were", async () => {
    const { pm } = await manager();
    await pm.install("npm:demo");
    const settingsBefore = readFileSync(join(agentDir, "settings.json"), "utf8");
    await expect(pm.install("npm:does-not-exist")).rejects.toThrow(/E404/);
    await expect(pm.install("npm:too-new")).rejects.toThrow("refused: too-new@3.0.0 needs kernel API ^2.0.0, but this pi provides 1.0.0");
    expect(readFileSync(join(agentDir, "settings.json"), "utf8")).toBe(settingsBefore);
    expect(existsSync(join(agentDir, "npm", "node_modules", "demo", "package.json"))).toBe(true);
    expect(existsSync(join(agentDir, "npm", "node_modules", "too-new"))).toBe(false);
    expect(JSON.parse(readFileSync(join(agentDir, "npm", "package.json"), "utf8")).dependencies).toEqual({ demo: "^1.0.0" });
    expect(readdirSync(agentDir).filter((n) => n.includes("staging"))).toEqual([]);
  });

  it("refuses to install when the settings file could not be saved afterwards, before running npm", async () => {
    const { pm } = await manager();
    writeFileSync(join(agentDir, "settings.json"), "{ broken json");
    await expect(pm.install("npm:demo")).rejects.toThrow(/cannot update .*settings\.json: it does not parse/);
    expect(npmCalls()).toEqual([]);
    expect(existsSync(join(agentDir, "npm"))).toBe(false);
    expect(readFileSync(join(agentDir, "settings.json"), "utf8")).toBe("{ broken json");
  });

  it("update skips pinned and local packages and moves the others to the latest version", async () => {
    pkgFolder(join(cwd, "local-pkg"), { name: "local-pkg" }, { "prompts/l.md": "l" });
    const { pm } = await manager({ global: { packages: ["npm:demo", "npm:pinned@1.0.0", "../project/local-pkg"] } });
    await pm.resolve({ installMissing: true, trusted: false });
    expect(JSON.parse(readFileSync(join(agentDir, "npm", "node_modules", "demo", "package.json"), "utf8")).version).toBe("1.0.0");
    pkgFolder(join(registry, "demo"), { name: "demo", version: "1.1.0", pi: { skills: ["skills"] } }, { "skills/hello/SKILL.md": skill("hello") });
    rmSync(npmLog, { force: true });
    const results = await pm.update();
    expect(results.map((r) => `${r.source}:${r.status}`)).toEqual(["npm:demo:updated", "npm:pinned@1.0.0:skipped-pinned", "../project/local-pkg:skipped-local"]);
    expect(npmCalls().map((c) => c[1])).toEqual(["demo@latest"]);
    expect(logs).toContain("Skipping npm:pinned@1.0.0 (pinned)");
    expect(JSON.parse(readFileSync(join(agentDir, "npm", "node_modules", "demo", "package.json"), "utf8")).version).toBe("1.1.0");
    await expect(pm.update("npm:unknown")).rejects.toThrow("no package matching npm:unknown");
  });

  it("remove uninstalls and drops the entry; an unknown source is an error naming the other scope", async () => {
    const { pm } = await manager();
    await pm.install("npm:demo");
    await expect(pm.remove("npm:demo", { local: true })).rejects.toThrow("no package matching npm:demo in the project settings (it is in the global settings: drop -l)");
    await pm.remove("npm:demo");
    expect(globalSettings().packages).toEqual([]);
    expect(existsSync(join(agentDir, "npm", "node_modules", "demo"))).toBe(false);
    expect(npmCalls().at(-1)!.slice(0, 2)).toEqual(["uninstall", "demo"]);
    expect(npmCalls().at(-1)).toContain("--legacy-peer-deps");
  });

  it("project packages load and install only in a trusted project; the project entry wins over the global one", async () => {
    const { pm } = await manager({ global: { packages: ["npm:demo"] }, project: { packages: [{ source: "npm:demo", skills: [] }] } });
    let [r] = await pm.resolve({ installMissing: true, trusted: false });
    expect(r).toMatchObject({ scope: "project", status: "untrusted" });
    expect(npmCalls()).toEqual([]);
    [r] = await pm.resolve({ installMissing: true, trusted: true });
    expect(r).toMatchObject({ scope: "project", status: "ok", root: join(cwd, ".pi", "npm", "node_modules", "demo") });
    expect(r!.resources.map((x) => `${x.rel}:${x.enabled}`)).toEqual(["skills/hello/SKILL.md:false"]);
    expect(readFileSync(join(cwd, ".pi", "npm", ".gitignore"), "utf8")).toContain("*");
    expect(logs.some((l) => l.startsWith("Installing missing package npm:demo (project)"))).toBe(true);
  });

  it("offline: missing packages are reported, not installed, and updates do nothing", async () => {
    const { pm } = await manager({ global: { packages: ["npm:demo"] } }, { offline: true });
    const [r] = await pm.resolve({ installMissing: true });
    expect(r).toMatchObject({ status: "missing" });
    expect(r!.message).toContain("offline");
    expect(await pm.update()).toEqual([]);
    expect(npmCalls()).toEqual([]);
  });

  it("malformed settings entries are reported by name and kept when settings are saved", async () => {
    const { pm } = await manager({ global: { packages: ["git:nohost", 42, { skills: [] }] } });
    const r = await pm.resolve({ installMissing: true });
    expect(r.map((x) => x.status)).toEqual(["error", "error", "error"]);
    expect(r[0]!.message).toContain('"git:nohost": not a git repository address');
    expect(r[1]!.message).toContain("must be a source string");
    await pm.install("npm:demo");
    expect(globalSettings().packages).toEqual(["git:nohost", 42, { skills: [] }, "npm:demo"]);
    expect((await pm.update()).filter((x) => x.status === "failed")).toHaveLength(3);
  });

  it("packages for one run go under the temp root and never into settings", async () => {
    const { pm } = await manager();
    const dir = await pm.resolveTemporary("npm:demo");
    expect(dir.startsWith(join(root, "tmp", "npm"))).toBe(true);
    expect(existsSync(join(dir, "skills", "hello", "SKILL.md"))).toBe(true);
    expect(globalSettings().packages).toBeUndefined();
    expect(pm.temporary).toEqual([dir]);
    // Cached: a second resolution does not run npm again.
    const calls = npmCalls().length;
    expect(await pm.resolveTemporary("npm:demo")).toBe(dir);
    expect(npmCalls().length).toBe(calls);
    await expect(pm.resolveTemporary("npm:too-new")).rejects.toThrow(/needs kernel API/);
  });

  it("pi config: disables and enables one resource through the settings filter", async () => {
    const { pm } = await manager();
    await pm.install("npm:demo");
    let r = pm.setResourceEnabled("npm:demo", "skills/hello", false);
    expect(r).toEqual({ source: "npm:demo", scope: "user", type: "skills", rel: "skills/hello/SKILL.md" });
    expect(globalSettings().packages).toEqual([{ source: "npm:demo", skills: ["-skills/hello/SKILL.md"] }]);
    expect((await pm.resolve())[0]!.resources[0]!.enabled).toBe(false);
    r = pm.setResourceEnabled("demo", "hello", true);
    expect(globalSettings().packages).toEqual([{ source: "npm:demo", skills: ["+skills/hello/SKILL.md"] }]);
    expect((await pm.resolve())[0]!.resources[0]!.enabled).toBe(true);
    expect(() => pm.setResourceEnabled("npm:demo", "nothing-here", false)).toThrow('no resource "nothing-here" in this package (it has: skills/hello/SKILL.md)');
    expect(() => pm.setResourceEnabled("npm:other", "x", false)).toThrow("no configured package matches npm:other (configured: npm:demo)");
  });
});

describe("local and git sources", () => {
  it("records a local folder relative to the settings folder, and refuses one for a newer pi", async () => {
    pkgFolder(join(root, "mypkg"), { name: "mypkg", engines: { pi: ">=0.4.0" } }, { "prompts/hi.md": "hi" });
    pkgFolder(join(root, "future"), { name: "future", engines: { pi: ">=9.0.0" } }, { "prompts/f.md": "f" });
    const { pm } = await manager({}, { fake: true });
    await pm.install(join(root, "mypkg"));
    expect(globalSettings().packages).toEqual(["../mypkg"]);
    const [r] = await pm.resolve();
    expect(r!.resources.map((x) => x.path)).toEqual([join(root, "mypkg", "prompts", "hi.md")]);
    await expect(pm.install(join(root, "future"))).rejects.toThrow("refused: future needs pi >=9.0.0, but this is pi 0.5.0");
    expect(globalSettings().packages).toEqual(["../mypkg"]);
    await expect(pm.install(join(root, "missing"))).rejects.toThrow(/does not exist/);
  });

  it("clones a git repository at a ref into the agent dir", async () => {
    const repo = pkgFolder(join(root, "repos", "tool"), { name: "tool", version: "1.0.0" }, { "prompts/t.md": "tool prompt" });
    const git = (...a: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...a], { cwd: repo, stdio: "pipe" });
    git("init", "-q");
    git("add", ".");
    git("commit", "-q", "-m", "one");
    git("tag", "v1");
    write(join(repo, "prompts", "t2.md"), "added later");
    git("add", ".");
    git("commit", "-q", "-m", "two");
    const { pm } = await manager();
    const dir = await pm.install(`git:file://${repo}@v1`);
    expect(dir).toBe(join(agentDir, "git", "local", repo.slice(1)));
    expect(existsSync(join(dir, "prompts", "t.md"))).toBe(true);
    expect(existsSync(join(dir, "prompts", "t2.md"))).toBe(false);
    expect(globalSettings().packages).toEqual([`git:file://${repo}@v1`]);
    // The checkout's dependencies are installed without peers too.
    expect(npmCalls().at(-1)).toEqual(["install", "--omit=dev", "--legacy-peer-deps", "--no-audit", "--no-fund"]);
    expect((await pm.update()).map((r) => r.status)).toEqual(["skipped-pinned"]);
    await pm.remove(`git:file://${repo}`);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(agentDir, "git", "local"))).toBe(false);
  });
});

describe("real npm with tarballs", () => {
  it("installs a packed tarball; an incompatible newer tarball is refused and changes nothing", async () => {
    const v1 = pkgFolder(join(root, "src-v1"), { name: "tar-demo", version: "1.0.0", pi: { prompts: ["prompts"] } }, { "prompts/a.md": "from v1" });
    const v2 = pkgFolder(join(root, "src-v2"), { name: "tar-demo", version: "2.0.0", pi: { kernel: "^2.0.0", prompts: ["prompts"] } }, { "prompts/a.md": "from v2" });
    const env = { ...process.env, npm_config_cache: join(root, "npm-cache"), npm_config_offline: "true", npm_config_update_notifier: "false" };
    const pack = (dir: string) => {
      const out = execFileSync("npm", ["pack", "--json", "--pack-destination", root], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }).toString();
      return join(root, JSON.parse(out)[0].filename);
    };
    const t1 = pack(v1);
    const t2 = pack(v2);
    const { pm } = await manager({}, { fake: false, env: { npm_config_offline: "true", npm_config_update_notifier: "false" } });
    const dir = await pm.install(`npm:${t1}`);
    expect(dir).toBe(join(agentDir, "npm", "node_modules", "tar-demo"));
    expect(readFileSync(join(dir, "prompts", "a.md"), "utf8")).toBe("from v1");
    expect(globalSettings().packages).toEqual([`npm:${t1}`]);
    const settingsBefore = readFileSync(join(agentDir, "settings.json"), "utf8");
    const prefixBefore = readFileSync(join(agentDir, "npm", "package.json"), "utf8");

    await expect(pm.install(`npm:${t2}`)).rejects.toThrow("refused: tar-demo@2.0.0 needs kernel API ^2.0.0, but this pi provides 1.0.0");
    expect(readFileSync(join(dir, "prompts", "a.md"), "utf8")).toBe("from v1");
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version).toBe("1.0.0");
    expect(readFileSync(join(agentDir, "settings.json"), "utf8")).toBe(settingsBefore);
    expect(readFileSync(join(agentDir, "npm", "package.json"), "utf8")).toBe(prefixBefore);
    expect(readdirSync(agentDir).filter((n) => n.includes("staging") || n.includes(".old-"))).toEqual([]);

    const [r] = await pm.resolve();
    expect(r).toMatchObject({ status: "ok", source: `npm:${t1}` });
    expect(r!.resources.map((x) => x.rel)).toEqual(["prompts/a.md"]);
  });
});

describe("temporary packages (-e npm:x)", () => {
  it("live under the agent dir in a 0700 folder, not in the shared temp folder", async () => {
    const sm = await SettingsManager.load({ agentDir, cwd });
    const pm = new PackageManager({ cwd, agentDir, configDir: ".pi", settings: sm, host: HOST, log: () => undefined, output: () => undefined });
    const prefix = pm.npmPrefix("temporary", "npm:x");
    expect(prefix.startsWith(join(agentDir, "tmp", "extensions") + "/")).toBe(true);
    expect(statSync(join(agentDir, "tmp", "extensions")).mode & 0o777).toBe(0o700);
    expect(prefix.startsWith(tmpdir() + "/pi-extensions")).toBe(false);
  });
});

describe("the package manager npmCommand runs", () => {
  it("is told apart as pi 1.6 does: the command, the one after --, or the only one a wrapper names", () => {
    expect(packageManagerOf({ command: "npm", args: [] })).toBe("npm");
    expect(packageManagerOf({ command: "/usr/bin/pnpm", args: [] })).toBe("pnpm");
    expect(packageManagerOf({ command: "mise", args: ["exec", "--", "bun"] })).toBe("bun");
    expect(packageManagerOf({ command: "corepack", args: ["pnpm"] })).toBe("pnpm");
    expect(packageManagerOf({ command: "node", args: ["fake-npm.mjs"] })).toBe("npm");
    expect(() => packageManagerOf({ command: "wrap", args: ["npm", "pnpm"] })).toThrow('settings "npmCommand" names several package managers (npm, pnpm)');
  });
});
