/**
 * End to end: a file another process changes between two bash calls of one run (while the model
 * answers the first call's result) is in the capture before the second call — the project's
 * watcher reports it, so it is neither missed nor taken for the second call's change — and the
 * checkpoint's tree has its bytes.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli } from "./helpers/e2e.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterAll(async () => {
  await server.close();
});

describe("checkpoints: an outside edit between two bash calls", () => {
  it("is captured before the second call, with its content, apart from that call's own change", async () => {
    server.setScript({
      turns: [
        { toolCalls: [{ name: "bash", arguments: { command: "echo first > one.txt" } }] },
        // The model's answer to the first result waits before its first word (before it starts the
        // second call) until the test has edited the project.
        { gate: "between", gateAfterChunks: 0, text: "Next.", toolCalls: [{ name: "bash", arguments: { command: "echo second > two.txt" } }] },
        { text: "done" },
      ],
    });
    const e = makeE2eEnv(server.url);
    try {
      writeFileSync(join(e.cwd, "keep.txt"), "original\n");
      const run = runCli(["-p", "--tools", "bash", "run two commands"], e);
      await waitUntil(() => server.held("between"), "the answer to the first bash call to wait at the gate");
      execFileSync("sh", ["-c", "echo outside > keep.txt && mkdir -p ext && echo new > ext/made.txt"], { cwd: e.cwd });
      server.release("between");
      const r = await run;
      expect(r.stderr).not.toMatch(/checkpoints/);
      expect(r.code).toBe(0);

      const store = join(e.agentDir, "checkpoints", readdirSync(join(e.agentDir, "checkpoints"))[0]!);
      const git = (...args: string[]) => execFileSync("git", [`--git-dir=${store}`, ...args], { encoding: "utf8" });
      const sessions = join(e.agentDir, "sessions");
      const dir = join(sessions, readdirSync(sessions)[0]!);
      const entries = readFileSync(join(dir, readdirSync(dir)[0]!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const cps = entries.filter((l) => l.type === "custom" && l.customType === "checkpoint").map((l) => l.data as { tree: string; phase: string; tool?: string });
      const files = (tree: string) => git("ls-tree", "-r", "--name-only", tree).split("\n").filter(Boolean);

      // A capture holds the outside edit and not yet the second call's file.
      const between = cps.filter((c) => files(c.tree).includes("ext/made.txt") && !files(c.tree).includes("two.txt"));
      expect(between).toHaveLength(1);
      expect(git("show", `${between[0]!.tree}:keep.txt`)).toBe("outside\n");
      expect(git("show", `${between[0]!.tree}:ext/made.txt`)).toBe("new\n");
      expect(git("show", `${between[0]!.tree}:one.txt`)).toBe("first\n");
      // The last capture is the files as the run left them.
      const last = cps.at(-1)!;
      expect(files(last.tree)).toEqual(expect.arrayContaining(["ext/made.txt", "keep.txt", "one.txt", "two.txt"]));
      expect(git("show", `${last.tree}:keep.txt`)).toBe("outside\n");
    } finally {
      e.cleanup();
    }
  }, 120_000);
});
