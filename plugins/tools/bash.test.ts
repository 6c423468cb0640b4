import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBashTool, type BashOperations, type BashToolDetails } from "./bash.js";
import type { AgentToolResult } from "../../core/kernel/index.js";
import { alive, errorOf } from "../../tests/helpers/processes.js";
import { waitUntil } from "../../tests/helpers/system.js";

let dir: string;
const tempFiles: string[] = [];
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-bash-")));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const f of tempFiles.splice(0)) rmSync(f, { force: true });
});

type Result = AgentToolResult<BashToolDetails | undefined>;
const text = (r: Result) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const run = (command: string, extra: Record<string, unknown> = {}, opts?: Parameters<typeof createBashTool>[1], signal?: AbortSignal, onUpdate?: (r: Result) => void) =>
  createBashTool(dir, opts).execute("id", { command, ...extra } as any, signal, onUpdate as any, undefined);

describe("bash: running commands", () => {
  it("returns stdout and stderr together, run in the project folder", async () => {
    const r = await run("pwd; echo to-err >&2");
    expect(text(r)).toBe(`${dir}\nto-err\n`);
    expect(r.details).toBeUndefined();
  });

  it("says when there is no output", async () => {
    expect(text(await run("true"))).toBe("(no output)");
  });

  it("reports a non-zero exit as an error with the code and the output", async () => {
    const msg = await errorOf(run("echo partial; exit 3"));
    expect(msg).toBe("partial\n\nCommand exited with code 3");
  });

  it("reports a shell killed by a signal", async () => {
    expect(await errorOf(run("kill -9 $$"))).toContain("Command was killed by signal SIGKILL");
  });

  it("uses the configured shell, prefix and spawn hook", async () => {
    expect(text(await run("echo $0", {}, { shellPath: "/bin/sh" }))).toBe("/bin/sh\n");
    expect(text(await run("echo $GREETING", {}, { commandPrefix: "GREETING=hi-there" }))).toBe("hi-there\n");
    const hooked = await run("echo $FROM_HOOK", {}, { spawnHook: (c) => ({ ...c, env: { ...c.env, FROM_HOOK: "hooked" } }) });
    expect(text(hooked)).toBe("hooked\n");
  });

  it("reports a missing shell clearly", async () => {
    expect(await errorOf(run("echo x", {}, { shellPath: join(dir, "no-such-shell") }))).toContain("The configured shell (shellPath) does not exist");
  });

  it("strips terminal colour codes and control characters", async () => {
    expect(text(await run("printf '\\033[31mred\\033[0m \\001\\002bin\\000ary\\n'"))).toBe("red binary\n");
  });

  it("rejects an empty command and a bad timeout", async () => {
    expect(await errorOf(run("  "))).toMatch(/needs a command/);
    expect(await errorOf(run("echo", { timeout: -1 }))).toMatch(/timeout must be a positive number/);
  });
});

describe("bash: streaming", () => {
  it("streams partial output while the command runs", async () => {
    const updates: string[] = [];
    const r = await run("for i in 1 2 3; do echo tick$i; sleep 0.3; done", {}, undefined, undefined, (u) => updates.push(text(u)));
    expect(text(r)).toBe("tick1\ntick2\ntick3\n");
    const early = updates.find((u) => u.includes("tick1"));
    expect(early).toBeDefined();
    expect(early).not.toContain("tick3");
  });

  it("throttles updates instead of sending one per chunk", async () => {
    const ops: BashOperations = {
      async exec(_command, _cwd, { onData }) {
        for (let i = 0; i < 1000; i++) onData(Buffer.from(`chunk ${i}\n`));
        return { exitCode: 0 };
      },
    };
    let updates = 0;
    const r = await run("anything", {}, { operations: ops }, undefined, () => updates++);
    expect(text(r)).toContain("chunk 999");
    expect(updates).toBeGreaterThanOrEqual(1);
    expect(updates).toBeLessThan(10);
  });
});

describe("bash: limits", () => {
  it("keeps the last 2000 lines and saves the full output to a temp file", async () => {
    const r = await run("seq 1 5000");
    const t = text(r);
    const path = r.details?.fullOutputPath;
    expect(path).toBeDefined();
    tempFiles.push(path!);
    expect(path!.startsWith(tmpdir())).toBe(true);
    expect(t).toContain(`Full output: ${path}]`);
    expect(t).toMatch(/\[Showing lines \d+-5001 of 5001\. Full output:/);
    expect(t).toContain("\n5000\n");
    expect(t.split("\n")[0]).toBe("3002");
    expect(r.details?.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 5001 });
    const full = readFileSync(path!, "utf8");
    expect(full.split("\n")).toHaveLength(5001);
    expect(full.startsWith("1\n2\n3\n")).toBe(true);
  });

  it("keeps the end of a single 10 MB line", async () => {
    const r = await run("head -c 10485760 /dev/zero | tr '\\0' 'a'; printf END");
    const t = text(r);
    tempFiles.push(r.details!.fullOutputPath!);
    expect(r.details?.truncation?.lastLinePartial).toBe(true);
    expect(t).toMatch(/^a+END\n\n\[Showing the last 50\.0KB of line 1 \(the line is 10\.0MB\)\. Full output: /);
    expect(readFileSync(r.details!.fullOutputPath!, "utf8")).toHaveLength(10485763);
  });
});

describe("bash: timeout and abort", () => {
  it("stops a command at its timeout", async () => {
    // 5 s: long enough for a loaded machine to start bash and echo, far short of the sleep.
    const msg = await errorOf(run("echo started; sleep 20", { timeout: 5 }));
    expect(msg).toBe("started\n\nCommand timed out after 5 seconds");
  });

  it("kills the whole process tree on abort", async () => {
    const ac = new AbortController();
    let seen = "";
    const pending = run("sleep 30 & echo bg=$!; sleep 31 & echo fg=$!; wait", {}, undefined, ac.signal, (u) => {
      seen = text(u);
    });
    await waitUntil(() => /bg=\d+/.test(seen) && /fg=\d+/.test(seen), "both pids in the output");
    const pids = [...seen.matchAll(/(?:bg|fg)=(\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    ac.abort();
    const msg = await errorOf(pending);
    expect(msg).toMatch(/Command aborted$/);
    await waitUntil(() => !pids.some(alive), "both processes to end");
  });

  it("kills processes that ignore SIGTERM after a grace period", async () => {
    const ac = new AbortController();
    let seen = "";
    const pending = run("trap '' TERM; sleep 30 & echo bg=$!; wait", {}, undefined, ac.signal, (u) => {
      seen = text(u);
    });
    await waitUntil(() => /bg=\d+/.test(seen), "the pid in the output");
    const pid = Number(/bg=(\d+)/.exec(seen)![1]);
    ac.abort();
    expect(await errorOf(pending)).toMatch(/Command aborted$/);
    await waitUntil(() => !alive(pid), "the process to end");
  });

  it("does not start when already aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    const marker = join(dir, "ran");
    expect(await errorOf(run(`touch ${marker}`, {}, undefined, ac.signal))).toBe("Command aborted");
    expect(existsSync(marker)).toBe(false);
  });
});
