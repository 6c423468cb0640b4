/**
 * MCP through the kernel: real MCP servers written with the SDK (tests/fixtures/mcp) over stdio
 * and streamable HTTP on 127.0.0.1, a test kernel with the mcp plugin, the faux model calling
 * the tools through the agent loop.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Context } from "@mariozechner/pi-ai";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import { definePlugin, type PluginManifest, type Diagnostic, type ToolResultMessage } from "../../core/kernel/index.js";
import type { FauxStep } from "../faux/index.js";
import mcpPlugin from "./index.js";
import { startMcpHttpServer, type McpHttpServer } from "../../tests/fixtures/mcp/http-server.mjs";

const STDIO = fileURLToPath(new URL("../../tests/fixtures/mcp/stdio-server.mjs", import.meta.url));
const stdio = (...args: string[]) => ({ command: process.execPath, args: [STDIO, ...args] });

const open: Array<{ close(): Promise<void> }> = [];

interface StartOptions {
  servers?: Record<string, unknown>;
  mcp?: Record<string, unknown>;
  steps?: FauxStep[];
  plugins?: PluginManifest[];
  mcpJson?: Record<string, unknown>;
  trust?: boolean;
  ui?: boolean;
}

async function start(opts: StartOptions = {}) {
  const t = await createTestKernel({
    plugins: [mcpPlugin, ...(opts.plugins ?? [])],
    steps: opts.steps ?? [],
    // These tests are about direct exposure: mcp.toolMode set explicitly (without it, pi 1.6's
    // default exposure "codemode" applies; see "default exposure" below).
    settings: { mcpServers: opts.servers ?? {}, mcp: { connectTimeoutMs: 120_000, toolMode: "auto", ...opts.mcp } } as never,
  });
  const diags: Diagnostic[] = [];
  t.kernel.diagnostics.subscribe((d) => void diags.push(d), true);
  if (opts.trust !== undefined) t.kernel.provide("project-trust", { isTrusted: (cwd: string) => opts.trust && cwd === t.cwd } as never, "test");
  if (opts.mcpJson) writeFileSync(join(t.cwd, ".mcp.json"), JSON.stringify({ mcpServers: opts.mcpJson }));
  const ui = { statuses: [] as Array<string | undefined>, notes: [] as string[] };
  if (opts.ui) {
    t.kernel.provide(
      "ui",
      { kind: "tui", setStatus: (k: string, v: string | undefined) => k === "mcp" && ui.statuses.push(v), notify: (m: string) => ui.notes.push(m) } as never,
      "test",
    );
  }
  const mcp = t.kernel.service("mcp")!;
  const startSession = async (reason: "startup" | "new" = "startup") => {
    await t.kernel.hooks.session_start.promise({ type: "session_start", reason });
    await mcp.whenSettled();
  };
  await startSession();
  const h = {
    ...t,
    mcp,
    diags,
    ui,
    startSession,
    server: (name: string) => mcp.list().find((s) => s.name === name)!,
    toolResults: () => t.session.messages.filter((m) => (m as { role: string }).role === "toolResult") as ToolResultMessage[],
    async close() {
      await t.session.dispose();
      t.cleanup();
    },
  };
  open.push(h);
  return h;
}

afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const text = (r: { content: unknown }) => (r.content as Array<{ type: string; text?: string }>).filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function waitFor(cond: () => boolean, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("stdio servers", () => {
  it("registers each tool as mcp__<server>__<tool>, active, with its JSON Schema; a call's result reaches the next request", async () => {
    let seen: Context | undefined;
    const h = await start({
      servers: { demo: stdio() },
      steps: [
        { toolCalls: [{ name: "mcp__demo__echo", arguments: { text: "hi there" } }] },
        (ctx) => {
          seen = ctx;
          return "done";
        },
      ],
    });
    expect(h.server("demo").status).toBe("connected");
    const active = h.session.getActiveToolNames();
    expect(active).toEqual(expect.arrayContaining(["mcp__demo__echo", "mcp__demo__add", "mcp__demo__picture"]));
    const echo = h.kernel.tools.get("mcp__demo__echo")!;
    expect(echo.parameters).toEqual({ type: "object", properties: { text: { type: "string", description: "Text to echo" } }, required: ["text"] });
    expect(await h.session.getSystemPrompt()).toContain("- mcp__demo__echo: Echo the given text back");

    await h.session.prompt("echo please");
    expect(seen!.tools!.map((t) => t.name)).toContain("mcp__demo__add");
    const last = seen!.messages.at(-1) as ToolResultMessage;
    expect(last.role).toBe("toolResult");
    expect(last.isError).toBe(false);
    expect(text(last)).toBe("echo:hi there");
    expect(h.session.getLastAssistantText()).toBe("done");
  });

  it("images and embedded resources become tool result content; isError results reach the model as errors", async () => {
    const h = await start({
      servers: { demo: stdio() },
      steps: [
        { toolCalls: [{ name: "mcp__demo__picture" }, { name: "mcp__demo__document" }, { name: "mcp__demo__fail", arguments: { message: "nope" } }, { name: "mcp__demo__structured" }] },
        "ok",
      ],
    });
    await h.session.prompt("go");
    const [pic, doc, fail, structured] = h.toolResults();
    expect(pic!.content).toEqual([{ type: "text", text: "a red dot" }, { type: "image", data: expect.stringMatching(/^iVBOR/), mimeType: "image/png" }]);
    expect(text(doc!)).toContain("[resource file:///notes/readme.md (text/markdown)]\n# Notes\nresource body 77");
    expect(text(doc!)).toContain("[resource link other.md: file:///notes/other.md — another note]");
    expect(fail!.isError).toBe(true);
    expect(text(fail!)).toContain("failed: nope");
    expect(JSON.parse(text(structured!))).toEqual({ total: 2, items: ["x", "y"] });
  });

  it("expands ${VAR:-default} in env and passes cwd to the server", async () => {
    const h = await start({
      servers: { demo: { ...stdio(), env: { GREETING: "${MCP_TEST_UNSET_VAR:-from-default}", HOME_SEEN: "${HOME}" }, cwd: "/tmp" } },
      steps: [{ toolCalls: [{ name: "mcp__demo__env", arguments: { name: "GREETING" } }, { name: "mcp__demo__where" }] }, "ok"],
    });
    await h.session.prompt("go");
    const [env, where] = h.toolResults();
    expect(text(env!)).toBe("from-default");
    expect(text(where!)).toBe("/tmp");
  });

  it("a server that crashes mid-call: the call fails with a clear error, a diagnostic, /mcp reconnect brings it back", async () => {
    const h = await start({
      servers: { demo: stdio() },
      ui: true,
      steps: [{ toolCalls: [{ name: "mcp__demo__crash" }] }, "saw the crash", { toolCalls: [{ name: "mcp__demo__echo", arguments: { text: "a" } }] }, "still down", { toolCalls: [{ name: "mcp__demo__echo", arguments: { text: "b" } }] }, "back"],
    });
    await h.session.prompt("crash it");
    const [crash] = h.toolResults();
    expect(crash!.isError).toBe(true);
    expect(text(crash!)).toMatch(/MCP tool "crash" on server "demo" failed: .*(closed the connection|exited)/);
    expect(text(crash!)).toContain("crashing on purpose");
    await waitFor(() => h.server("demo").status === "failed");
    expect(h.diags.some((d) => d.level === "error" && /MCP server "demo" stopped/.test(d.message))).toBe(true);
    expect(h.ui.statuses.at(-1)).toBe("MCP 0/1 · failed: demo");

    await h.session.prompt("again");
    expect(text(h.toolResults()[1]!)).toMatch(/MCP server "demo" is not connected .*\/mcp reconnect demo/);

    await h.session.prompt("/mcp reconnect demo");
    expect(h.server("demo").status).toBe("connected");
    expect(h.ui.notes.at(-1)).toMatch(/demo — connected \(stdio\)/);
    await h.session.prompt("third");
    expect(text(h.toolResults()[2]!)).toBe("echo:b");
    expect(h.ui.statuses.at(-1)).toBe("MCP 1/1");
  });

  it("a server that never answers times out at start; the others still connect (in parallel)", async () => {
    const h = await start({
      servers: { silent: { ...stdio("--silent"), connectTimeoutMs: 1200 }, demo: stdio() },
    });
    expect(h.server("silent").status).toBe("failed");
    expect(h.server("silent").error).toMatch(/did not answer within 1\.2 s \(its connectTimeoutMs\)/);
    expect(h.server("demo").status).toBe("connected");
    expect(h.diags.some((d) => /MCP server "silent" failed to start/.test(d.message))).toBe(true);
  });

  it("abort cancels the MCP request (the server sees the cancellation); a call that never answers times out", async () => {
    const marker = join(tmpdir(), `pi-mcp-cancel-${process.pid}-${Date.now()}.txt`);
    const callLog = `${marker}.calls`;
    try {
      const h = await start({
        servers: { demo: { ...stdio("--cancel-marker", marker, "--call-log", callLog), callTimeoutMs: 3000 } },
        steps: [{ toolCalls: [{ name: "mcp__demo__hang" }] }, { toolCalls: [{ name: "mcp__demo__hang" }] }, "timed out"],
      });
      // Abort once the server has the call (not after a guessed delay).
      const unsubscribe = h.session.subscribe((e) => {
        if (e.type === "tool_execution_start" && e.toolName === "mcp__demo__hang") {
          void waitFor(() => existsSync(callLog) && readFileSync(callLog, "utf8").includes("hang")).then(() => h.session.abort());
        }
      });
      await h.session.prompt("hang");
      unsubscribe();
      await waitFor(() => existsSync(marker) && readFileSync(marker, "utf8").includes("cancelled:hang"));
      // The server is still connected after a cancelled call.
      expect(h.server("demo").status).toBe("connected");

      await h.session.prompt("hang again");
      const r = h.toolResults().at(-1)!;
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/no answer within 3 s \(its callTimeoutMs\)/);
      await waitFor(() => readFileSync(marker, "utf8").split("cancelled:hang").length === 3);
    } finally {
      rmSync(marker, { force: true });
      rmSync(callLog, { force: true });
    }
  });

  it("misconfigured servers (bad command, bad config) are diagnostics, not crashes", async () => {
    const h = await start({
      servers: { bad: { command: "pi-no-such-command-xyz" }, broken: { args: ["x"] }, demo: stdio() },
      steps: [{ toolCalls: [{ name: "mcp__demo__add", arguments: { a: 2, b: 3 } }] }, "5"],
    });
    expect(h.server("bad").status).toBe("failed");
    expect(h.server("bad").error).toMatch(/cannot start "pi-no-such-command-xyz": command not found \(ENOENT\)/);
    expect(h.server("broken").status).toBe("invalid");
    expect(h.diags.some((d) => d.level === "error" && /"broken".*misconfigured.*needs a "command"/.test(d.message))).toBe(true);
    await h.session.prompt("add");
    expect(text(h.toolResults()[0]!)).toBe("5");
  });

  it("a new session retries servers that failed and keeps the live ones", async () => {
    const h = await start({
      servers: { keep: stdio(), later: { command: "pi-no-such-command-xyz" } },
      steps: [{ toolCalls: [{ name: "mcp__keep__pid" }] }, "one", { toolCalls: [{ name: "mcp__keep__pid" }] }, "two"],
    });
    expect(h.server("later").status).toBe("failed");
    await h.session.prompt("pid");
    h.kernel.settings.update({ mcpServers: { keep: stdio(), later: stdio() } });
    await h.kernel.hooks.session_shutdown.promise({ type: "session_shutdown", reason: "switch" });
    await h.startSession("new");
    expect(h.server("later").status).toBe("connected");
    expect(h.session.getActiveToolNames()).toContain("mcp__later__echo");
    await h.session.prompt("pid again");
    const [first, second] = h.toolResults();
    expect(Number(text(first!))).toBeGreaterThan(0);
    expect(text(second!)).toBe(text(first!));
  });

  it("the server's tool list changing at run time updates the registered tools", async () => {
    const h = await start({ servers: { demo: stdio() }, steps: [{ toolCalls: [{ name: "mcp__demo__add_tool", arguments: { name: "late" } }] }, "added"] });
    await h.session.prompt("add a tool");
    await waitFor(() => h.kernel.tools.has("mcp__demo__late"));
    expect(h.session.getActiveToolNames()).toContain("mcp__demo__late");
  });

  it("session end closes the server processes", async () => {
    const h = await start({ servers: { demo: stdio() }, steps: [{ toolCalls: [{ name: "mcp__demo__pid" }] }, "ok"] });
    await h.session.prompt("pid");
    const pid = Number(text(h.toolResults()[0]!));
    expect(pid).toBeGreaterThan(0);
    open.splice(open.indexOf(h), 1);
    await h.close();
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive());
    expect(h.mcp.list().every((s) => s.status !== "connected")).toBe(true);
  });
});

describe("HTTP servers on 127.0.0.1", () => {
  let web: McpHttpServer;
  beforeAll(async () => {
    web = await startMcpHttpServer({ name: "web", legacySse: true });
  });
  afterAll(async () => {
    await web.close();
  });

  it("streamable HTTP: tools, headers with env expansion, calls", async () => {
    const h = await start({
      servers: { web: { url: web.url, headers: { "X-Test-Token": "${MCP_TEST_UNSET_TOKEN:-tok-42}" } } },
      steps: [{ toolCalls: [{ name: "mcp__web__add", arguments: { a: 20, b: 22 } }] }, "42"],
    });
    expect(h.server("web")).toMatchObject({ status: "connected", transport: "http" });
    await h.session.prompt("add");
    expect(text(h.toolResults()[0]!)).toBe("42");
    const posts = web.stats().requests.filter((r) => r.method === "POST" && r.path === "/mcp");
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((r) => r.headers["x-test-token"] === "tok-42")).toBe(true);
  });

  it("falls back to SSE when the url does not speak streamable HTTP", async () => {
    const h = await start({ servers: { legacy: { url: web.sseUrl } }, steps: [{ toolCalls: [{ name: "mcp__legacy__echo", arguments: { text: "old" } }] }, "ok"] });
    expect(h.server("legacy")).toMatchObject({ status: "connected", transport: "sse" });
    await h.session.prompt("echo");
    expect(text(h.toolResults()[0]!)).toBe("echo:old");
  });

  it("abort cancels an HTTP call on the server", async () => {
    const h = await start({ servers: { web: { type: "http", url: web.url } }, steps: [{ toolCalls: [{ name: "mcp__web__hang" }] }, "x"] });
    const before = web.stats().cancelled.length;
    const callsBefore = web.stats().calls.length;
    const unsubscribe = h.session.subscribe((e) => {
      if (e.type === "tool_execution_start") void waitFor(() => web.stats().calls.length > callsBefore).then(() => h.session.abort());
    });
    await h.session.prompt("hang");
    unsubscribe();
    await waitFor(() => web.stats().cancelled.length === before + 1);
  });

  it("an HTTP server that dies mid-call: the call fails as a lost connection, not at the call timeout", async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("../../tests/fixtures/mcp/http-server.mjs", import.meta.url))], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const lines: string[] = [];
      let buffered = "";
      child.stdout!.on("data", (d) => {
        buffered += String(d);
        const parts = buffered.split("\n");
        buffered = parts.pop()!;
        lines.push(...parts);
      });
      await waitFor(() => lines.length > 0);
      const line = lines[0]!;
      const h = await start({
        servers: { remote: { type: "http", url: JSON.parse(line).url } },
        mcp: { callTimeoutMs: 120000 },
        steps: [{ toolCalls: [{ name: "mcp__remote__hang" }] }, "after"],
      });
      const unsubscribe = h.session.subscribe((e) => {
        // Kill the server once it has the call in hand.
        if (e.type === "tool_execution_start") void waitFor(() => lines.some((l) => l.includes('"call":"hang"'))).then(() => child.kill("SIGKILL"));
      });
      await h.session.prompt("hang");
      unsubscribe();
      const r = h.toolResults()[0]!;
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/MCP tool "hang" on server "remote" failed: lost the connection/);
      expect(h.server("remote").status).toBe("failed");
      expect(h.diags.some((d) => /MCP server "remote" stopped: lost the connection/.test(d.message))).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("an unreachable url is a diagnostic", async () => {
    const h = await start({ servers: { gone: { type: "http", url: "http://127.0.0.1:9/mcp" } } });
    expect(h.server("gone").status).toBe("failed");
    expect(h.server("gone").error).toMatch(/fetch failed|ECONNREFUSED|cannot reach/);
  });
});

describe("project trust", () => {
  it("without the project-trust service, .mcp.json servers are skipped with a hint", async () => {
    const h = await start({ mcpJson: { proj: stdio() } });
    expect(h.server("proj").status).toBe("untrusted");
    const w = h.diags.find((d) => /project MCP server/.test(d.message))!;
    expect(w.level).toBe("warning");
    expect(w.message).toMatch(/--trust/);
    expect(w.message).toMatch(/trustedProjects/);
    expect(h.kernel.tools.names().some((n) => n.startsWith("mcp__proj__"))).toBe(false);
  });

  it("a trusted project's servers connect; an untrusted one's do not", async () => {
    const yes = await start({ mcpJson: { proj: stdio() }, trust: true });
    expect(yes.server("proj").status).toBe("connected");
    const no = await start({ mcpJson: { proj: stdio() }, trust: false });
    expect(no.server("proj").status).toBe("untrusted");
  });
});

describe("the tool_call path", () => {
  it("MCP tools pass the permission gate (tool_call) and tool middleware like built-ins", async () => {
    const gate = definePlugin({
      name: "test-gate",
      version: "1.0.0",
      kernel: "^1.0.0",
      setup(api) {
        api.on("tool_call", (e) => (e.toolName === "mcp__demo__add" ? { block: true, reason: "adding is not allowed" } : undefined));
        api.wrapTool("mcp__demo__echo", (tool) => ({
          ...tool,
          async execute(...a) {
            const r = await tool.execute(...a);
            return { ...r, content: [...r.content, { type: "text", text: "[wrapped]" }] };
          },
        }));
      },
    });
    const h = await start({
      servers: { demo: stdio() },
      plugins: [gate],
      steps: [{ toolCalls: [{ name: "mcp__demo__add", arguments: { a: 1, b: 1 } }, { name: "mcp__demo__echo", arguments: { text: "w" } }] }, "ok"],
    });
    await h.session.prompt("go");
    const [add, echo] = h.toolResults();
    expect(add!.isError).toBe(true);
    expect(text(add!)).toContain("adding is not allowed");
    expect(text(echo!)).toBe("echo:w\n[wrapped]");
  });
});

describe("search mode", () => {
  it("over the threshold, one `mcp` tool replaces the MCP tools; search, describe and call work and pass the gate", async () => {
    const gate = definePlugin({
      name: "test-gate-2",
      version: "1.0.0",
      kernel: "^1.0.0",
      setup(api) {
        api.on("tool_call", (e) => (e.toolName === "mcp__demo__fail" ? { block: true, reason: "no failing" } : undefined));
      },
    });
    const h = await start({
      servers: { demo: stdio("--generated", "30") },
      plugins: [gate],
      steps: [
        { toolCalls: [{ name: "mcp", arguments: { action: "search", query: "echo text" } }] },
        { toolCalls: [{ name: "mcp", arguments: { action: "describe", tool: "mcp__demo__add" } }] },
        { toolCalls: [{ name: "mcp", arguments: { action: "call", tool: "mcp__demo__echo", arguments: { text: "via search" } } }] },
        { toolCalls: [{ name: "mcp", arguments: { action: "call", tool: "demo/fail", arguments: { message: "x" } } }] },
        "done",
      ],
    });
    expect(h.mcp.mode).toBe("search");
    const active = h.session.getActiveToolNames();
    expect(active).toContain("mcp");
    expect(active.some((n) => n.startsWith("mcp__"))).toBe(false);
    expect(h.kernel.tools.has("mcp__demo__echo")).toBe(true);
    expect(await h.session.getSystemPrompt()).toMatch(/- mcp: Search, describe and call 43 tools of the MCP servers demo/);

    await h.session.prompt("use mcp");
    const [search, describe_, call, blocked] = h.toolResults();
    expect(text(search!).split("\n")[0]).toMatch(/^mcp__demo__echo \(text: string\): Echo the given text/);
    expect(text(describe_!)).toContain('"a": {');
    expect(text(call!)).toBe("echo:via search");
    expect(blocked!.isError).toBe(true);
    expect(text(blocked!)).toMatch(/mcp__demo__fail was blocked: no failing/);
  });

  it("toolMode direct keeps one tool each even over the threshold", async () => {
    const h = await start({ servers: { demo: stdio("--generated", "30") }, mcp: { toolMode: "direct" } });
    expect(h.mcp.mode).toBe("direct");
    expect(h.session.getActiveToolNames().filter((n) => n.startsWith("mcp__")).length).toBe(43);
  });
});

describe("/mcp", () => {
  it("lists servers, status and tools", async () => {
    const h = await start({ servers: { demo: stdio(), bad: { command: "pi-no-such-command-xyz" } }, ui: true });
    await h.session.prompt("/mcp");
    const note = h.ui.notes.at(-1)!;
    expect(note).toMatch(/^MCP servers \(13 tools\):/);
    expect(note).toMatch(/demo — connected \(stdio\) demo 1\.0\.0 — exposure: mcp\.toolMode auto — user/);
    expect(note).toContain("mcp__demo__echo, mcp__demo__add");
    expect(note).toMatch(/bad — failed \(stdio\)[\s\S]*command not found/);
    expect(h.ui.statuses.at(-1)).toBe("MCP 1/2 · failed: bad");
    await h.session.prompt("/mcp bogus");
    expect(h.ui.notes.at(-1)).toMatch(/Unknown \/mcp argument "bogus"/);
  });
});

describe("prompt size with 5 servers x 40 tools", () => {
  it("search mode is a fraction of direct mode (figures printed)", async () => {
    const servers = Object.fromEntries(["github", "jira", "slack", "drive", "sentry"].map((n) => [n, stdio("--no-demo", "--generated", "40")]));
    const measure = async (toolMode: string) => {
      const h = await start({ servers, mcp: { toolMode } });
      const tools = h.session.getActiveTools().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
      const figures = { toolMode, mcpTools: h.mcp.list().reduce((n, s) => n + s.tools.length, 0), activeTools: tools.length, systemPromptChars: (await h.session.getSystemPrompt()).length, toolSchemaJsonBytes: Buffer.byteLength(JSON.stringify(tools)) };
      open.splice(open.indexOf(h), 1);
      await h.close();
      return figures;
    };
    const direct = await measure("direct");
    const search = await measure("auto");
    console.log(`MCP prompt size, 5 servers x 40 tools:\n${JSON.stringify(direct)}\n${JSON.stringify(search)}`);
    expect(direct.mcpTools).toBe(200);
    expect(search.toolMode).toBe("auto");
    expect(search.activeTools).toBe(1);
    expect(search.systemPromptChars * 10).toBeLessThan(direct.systemPromptChars);
    expect(search.toolSchemaJsonBytes * 50).toBeLessThan(direct.toolSchemaJsonBytes);
  });
});
