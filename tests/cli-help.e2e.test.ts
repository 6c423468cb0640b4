/**
 * End to end: `pi --help` lists the options, examples and the environment variables (the app's
 * own and every built-in provider's), as pi 1.6's does — the real CLI, a throwaway agent dir.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;
beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

describe("--help", () => {
  it("has examples and the environment variables", async () => {
    const r = await runCli(["--help"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const examples = r.stdout.slice(r.stdout.indexOf("\nExamples:\n"), r.stdout.indexOf("\nEnvironment:\n"));
    expect(examples).toMatch(/# Print the answer and exit\n\s+pi -p "/);
    expect(examples).toMatch(/pi --continue /);
    expect(examples).toMatch(/pi --export session\.jsonl out\.html/);
    const env = r.stdout.slice(r.stdout.indexOf("\nEnvironment:\n"));
    for (const name of ["PI_CODING_AGENT_DIR", "PI_OFFLINE", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY", "AWS_PROFILE"]) {
      expect(env).toMatch(new RegExp(`^  ${name}\\b.*\\S`, "m"));
    }
  });

  it("names each command in one short usage, as pi 1.6 does, and how to get its own help", async () => {
    const r = await runCli(["--help"], e);
    const commands = r.stdout.slice(r.stdout.indexOf("\nCommands:\n"), r.stdout.indexOf("\n\n", r.stdout.indexOf("\nCommands:\n") + 2));
    expect(commands).toMatch(/^  pi auth <command>\s+Log in or out/m);
    expect(commands).toMatch(/^  pi mcp <command>\s+Manage MCP servers/m);
    // No usage is cut in the middle of a word to fit its column.
    for (const line of commands.split("\n").filter((l) => /^  pi /.test(l))) expect(line).toMatch(/^  pi \S.*\S {2,}\S/);
    expect(r.stdout).toMatch(/^ *pi <command> --help\s+the command's own help$/m);
    const own = await runCli(["auth", "--help"], e);
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/print-bearer-token/);
  });

  it("every example uses options the CLI knows", async () => {
    const r = await runCli(["--help"], e);
    const examples = r.stdout.slice(r.stdout.indexOf("\nExamples:\n"), r.stdout.indexOf("\nEnvironment:\n"));
    const used = [...examples.matchAll(/\s(--[a-z][a-z-]*)/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(5);
    const options = r.stdout.slice(0, r.stdout.indexOf("\nExamples:\n"));
    for (const flag of new Set(used)) expect({ flag, listed: options.includes(flag) }).toEqual({ flag, listed: true });
  });
});
