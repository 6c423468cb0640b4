/**
 * End to end: a run that ends early leaves no git process of the checkpoint store behind and no
 * broken store. A reader that goes away (`| head -c 1`) ends pi while the project's first
 * capture runs; SIGTERM ends it while a capture's git child is at work; a lock left by a writer
 * that died (pi or git killed) does not stop the next run's captures.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});

/** Processes whose command line names `dir` (git runs with --git-dir=<store>). */
function processesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (cmd.includes(dir)) found.push(`${pid}: ${cmd}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

/** A project big enough that its first capture takes a while. */
function bigProject(e: E2eEnv, files = 3000): void {
  for (let i = 0; i < files; i++) {
    const d = join(e.cwd, "src", `d${i % 50}`);
    if (i < 50) mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
}

function storeOf(e: E2eEnv): string | undefined {
  const base = join(e.agentDir, "checkpoints");
  const dirs = existsSync(base) ? readdirSync(base) : [];
  return dirs.length ? join(base, dirs[0]!) : undefined;
}

function checkpointEntries(e: E2eEnv): Array<{ data: { phase: string; tool?: string } }> {
  const sessions = join(e.agentDir, "sessions");
  const out: Array<{ data: { phase: string; tool?: string } }> = [];
  for (const d of existsSync(sessions) ? readdirSync(sessions) : []) {
    for (const f of readdirSync(join(sessions, d))) {
      for (const line of readFileSync(join(sessions, d, f), "utf8").split("\n").filter(Boolean)) {
        const entry = JSON.parse(line) as { type: string; customType?: string; data: { phase: string; tool?: string } };
        if (entry.type === "custom" && entry.customType === "checkpoint") out.push(entry);
      }
    }
  }
  return out;
}

describe("checkpoints when a run ends early", () => {
  it("a reader that goes away ends pi without leaving a git process or files being written under the agent dir (repeated)", () => {
    for (let round = 0; round < 4; round++) {
      server.setScript({ turns: [{ text: "word ", repeat: 2000, chunkSize: 20 }] });
      const e = makeE2eEnv(server.url);
      try {
        bigProject(e);
        const r = spawnSync("bash", ["-c", `"${process.execPath}" "${CLI}" --mode json hi | head -c 1; echo " rc=\${PIPESTATUS[0]}"`], { cwd: e.cwd, env: e.env, encoding: "utf8" });
        expect(r.stdout).toBe("{ rc=1\n");
        expect(r.stderr).toBe("");
        // pi has exited: nothing of it may still run against the store.
        expect(processesUnder(e.agentDir)).toEqual([]);
        // The agent dir can be removed at once (no retries: nothing writes into it any more).
        rmSync(e.agentDir, { recursive: true });
      } finally {
        e.cleanup();
      }
    }
  }, 240_000);

  it("SIGTERM during a capture ends its git child; the next run captures into the same store", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo changed > src/d0/f0.txt" } }] }, { text: "done" }] });
    const e = makeE2eEnv(server.url);
    try {
      bigProject(e);
      const child = spawn(process.execPath, [CLI, "-p", "--tools", "bash", "change a file"], { cwd: e.cwd, env: e.env, stdio: ["ignore", "pipe", "pipe"] });
      let exited = false;
      const closed = new Promise<void>((r) =>
        child.on("close", () => {
          exited = true;
          r();
        }),
      );
      // A git child of the store is registered under <store>/writers while it runs.
      const writing = () => {
        const s = storeOf(e);
        return s !== undefined && existsSync(join(s, "writers")) && readdirSync(join(s, "writers")).length > 0;
      };
      while (!writing()) {
        if (exited) throw new Error("pi ended before a capture started");
        await new Promise((r) => setTimeout(r, 5)); // (polling the condition)
      }
      child.kill("SIGTERM");
      await closed;
      expect(processesUnder(e.agentDir)).toEqual([]);
      expect(readdirSync(join(storeOf(e)!, "writers"))).toEqual([]);
      // The next run works in the same store: its write is captured and recorded.
      server.setScript({ turns: [{ toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "new\n" } }] }, { text: "done" }] });
      const r = await runCli(["-p", "--tools", "write", "write a file"], e);
      expect(r.stderr).not.toMatch(/checkpoints/);
      expect(r.code).toBe(0);
      expect(checkpointEntries(e).some((c) => c.data.tool === "write" && c.data.phase === "after")).toBe(true);
      expect(processesUnder(e.agentDir)).toEqual([]);
    } finally {
      e.cleanup();
    }
  }, 120_000);

  it("a lock left by a writer that died is removed, and the run's captures go on", async () => {
    server.setScript({ turns: [{ toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "one\n" } }] }, { text: "done" }] });
    const e = makeE2eEnv(server.url);
    try {
      const r1 = await runCli(["-p", "--tools", "write", "first"], e);
      expect(r1.code).toBe(0);
      const store = storeOf(e)!;
      // A git child killed with SIGKILL leaves its lock, and its registration, behind.
      const dead = spawnSync("true").pid;
      writeFileSync(join(store, "writers", String(dead)), "1");
      writeFileSync(join(store, "index.lock"), "");
      server.setScript({ turns: [{ toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "two\n" } }] }, { text: "done" }] });
      const r2 = await runCli(["-p", "--tools", "write", "second"], e);
      expect(r2.stderr).not.toMatch(/checkpoints/);
      expect(r2.code).toBe(0);
      expect(existsSync(join(store, "index.lock"))).toBe(false);
      const trees = checkpointEntries(e).filter((c) => c.data.tool === "write" && c.data.phase === "after");
      expect(trees).toHaveLength(2);
      expect(readdirSync(join(store, "writers"))).toEqual([]);
    } finally {
      e.cleanup();
    }
  }, 120_000);
});
