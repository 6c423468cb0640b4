/**
 * End to end (issue 20): the CLI keeps V8's compile cache in `<agent dir>/cache/compile` on a Node
 * that has one (≥ 22.1), only when the agent dir already exists (the first run creates it with
 * its private permissions), and not with NODE_DISABLE_COMPILE_CACHE=1. Node 20 has none.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import * as nodeModule from "node:module";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/e2e.js";

const nodeHasCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === "function";
let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function env(agentDir: string, extra: NodeJS.ProcessEnv = {}) {
  const e: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", ...extra };
  delete e.NODE_COMPILE_CACHE;
  delete e.NODE_DISABLE_COMPILE_CACHE;
  return { ...e, ...extra };
}
const cacheFiles = (agentDir: string) => {
  const dir = join(agentDir, "cache", "compile");
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).length : 0;
};

describe("compile cache", () => {
  it(`${nodeHasCache ? "is written" : "is not written (this Node has none)"} under the agent dir from the second run on`, async () => {
    root = mkdtempSync(join(tmpdir(), "pi-cc-"));
    const agentDir = join(root, "agent");
    // first run: the agent dir does not exist yet; it is created private, without a cache
    const first = await runCli(["--help"], { cwd: root, env: env(agentDir) });
    expect(first.code).toBe(0);
    expect(statSync(agentDir).mode & 0o777).toBe(0o700);
    expect(cacheFiles(agentDir)).toBe(0);
    const second = await runCli(["--help"], { cwd: root, env: env(agentDir) });
    expect(second.code).toBe(0);
    if (nodeHasCache) expect(cacheFiles(agentDir)).toBeGreaterThan(0);
    else expect(existsSync(join(agentDir, "cache"))).toBe(false);
    expect(statSync(agentDir).mode & 0o777).toBe(0o700);
  }, 180_000);

  it("NODE_DISABLE_COMPILE_CACHE=1 turns it off", async () => {
    root = mkdtempSync(join(tmpdir(), "pi-cc-"));
    const agentDir = join(root, "agent");
    for (let i = 0; i < 2; i++) expect((await runCli(["--help"], { cwd: root, env: env(agentDir, { NODE_DISABLE_COMPILE_CACHE: "1" }) })).code).toBe(0);
    expect(cacheFiles(agentDir)).toBe(0);
  }, 180_000);
});
