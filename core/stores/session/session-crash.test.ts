/**
 * kill -9 at random moments: a child process (tests/fixtures/sessions/crash-writer.mjs) appends
 * entries to one session file through the real SessionManager source (loaded with jiti, so no
 * build of dist/ is needed) and is killed with SIGKILL 50 times; after every kill the file must
 * reopen with every entry the child reported as written, and nothing earlier may have changed.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "./session-manager.js";
import { FIXTURES_DIR, makeTempDir } from "../../../tests/fixtures/sessions/helpers.js";

const WRITER = join(FIXTURES_DIR, "crash-writer.mjs");
const ROTATE_BYTES = 8 * 1024 * 1024;

interface Run {
  ready: boolean;
  reported: string[];
}

function runUntilKilled(child: ChildProcess, killAfterReadyMs: number | "at-once"): Promise<Run> {
  return new Promise((resolve, reject) => {
    const run: Run = { ready: false, reported: [] };
    let buf = "";
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const l = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (l === "ready") {
          run.ready = true;
          if (killAfterReadyMs !== "at-once") setTimeout(() => child.kill("SIGKILL"), killAfterReadyMs);
        } else if (l.startsWith("W ")) run.reported.push(l.slice(2));
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`writer exited with ${code ?? signal}: ${stderr}`));
      else resolve(run);
    });
    if (killAfterReadyMs === "at-once") setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 30));
  });
}

describe("crash safety under SIGKILL", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  const children = new Set<ChildProcess>();
  beforeAll(() => {
    tmp = makeTempDir("pi-session-crash-");
  });
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    tmp.cleanup();
  });

  it("reopens every file with every complete entry after 50 random kills", async () => {
    const cache = join(tmp.dir, "jiti-cache");
    let fileNo = 0;
    let file = join(tmp.dir, `s${fileNo}.jsonl`);
    let knownIds: string[] = [];
    let prevBytes = Buffer.alloc(0);
    let reportedTotal = 0;

    for (let i = 0; i < 50; i++) {
      const child = spawn(process.execPath, [WRITER, file, "300", cache], { stdio: ["ignore", "pipe", "pipe"] });
      children.add(child);
      const mode = i % 10 === 9 ? "at-once" : Math.floor(Math.random() * 40);
      const run = await runUntilKilled(child, mode);
      children.delete(child);
      reportedTotal += run.reported.length;

      if (!existsSync(file)) {
        // Killed before the first flush: nothing reported as written.
        expect(run.reported).toEqual([]);
        continue;
      }
      const bytes = readFileSync(file);
      // Append-only: everything that was there before is still there, byte for byte.
      expect(bytes.subarray(0, prevBytes.length).equals(prevBytes)).toBe(true);

      const sm = SessionManager.open(file);
      const ids = sm.getEntries().map((e) => e.id);
      const idSet = new Set(ids);
      expect(ids.slice(0, knownIds.length)).toEqual(knownIds);
      for (const id of run.reported) expect(idSet.has(id)).toBe(true);
      for (const e of sm.getEntries()) {
        expect(e.parentId === null || idSet.has(e.parentId)).toBe(true);
      }
      expect(sm.getDiagnostics().every((d) => d.level === "warning" && d.source === file)).toBe(true);
      expect(sm.getHeader()!.version).toBe(3);

      knownIds = ids;
      prevBytes = bytes;
      if (statSync(file).size > ROTATE_BYTES) {
        rmSync(file);
        file = join(tmp.dir, `s${++fileNo}.jsonl`);
        knownIds = [];
        prevBytes = Buffer.alloc(0);
      }
    }
    // The loop really wrote something. How often a kill tears a line varies by machine (about 1
    // in 12 kills here); the torn-line paths are also covered deterministically in session-file.test.ts.
    expect(reportedTotal).toBeGreaterThan(0);
    // 50 node processes in a row: on a loaded machine each start takes seconds. A guard only.
  }, 900_000);
});
