/**
 * End to end: every extension of pi 1.6's `examples/extensions` (from the devDependency
 * @earendil-works/pi-coding-agent@1.6.0) loaded by the real CLI, headless (print mode, one
 * scripted answer): the run succeeds and nothing is reported on stderr, except where pi 1.6
 * reports the same thing (gondolin needs its own npm dependency; file-trigger watches a file
 * that does not exist here).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runCli } from "./helpers/e2e.js";

const EXAMPLES = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "examples", "extensions");
/** What pi 1.6 reports too when it loads these examples the same way. */
const SAME_AS_PI16: Record<string, RegExp> = {
  gondolin: /Cannot find module '@earendil-works\/gondolin'/,
  "file-trigger.ts": /ENOENT: no such file or directory, watch/,
};

const examples = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith(".ts") || existsSync(join(EXAMPLES, f, "index.ts")) || existsSync(join(EXAMPLES, f, "package.json")))
  .sort();

let root: string;
let env: NodeJS.ProcessEnv;
let cwd: string;
const results = new Map<string, { code: number | null; stderr: string; stdout: string }>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "pi-examples-"));
  const agentDir = join(root, "agent");
  cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
  writeFileSync(join(root, "faux.json"), JSON.stringify(["ok"]));
  env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_FAUX_SCRIPT: join(root, "faux.json") };
  for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];
  // Two at a time (the machine is shared).
  const queue = [...examples];
  const worker = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) results.set(f, await runCli(["--no-session", "-e", join(EXAMPLES, f), "-p", "hi"], { cwd, env }, { timeoutMs: 120_000 }));
  };
  await Promise.all([worker(), worker()]);
}, 900_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("pi 1.6's example extensions, headless", () => {
  it("finds the examples", () => {
    expect(examples.length).toBeGreaterThan(70);
  });

  it.each(examples)("%s loads and the run succeeds", (f) => {
    const r = results.get(f)!;
    expect({ f, code: r.code, stdout: r.stdout.trim() }).toEqual({ f, code: 0, stdout: "ok" });
    const reported = r.stderr.split("\n").filter((l) => /error|warning/i.test(l));
    if (SAME_AS_PI16[f] && reported.length) expect(reported.join("\n")).toMatch(SAME_AS_PI16[f]!);
    else expect({ f, reported }).toEqual({ f, reported: [] });
  });
});
