/**
 * End to end: user plugins' teardown runs when the real CLI (dist/bundle) finishes a print run,
 * in reverse order of setup, and a failing teardown is printed with the plugin's name while the
 * others still run (the run's exit code stays 0).
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/e2e.js";

let root: string;
let agentDir: string;
let cwd: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pi-teardown-e2e-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  for (const k of Object.keys(env)) if (/_API_KEY$|^PI_FAUX_SCRIPT$/.test(k)) delete env[k];
  const script = join(root, "script.json");
  writeFileSync(script, JSON.stringify(["ok"]));
  env.PI_FAUX_SCRIPT = script;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A plugin module that appends `<name>:<step>` to the log file at setup and at teardown. */
function plugin(name: string, body: { teardown?: string; setup?: string } = {}): string {
  const path = join(root, `${name}.mjs`);
  const log = JSON.stringify(join(root, "log.txt"));
  writeFileSync(
    path,
    `import { appendFileSync } from "node:fs";
export default {
  name: ${JSON.stringify(name)}, version: "1.0.0", kernel: "^1.0.0",
  setup(api) { appendFileSync(${log}, "${name}:setup\\n"); api.onClose(() => appendFileSync(${log}, "${name}:onClose\\n")); ${body.setup ?? ""} },
  teardown() { appendFileSync(${log}, "${name}:teardown\\n"); ${body.teardown ?? ""} },
};
`,
  );
  return path;
}

describe("plugin teardown through the CLI", () => {
  it("runs every user plugin's teardown in reverse order at exit and names the one that fails", async () => {
    const plugins = [plugin("first"), plugin("second", { teardown: `throw new Error("socket already closed");` }), plugin("third")];
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", plugins }));
    const r = await runCli(["--no-session", "-p", "hi"], { env, cwd });
    expect(r.stdout).toContain("ok");
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, "log.txt"), "utf8").trim().split("\n")).toEqual([
      "first:setup", "second:setup", "third:setup",
      "third:teardown", "third:onClose", "second:teardown", "second:onClose", "first:teardown", "first:onClose",
    ]);
    expect(r.stderr).toContain("error: second: plugin second teardown failed: socket already closed");
  });
});
