/**
 * End to end: session flags of the real CLI against the loopback LLM server — -c, --session,
 * --fork, --session-dir, --no-session, -r, --export — resuming messages, model and thinking
 * level, and credentials never reaching a session file or an export.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { dumpDom } from "./helpers/chromium.js";
import { Kernel } from "../core/kernel/kernel.js";
import { SettingsManager } from "../core/kernel/settings.js";
import { defineApp } from "../core/kernel/config.js";
import { createExporters } from "../plugins/export-html/index.js";

function exportFile(file: string, out: string): Promise<string> {
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0-test"), cwd: e.cwd, agentDir: e.agentDir, settings: SettingsManager.inMemory({}) });
  return createExporters(kernel).exportHtml(file, out);
}

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
});
afterAll(async () => {
  await server.close();
});

const model = (id: string, extra: Record<string, unknown> = {}) => ({ id, name: id, reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, ...extra });

/** The e2e agent dir plus a reasoning model and providers whose key comes from the environment or auth.json. */
function env(): E2eEnv {
  const x = makeE2eEnv(server.url);
  writeFileSync(
    join(x.agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: {
          baseUrl: `${server.url}/v1`,
          api: "openai-completions",
          apiKey: "MOCK_KEY_VALUE_123",
          models: [model("mock-model"), model("mock-reasoner", { reasoning: true, compat: { supportsReasoningEffort: true } })],
        },
        "mock-anthropic": { baseUrl: server.url, api: "anthropic-messages", apiKey: "MOCK_ANTHROPIC_KEY_456", models: [model("mock-claude")] },
        // the key is the value of the environment variable this names
        envkeyed: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "PI_E2E_SECRET_ENV", models: [model("env-model")] },
        // the key is in auth.json
        authkeyed: { baseUrl: `${server.url}/v1`, api: "openai-completions", models: [model("auth-model")] },
      },
    }),
  );
  return x;
}

function sessionFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...sessionFiles(p));
    else if (d.name.endsWith(".jsonl")) out.push(p);
  }
  return out.sort();
}
const fileLines = (f: string) => readFileSync(f, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const userTexts = (req: any) =>
  req.body.messages.filter((m: any) => m.role === "user").map((m: any) => (typeof m.content === "string" ? m.content : m.content.map((c: any) => c.text).join("")));

describe("session flags", () => {
  beforeEach(() => {
    e = env();
    server.setScript({ default: { text: "ok" } });
    server.reset();
  });
  afterEach(() => e.cleanup());

  it("a run is saved; -c continues the latest session with its messages; /compact compacts it", async () => {
    server.setScript({
      turns: [
        { match: "handover note", text: "SESSION SUMMARY" },
        { match: "first", text: "answer one" },
        { match: "second", text: "answer two" },
      ],
    });
    let r = await runCli(["-p", "first question"], e);
    expect(r.code).toBe(0);
    const files = sessionFiles(join(e.agentDir, "sessions"));
    expect(files).toHaveLength(1);
    r = await runCli(["-c", "-p", "second question"], e);
    expect(r.stdout).toBe("answer two\n");
    expect(sessionFiles(join(e.agentDir, "sessions"))).toEqual(files);
    const req = server.stats().requests.at(-1)!;
    expect(userTexts(req)).toEqual(["first question", "second question"]);
    expect(JSON.stringify(req.body.messages)).toContain("answer one");
    const msgs = fileLines(files[0]!).filter((l) => l.type === "message");
    expect(msgs.map((l) => l.message.role)).toEqual(["system", "user", "assistant", "user", "assistant"]); // (the first run records its prompt and tools)

    // Manual compaction from the command line (json mode shows the events).
    mkdirSync(join(e.cwd, ".pi"), { recursive: true });
    writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 3 } }));
    r = await runCli(["-c", "--mode", "json", "/compact"], e);
    expect(r.code).toBe(0);
    const events = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(events.filter((ev) => ev.type.startsWith("compaction_")).map((ev) => [ev.type, ev.reason])).toEqual([
      ["compaction_start", "manual"],
      ["compaction_end", "manual"],
    ]);
    const compactionEntry = fileLines(files[0]!).find((l) => l.type === "compaction");
    expect(compactionEntry.summary).toMatch(/^SESSION SUMMARY/);
    expect(fileLines(files[0]!).filter((l) => l.type === "message")).toHaveLength(5); // with the first run's system message
  });

  it("--session by id prefix or path; --fork makes a new file from it and leaves it unchanged", async () => {
    await runCli(["-p", "original question"], e);
    const [file] = sessionFiles(join(e.agentDir, "sessions"));
    const id = fileLines(file!)[0].id as string;
    const before = readFileSync(file!, "utf8");

    let r = await runCli(["--session", id.slice(0, 8), "-p", "via id"], e);
    expect(r.code).toBe(0);
    expect(userTexts(server.stats().requests.at(-1))).toEqual(["original question", "via id"]);
    r = await runCli(["--session", file!, "-p", "via path"], e);
    expect(userTexts(server.stats().requests.at(-1))).toEqual(["original question", "via id", "via path"]);
    const grown = readFileSync(file!, "utf8");
    expect(grown.startsWith(before)).toBe(true);

    r = await runCli(["--fork", id.slice(0, 8), "-p", "in the fork"], e);
    expect(r.code).toBe(0);
    const files = sessionFiles(join(e.agentDir, "sessions"));
    expect(files).toHaveLength(2);
    const fork = files.find((f) => f !== file)!;
    expect(fileLines(fork)[0].parentSession).toBe(file);
    expect(userTexts(server.stats().requests.at(-1))).toEqual(["original question", "via id", "via path", "in the fork"]);
    expect(readFileSync(file!, "utf8")).toBe(grown);

    r = await runCli(["--session", "ffffffff", "-p", "x"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no session with id starting "ffffffff"');
    r = await runCli(["--fork", id.slice(0, 8), "--no-session", "-p", "x"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--fork cannot be combined with --no-session");
  });

  it("--session-dir holds the files; --no-session writes none; -r outside the TUI is a clear error", async () => {
    const dir = join(e.root, "my-sessions");
    let r = await runCli(["--session-dir", dir, "-p", "stored elsewhere"], e);
    expect(r.code).toBe(0);
    expect(sessionFiles(dir)).toHaveLength(1);
    r = await runCli(["--session-dir", dir, "-c", "-p", "continued there"], e);
    expect(userTexts(server.stats().requests.at(-1))).toEqual(["stored elsewhere", "continued there"]);
    r = await runCli(["--no-session", "-p", "ephemeral"], e);
    expect(r.code).toBe(0);
    expect(sessionFiles(join(e.agentDir, "sessions"))).toEqual([]);
    r = await runCli(["-r", "-p", "x"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "pi: --resume (-r) opens an interactive session picker, which the print mode does not have; pass --session <path|id> to open a session, or -c to continue the latest one\n",
    );
  });

  it("resuming restores the model and the thinking level", async () => {
    await runCli(["--model", "mock-anthropic/mock-claude", "-p", "on claude"], e);
    server.reset();
    let r = await runCli(["-c", "-p", "still claude?"], e);
    expect(r.code).toBe(0);
    expect(server.stats().requests.map((q) => q.path)).toEqual(["/v1/messages"]);

    // A new session on a reasoning model at "high"; continuing it (settings say mock-model, no thinking) keeps both.
    await runCli(["--model", "mock/mock-reasoner", "--thinking", "high", "-p", "think hard"], e);
    server.reset();
    r = await runCli(["-c", "-p", "and again"], e);
    expect(r.code).toBe(0);
    const req = server.stats().requests[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.body.model).toBe("mock-reasoner");
    expect(req.body.reasoning_effort).toBe("high");
  });
});

describe("--export", () => {
  beforeAll(() => {
    e = env();
  });
  afterAll(() => e.cleanup());

  it("writes one page of the session that Chromium renders; errors are one clear line", async () => {
    server.setScript({ turns: [{ text: "Checking.", toolCalls: [{ name: "bash", arguments: { command: "echo exported-tool-output" } }] }, { text: "It printed exported-tool-output." }] });
    await runCli(["-p", "run the echo"], e);
    const [file] = sessionFiles(join(e.agentDir, "sessions"));
    const out = join(e.root, "export.html");
    let r = await runCli(["--export", file!, out], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Exported to ${out}\n`);
    const dom = await dumpDom(out);
    expect(dom).toContain("run the echo");
    expect(dom).toContain("bash");
    expect(dom.replace(/<[^>]+>/g, "")).toContain("echo exported-tool-output");
    expect(dom).toMatch(/<pre class="output">exported-tool-output\s*<\/pre>/); // the tool's output
    expect(dom).toContain("It printed exported-tool-output.");
    r = await runCli(["--export", join(e.root, "missing.jsonl")], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`pi: --export: File not found: ${join(e.root, "missing.jsonl")}\n`);
  });
});

describe("credentials never reach a session file or an export", () => {
  beforeEach(() => {
    e = env();
    server.reset();
  });
  afterEach(() => e.cleanup());

  /** The model makes a tool print the key, then repeats it; the user typed it too. */
  async function leakAttempt(secret: string, command: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: `The value is ${secret}.` }] });
    const r = await runCli([...args, "-p", `my key is ${secret}, print it`], e, { env: extraEnv });
    expect(r.stderr.split("\n").filter((l) => l && !l.includes('"authkeyed" defines models but no "apiKey"'))).toEqual([]);
    expect(r.code).toBe(0);
    // The tool really printed the key: the model got it in the tool result.
    const second = server.stats().requests.at(-1)!;
    expect(JSON.stringify(second.body.messages.filter((m: any) => m.role === "tool"))).toContain(secret);
    const [file] = sessionFiles(join(e.agentDir, "sessions"));
    const stored = readFileSync(file!, "utf8");
    expect(stored).not.toContain(secret);
    expect(stored).toContain("[redacted]");
    // The export (the plugin's service, as --export runs it) shows the conversation but not the key.
    const html = readFileSync(await exportFile(file!, join(e.root, "leak.html")), "utf8");
    expect(html).toContain("print it");
    expect(html).not.toContain(secret);
    expect(html).toContain("[redacted]");
  }

  it("a key from the environment", async () => {
    const secret = "sk-env-0123456789abcdef";
    await leakAttempt(secret, "echo $PI_E2E_SECRET_ENV", ["--model", "envkeyed/env-model"], { PI_E2E_SECRET_ENV: secret });
  });

  it("a key from auth.json", async () => {
    const secret = "sk-auth-fedcba9876543210";
    writeFileSync(join(e.agentDir, "auth.json"), JSON.stringify({ authkeyed: { type: "api_key", key: secret } }));
    await leakAttempt(secret, `cat ${join(e.agentDir, "auth.json")}`, ["--model", "authkeyed/auth-model"]);
  });

  it("a key given with --api-key", async () => {
    const secret = "sk-cli-00112233445566778899";
    await leakAttempt(secret, `echo ${secret}`, ["--model", "mock/mock-model", "--api-key", secret]);
  });
});
