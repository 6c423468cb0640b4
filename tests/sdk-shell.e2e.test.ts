/**
 * The SDK as pi 1.6's documents and examples use it, through the package entry the build ships
 * (dist/bundle/index.js) in a child process against the scripted server: SessionManager without a
 * session folder, createAgentSessionRuntime(factory, …), no session_start before binding,
 * ctx.mode, session.subscribe (not awaited) and session.agent.subscribe (awaited), systemPrompt.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, ROOT, type E2eEnv } from "./helpers/e2e.js";

const ENTRY = join(ROOT, "dist", "bundle", "index.js");
let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "sdk answer" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

function runHost(script: string): Promise<{ code: number | null; out: any; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [resolve(ROOT, "tests/fixtures/sdk-shell", script), ENTRY], { cwd: e.cwd, env: e.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", fail);
    child.on("close", (code) => {
      const line = stdout.trim().split("\n").at(-1) ?? "";
      let out: unknown;
      try {
        out = JSON.parse(line);
      } catch {
        out = undefined;
      }
      done({ code, out, stderr });
    });
  });
}

describe("SDK sessions as pi 1.6's examples write them", () => {
  it("SessionManager.create/continueRecent/list(cwd) need no session folder; createAgentSessionRuntime takes a factory", async () => {
    const r = await runHost("sessions-example.mjs");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const sessions = join(e.agentDir, "sessions");
    expect(r.out.createdFile.startsWith(sessions)).toBe(true);
    expect(existsSync(r.out.freshFile)).toBe(true);
    expect(r.out.continuedFile).toBe(r.out.freshFile);
    expect(r.out.listed).toContain(r.out.freshFile);
    expect(r.out.newSessionDiffers).toBe(true);
    expect(r.out.switchedTo).toBe(r.out.freshFile);
  });
});

describe("the session API a host sees", () => {
  it("no session_start before bindExtensions(); ctx.mode is print; subscribe flavours; systemPrompt", async () => {
    const r = await runHost("session-api.mjs");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.out.startsBeforeBind).toBe(0);
    expect(r.out.startsAfterBind).toBe(1);
    expect(r.out.starts).toEqual(["print"]);
    expect(new Set(r.out.modes)).toEqual(new Set(["print"]));
    expect(r.out.systemPromptType).toBe("string");
    expect(r.out.systemPromptLength).toBeGreaterThan(0);
    expect(r.out.hasAgent).toBe(true);
    expect(r.out.subscribeNotAwaited).toBe(true);
    // the slow listener (subscribed first) finishes before the next listener and the next event
    expect(r.out.agentOrder).toEqual(["slow listener done", "agent_start", "turn_start"]);
  });
});
