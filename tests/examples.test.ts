/**
 * Every SDK example (examples/*.mjs) runs with plain `node` against the built package and the
 * scripted faux model: a throwaway agent dir whose settings pick faux/faux-1, a faux script per
 * example (PI_FAUX_SCRIPT), a throwaway project folder as the cwd. Needs a fresh build.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/e2e.js";

const EXAMPLES = join(ROOT, "examples");
const root = mkdtempSync(join(tmpdir(), "pi-examples-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function run(example: string, script?: unknown[], args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string; agentDir: string; cwd: string }> {
  const dir = join(root, `${++n}`);
  const agentDir = join(dir, "agent");
  const cwd = join(dir, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
  const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  delete env.PI_FAUX_SCRIPT;
  if (script) {
    writeFileSync(join(dir, "script.json"), JSON.stringify(script));
    env.PI_FAUX_SCRIPT = join(dir, "script.json");
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(EXAMPLES, example), ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, agentDir, cwd });
    });
  });
}

describe("examples/ run against the faux model", () => {
  it("lists every example here", () => {
    expect(readdirSync(EXAMPLES).filter((f) => f.endsWith(".mjs")).sort()).toEqual([
      "01-minimal.mjs",
      "02-custom-tools.mjs",
      "03-sessions.mjs",
      "04-full-control.mjs",
      "05-extensions.mjs",
      "06-print-mode.mjs",
    ]);
  });

  it("01-minimal: streams the answer and saves the session in the agent dir", async () => {
    const r = await run("01-minimal.mjs", ["Three files."], ["What is here?"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const [answer, info] = r.stdout.split("\n");
    expect(answer).toBe("Three files.");
    expect(info).toMatch(new RegExp(`^\\(faux/faux-1, saved to ${r.agentDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/sessions/.+\\.jsonl\\)$`));
  });

  it("02-custom-tools: the model calls the custom tool; only the listed tools are active", async () => {
    const r = await run("02-custom-tools.mjs", [{ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] }, "Sunny in Oslo."]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toBe('tools: read, ls, weather\ntool weather {"city":"Oslo"}\nresult: Sunny in Oslo, 21 °C\nanswer: Sunny in Oslo.\n');
  });

  it("03-sessions: new, switch back, fork, list", async () => {
    const r = await run("03-sessions.mjs", ["Noted.", "I do not know."]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.trim().split("\n");
    const id = (prefix: string) => lines.find((l) => l.startsWith(prefix))!.match(/: (\S+) \(/)![1];
    expect(id("first session")).toBe(id("back in the first"));
    expect(id("new session")).not.toBe(id("first session"));
    // counts include the system message each session records at its first run (pi 1.6)
    expect(lines).toContain('forked: 1 messages; the forked message was "Remember the word: swordfish."');
    expect(lines).toContain("saved sessions for this folder: 2");
    expect(lines).toContain("  3 messages: Remember the word: swordfish.");
    expect(lines).toContain("  3 messages: Which word did I ask you to remember?");
    expect(lines.at(-1)).toBe("turns seen by the subscriptions: 2");
  });

  it("04-full-control: its own plugin list, tools, system prompt and scripted model", async () => {
    const r = await run("04-full-control.mjs");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toBe(
      [
        "plugins: providers, faux, tools, project-trust, permission-gate, extensions",
        "tools: read, ls",
        "system prompt starts: You are a minimal assistant. Be concise.",
        "answer: Listed the folder.",
        "tool_call ls",
        "agent_end (5 new messages)", // the run starts with pi 1.6's system message (prompt and tools)
        "diagnostics: 0",
        "",
      ].join("\n"),
    );
  });

  it("05-extensions: actions throw before binding; the host UI gets session_start's notice and the tool's status", async () => {
    const r = await run("05-extensions.mjs", [{ toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] }, "Greeted Ada."]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toBe(
      [
        "loaded: <inline:1> (inline)",
        "before binding: Extension runtime not initialized",
        "[info] greeter ready in print mode",
        "[status greeter] greeted Ada",
        "answer: Greeted Ada.",
        "",
      ].join("\n"),
    );
  });

  it("06-print-mode: the print mode prints the answer and exits 0", async () => {
    const r = await run("06-print-mode.mjs", ["Hello there."], ["Say hello"]);
    expect([r.code, r.stderr, r.stdout]).toEqual([0, "", "Hello there.\n"]);
  });
});
