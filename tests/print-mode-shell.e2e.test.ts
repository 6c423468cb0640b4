/**
 * Print and JSON mode as the design documents describe them, through the real CLI against the
 * scripted server: stray stdout writes of extensions never reach the answer, `---word` is a
 * message, JSON mode's exit code does not follow the model, `-c -p` re-prints the last answer.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "the answer" } } });
  e = makeE2eEnv(server.url);
  writeFileSync(
    join(e.cwd, "noisy.ts"),
    `export default function (pi) {
  console.log("NOISE-AT-LOAD");
  pi.on("session_start", () => { console.log("NOISE-AT-START"); process.stdout.write("NOISE-WRITE\\n"); });
  pi.on("agent_end", () => { console.log("NOISE-AT-END"); });
}
`,
  );
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

describe("print mode's stdout carries only the answer", () => {
  it("-p: an extension's console.log and process.stdout.write go to stderr", async () => {
    server.setScript({ default: { text: "the answer" } });
    const r = await runCli(["-e", "./noisy.ts", "-p", "hi"], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("the answer\n");
    for (const n of ["NOISE-AT-LOAD", "NOISE-AT-START", "NOISE-WRITE", "NOISE-AT-END"]) expect(r.stderr).toContain(n);
  });

  it("piped stdin without -p (print mode chosen by the missing terminal): same", async () => {
    const r = await runCli(["-e", "./noisy.ts"], e, { input: "hi" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("the answer\n");
    expect(r.stderr).toContain("NOISE-AT-START");
  });

  it("the CLI's own output still reaches stdout with pipes (--help, a subcommand)", async () => {
    const help = await runCli(["-p", "--help"], e);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage:");
    const list = await runCli(["list"], e);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("No packages installed");
  });
});

describe("print mode's arguments and exit codes", () => {
  it("-p ---word sends the word as a message", async () => {
    server.reset();
    const r = await runCli(["-p", "---word"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const user = server.stats().requests[0]!.body.messages.find((m: any) => m.role === "user");
    expect(JSON.stringify(user.content)).toContain("---word");
  });

  it("JSON mode: an error reply exits 0, the error is in the records", async () => {
    server.setScript({ default: { error: { status: 400, message: "bad request here", times: 100 } } });
    const json = await runCli(["--mode", "json", "hi"], e);
    expect(json.code).toBe(0);
    const end = jsonLines(json.stdout).find((r) => r.type === "agent_end");
    expect(JSON.stringify(end)).toContain("bad request here");
    // print (text) mode still exits 1 with the error on stderr
    const text = await runCli(["-p", "hi"], e);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("bad request here");
  });

  it("pi -c -p without a prompt prints the latest session's last answer, no model request", async () => {
    server.setScript({ default: { text: "remember this answer" } });
    const first = await runCli(["-p", "hello"], e);
    expect(first.code).toBe(0);
    server.reset();
    const again = await runCli(["-c", "-p"], e);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe("remember this answer\n");
    expect(server.stats().requests).toHaveLength(0);
  });

  it("an answer cut at the output limit warns and exits 1 (the documents; pi 1.6 exits 0 silently)", async () => {
    server.setScript({ default: { text: "cut", stopReason: "length" } });
    const r = await runCli(["-p", "x"], e);
    expect(r.stdout).toBe("cut\n");
    expect(r.stderr).toContain("cut off");
    expect(r.code).toBe(1);
  });
});
