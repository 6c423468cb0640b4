/**
 * End to end: pi 1.6's project_trust event fires in print, json and RPC mode (ctx.mode is the
 * run's mode, no UI) when the project has trust-gated configuration; an "undecided" answer
 * without a UI leaves the project untrusted unless `defaultProjectTrust` says "always".
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CLI, runCli } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

const EXT = resolve("tests/fixtures/api-shapes/trust-recorder.ts");
let root: string;
let agentDir: string;
let cwd: string;
let env: NodeJS.ProcessEnv;
const log = () => join(root, "trust.jsonl");
const records = () => (existsSync(log()) ? readFileSync(log(), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

function setup(settings: Record<string, unknown> = {}) {
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", ...settings }));
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "trust-modes-"));
  agentDir = join(root, "agent");
  cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(join(cwd, ".pi", "prompts"), { recursive: true });
  writeFileSync(join(root, "faux.json"), JSON.stringify(["ok"]));
  env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_FAUX_SCRIPT: join(root, "faux.json"), TRUST_LOG: log() };
  for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];
  setup();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("project_trust in every mode", () => {
  for (const [label, args, mode] of [
    ["print", ["-p", "hi"], "print"],
    ["json", ["--mode", "json", "hi"], "json"],
  ] as const) {
    it(`${label}: fires with the run's mode and no UI; undecided means not trusted`, async () => {
      const r = await runCli(["--no-session", "-e", EXT, ...args], { cwd, env });
      expect(r.code).toBe(0);
      expect(records()).toEqual([
        { event: "project_trust", cwd, mode, hasUI: false },
        { event: "session_start", mode, trusted: false },
      ]);
    });
  }

  it("rpc: fires too; defaultProjectTrust 'always' makes the undecided project trusted", async () => {
    setup({ defaultProjectTrust: "always" });
    const client = new RpcClient({ cliPath: CLI, cwd, env, inheritEnv: false, args: ["--no-session", "-e", EXT] });
    await client.start();
    try {
      await client.getState();
      expect(records()).toEqual([
        { event: "project_trust", cwd, mode: "rpc", hasUI: false },
        { event: "session_start", mode: "rpc", trusted: true },
      ]);
    } finally {
      await client.stop();
    }
  });

  it("a project without trust-gated configuration is not asked about", async () => {
    rmSync(join(cwd, ".pi"), { recursive: true });
    mkdirSync(join(cwd, ".pi"));
    const r = await runCli(["--no-session", "-e", EXT, "-p", "hi"], { cwd, env });
    expect(r.code).toBe(0);
    expect(records().map((x) => x.event)).toEqual(["session_start"]);
  });
});
