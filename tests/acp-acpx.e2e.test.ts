/**
 * End to end: `pi --mode acp` driven by the third-party headless ACP client `acpx` (npm, a
 * devDependency), against the scripted model server. `--format json` prints every ACP frame.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from "@jest/globals";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";

// Each test spawns the CLI (and acpx) several times: generous limits for a busy machine.
jest.setTimeout(240_000);

// acpx is installed on first use into .cache/acpx (scripts/acpx.sh says why it is no devDependency).
let acpxDir = "";
let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  acpxBin(); // installs acpx on first use
  server = await startLlmServer({
    script: {
      turns: [
        { match: "run the command", turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi-from-terminal; exit 3" } }] }, { text: "ran it" }] },
        { match: "denied write", turns: [{ toolCalls: [{ name: "write", arguments: { path: "guarded-denied.txt", content: "no\n" } }] }, { text: "after the denied write" }] },
        { match: "guarded write", turns: [{ toolCalls: [{ name: "write", arguments: { path: "guarded.txt", content: "secret\n" } }] }, { text: "after the write" }] },
      ],
      default: { text: "default answer" },
    },
  });
  e = makeE2eEnv(server.url, { settings: { permissions: { ask: ["write(guarded*)"] } } });
  mkdirSync(join(e.root, "home"), { recursive: true });
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

function acpxBin(): string {
  if (!acpxDir) acpxDir = execFileSync("bash", [join(ROOT, "scripts", "acpx.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  const pkg = JSON.parse(readFileSync(join(acpxDir, "package.json"), "utf8")) as { bin: string | Record<string, string> };
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin.acpx!;
  return join(acpxDir, bin);
}

function runAcpx(args: string[]): Promise<{ code: number | null; frames: any[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [acpxBin(), "--agent", `${process.execPath} ${CLI} --mode acp`, "--cwd", e.cwd, "--format", "json", ...args], {
      cwd: e.cwd,
      env: { ...e.env, HOME: join(e.root, "home") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 200_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const frames = out
        .split("\n")
        .filter((l) => l.trim().startsWith("{"))
        .map((l) => JSON.parse(l));
      resolve({ code, frames, stderr: err });
    });
  });
}

const updates = (frames: any[]) => frames.filter((f) => f.method === "session/update").map((f) => f.params.update);

describe("pi --mode acp with acpx", () => {
  it("exec --approve-all: the permission request is answered allow, the write runs and completes", async () => {
    const r = await runAcpx(["--approve-all", "exec", "guarded write please"]);
    expect(r.code).toBe(0);
    const init = r.frames.find((f) => f.id === 0 && f.result?.protocolVersion);
    expect(init.result.agentInfo.name).toBe("pi");
    const ask = r.frames.find((f) => f.method === "session/request_permission");
    expect(ask.params.toolCall).toMatchObject({ kind: "edit", rawInput: { path: "guarded.txt" } });
    const answer = r.frames.find((f) => f.id === ask.id && f.result?.outcome);
    expect(answer.result.outcome).toMatchObject({ outcome: "selected" });
    expect(answer.result.outcome.optionId).toMatch(/^allow/);
    const done = updates(r.frames).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(done.content).toContainEqual({ type: "diff", path: join(e.cwd, "guarded.txt"), oldText: null, newText: "secret\n" });
    expect(readFileSync(join(e.cwd, "guarded.txt"), "utf8")).toBe("secret\n");
    // acpx advertises fs.writeTextFile: the write went through the client.
    const write = r.frames.find((f) => f.method === "fs/write_text_file");
    expect(write.params).toMatchObject({ path: join(e.cwd, "guarded.txt"), content: "secret\n" });
    expect(r.frames.find((f) => f.result?.stopReason)?.result.stopReason).toBe("end_turn");
  });

  it("exec --deny-all with --model: the model is switched by set_config_option and the denied write does not happen", async () => {
    const file = join(e.cwd, "guarded-denied.txt");
    const before = server.stats().requests.length;
    const r = await runAcpx(["--deny-all", "--model", "mock-anthropic/mock-claude", "exec", "do the denied write"]);
    const set = r.frames.find((f) => f.method === "session/set_config_option");
    expect(set.params).toMatchObject({ configId: "model", value: "mock-anthropic/mock-claude" });
    const setAnswer = r.frames.find((f) => f.id === set.id && f.result);
    expect(setAnswer.result.configOptions.find((o: any) => o.id === "model").currentValue).toBe("mock-anthropic/mock-claude");
    expect(server.stats().requests.slice(before).every((q) => q.path === "/v1/messages")).toBe(true);
    const ask = r.frames.find((f) => f.method === "session/request_permission");
    expect(ask.params.toolCall.rawInput).toEqual({ path: "guarded-denied.txt", content: "no\n" });
    const failed = updates(r.frames).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(JSON.stringify(failed.content)).toContain("did not allow");
    expect(existsSync(file)).toBe(false);
    expect(r.frames.find((f) => f.result?.stopReason)?.result.stopReason).toBe("end_turn");
  });

  it("bash runs in the client's terminal (terminal/create, embedded in the tool call) when the client offers terminals", async () => {
    const r = await runAcpx(["--approve-all", "exec", "run the command"]);
    const create = r.frames.find((f) => f.method === "terminal/create");
    expect(create.params).toMatchObject({ command: "bash", args: ["-c", "echo hi-from-terminal; exit 3"], cwd: e.cwd });
    const created = r.frames.find((f) => f.id === create.id && f.result?.terminalId);
    const terminalId = created.result.terminalId;
    const ups = updates(r.frames).filter((u) => u.sessionUpdate === "tool_call_update");
    expect(ups.some((u) => JSON.stringify(u.content ?? []).includes(terminalId))).toBe(true);
    const end = ups.find((u) => u.status === "failed");
    expect(end.rawOutput.content).toContain("hi-from-terminal");
    expect(end.rawOutput.content).toContain("Command exited with code 3");
    expect(r.frames.find((f) => f.result?.stopReason)?.result.stopReason).toBe("end_turn");
  });
});
