/**
 * End to end: no checkpoint git process runs between the model's answer carrying an edit call and
 * the next request to the model (git children would compete with running the call and building
 * that request): the capture before the call needs no scan, and the call's after-capture starts
 * once the model's next answer has started; its checkpoint still lands in the session.
 * A `git` on PATH that logs each call's start time and arguments shows when it ran.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli } from "./helpers/e2e.js";
import { requireProgram } from "./helpers/system.js";

let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});

describe("a tool call's after-capture", () => {
  it("starts after the next request has reached the model, and is recorded; no git runs in the tool call's gap", async () => {
    requireProgram("git", "git");
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    const e = makeE2eEnv(server.url);
    try {
      const bin = join(e.root, "bin");
      mkdirSync(bin);
      const log = join(e.root, "git.log");
      writeFileSync(join(bin, "git"), `#!/bin/sh\nprintf '%s %s\\n' "$(date +%s%3N)" "$*" >> '${log}'\nexec '${realGit}' "$@"\n`);
      chmodSync(join(bin, "git"), 0o755);
      writeFileSync(join(e.cwd, "notes.txt"), "line 1\nline 2\n");
      server.setScript({
        turns: [{ toolCalls: [{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "line 2", newText: "line two" }] } }] }, { text: "edited" }],
      });
      const from = server.stats().requests.at(-1)?.seq ?? 0;
      const r = await runCli(["-p", "edit the notes"], { ...e, env: { ...e.env, PATH: `${bin}:${e.env.PATH ?? process.env.PATH}` } });
      expect(r.stderr).not.toMatch(/checkpoints/);
      expect(r.code).toBe(0);
      expect(readFileSync(join(e.cwd, "notes.txt"), "utf8")).toBe("line 1\nline two\n");

      const requests = server.stats().requests.filter((q) => q.seq > from);
      expect(requests).toHaveLength(2);
      const nextRequestAt = requests[1]!.time;
      // The after-capture of an edit looks at its one file: `ls-files … -- :(literal)notes.txt`.
      const calls = readFileSync(log, "utf8").trim().split("\n").map((l) => ({ at: Number(l.slice(0, l.indexOf(" "))), args: l.slice(l.indexOf(" ") + 1) }));
      const after = calls.filter((c) => c.args.includes("ls-files") && c.args.includes(":(literal)notes.txt"));
      expect(after.length).toBeGreaterThan(0);
      expect(after[0]!.at).toBeGreaterThanOrEqual(nextRequestAt);
      // From the end of the answer carrying the call to the next request, no git runs at all: the
      // capture before the call finds the watcher's "nothing changed" (its watches were in place
      // before the store's first scan) and old checkpoints are counted without git.
      const toolCallSentAt = requests[0]!.endTime!;
      expect(calls.filter((c) => c.at > toolCallSentAt && c.at < nextRequestAt).map((c) => c.args)).toEqual([]);

      // The checkpoint after the edit is in the session.
      const sessionsDir = join(e.agentDir, "sessions");
      const files = readdirSync(sessionsDir, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
      expect(files).toHaveLength(1);
      const entries = readFileSync(join(sessionsDir, files[0]!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const checkpoints = entries.filter((x) => x.type === "custom" && x.customType === "checkpoint").map((x) => x.data);
      expect(checkpoints).toContainEqual(expect.objectContaining({ phase: "after", tool: "edit" }));
    } finally {
      e.cleanup();
    }
  });
});
