/**
 * End to end: the OS sandbox (plugins/sandbox, bubblewrap) through the real CLI and the scripted
 * model. Print/JSON mode (no UI: blocked calls fail closed), a missing or unusable bubblewrap
 * (start-up errors), and the escalation dialog over RPC (Yes and No).
 *
 * Paths "outside" live in a folder outside /tmp and $TMPDIR (mkdtempOutsideTmp: the home folder,
 * or /var/tmp when HOME is itself under /tmp): those are writable in workspace-write, so a
 * throwaway folder there would not be outside.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient, type RpcEvent } from "../sdk/rpc-client.js";
import { mkdtempOutsideTmp, requireProgram } from "./helpers/system.js";


let server: LlmServer;
let e: E2eEnv;
let outside: string;
let loopback: Server;
let port = 0;
let connections = 0;
const extraDirs: string[] = [];

const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
const connectScript = () =>
  `'${process.execPath}' -e "const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('CONNECTED-OK');s.end();}).on('error',(e)=>{console.log('CONNECT-FAILED '+e.code);process.exit(1)})"`;

function script() {
  return {
    turns: [
      { match: "touch-outside", turns: [bash(`touch '${join(outside, "from-bash")}'`), { text: "done" }] },
      { match: "touch-inside", turns: [bash("touch ./inside && echo INSIDE-OK"), { text: "done" }] },
      { match: "touch-agent", turns: [bash(`touch '${join(e.agentDir, "planted")}'`), { text: "done" }] },
      { match: "connect-loopback", turns: [bash(connectScript()), { text: "done" }] },
      { match: "write-outside", turns: [{ toolCalls: [{ name: "write", arguments: { path: join(outside, "from-write.txt"), content: "x" } }] }, { text: "done" }] },
      { match: "write-inside", turns: [{ toolCalls: [{ name: "write", arguments: { path: "notes.txt", content: "inside" } }] }, { text: "done" }] },
      { match: "rpc-yes", turns: [bash(`touch '${join(outside, "rpc-yes")}'`), { text: "done" }] },
      { match: "rpc-no", turns: [bash(`touch '${join(outside, "rpc-no")}'`), { text: "done" }] },
    ],
    default: { text: "nothing scripted" },
  };
}

/** A pi extension whose /exec-touch runs `touch <path>` through pi.exec and reports the result. */
const EXEC_EXTENSION = `
export default function (pi) {
  pi.registerCommand("exec-touch", {
    description: "touch a file through pi.exec",
    handler: async (args) => {
      const r = await pi.exec("touch", [args.trim()]);
      pi.sendMessage({ customType: "exec-result", content: JSON.stringify({ code: r.code, stderr: r.stderr }), display: true });
    },
  });
}
`;

/** The text of each tool result in a JSON-mode run. */
function toolResults(stdout: string): Array<{ text: string; isError: boolean }> {
  return jsonLines(stdout)
    .filter((ev) => ev.type === "tool_execution_end")
    .map((ev) => ({ text: (ev.result?.content ?? []).map((c: any) => c.text ?? "").join(""), isError: ev.isError === true }));
}

async function runJson(prompt: string, args: string[] = ["--sandbox", "workspace-write"], env: NodeJS.ProcessEnv = {}) {
  const r = await runCli(["--mode", "json", "--no-session", ...args, prompt], e, { env, timeoutMs: 60_000 });
  return { ...r, results: toolResults(r.stdout) };
}

describe("OS sandbox (bubblewrap)", () => {
  requireProgram("bwrap", "bubblewrap");
  beforeAll(async () => {
    outside = mkdtempOutsideTmp(".pi-sandbox-e2e-");
    loopback = createServer((sock) => {
      connections++;
      sock.end();
    });
    await new Promise<void>((r) => loopback.listen(0, "127.0.0.1", () => r()));
    port = (loopback.address() as { port: number }).port;
    server = await startLlmServer({ script: { default: { text: "x" } } });
    e = makeE2eEnv(server.url);
    await fetch(`${server.url}/__script`, { method: "POST", body: JSON.stringify(script()) });
  });
  afterAll(async () => {
    await new Promise((r) => loopback?.close(r));
    await server?.close();
    e?.cleanup();
    if (outside) rmSync(outside, { recursive: true, force: true });
    for (const d of extraDirs) rmSync(d, { recursive: true, force: true });
  });

  describe("workspace-write without a UI", () => {
    it("a bash write outside the project fails with the sandbox message and leaves no file", async () => {
      const r = await runJson("touch-outside");
      expect(r.code).toBe(0);
      expect(r.results).toHaveLength(1);
      expect(r.results[0]!.isError).toBe(true);
      expect(r.results[0]!.text).toContain("Read-only file system");
      expect(r.results[0]!.text).toContain("[sandbox] The sandbox blocked a write outside the workspace");
      expect(r.results[0]!.text).toContain("sandbox.writableRoots");
      expect(r.results[0]!.text).toContain("Running outside the sandbox is off");
      expect(existsSync(join(outside, "from-bash"))).toBe(false);
    });

    it("a bash write inside the project works", async () => {
      const r = await runJson("touch-inside");
      expect(r.results[0]).toEqual({ text: expect.stringContaining("INSIDE-OK"), isError: false });
      expect(existsSync(join(e.cwd, "inside"))).toBe(true);
    });

    it("the agent dir stays read-only", async () => {
      const r = await runJson("touch-agent");
      expect(r.results[0]!.isError).toBe(true);
      expect(r.results[0]!.text).toContain("[sandbox]");
      expect(existsSync(join(e.agentDir, "planted"))).toBe(false);
    });

    it("the same command runs unconfined with --sandbox off", async () => {
      const r = await runJson("touch-agent", ["--sandbox", "off"]);
      expect(r.results[0]!.isError).toBe(false);
      expect(existsSync(join(e.agentDir, "planted"))).toBe(true);
      rmSync(join(e.agentDir, "planted"));
    });

    it("a connection to a loopback server fails with the network off", async () => {
      const before = connections;
      const r = await runJson("connect-loopback");
      expect(r.results[0]!.isError).toBe(true);
      expect(r.results[0]!.text).toContain("CONNECT-FAILED");
      expect(r.results[0]!.text).toContain("[sandbox] The sandbox has no network access");
      expect(connections).toBe(before);
    });

    it("the write tool outside the project is refused by the same policy; inside it writes", async () => {
      const r = await runJson("write-outside");
      expect(r.results[0]!.isError).toBe(true);
      expect(r.results[0]!.text).toContain("[sandbox] The sandbox (workspace-write) does not allow this write");
      expect(r.results[0]!.text).toContain("outside the writable folders");
      expect(existsSync(join(outside, "from-write.txt"))).toBe(false);
      const ok = await runJson("write-inside");
      expect(ok.results[0]!.isError).toBe(false);
      expect(readFileSync(join(e.cwd, "notes.txt"), "utf8")).toBe("inside");
    });
  });

  it("with sandbox.network true the loopback connection succeeds", async () => {
    const settingsFile = join(e.agentDir, "settings.json");
    const original = readFileSync(settingsFile, "utf8");
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(original), sandbox: { level: "workspace-write", network: true } }));
    try {
      const before = connections;
      // The level comes from settings this time (no flag).
      const r = await runJson("connect-loopback", []);
      expect(r.results[0]).toEqual({ text: expect.stringContaining("CONNECTED-OK"), isError: false });
      expect(connections).toBe(before + 1);
    } finally {
      writeFileSync(settingsFile, original);
    }
  });

  describe("start-up", () => {
    it("without bwrap on PATH, enabling the sandbox is an error naming the package", async () => {
      const empty = mkdtempSync(join(e.root, "nopath-"));
      const r = await runCli(["--sandbox", "workspace-write", "-p", "touch-inside"], e, { env: { PATH: empty }, timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('needs bubblewrap, and no "bwrap" was found on PATH');
      expect(r.stderr).toContain('install the package "bubblewrap"');
      expect(r.stdout).not.toContain("INSIDE-OK");
    });

    it("an unusable bwrap (no namespaces) is an error saying why", async () => {
      const dir = mkdtempSync(join(e.root, "fakebwrap-"));
      const fake = join(dir, "bwrap");
      writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
      chmodSync(fake, 0o755);
      const r = await runCli(["-p", "touch-inside"], e, { env: { PATH: `${dir}:${process.env.PATH}` }, timeoutMs: 60_000 });
      // Without the flag or the setting, the sandbox is off and bwrap is never run.
      expect(r.code).toBe(0);
      const r2 = await runCli(["--sandbox", "read-only", "-p", "touch-inside"], e, { env: { PATH: `${dir}:${process.env.PATH}` }, timeoutMs: 60_000 });
      expect(r2.code).toBe(1);
      expect(r2.stderr).toContain("could not create a sandbox here");
      expect(r2.stderr).toContain("No permissions to create new namespace");
      expect(r2.stderr).toContain("user namespaces");
    });

    it("an unknown level is a usage error", async () => {
      const r = await runCli(["--sandbox", "sometimes", "-p", "hi"], e, { timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--sandbox "sometimes" is not one of read-only, workspace-write, off');
    });
  });

  describe("escalation over RPC", () => {
    let client: RpcClient;
    let answer = false;
    const asked: any[] = [];
    const seen: RpcEvent[] = [];
    let extension = "";
    let settingsBefore = "";
    beforeAll(async () => {
      extension = join(e.root, "exec-ext.mjs");
      writeFileSync(extension, EXEC_EXTENSION);
      const settingsFile = join(e.agentDir, "settings.json");
      settingsBefore = readFileSync(settingsFile, "utf8");
      writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(settingsBefore), sandbox: { allowEscalation: true } }));
      client = new RpcClient({
        cliPath: CLI,
        cwd: e.cwd,
        env: e.env,
        inheritEnv: false,
        args: ["--no-session", "--sandbox", "workspace-write", "-e", extension],
        // Confirms every confirm: it must not answer the escalation, which has its own request.
        onExtensionUiRequest: (req) => {
          asked.push(req);
          return req.method === "confirm" ? true : undefined;
        },
        onSandboxEscalation: (req) => {
          asked.push(req);
          return answer;
        },
      });
      client.onEvent((ev) => seen.push(ev));
      await client.start();
    });
    afterAll(async () => {
      await client?.stop();
      if (settingsBefore) writeFileSync(join(e.agentDir, "settings.json"), settingsBefore);
    });

    const resultText = (events: RpcEvent[]) =>
      events
        .filter((ev: any) => ev.type === "tool_execution_end")
        .map((ev: any) => (ev.result?.content ?? []).map((c: any) => c.text ?? "").join(""))
        .join("\n");

    it("Yes: the blocked command runs again outside the sandbox", async () => {
      answer = true;
      asked.length = 0;
      const events = await client.promptAndWait("rpc-yes");
      expect(asked.filter((r) => r.method === "confirm")).toHaveLength(0);
      const dialogs = asked.filter((r) => r.method === "sandbox_escalation");
      expect(dialogs).toHaveLength(1);
      expect(dialogs[0]).toMatchObject({ title: "Run outside the sandbox?", kind: "command", toolName: "bash" });
      expect(dialogs[0].command).toContain("touch");
      expect(resultText(events)).toContain("The user allowed this command to run outside the sandbox");
      expect(existsSync(join(outside, "rpc-yes"))).toBe(true);
    });

    it("No: the command stays blocked and says so", async () => {
      answer = false;
      asked.length = 0;
      const events = await client.promptAndWait("rpc-no");
      expect(asked.filter((r) => r.method === "sandbox_escalation")).toHaveLength(1);
      const text = resultText(events);
      expect(text).toContain("[sandbox] The sandbox blocked a write outside the workspace");
      expect(text).toContain("The user did not allow running it outside the sandbox");
      expect(existsSync(join(outside, "rpc-no"))).toBe(false);
    });

    it("a user command (RPC bash, like !cmd) runs in the sandbox and says why it failed", async () => {
      const r: any = await client.bash(`touch '${join(outside, "user-bash")}'`);
      expect(r.exitCode).not.toBe(0);
      expect(r.output).toContain("Read-only file system");
      expect(r.output).toContain("[sandbox] The sandbox blocked a write outside the workspace");
      expect(existsSync(join(outside, "user-bash"))).toBe(false);
      const ok: any = await client.bash("touch ./user-inside && echo USER-INSIDE-OK");
      expect(ok.exitCode).toBe(0);
      expect(existsSync(join(e.cwd, "user-inside"))).toBe(true);
    });

    it("an extension's pi.exec runs in the sandbox", async () => {
      const target = join(outside, "exec-touch");
      expect(await client.prompt(`/exec-touch ${target}`)).toBe("handled");
      const deadline = Date.now() + 30_000;
      let report: any;
      while (!report && Date.now() < deadline) {
        report = seen.find((ev: any) => ev.type === "message_end" && ev.message?.customType === "exec-result");
        if (!report) await new Promise((r) => setTimeout(r, 50));
      }
      expect(report).toBeDefined();
      const result = JSON.parse(report.message.content);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("Read-only file system");
      expect(existsSync(target)).toBe(false);
    });

    it("the sandbox level is sent as a status for the client's footer", () => {
      const status = seen.find((ev: any) => ev.type === "extension_ui_request" && ev.method === "setStatus" && ev.statusKey === "sandbox");
      expect(status).toMatchObject({ statusText: "sandbox: workspace-write" });
    });
  });
});
