/**
 * `npm run demo`, offline (no API key): the bundle is reused when the sources are unchanged, the
 * run shows the agent's tool calls and ends with what to try next, and `npm run demo -- --tui`
 * opens the TUI on the same scripted model with the demo task. Needs a fresh build.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

const home = mkdtempSync(join(tmpdir(), "pi-demo-test-"));
const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
for (const k of Object.keys(env)) if (/_API_KEY$|^ANTHROPIC_OAUTH_TOKEN$/.test(k)) delete env[k];
const SOCKET = `pi-demo-e2e-${process.pid}`;
const { send, typeText, waitFor, tmux, kill } = tmuxDriver(SOCKET, () => env, () => join(home, "none.log"));
afterAll(() => {
  kill();
  rmSync(home, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm run demo", () => {
  it("reuses the current bundle, shows the tool calls, and ends with what to try next", async () => {
    const stale = await run(["scripts/build-stamp.mjs", "--bundle-if-stale"]);
    expect([stale.code, stale.stdout]).toEqual([0, expect.stringContaining("dist/bundle is current")]);
    const demo = await run(["tests/demo/run-demo.mjs"]);
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain("⚙ write");
    expect(demo.stdout).toMatch(/✓ 1 ⏎ 4 ⏎ 9 ⏎ 16 ⏎ 25/);
    expect(demo.stdout).toContain("What to try next");
    expect(demo.stdout).toContain("npm run demo -- --tui");
  }, 120000);

  it("--tui: the TUI on the same scripted model runs the demo task; other prompts get a hint; /quit leaves", async () => {
    tmux("new-session", "-d", "-s", "t", "-x", "110", "-y", "40", "-c", ROOT, `${process.execPath} tests/demo/run-demo.mjs --tui; echo DEMO-EXITED-$?; sleep 600`);
    await waitFor(/It is a single loop from 1 to 5/, 90_000);
    await waitFor(/demo-scripted\/scripted-model/);
    typeText("what else can you do?");
    send("Enter");
    await waitFor(/I only know one task/);
    typeText("/quit");
    send("Enter");
    await waitFor(/DEMO-EXITED-0/);
  }, 180000);

  it("--tui without a terminal says so", async () => {
    const r = await run(["tests/demo/run-demo.mjs", "--tui"]);
    expect([r.code, r.stderr.trim()]).toEqual([1, "npm run demo -- --tui: the TUI needs a terminal (stdin and stdout a TTY); run it in one"]);
  }, 30000);
});
