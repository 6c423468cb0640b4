/**
 * End to end: `pi install`, `pi update` and `pi remove` with the real npm against a loopback
 * registry (tests/fixtures/npm-registry.mjs). A pi package that names the host packages as
 * peers gets its own dependencies but never the host packages (pi serves them under both
 * scopes); an older install that pulled them is cleaned by `pi update`.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/e2e.js";
// @ts-expect-error plain ESM fixture without types
import { startNpmRegistry } from "./fixtures/npm-registry.mjs";

let root: string;
let agentDir: string;
let cwd: string;
let env: NodeJS.ProcessEnv;
let registry: { url: string; requests: string[]; close(): Promise<void> };
const mark = () => join(root, "mark.jsonl");

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const EXTENSION = `
import * as oldScope from "@mariozechner/pi-coding-agent";
import * as newScope from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { word } from "pi-peer-dep";
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("session_start", () => {
    appendFileSync(process.env.PEER_MARK, JSON.stringify({
      sameHost: typeof oldScope.getAgentDir === "function" && oldScope.getAgentDir === newScope.getAgentDir,
      typebox: typeof Type.Object,
      word,
    }) + "\\n");
  });
}
`;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "pi-pkg-install-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const src = join(root, "src");
  write(join(src, "dep", "package.json"), JSON.stringify({ name: "pi-peer-dep", version: "1.0.0", type: "module", main: "index.js" }));
  write(join(src, "dep", "index.js"), 'export const word = "from-a-dependency";\n');
  const peers = { "@mariozechner/pi-coding-agent": "*", "@earendil-works/pi-coding-agent": "*", "@earendil-works/pi-tui": "*", typebox: "*" };
  write(
    join(src, "demo", "package.json"),
    JSON.stringify({ name: "pi-peer-demo", version: "1.0.0", type: "module", keywords: ["pi-package"], dependencies: { "pi-peer-dep": "^1.0.0" }, peerDependencies: peers, pi: { extensions: ["./index.js"] } }),
  );
  write(join(src, "demo", "index.js"), EXTENSION);
  // Host packages npm could fetch if it solved peers: installing them is the failure this test looks for.
  for (const name of ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent", "@earendil-works/pi-tui", "typebox"]) {
    const dir = join(src, name.replace("/", "__"));
    write(join(dir, "package.json"), JSON.stringify({ name, version: "99.0.0", main: "index.js" }));
    write(join(dir, "index.js"), "module.exports = { fake: true };\n");
  }
  registry = await startNpmRegistry([
    join(src, "dep"),
    join(src, "demo"),
    ...["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent", "@earendil-works/pi-tui", "typebox"].map((n) => join(src, n.replace("/", "__"))),
  ]);
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
  env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PEER_MARK: mark(), npm_config_registry: registry.url, npm_config_cache: join(root, "npm-cache"), npm_config_update_notifier: "false" };
  for (const k of Object.keys(env)) if (/_API_KEY$|^PI_FAUX_SCRIPT$|^PI_OFFLINE$/.test(k)) delete env[k];
}, 120_000);

afterAll(async () => {
  await registry?.close();
  rmSync(root, { recursive: true, force: true });
});

const modules = () => join(agentDir, "npm", "node_modules");
const hostCopies = () => ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent", "@earendil-works/pi-tui", "typebox"].filter((n) => existsSync(join(modules(), n)));
const hostRequests = () => registry.requests.filter((r) => /pi-coding-agent|pi-tui|^typebox$/.test(r));

async function sessionMark() {
  rmSync(mark(), { force: true });
  const script = join(root, "faux.json");
  writeFileSync(script, JSON.stringify(["ok"]));
  const r = await runCli(["--no-session", "-p", "hi"], { cwd, env }, { env: { PI_FAUX_SCRIPT: script, PI_OFFLINE: "1" } });
  expect(r.stderr).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  return JSON.parse(readFileSync(mark(), "utf8").trim().split("\n").pop()!);
}

describe("installs with pi's peer semantics (real npm, loopback registry)", () => {
  it("installs the package and its dependencies, never the host packages it names as peers; the host serves them", async () => {
    const r = await runCli(["install", "npm:pi-peer-demo"], { cwd, env });
    expect(r.stderr).not.toMatch(/ERESOLVE|error/i);
    expect(r.code).toBe(0);
    expect(existsSync(join(modules(), "pi-peer-demo", "package.json"))).toBe(true);
    expect(existsSync(join(modules(), "pi-peer-dep", "package.json"))).toBe(true);
    expect(hostCopies()).toEqual([]);
    expect(hostRequests()).toEqual([]);
    // No copy of the prefix is left beside it.
    expect(JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")).packages).toEqual(["npm:pi-peer-demo"]);
    expect(await sessionMark()).toEqual({ sameHost: true, typebox: "function", word: "from-a-dependency" });
  }, 120_000);

  it("pi update removes host packages an older install put into the prefix, and the package keeps working", async () => {
    // What an install without pi's peer semantics left: the host packages at the top of node_modules and in the lock.
    for (const name of ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent"]) {
      const dir = join(modules(), name);
      write(join(dir, "package.json"), JSON.stringify({ name, version: "99.0.0" }));
      write(join(dir, "big.bin"), "x".repeat(100_000));
      const lockPath = join(agentDir, "npm", "package-lock.json");
      const lock = JSON.parse(readFileSync(lockPath, "utf8"));
      lock.packages[`node_modules/${name}`] = { version: "99.0.0", resolved: `${registry.url}${name}/-/x.tgz`, peer: true };
      writeFileSync(lockPath, JSON.stringify(lock, null, 2));
    }
    expect(hostCopies().length).toBe(2);
    const r = await runCli(["update", "--extensions"], { cwd, env });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/Removing host packages pi serves itself from .*@earendil-works\/pi-coding-agent, @mariozechner\/pi-coding-agent/);
    expect(hostCopies()).toEqual([]);
    expect(hostRequests()).toEqual([]);
    expect(Object.keys(JSON.parse(readFileSync(join(agentDir, "npm", "package-lock.json"), "utf8")).packages).filter((k) => k.includes("pi-coding-agent"))).toEqual([]);
    expect(await sessionMark()).toEqual({ sameHost: true, typebox: "function", word: "from-a-dependency" });
  }, 120_000);

  it("a second install does not copy the prefix, and remove uninstalls without solving peers", async () => {
    // A copy of the prefix swapped in would give the files already installed new inodes.
    const inode = () => statSync(join(modules(), "pi-peer-demo", "index.js")).ino;
    const before = inode();
    const r = await runCli(["install", "npm:pi-peer-dep"], { cwd, env });
    expect(r.code).toBe(0);
    expect(inode()).toBe(before);
    const rm = await runCli(["remove", "npm:pi-peer-demo"], { cwd, env });
    expect(rm.code).toBe(0);
    expect(existsSync(join(modules(), "pi-peer-demo"))).toBe(false);
    expect(hostCopies()).toEqual([]);
    expect(hostRequests()).toEqual([]);
  }, 120_000);
});
