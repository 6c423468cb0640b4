/**
 * Extension behaviours of pi 1.6 in the non-interactive shells, through the real CLI against the
 * scripted server: a blocked tool call with `terminate: true` ends the run without another model
 * request; ctx.newSession, ctx.fork and ctx.switchSession work in print and RPC mode.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;

const EXTENSION = `export default function (pi) {
  pi.on("tool_call", (event) => {
    if (event.toolName === "bash" && String(event.input.command).includes("forbidden")) return { block: true, reason: "not allowed here", terminate: true };
  });
  const log = (...a) => console.error("EXT", ...a);
  pi.registerCommand("newsess", { description: "new session", handler: async (_a, ctx) => {
    const before = ctx.sessionManager.getSessionFile();
    const r = await ctx.newSession({ withSession: async (c) => log("with", c.sessionManager.getSessionFile() !== before) });
    log("new", JSON.stringify(r), ctx.sessionManager.getSessionFile() !== before);
  }});
  pi.registerCommand("forkfirst", { description: "fork", handler: async (_a, ctx) => {
    const first = ctx.sessionManager.getEntries().find((x) => x.type === "message" && x.message.role === "user");
    const before = ctx.sessionManager.getSessionFile();
    const r = await ctx.fork(first.id);
    log("fork", JSON.stringify(r), ctx.sessionManager.getSessionFile() !== before);
  }});
  pi.registerCommand("switchto", { description: "switch", handler: async (a, ctx) => {
    const r = await ctx.switchSession(a.trim());
    log("switch", JSON.stringify(r), ctx.sessionManager.getSessionFile());
  }});
}
`;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "fine" } } });
  e = makeE2eEnv(server.url);
  writeFileSync(join(e.cwd, "ext.ts"), EXTENSION);
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

const sessions = () => readdirSync(join(e.agentDir, "sessions"), { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));

describe("tool_call with terminate: true", () => {
  it("a blocked, terminating call ends the run: one model request", async () => {
    server.setScript({ turns: [{ text: "Trying.", toolCalls: [{ name: "bash", arguments: { command: "echo forbidden" } }] }, { text: "should not be asked" }] });
    server.reset();
    const r = await runCli(["-e", "./ext.ts", "--no-session", "--mode", "json", "try it"], e);
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(1);
    expect(r.stdout).toContain("not allowed here");
    expect(r.stdout).not.toContain("should not be asked");
  });

  it("without terminate the model is asked again", async () => {
    writeFileSync(join(e.cwd, "block.ts"), `export default function (pi) { pi.on("tool_call", () => ({ block: true, reason: "no" })); }\n`);
    server.setScript({ turns: [{ text: "Trying.", toolCalls: [{ name: "bash", arguments: { command: "echo x" } }] }, { text: "second answer" }] });
    server.reset();
    const r = await runCli(["-e", "./block.ts", "--no-session", "-p", "try it"], e);
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(2);
    expect(r.stdout).toBe("second answer\n");
  });
});

describe("session control from extension commands", () => {
  it("print mode: ctx.newSession, ctx.fork, ctx.switchSession", async () => {
    server.setScript({ default: { text: "fine" } });
    const made = await runCli(["-e", "./ext.ts", "-p", "hello", "/newsess"], e);
    expect(made.stderr).toContain("EXT with true");
    expect(made.stderr).toContain('EXT new {"cancelled":false} true');
    expect(made.code).toBe(0);
    const original = join(e.agentDir, "sessions", sessions()[0]!);
    const fork = await runCli(["-e", "./ext.ts", "--session", original, "-p", "/forkfirst"], e);
    expect(fork.stderr).toContain('EXT fork {"cancelled":false,"selectedText":"hello"} true');
    expect(fork.code).toBe(0);
    const sw = await runCli(["-e", "./ext.ts", "--no-session", "-p", `/switchto ${original}`], e);
    expect(sw.stderr).toContain(`EXT switch {"cancelled":false} ${original}`);
    expect(sw.code).toBe(0);
  });

  it("RPC mode: the commands switch the session the server then reports", async () => {
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, args: ["-e", "./ext.ts"] });
    await client.start();
    try {
      await client.promptAndWait("hello over rpc");
      const first = (await client.getState()).sessionFile;
      expect(await client.prompt("/newsess")).toBe("handled");
      const second = (await client.getState()).sessionFile;
      expect(second).not.toBe(first);
      expect(await client.getMessages()).toEqual([]);
      expect(await client.prompt(`/switchto ${first}`)).toBe("handled");
      expect((await client.getState()).sessionFile).toBe(first);
      expect(await client.prompt("/forkfirst")).toBe("handled");
      const forked = await client.getState();
      expect(forked.sessionFile).not.toBe(first);
      expect(client.getStderr()).toContain('EXT fork {"cancelled":false,"selectedText":"hello over rpc"} true');
    } finally {
      await client.stop();
    }
  });
});
