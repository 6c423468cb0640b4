/**
 * End to end: the scripted model uses every built-in tool on a fixture project through the
 * real CLI; each tool's result reaches the next model request.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
  e = makeE2eEnv(server.url);
  mkdirSync(join(e.cwd, "src"), { recursive: true });
  writeFileSync(join(e.cwd, "src", "app.ts"), "export const greeting = 'hello';\nexport const answer = 41;\n");
  writeFileSync(join(e.cwd, ".gitignore"), "ignored/\n");
  mkdirSync(join(e.cwd, "ignored"), { recursive: true });
  writeFileSync(join(e.cwd, "ignored", "secret.ts"), "export const answer = 'hidden';\n");
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

describe("built-in tools end to end", () => {
  it("the model uses read, ls, find, grep, edit (both argument forms), write and bash", async () => {
    const calls = [
      { name: "ls", arguments: { path: "." } },
      { name: "find", arguments: { pattern: "**/*.ts" } },
      { name: "grep", arguments: { pattern: "answer" } },
      { name: "read", arguments: { path: "src/app.ts" } },
      { name: "edit", arguments: { path: "src/app.ts", edits: [{ oldText: "answer = 41", newText: "answer = 42" }] } },
      { name: "edit", arguments: { path: "src/app.ts", oldText: "'hello'", newText: "'hi'" } },
      { name: "write", arguments: { path: "out/result.txt", content: "written by the agent\n" } },
      { name: "bash", arguments: { command: "cat out/result.txt && exit 3" } },
      { name: "read", arguments: { path: "does/not/exist.ts" } },
    ];
    server.setScript({ turns: [...calls.map((c) => ({ toolCalls: [c] })), { text: "all done" }] });
    server.reset();
    const r = await runCli(["--mode", "json", "--tools", "read,bash,edit,write,grep,find,ls", "use every tool"], e);
    expect(r.code).toBe(0);
    const ends = jsonLines(r.stdout).filter((l) => l.type === "tool_execution_end");
    expect(ends.map((x) => x.toolName)).toEqual(calls.map((c) => c.name));
    const text = (i: number) => ends[i].result.content.map((c: any) => c.text).join("");
    expect(text(0)).toContain("src/");
    expect(text(1)).toContain("src/app.ts");
    expect(text(1)).not.toContain("ignored/secret.ts");
    expect(text(2)).toContain("src/app.ts");
    expect(text(2)).not.toContain("hidden");
    expect(text(3)).toContain("answer = 41");
    expect(ends[4].isError).toBe(false);
    expect(ends[4].result.details.diff).toContain("42");
    expect(ends[5].isError).toBe(false);
    expect(readFileSync(join(e.cwd, "src", "app.ts"), "utf8")).toBe("export const greeting = 'hi';\nexport const answer = 42;\n");
    expect(readFileSync(join(e.cwd, "out", "result.txt"), "utf8")).toBe("written by the agent\n");
    expect(ends[7].isError).toBe(true);
    expect(text(7)).toContain("written by the agent");
    expect(text(7)).toMatch(/exited with code 3/);
    expect(ends[8].isError).toBe(true);
    expect(text(8)).toMatch(/exist\.ts/);
    // Each result reached the model in the following request.
    const reqs = server.stats().requests;
    expect(reqs).toHaveLength(calls.length + 1);
    const lastTool = reqs.at(-1)!.body.messages.filter((m: any) => m.role === "tool");
    expect(lastTool).toHaveLength(calls.length);
  });

  it("--no-tools sends no tools; --tools picks a subset", async () => {
    server.setScript({ default: { text: "ok" } });
    server.reset();
    await runCli(["-p", "--no-tools", "hi"], e);
    expect(server.stats().requests[0]!.body.tools ?? []).toEqual([]);
    server.reset();
    await runCli(["-p", "--tools", "read,ls", "hi"], e);
    expect(server.stats().requests[0]!.body.tools.map((t: any) => t.function.name).sort()).toEqual(["ls", "read"]);
    server.reset();
    await runCli(["-p", "hi"], e);
    expect(server.stats().requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(["read", "bash", "edit", "write"]));
  });
});
