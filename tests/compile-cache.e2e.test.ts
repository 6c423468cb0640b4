/**
 * End to end: the CLI keeps V8's compile cache (Node ≥ 22.1) in one private per-user folder under
 * the OS temp dir, shared by every agent dir. A process on a cold cache runs without it and, after
 * it exits, a detached warm-up fills the folder and marks it ready; the next process, even with a
 * brand-new agent dir, uses it (the warm-up compiles under the binary's V8 flags, or V8 would refuse
 * the code). A folder others can write is not used; NODE_DISABLE_COMPILE_CACHE=1
 * turns it off. Node 20 has no cache: nothing is created.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import * as nodeModule from "node:module";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/e2e.js";

const nodeHasCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === "function";
const uid = String(process.getuid?.() ?? "");
let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function env(tmp: string, agentDir: string, extra: NodeJS.ProcessEnv = {}) {
  const e: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  delete e.NODE_COMPILE_CACHE;
  delete e.NODE_DISABLE_COMPILE_CACHE;
  return { ...e, ...extra };
}
const cacheDir = (tmp: string) => join(tmp, `pi-kernel-compile-cache-${uid}`);
const ready = (tmp: string) => existsSync(cacheDir(tmp)) && readdirSync(cacheDir(tmp)).some((f) => f.startsWith("ready-"));
const entries = (tmp: string) => (existsSync(cacheDir(tmp)) ? readdirSync(cacheDir(tmp), { recursive: true }).length : 0);
async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("compile cache", () => {
  it(`${nodeHasCache ? "is filled after a cold run's exit and used by the next process with a new agent dir" : "is not created (this Node has none)"}`, async () => {
    root = mkdtempSync(join(tmpdir(), "pi-cc-"));
    const tmp = join(root, "tmp");
    mkdirSync(tmp);
    const first = await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent1")) });
    expect(first.code).toBe(0);
    if (!nodeHasCache) {
      expect(existsSync(cacheDir(tmp))).toBe(false);
      return;
    }
    // private folder, owned by this user
    expect(statSync(cacheDir(tmp)).mode & 0o777).toBe(0o700);
    // the warm-up runs after the first process exited, detached, and marks the folder ready
    await until(() => ready(tmp), "the ready marker");
    expect(entries(tmp)).toBeGreaterThan(10);
    // nothing of it in the agent dir
    expect(existsSync(join(root, "agent1", "cache"))).toBe(false);
    // Node's own trace of the cache: the next process's modules are taken from it, none refused
    // (V8 refuses code made under other V8 flags: the warm-up must set the binary's flags too)
    const second = await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent2"), { NODE_DEBUG_NATIVE: "COMPILE_CACHE" }) });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toMatch(/chunk-[\w-]+\.js was accepted/);
    expect(second.stderr).not.toMatch(/was rejected/);
    expect(existsSync(join(root, "agent2", "cache"))).toBe(false);
  }, 180_000);

  it(`${nodeHasCache ? "is kept apart for other V8 flags (PI_V8_FLAGS), each warmed for its own" : "PI_V8_FLAGS runs (this Node has no cache)"}`, async () => {
    root = mkdtempSync(join(tmpdir(), "pi-cc-"));
    const tmp = join(root, "tmp");
    mkdirSync(tmp);
    const markers = () => (existsSync(cacheDir(tmp)) ? readdirSync(cacheDir(tmp)).filter((f) => f.startsWith("ready-")) : []);
    // Node names its cache folders by V8's flag hash: V8's defaults (PI_V8_FLAGS empty) and the binary's flags get one each
    const folders = () => readdirSync(cacheDir(tmp)).filter((f) => f.startsWith("v"));
    const help = await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent"), { PI_V8_FLAGS: "" }) });
    expect(help.code).toBe(0);
    if (!nodeHasCache) return;
    await until(() => markers().length === 1, "the first ready marker");
    expect((await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent")) })).stdout).toBe(help.stdout);
    await until(() => markers().length === 2, "a second ready marker, for the binary's flags");
    expect(folders()).toHaveLength(2);
    const again = await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent"), { PI_V8_FLAGS: "", NODE_DEBUG_NATIVE: "COMPILE_CACHE" }) });
    expect(again.stderr).toMatch(/chunk-[\w-]+\.js was accepted/);
    expect(again.stderr).not.toMatch(/was rejected/);
  }, 180_000);

  it("a cache folder others can write is not used", async () => {
    root = mkdtempSync(join(tmpdir(), "pi-cc-"));
    const tmp = join(root, "tmp");
    mkdirSync(cacheDir(tmp), { recursive: true });
    chmodSync(cacheDir(tmp), 0o777);
    expect((await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent")) })).code).toBe(0);
    expect(readdirSync(cacheDir(tmp))).toEqual([]);
  }, 180_000);

  it("NODE_DISABLE_COMPILE_CACHE=1 turns it off", async () => {
    root = mkdtempSync(join(tmpdir(), "pi-cc-"));
    const tmp = join(root, "tmp");
    mkdirSync(tmp);
    expect((await runCli(["--help"], { cwd: root, env: env(tmp, join(root, "agent"), { NODE_DISABLE_COMPILE_CACHE: "1" }) })).code).toBe(0);
    expect(existsSync(cacheDir(tmp))).toBe(false);
  }, 180_000);
});
