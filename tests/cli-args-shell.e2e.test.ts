/**
 * Command-line behaviours of pi 1.6 through the real CLI against the scripted server: --mode text
 * in a terminal opens the TUI, --model prefers providers with credentials, --provider needs
 * --model, --fork with --session-id names the fork, PI_CODING_AGENT_SESSION_DIR, and a -p prompt
 * an extension command consumes exits 0.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "cli answer" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

const sessionFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl")) : []);

describe("--mode text", () => {
  const socket = `cli-args-shell-${process.pid}`;
  const driver = tmuxDriver(socket, () => ({ ...e.env, TMUX: "", LANG: "C.UTF-8" }), () => join(e.root, "tui-err.log"));
  afterAll(() => driver.kill());

  it("in a terminal opens the TUI (the default output mode), and still prints when piped", async () => {
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' --mode text 2>'${join(e.root, "tui-err.log")}'; echo EXIT=$?; sleep 60`;
    driver.tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd);
    const screen = await driver.waitFor(/mock\/mock-model/);
    expect(screen).not.toContain("EXIT=");
    driver.kill();
    const piped = await runCli(["--mode", "text", "hi"], e);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe("cli answer\n");
  });
});

describe("model and provider flags", () => {
  it("--model matching several providers picks the one with credentials; --provider alone is an error", async () => {
    const keyed = makeE2eEnv(server.url);
    const models = JSON.parse(readFileSync(join(keyed.agentDir, "models.json"), "utf8"));
    // "aaa-nokey" sorts first and has no key: catalog order must not decide.
    models.providers["aaa-nokey"] = { baseUrl: `${server.url}/v1`, api: "openai-completions", models: [{ id: "mock-model", name: "mock-model", input: ["text"], contextWindow: 128000, maxTokens: 4096 }] };
    writeFileSync(join(keyed.agentDir, "models.json"), JSON.stringify(models));
    try {
      for (const pattern of ["mock-model", "mock-mod"]) {
        const r = await runCli(["--mode", "json", "--no-session", "--model", pattern, "hi"], keyed);
        expect(r.code).toBe(0);
        const end = jsonLines(r.stdout).find((x) => x.type === "message_end" && x.message.role === "assistant");
        expect(end.message.provider).toBe("mock");
      }
      const alone = await runCli(["-p", "--provider", "mock", "hi"], keyed);
      expect(alone.code).toBe(1);
      expect(alone.stderr).toContain("--provider requires --model");
    } finally {
      keyed.cleanup();
    }
  });
});

describe("codemode and tool_search, pi 1.6's built-in tools", () => {
  const names = (req: any): string[] => (req.body.tools ?? []).map((t: any) => t.function?.name ?? t.name);

  it("are inactive by default, on with --tools +codemode,+tool_search, absent with -ne; codemode runs a script calling bash", async () => {
    server.setScript({ default: { text: "fine" } });
    server.reset();
    expect((await runCli(["--no-session", "-p", "hi"], e)).code).toBe(0);
    expect(names(server.stats().requests[0])).toEqual(["read", "bash", "edit", "write"]);

    server.setScript({
      turns: [{ toolCalls: [{ name: "codemode", arguments: { code: 'const out = await tools.bash({ command: "echo hi-from-codemode" }); return out;' } }] }, { text: "script done" }],
    });
    server.reset();
    const on = await runCli(["--no-session", "--tools", "+codemode,+tool_search", "-p", "run a script"], e);
    expect(on.code).toBe(0);
    expect(on.stdout).toBe("script done\n");
    const reqs = server.stats().requests;
    expect(names(reqs[0])).toEqual(expect.arrayContaining(["read", "bash", "edit", "write", "codemode", "tool_search"]));
    expect(JSON.stringify(reqs[1]!.body.messages.filter((m: any) => m.role === "tool"))).toContain("hi-from-codemode");

    server.setScript({ default: { text: "fine" } });
    server.reset();
    const off = await runCli(["--no-session", "-ne", "--tools", "+codemode", "-p", "hi"], e);
    expect(off.code).toBe(0);
    expect(off.stderr).toContain('unknown tool "codemode"');
    expect(names(server.stats().requests[0])).not.toContain("codemode");
  });
});

describe("sessions from the command line", () => {
  it("--fork with --session-id names the fork; the same id again is refused", async () => {
    const first = await runCli(["-p", "first"], e);
    expect(first.code).toBe(0);
    const root = join(e.agentDir, "sessions");
    const source = join(root, sessionFiles(root)[0]!);
    const fork = await runCli(["--fork", source, "--session-id", "named-fork-1", "-p", "second"], e);
    expect(fork.stderr).toBe("");
    expect(fork.code).toBe(0);
    const forked = sessionFiles(root).find((f) => f.endsWith("_named-fork-1.jsonl"));
    expect(forked).toBeDefined();
    const header = JSON.parse(readFileSync(join(root, forked!), "utf8").split("\n")[0]!);
    expect(header).toMatchObject({ type: "session", id: "named-fork-1", parentSession: source });
    const again = await runCli(["--fork", source, "--session-id", "named-fork-1", "-p", "third"], e);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("named-fork-1");
  });

  it("PI_CODING_AGENT_SESSION_DIR stands for --session-dir", async () => {
    const dir = join(e.root, "env-sessions");
    mkdirSync(dir);
    const r = await runCli(["-p", "into the env folder"], e, { env: { PI_CODING_AGENT_SESSION_DIR: dir } });
    expect(r.code).toBe(0);
    expect(readdirSync(dir).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);
  });
});

describe("a -p prompt an extension command consumes", () => {
  it("exits 0 without an answer or a model request", async () => {
    writeFileSync(join(e.cwd, "cmd-ext.ts"), `export default function (pi) { pi.registerCommand("hello", { description: "says hello", handler: async (args) => { console.error("HANDLED " + args); } }); }\n`);
    server.reset();
    const r = await runCli(["-e", "./cmd-ext.ts", "--no-session", "-p", "/hello there"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("HANDLED there");
    expect(server.stats().requests).toHaveLength(0);
  });
});
