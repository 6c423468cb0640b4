/**
 * The protocol promises hold for every binary built on the kernel, not only `pi`: the same cases
 * run against the `pi` binary and against a custom CLI freshly scaffolded with `pi new cli`
 * (its node_modules/pi-kernel linked to this checkout, as `npm install` of its `file:` dependency
 * does). Both start through runBinary() (sdk/binary.ts). Needs a fresh build.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, jsonLines, makeE2eEnv, ROOT, type E2eEnv } from "./helpers/e2e.js";

const root = mkdtempSync(join(tmpdir(), "pi-custom-cli-"));
const MYCLI = join(root, "mycli");
let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
  const created = spawnSync(process.execPath, [CLI, "new", "cli", MYCLI], { cwd: root, encoding: "utf8" });
  expect([created.status, created.stderr]).toEqual([0, ""]);
  mkdirSync(join(MYCLI, "node_modules"));
  symlinkSync(ROOT, join(MYCLI, "node_modules", "pi-kernel"), "dir");
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** An extension that prints to stdout at load, in its factory, in a handler, in its tool and in its command. */
const LOUD = `
console.log("NOISE-AT-LOAD");
process.stdout.write("NOISE-WRITE-AT-LOAD\\n");
export default function (pi) {
  console.log("NOISE-IN-FACTORY");
  pi.on("session_start", () => { console.log("NOISE-IN-SESSION-START"); });
  pi.registerTool({
    name: "loud_tool",
    label: "Loud tool",
    description: "Answers LOUD-TOOL-OK",
    parameters: { type: "object", properties: {} },
    async execute() {
      console.log("NOISE-IN-TOOL");
      return { content: [{ type: "text", text: "LOUD-TOOL-OK" }], details: {} };
    },
  });
  pi.registerCommand("loud", {
    description: "Notifies LOUD-COMMAND-RAN",
    handler: async (_args, ctx) => {
      console.log("NOISE-IN-COMMAND");
      ctx.ui.notify("LOUD-COMMAND-RAN", "info");
    },
  });
}
`;
const NOISES = ["NOISE-AT-LOAD", "NOISE-WRITE-AT-LOAD", "NOISE-IN-FACTORY", "NOISE-IN-SESSION-START"];

interface Binary {
  name: string;
  bin: string;
  agentDirEnv: string;
}
const BINARIES: Binary[] = [
  { name: "pi", bin: CLI, agentDirEnv: "PI_CODING_AGENT_DIR" },
  { name: "mycli (pi new cli)", bin: join(MYCLI, "bin", "cli.js"), agentDirEnv: "MYCLI_CODING_AGENT_DIR" },
];

function envFor(b: Binary): E2eEnv {
  const e = makeE2eEnv(server.url);
  e.env[b.agentDirEnv] = e.agentDir;
  writeFileSync(join(e.cwd, "loud.ts"), LOUD);
  return e;
}

function run(b: Binary, args: string[], e: E2eEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [b.bin, ...args], { cwd: e.cwd, env: e.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every line is JSON and the first byte starts a record. */
function expectOnlyJson(stdout: string): void {
  expect(stdout.startsWith("{")).toBe(true);
  for (const l of stdout.split("\n").filter(Boolean)) expect(() => JSON.parse(l)).not.toThrow();
}

describe.each(BINARIES)("$name: the protocol promises", (b) => {
  it("--mode json: stdout is the protocol only; the extension's noise goes to stderr; its tool runs", async () => {
    const e = envFor(b);
    try {
      server.setScript({ turns: [{ toolCalls: [{ name: "loud_tool", arguments: {} }] }, { text: "all done" }] });
      const r = await run(b, ["--mode", "json", "--no-session", "-e", "./loud.ts", "use the tool"], e);
      expect([r.code, r.stderr]).toEqual([0, expect.stringContaining("NOISE-IN-TOOL")]);
      expectOnlyJson(r.stdout);
      for (const n of [...NOISES, "NOISE-IN-TOOL"]) {
        expect(r.stdout).not.toContain(n);
        expect(r.stderr).toContain(n);
      }
      const end = jsonLines(r.stdout).find((l) => l.type === "tool_execution_end");
      expect([end?.toolName, end?.result.content[0].text]).toEqual(["loud_tool", "LOUD-TOOL-OK"]);
    } finally {
      e.cleanup();
    }
  }, 90000);

  it("--mode rpc: the first byte is a record; the extension's command runs and its noise goes to stderr", async () => {
    const e = envFor(b);
    try {
      const child = spawn(process.execPath, [b.bin, "--mode", "rpc", "--no-session", "-e", "./loud.ts"], { cwd: e.cwd, env: e.env, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (c) => (out += c));
      child.stderr.on("data", (c) => (err += c));
      const closed = new Promise<number | null>((r) => child.on("close", r));
      child.stdin.write(JSON.stringify({ id: "s1", type: "get_state" }) + "\n");
      child.stdin.write(JSON.stringify({ id: "p1", type: "prompt", message: "/loud" }) + "\n");
      for (let i = 0; i < 1200 && !(out.includes('"id":"s1"') && out.includes("LOUD-COMMAND-RAN") && err.includes("NOISE-IN-COMMAND")); i++) await new Promise((r) => setTimeout(r, 50));
      child.stdin.end();
      expect(await closed).toBe(0);
      expectOnlyJson(out);
      const records = jsonLines(out);
      expect(records.find((l) => l.id === "s1")?.success).toBe(true);
      expect(records.some((l) => l.type === "extension_ui_request" && l.method === "notify" && l.message === "LOUD-COMMAND-RAN")).toBe(true);
      for (const n of [...NOISES, "NOISE-IN-COMMAND"]) {
        expect(out).not.toContain(n);
        expect(err).toContain(n);
      }
    } finally {
      e.cleanup();
    }
  }, 90000);

  it("a reader that goes away (`| head`) is a normal end; json mode ends as pi's does, without a stack trace", async () => {
    const e = envFor(b);
    try {
      // rpc-schema prints ~190 KB: more than a pipe holds, so the write after head exits fails (EPIPE).
      const schema = spawnSync("bash", ["-c", `"${process.execPath}" "${b.bin}" rpc-schema | head -c 10; echo " rc=\${PIPESTATUS[0]}"`], { cwd: e.cwd, env: e.env, encoding: "utf8" });
      expect([schema.stdout, schema.stderr]).toEqual(['{\n  "$sche rc=0\n', ""]);
      // A long streamed answer in json mode: hundreds of KB of message_update records.
      server.setScript({ turns: [{ text: "word ", repeat: 2000, chunkSize: 20 }] });
      const json = spawnSync("bash", ["-c", `"${process.execPath}" "${b.bin}" --mode json --no-session hi | head -c 1; echo " rc=\${PIPESTATUS[0]}"`], { cwd: e.cwd, env: e.env, encoding: "utf8" });
      expect([json.stdout, json.stderr]).toEqual(["{ rc=1\n", ""]);
    } finally {
      e.cleanup();
    }
  }, 90000);

  it("exit codes: 0 done, 1 a failed run, 2 a usage error", async () => {
    const e = envFor(b);
    try {
      server.setScript({ turns: [{ text: "fine" }] });
      const ok = await run(b, ["-p", "--no-session", "hi"], e);
      expect([ok.code, ok.stdout]).toEqual([0, "fine\n"]);
      const badModel = await run(b, ["-p", "--no-session", "--model", "nope/nope", "hi"], e);
      expect(badModel.code).toBe(1);
      expect(badModel.stderr).toContain("nope");
      expect(badModel.stderr).not.toMatch(/\n\s+at /);
      const usage = await run(b, ["--no-such-flag"], e);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("--no-such-flag");
    } finally {
      e.cleanup();
    }
  }, 90000);
});

describe("mycli: its own extension is built in", () => {
  it("the team_info tool (json) and the /team command (rpc) of src/extension.js", async () => {
    const b = BINARIES[1]!;
    const e = envFor(b);
    try {
      server.setScript({ turns: [{ toolCalls: [{ name: "team_info", arguments: {} }] }, { text: "ok" }] });
      const r = await run(b, ["--mode", "json", "--no-session", "which agent?"], e);
      expect(r.code).toBe(0);
      const end = jsonLines(r.stdout).find((l) => l.type === "tool_execution_end");
      expect(end?.result.content[0].text).toBe("This is mycli; project settings live in .mycli/");
      const rpc = spawnSync(process.execPath, [b.bin, "--mode", "rpc", "--no-session"], {
        cwd: e.cwd,
        env: e.env,
        encoding: "utf8",
        input: JSON.stringify({ id: "t1", type: "prompt", message: "/team" }) + "\n",
      });
      expect(rpc.status).toBe(0);
      expect(jsonLines(rpc.stdout).some((l) => l.type === "extension_ui_request" && l.message === "You are using mycli")).toBe(true);
      // The scaffold names its binary after the folder.
      expect(JSON.parse(readFileSync(join(MYCLI, "package.json"), "utf8")).bin).toEqual({ mycli: "bin/cli.js" });
    } finally {
      e.cleanup();
    }
  }, 90000);
});
