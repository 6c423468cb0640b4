/**
 * End to end: every subcommand and flag fed bad input answers with one line naming the thing
 * (a flag value, a missing file, a malformed settings file, a session id…) and never a stack
 * trace — the real CLI, the loopback model server, a throwaway agent dir.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

jest.setTimeout(300_000);

let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
});
afterAll(async () => {
  await server.close();
});

/** A stack frame line as Node prints them. */
const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;

interface Case {
  args: string[];
  /** What the error line must say (it names the thing). */
  says: RegExp;
  /** Files written into the agent dir or project before the run (relative path → content). */
  agent?: Record<string, string>;
  project?: Record<string, string>;
  /** Exit code; default non-zero. */
  code?: number;
}

const CASES: Case[] = [
  // Flags with bad values, missing files, bad ids.
  { args: ["--bogus-flag"], says: /unknown option --bogus-flag/ },
  { args: ["--mode", "bogus"], says: /--mode "bogus"/ },
  { args: ["--tui-mode", "bogus", "-p", "hi"], says: /--tui-mode "bogus" is not one of fullscreen, regular/ },
  { args: ["--sandbox", "bogus", "-p", "hi"], says: /--sandbox "bogus"/ },
  { args: ["--model", "nosuch/model", "-p", "hi"], says: /Model "nosuch\/model" not found/ },
  { args: ["--thinking", "bogus", "-p", "hi"], says: /--thinking: invalid thinking level "bogus" ignored; valid values: off, minimal, low, medium, high, xhigh, max/, code: 0 },
  { args: ["--session", "nosuchid", "-p", "hi"], says: /no session with id starting "nosuchid"/ },
  { args: ["--session", "/nope/x.jsonl", "-p", "hi"], says: /session file not found: \/nope\/x\.jsonl/ },
  { args: ["--session-id", "bad id!", "-p", "hi"], says: /--session-id "bad id!"/ },
  { args: ["--mode", "json", "--session", "nosuchid", "hi"], says: /no session with id starting "nosuchid"/ },
  { args: ["--mode", "rpc", "--session", "nosuchid"], says: /no session with id starting "nosuchid"/ },
  { args: ["--export"], says: /--export: name the session file/ },
  { args: ["--export", "/nope/x.jsonl"], says: /--export: File not found: \/nope\/x\.jsonl/ },
  { args: ["--export", "notes.txt"], project: { "notes.txt": "hello\n" }, says: /notes\.txt is not a session file/ },
  { args: ["@/nope/file.txt", "-p", "hi"], says: /@\/nope\/file\.txt: file not found/ },
  { args: ["-e", "/nope/ext.ts", "-p", "hi"], says: /\/nope\/ext\.ts: extension not found/, code: 0 },
  { args: ["--skill", "/nope/skill", "-p", "hi"], says: /\/nope\/skill: skill path does not exist/, code: 0 },
  // Malformed files: named with the place of the mistake, the run goes on.
  { args: ["-p", "hi"], agent: { "settings.json": '{"defaultProvider": "mock",' }, says: /settings\.json: malformed JSON at line \d+, column \d+/, code: 0 },
  { args: ["-p", "hi"], project: { ".pi/settings.json": "[1" }, says: /\.pi\/settings\.json: cannot load project settings: malformed JSON at line \d+, column \d+/, code: 0 },
  { args: ["-p", "hi"], agent: { "models.json": "{bad" }, says: /models\.json: malformed JSON at line 1, column 2/ },
  { args: ["-p", "hi"], agent: { "auth.json": "{bad" }, says: /auth\.json: malformed JSON at line 1, column 2/, code: 0 },
  { args: ["-p", "hi"], agent: { "mcp.json": "{bad" }, says: /mcp\.json: malformed JSON at line 1, column 2/, code: 0 },
  { args: ["--help"], agent: { "keybindings.json": "{bad" }, says: /^pi \S+ - a coding agent/, code: 0 },
  // Subcommands.
  { args: ["install"], says: /pi install: usage: pi install <source>/ },
  { args: ["install", "/nope/pkg"], says: /pi install: \/nope\/pkg: \/nope\/pkg does not exist/ },
  { args: ["remove", "nosuch"], says: /pi remove: no package matching nosuch/ },
  { args: ["update", "nosuch"], says: /pi update: no package matching nosuch/ },
  { args: ["config", "bogus"], says: /pi config: unknown action "bogus"/ },
  { args: ["config", "enable", "x"], says: /pi config: usage: pi config enable/ },
  { args: ["mcp", "bogus"], says: /pi mcp: unknown command "mcp bogus"/ },
  { args: ["mcp", "add"], says: /pi mcp: "mcp add" needs a server name/ },
  { args: ["mcp", "remove", "nosuch"], says: /pi mcp: no MCP server "nosuch"/ },
  { args: ["mcp", "get", "nosuch"], says: /pi mcp: no MCP server "nosuch"/ },
  { args: ["mcp", "list"], agent: { "mcp.json": "{bad" }, says: /mcp\.json: malformed JSON/ },
  { args: ["hooks", "bogus"], says: /pi hooks: unknown action "bogus"/ },
  { args: ["new", "bogus", "somewhere"], says: /pi new: unknown kind "bogus"/ },
  { args: ["new", "extension"], says: /pi new extension: name the folder/ },
  { args: ["auth", "bogus"], says: /Unknown auth command "bogus"/ },
  { args: ["auth", "login"], says: /Usage: pi auth login <provider>/ },
  { args: ["auth", "login", "anthropic"], says: /signing in to anthropic needs an interactive terminal/ },
  { args: ["auth", "login", "mock", "--api-key"], says: /no API key given for mock; nothing saved/ },
  { args: ["auth", "check"], says: /require --provider <provider> or --model <model>/ },
  { args: ["auth", "print-api-key", "--provider", "nosuch"], says: /Unknown provider "nosuch"/ },
  { args: ["auth", "print-bearer-token", "--provider", "mock"], says: /Provider "mock" is not configured with an OAuth bearer token/ },
  { args: ["auth", "check", "--bogus"], says: /--bogus/ },
  { args: ["rpc-schema", "extra"], says: /rpc-schema takes no arguments/ },
];

function write(dir: string, files: Record<string, string> | undefined): void {
  for (const [rel, text] of Object.entries(files ?? {})) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

describe("bad input gets one line naming the thing, never a stack trace", () => {
  for (const c of CASES) {
    const name = `${c.args.join(" ")}${c.agent ? ` (agent: ${Object.keys(c.agent).join(", ")})` : ""}${c.project ? ` (project: ${Object.keys(c.project).join(", ")})` : ""}`;
    it(name, async () => {
      const e: E2eEnv = makeE2eEnv(server.url);
      try {
        write(e.agentDir, c.agent);
        write(e.cwd, c.project);
        const r = await runCli(c.args, e, { input: "" });
        const all = `${r.stderr}\n${r.stdout}`;
        expect(all).not.toMatch(STACK);
        expect(all).not.toMatch(/\b(TypeError|ReferenceError|SyntaxError|RangeError)\b/);
        const line = all.split("\n").find((l) => c.says.test(l));
        // The naming line is there, on one line of its own.
        expect({ found: line !== undefined, stderr: r.stderr, stdout: r.stdout.slice(0, 400) }).toMatchObject({ found: true });
        if (c.code === undefined) expect(r.code).not.toBe(0);
        else expect(r.code).toBe(c.code);
      } finally {
        e.cleanup();
      }
    });
  }
});
