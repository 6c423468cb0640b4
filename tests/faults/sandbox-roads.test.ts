/**
 * Attacks on `--sandbox workspace-write` by the other roads: every way a command runs (hooks, MCP
 * stdio servers, an ACP client's terminal), the in-process file tools (dangling links, links
 * swapped in after the check), and "Run outside the sandbox?" answered by something that is not
 * a person (an auto-confirming RPC client, an ACP client approving every permission request).
 *
 * Each case proves the direct action blocked first where it can, then tries the escape; the host
 * is checked afterwards. Agent dir and project live outside /tmp (mkdtempOutsideTmp).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { ClientSideConnection, ndJsonStream, type Client } from "@agentclientprotocol/sdk";
import { startLlmServer, type LlmServer } from "../fixtures/llm-server.mjs";
import { isInside } from "../../plugins/sandbox/policy.js";
import { CLI, ROOT, jsonLines, makeE2eEnv, runCli, spawnCli, type E2eEnv } from "../helpers/e2e.js";
import { RpcClient } from "../../sdk/rpc-client.js";
import { mkdtempOutsideTmp, requireProgram, waitUntil } from "../helpers/system.js";

let server: LlmServer;
let e: E2eEnv;
let outside: string;
let project: string;
let agentDir: string;
let baseSettings: Record<string, unknown>;

const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

function results(stdout: string): Array<{ name: string; text: string; isError: boolean }> {
  return jsonLines(stdout)
    .filter((ev) => ev.type === "tool_execution_end")
    .map((ev) => ({ name: ev.toolName, text: (ev.result?.content ?? []).map((c: any) => c.text ?? "").join(""), isError: ev.isError === true }));
}

async function script(name: string, turns: unknown[]) {
  await fetch(`${server.url}/__script`, { method: "POST", body: JSON.stringify({ turns: [{ match: name, turns: [...turns, { text: "done" }] }], default: { text: "nothing scripted" } }) });
}

const env = () => ({ ...e.env, PI_CODING_AGENT_DIR: agentDir });

function settings(extra: Record<string, unknown>) {
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ ...baseSettings, ...extra }));
}

async function attack(name: string, turns: unknown[], args: string[] = []) {
  await script(name, turns);
  const r = await runCli(["--mode", "json", "--no-session", "--sandbox", "workspace-write", ...args, name], { cwd: project, env: env() }, { timeoutMs: 120_000 });
  return { ...r, results: results(r.stdout) };
}

/** An extension tool that runs one at a time: on the old code it makes the loop run the whole message in order, after checking every call first. */
const SEQUENTIAL_TOOL = `
export default function (pi) {
  pi.registerTool({
    name: "settle",
    label: "settle",
    description: "does nothing, one at a time",
    parameters: { type: "object", properties: {} },
    executionMode: "sequential",
    async execute() { return { content: [{ type: "text", text: "settled" }] }; },
  });
}
`;

describe("sandbox roads, file tools and escalation (workspace-write)", () => {
  requireProgram("bwrap", "bubblewrap");
  let seqExt = "";
  beforeAll(async () => {
    outside = mkdtempOutsideTmp(".pi-sandbox-roads-");
    project = join(outside, "project");
    agentDir = join(outside, "agent");
    mkdirSync(project);
    mkdirSync(agentDir);
    server = await startLlmServer({ script: { default: { text: "x" } } });
    e = makeE2eEnv(server.url);
    writeFileSync(join(agentDir, "models.json"), readFileSync(join(e.agentDir, "models.json")));
    baseSettings = JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8"));
    settings({});
    seqExt = join(outside, "settle.mjs");
    writeFileSync(seqExt, SEQUENTIAL_TOOL);
  });
  afterAll(async () => {
    await server?.close();
    e?.cleanup();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  describe("every way a command runs goes through the sandbox", () => {
    it("hook commands (cc-hooks) run inside it", async () => {
      settings({
        hooks: {
          PostToolUse: [{ matcher: "*", hooks: [{ type: "command", command: `touch '${join(project, "hook-inside")}'; touch '${join(outside, "hook-outside")}'; touch '${join(agentDir, "hook-agent")}'` }] }],
          SessionStart: [{ hooks: [{ type: "command", command: `echo x > '${join(outside, "hook-start")}'` }] }],
        },
      });
      try {
        const r = await attack("hooks", [bash("echo ran")]);
        expect(r.results[0]!.text).toContain("ran");
        await waitUntil(() => existsSync(join(project, "hook-inside")), "the hook to run inside the sandbox");
        expect(existsSync(join(outside, "hook-outside"))).toBe(false);
        expect(existsSync(join(agentDir, "hook-agent"))).toBe(false);
        expect(existsSync(join(outside, "hook-start"))).toBe(false);
      } finally {
        settings({});
      }
    });

    it("MCP stdio servers run inside it, with their own env but not the user's keys", async () => {
      const stdio = join(ROOT, "tests", "fixtures", "mcp", "stdio-server.mjs");
      settings({
        // The fixture server and its MCP SDK live in this checkout; a checkout under /tmp (a CI
        // clone) is behind the sandbox's private /tmp, so it is made visible for this case.
        ...(isInside(ROOT, "/tmp") ? { sandbox: { ...(baseSettings as { sandbox?: object }).sandbox, writableRoots: [ROOT] } } : {}),
        // The model calls the tools directly: mcp.toolMode set, so they are declared.
        mcp: { connectTimeoutMs: 120_000, toolMode: "auto" },
        mcpServers: {
          inside: { command: process.execPath, args: [stdio, "--call-log", join(project, "mcp-inside.log")], env: { SERVER_OWN_TOKEN: "server-own-token-0001" } },
          escape: { command: process.execPath, args: [stdio, "--name", "escape", "--call-log", join(outside, "mcp-outside.log")] },
        },
      });
      try {
        await script("mcp", [
          { toolCalls: [call("mcp__inside__echo", { text: "hello" })] },
          { toolCalls: [call("mcp__escape__echo", { text: "out" })] },
          { toolCalls: [call("mcp__inside__env", { name: "SERVER_OWN_TOKEN" })] },
          { toolCalls: [call("mcp__inside__env", { name: "OPENAI_API_KEY" })] },
        ]);
        const r = await runCli(["--mode", "json", "--no-session", "--sandbox", "workspace-write", "mcp"], { cwd: project, env: env() }, { env: { OPENAI_API_KEY: "sk-user-key-for-mcp-0002" }, timeoutMs: 120_000 });
        const res = results(r.stdout);
        expect(res.length).toBe(4);
        expect(existsSync(join(project, "mcp-inside.log"))).toBe(true);
        expect(existsSync(join(outside, "mcp-outside.log"))).toBe(false);
        expect(res[2]!.text).toContain("server-own-token-0001");
        expect(res[3]!.text).not.toContain("sk-user-key-for-mcp-0002");
      } finally {
        settings({});
      }
    });

    it("an ACP client offering terminals and file writes: bash and write stay local and sandboxed", async () => {
      await script("acp-terminal", [
        bash(`touch '${join(outside, "acp-bash")}'`),
        { toolCalls: [call("write", { path: join(outside, "acp-write.txt"), content: "x" })] },
      ]);
      const child = spawnCli(["--mode", "acp", "--sandbox", "workspace-write"], { cwd: project, env: env() });
      child.stderr!.on("data", () => {});
      const terminals: string[] = [];
      const writes: string[] = [];
      const client: Client = {
        async requestPermission(req) {
          // An approve-all client.
          const allow = req.options.find((o) => o.kind.startsWith("allow"));
          return { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } };
        },
        async sessionUpdate() {},
        async writeTextFile(req) {
          writes.push(req.path);
          writeFileSync(req.path, req.content);
          return {};
        },
        async createTerminal(req) {
          // Like an editor: runs it on the host, unconfined.
          terminals.push(req.command);
          const p = spawn(req.command, req.args ?? [], { cwd: req.cwd ?? project, stdio: "ignore" });
          const id = `t${terminals.length}`;
          exits.set(id, new Promise((res) => p.on("exit", (code) => res(code))));
          return { terminalId: id };
        },
        async waitForTerminalExit(req) {
          return { exitCode: (await exits.get(req.terminalId)) as number };
        },
        async terminalOutput() {
          return { output: "", truncated: false };
        },
        async killTerminal() {
          return {};
        },
        async releaseTerminal() {
          return {};
        },
      };
      const exits = new Map<string, Promise<unknown>>();
      const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>);
      const conn = new ClientSideConnection(() => client, stream);
      try {
        await conn.initialize({ protocolVersion: 1, clientCapabilities: { terminal: true, fs: { readTextFile: true, writeTextFile: true } } });
        const s = await conn.newSession({ cwd: project, mcpServers: [] });
        await conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "acp-terminal" }] });
        expect(terminals).toEqual([]);
        expect(writes).toEqual([]);
        expect(existsSync(join(outside, "acp-bash"))).toBe(false);
        expect(existsSync(join(outside, "acp-write.txt"))).toBe(false);
      } finally {
        child.kill("SIGKILL");
      }
    });
  });

  describe("in-process file tools cannot be raced or redirected", () => {
    it("a write to a dangling link the sandboxed bash made (into the agent dir's extensions) is refused", async () => {
      const target = join(agentDir, "extensions", "planted.ts");
      // As on most machines, the global extensions folder exists.
      mkdirSync(join(agentDir, "extensions"), { recursive: true });
      const r = await attack("dangling", [
        bash(`touch '${target}' 2>&1; echo direct=$?`),
        bash(`ln -s '${target}' link.ts && ln -s link.ts chain.ts && ln -s '${join(agentDir, "extensions")}' extdir && ln -s '${join(agentDir, "new-dir")}' newdir && echo LINKED`),
        { toolCalls: [call("write", { path: "link.ts", content: "export default () => {}" })] },
        { toolCalls: [call("write", { path: "chain.ts", content: "export default () => {}" })] },
        { toolCalls: [call("write", { path: "sub/../link.ts", content: "export default () => {}" })] },
        { toolCalls: [call("write", { path: "newdir/x.ts", content: "export default () => {}" })] },
        { toolCalls: [call("write", { path: "extdir/y.ts", content: "export default () => {}" })] },
      ]);
      expect(r.results[0]!.text).toContain("direct=1");
      expect(r.results[1]!.text).toContain("LINKED");
      for (const w of r.results.slice(2)) {
        expect(w.isError).toBe(true);
        expect(w.text).toContain("[sandbox]");
      }
      expect(existsSync(target)).toBe(false);
      expect(existsSync(join(agentDir, "new-dir"))).toBe(false);
      expect(existsSync(join(agentDir, "extensions", "x.ts"))).toBe(false);
      expect(existsSync(join(agentDir, "extensions", "y.ts"))).toBe(false);
    });

    it("a file or folder swapped for a link after the check is caught when the write runs", async () => {
      writeFileSync(join(project, "victim.txt"), "checked");
      mkdirSync(join(project, "folder"), { recursive: true });
      writeFileSync(join(project, "folder", "f.txt"), "checked");
      const outFile = join(outside, "swapped-target.txt");
      const outDir = join(outside, "swapped-dir");
      mkdirSync(outDir, { recursive: true });
      writeFileSync(outFile, "ORIGINAL");
      writeFileSync(join(outDir, "f.txt"), "ORIGINAL");
      const r = await attack(
        "swap",
        [
          // One message: every call is checked first (all inside the project), then they run.
          {
            toolCalls: [
              call("bash", { command: `rm victim.txt && ln -s '${outFile}' victim.txt && mv folder folder.real && ln -s '${outDir}' folder && echo SWAPPED` }),
              call("write", { path: "victim.txt", content: "ESCAPED" }),
              call("edit", { path: "folder/f.txt", edits: [{ oldText: "ORIGINAL", newText: "ESCAPED" }] }),
              call("settle", {}),
            ],
          },
        ],
        ["-e", seqExt],
      );
      expect(r.results.find((x) => x.name === "bash")!.text).toContain("SWAPPED");
      const w = r.results.find((x) => x.name === "write")!;
      const ed = r.results.find((x) => x.name === "edit")!;
      expect(w.isError).toBe(true);
      expect(ed.isError).toBe(true);
      expect(readFileSync(outFile, "utf8")).toBe("ORIGINAL");
      expect(readFileSync(join(outDir, "f.txt"), "utf8")).toBe("ORIGINAL");
    });

    it("tool calls of one message run in turn with the sandbox on (no write during a command)", async () => {
      writeFileSync(join(project, "race.txt"), "checked");
      const outFile = join(outside, "race-target.txt");
      writeFileSync(outFile, "ORIGINAL");
      const r = await attack("race", [
        {
          toolCalls: [
            // The command reads the file a while after it started: a write of the same message running
            // alongside (as before) would already have landed; run in turn, it has not.
            call("bash", { command: `sleep 0.5; echo "seen=$(cat race.txt)"; rm race.txt && ln -s '${outFile}' race.txt; echo SWAPPED` }),
            call("write", { path: "race.txt", content: "WRITTEN" }),
            call("write", { path: "race.txt", content: "WRITTEN-AGAIN" }),
          ],
        },
      ]);
      const b = r.results.find((x) => x.name === "bash")!;
      expect(b.text).toContain("seen=checked");
      expect(b.text).toContain("SWAPPED");
      for (const w of r.results.filter((x) => x.name === "write")) expect(w.isError).toBe(true);
      expect(readFileSync(outFile, "utf8")).toBe("ORIGINAL");
    });
  });

  describe("escalation is its own request, answered only by a person", () => {
    const touchOutside = (f: string) => bash(`touch '${join(outside, f)}'`);

    it("off by default: a UI that confirms everything is not even asked", async () => {
      await script("esc-default", [touchOutside("esc-default")]);
      const confirms: unknown[] = [];
      const client = new RpcClient({
        cliPath: CLI,
        cwd: project,
        env: env(),
        inheritEnv: false,
        args: ["--no-session", "--sandbox", "workspace-write"],
        onExtensionUiRequest: (req) => {
          confirms.push(req);
          return req.method === "confirm" ? true : req.method === "select" ? "Yes" : undefined;
        },
      });
      await client.start();
      try {
        const events = await client.promptAndWait("esc-default");
        const text = events.filter((ev: any) => ev.type === "tool_execution_end").map((ev: any) => JSON.stringify(ev.result)).join("");
        expect(text).toContain("Running outside the sandbox is off");
        expect(confirms.filter((r: any) => r.method === "confirm" || r.method === "sandbox_escalation")).toHaveLength(0);
        expect(existsSync(join(outside, "esc-default"))).toBe(false);
      } finally {
        await client.stop();
      }
    });

    it("allowed in settings: an auto-confirming RPC client (every confirm yes, every dialog answered) does not escalate", async () => {
      settings({ sandbox: { allowEscalation: true } });
      await script("esc-auto", [touchOutside("esc-auto"), { toolCalls: [call("write", { path: join(outside, "esc-auto-write.txt"), content: "x" })] }]);
      const seen: any[] = [];
      const client = new RpcClient({
        cliPath: CLI,
        cwd: project,
        env: env(),
        inheritEnv: false,
        args: ["--no-session", "--sandbox", "workspace-write"],
        onExtensionUiRequest: (req) => {
          seen.push(req);
          return { confirmed: true, value: "Yes" };
        },
      });
      client.onEvent((ev: any) => {
        // A client that answers every request it sees with yes, by hand too.
        if (ev.type === "extension_ui_request" && ev.method === "sandbox_escalation") client.respondToUiRequest(ev.id, { confirmed: true, value: "allow" });
      });
      await client.start();
      try {
        await client.promptAndWait("esc-auto");
        expect(existsSync(join(outside, "esc-auto"))).toBe(false);
        expect(existsSync(join(outside, "esc-auto-write.txt"))).toBe(false);
        expect(seen.filter((r) => r.method === "confirm")).toHaveLength(0);
      } finally {
        await client.stop();
        settings({});
      }
    });

    it("allowed in settings: an ACP client approving every permission request (and its auto-approve mode) does not escalate", async () => {
      settings({ sandbox: { allowEscalation: true } });
      await script("esc-acp", [touchOutside("esc-acp")]);
      const child = spawnCli(["--mode", "acp", "--sandbox", "workspace-write"], { cwd: project, env: env() });
      child.stderr!.on("data", () => {});
      const permissions: unknown[] = [];
      const client: Client = {
        async requestPermission(req) {
          permissions.push(req);
          const allow = req.options.find((o) => o.kind.startsWith("allow"));
          return { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } };
        },
        async sessionUpdate() {},
      };
      const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>);
      const conn = new ClientSideConnection(() => client, stream);
      try {
        await conn.initialize({ protocolVersion: 1, clientCapabilities: {} });
        const s = await conn.newSession({ cwd: project, mcpServers: [] });
        await conn.setSessionMode({ sessionId: s.sessionId, modeId: "auto-approve" }).catch(() => undefined);
        await conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "esc-acp" }] });
        expect(existsSync(join(outside, "esc-acp"))).toBe(false);
      } finally {
        child.kill("SIGKILL");
        settings({});
      }
    });

    it("allowed in settings: a person answering the escalation request runs it outside (RPC)", async () => {
      settings({ sandbox: { allowEscalation: true } });
      await script("esc-person", [touchOutside("esc-person")]);
      const asked: any[] = [];
      const client = new RpcClient({
        cliPath: CLI,
        cwd: project,
        env: env(),
        inheritEnv: false,
        args: ["--no-session", "--sandbox", "workspace-write"],
        onSandboxEscalation: (req) => {
          asked.push(req);
          return true;
        },
      });
      await client.start();
      try {
        await client.promptAndWait("esc-person");
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({ method: "sandbox_escalation", kind: "command", toolName: "bash", title: "Run outside the sandbox?" });
        expect(existsSync(join(outside, "esc-person"))).toBe(true);
      } finally {
        await client.stop();
        settings({});
      }
    });

    it("a project cannot turn escalation on", async () => {
      mkdirSync(join(project, ".pi"), { recursive: true });
      execFileSync("sh", ["-c", `printf '%s' '{"sandbox":{"allowEscalation":true}}' > '${join(project, ".pi", "settings.json")}'`]);
      await script("esc-project", [touchOutside("esc-project")]);
      const client = new RpcClient({ cliPath: CLI, cwd: project, env: env(), inheritEnv: false, args: ["--no-session", "--sandbox", "workspace-write", "--trust"], onSandboxEscalation: () => true });
      await client.start();
      try {
        await client.promptAndWait("esc-project");
        expect(existsSync(join(outside, "esc-project"))).toBe(false);
      } finally {
        await client.stop();
        rmSync(join(project, ".pi", "settings.json"), { force: true });
      }
    });
  });
});

