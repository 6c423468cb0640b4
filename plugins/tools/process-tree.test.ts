import { describe, it, expect, afterEach } from "@jest/globals";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalBashOperations } from "./bash.js";
import { commandProcesses } from "./process-tree.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
};
async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("a stopped command ends the processes that left its process group", () => {
  it.each([
    ["setsid", (d: string) => `setsid sleep 300 & echo $! > ${d}/p1; wait`],
    ["setsid ignoring SIGTERM", (d: string) => `setsid sh -c 'trap "" TERM; echo $$ > ${d}/p1; while :; do sleep 1; done' & wait`],
    ["a double-fork orphan in a new session", (d: string) => `setsid sh -c 'sleep 300 & echo $! > ${d}/p1' ; sleep 300`],
    ["nohup in a new session", (d: string) => `(setsid nohup sleep 300 >/dev/null 2>&1 & echo $! > ${d}/p1); sleep 300`],
  ])("%s", async (_name, command) => {
    dir = mkdtempSync(join(tmpdir(), "pi-ptree-"));
    const ac = new AbortController();
    const run = createLocalBashOperations().exec(command(dir), dir, { onData: () => undefined, signal: ac.signal }).catch((e: Error) => e.message);
    await until(() => existsSync(join(dir, "p1")) && readFileSync(join(dir, "p1"), "utf8").trim() !== "", "the pid file");
    const pid = Number(readFileSync(join(dir, "p1"), "utf8").trim());
    expect(alive(pid)).toBe(true);
    ac.abort();
    expect(await run).toBe("aborted");
    await until(() => !alive(pid), `process ${pid} to end`);
  }, 60_000);

  it("finds nothing of other commands: only this command's marker and descendants", () => {
    expect(commandProcesses(2 ** 22 + 12345, "no-such-token")).toEqual([]);
  });
});
