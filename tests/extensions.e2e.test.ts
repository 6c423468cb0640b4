/**
 * End to end: the real CLI (dist/) with fixture extensions, the permission gate and project
 * trust, against the scripted faux model (PI_FAUX_SCRIPT) — print, json and RPC mode.
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ChildProcess } from "node:child_process";
import { jsonLines, runCli, spawnCli } from "./helpers/e2e.js";

const FIX = resolve("tests/fixtures/extensions");
const fx = (name: string) => join(FIX, name);

interface Env {
  root: string;
  agentDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}
let e: Env;

function makeEnv(settings: Record<string, unknown> = {}): Env {
  const root = mkdtempSync(join(tmpdir(), "pi-ext-e2e-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", ...settings }));
  const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  for (const k of Object.keys(env)) if (/_API_KEY$|^PI_FAUX_SCRIPT$/.test(k)) delete env[k];
  return { root, agentDir, cwd, env };
}

function script(steps: unknown[]): NodeJS.ProcessEnv {
  const file = join(e.root, `script-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(steps));
  return { PI_FAUX_SCRIPT: file };
}

const toolEnds = (stdout: string) => jsonLines(stdout).filter((r) => r.type === "tool_execution_end");

beforeEach(() => {
  e = makeEnv();
});
afterEach(() => {
  rmSync(e.root, { recursive: true, force: true });
});

describe("fixture extensions through the CLI", () => {
  it("a tool, a flag, tool_call blocking without UI and tool_result rewriting (json mode)", async () => {
    const env = script([
      { toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "echo forbidden" } }, { name: "bash", arguments: { command: "echo ask-me" } }, { name: "bash", arguments: { command: "echo SECRET-xyz" } }] },
      "all done",
    ]);
    const r = await runCli(
      ["--no-session", "--mode", "json", "-e", fx("greeter.ts"), "-e", fx("guard.ts"), "-e", fx("shaper.ts"), "--greeting", "Hi", "go"],
      e,
      { env },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const ends = toolEnds(r.stdout);
    expect(ends.map((x) => [x.toolName, x.isError, x.result.content[0].text])).toEqual([
      ["greet", false, "Hi, Ada! (#1)"],
      ["bash", true, "guard: forbidden word"],
      ["bash", true, "guard: no UI to confirm"],
      ["bash", false, "[redacted]\n"],
    ]);
  });

  it("a handler throwing in each event is reported on stderr with the extension path and the event; the run completes", async () => {
    const env = script([{ toolCalls: [{ name: "bash", arguments: { command: "echo block" } }, { name: "bash", arguments: { command: "echo ran" } }] }, "final answer"]);
    const r = await runCli(["--no-session", "-p", "-e", fx("thrower.ts"), "go"], e, { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("final answer\n");
    for (const ev of ["session_start", "input", "before_agent_start", "agent_start", "turn_start", "context", "message_start", "message_update", "message_end", "tool_execution_start", "tool_call", "tool_result", "tool_execution_end", "turn_end", "agent_end", "agent_settled", "session_shutdown"]) {
      expect([ev, r.stderr.includes(`error: ${fx("thrower.ts")} (${ev}): handler failed: boom-${ev}`)]).toEqual([ev, true]);
    }
  });

  it("--list-tools lists each tool, where it came from and what wraps it", async () => {
    const r = await runCli(["--list-tools", "-e", fx("toolbox.ts"), "-e", fx("greeter.ts")], e);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^TOOL\s+SOURCE\s+WRAPPED BY$/m);
    expect(r.stdout).toMatch(new RegExp(`^bash\\s+built-in\\s+${fx("toolbox.ts").replace(/[/.]/g, "\\$&")}$`, "m"));
    expect(r.stdout).toMatch(new RegExp(`^greet\\s+${fx("greeter.ts").replace(/[/.]/g, "\\$&")}\\s+-$`, "m"));
  });

  it("a missing -e file and a module without a factory are reported; the CLI still runs", async () => {
    const env = script(["still fine"]);
    const r = await runCli(["--no-session", "-p", "-e", join(e.cwd, "nope.ts"), "-e", fx("no-factory.ts"), "hi"], e, { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("still fine\n");
    expect(r.stderr).toContain(`${join(e.cwd, "nope.ts")}: extension not found (-e ${join(e.cwd, "nope.ts")})`);
    expect(r.stderr).toMatch(/no-factory\.ts: failed to load extension: .*does not export a valid factory function/);
  });
});

describe("project trust", () => {
  function projectWithCode() {
    mkdirSync(join(e.cwd, ".pi", "extensions"), { recursive: true });
    const marker = join(e.root, "loaded-extension");
    const pluginMarker = join(e.root, "loaded-plugin");
    writeFileSync(join(e.cwd, ".pi", "extensions", "local.ts"), `import { writeFileSync } from "node:fs";\nexport default function () { writeFileSync(${JSON.stringify(marker)}, "x"); }\n`);
    writeFileSync(
      join(e.cwd, ".pi", "plugin.ts"),
      `import { writeFileSync } from "node:fs";\nexport default { name: "local-plugin", version: "1.0.0", kernel: "^1.0.0", setup() { writeFileSync(${JSON.stringify(pluginMarker)}, "x"); } };\n`,
    );
    writeFileSync(join(e.cwd, ".pi", "settings.json"), JSON.stringify({ plugins: [".pi/plugin.ts"] }));
    return { marker, pluginMarker };
  }

  it("an untrusted project's extension and plugin are refused and reported, not run", async () => {
    const { marker, pluginMarker } = projectWithCode();
    const r = await runCli(["--no-session", "-p", "hi"], e, { env: script(["ok"]) });
    expect([r.code, r.stderr]).toEqual([0, expect.any(String)]);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(pluginMarker)).toBe(false);
    expect(r.stderr).toMatch(/is not trusted, so its extensions \(\.pi\/extensions\/local\.ts\) did not load/);
    expect(r.stderr).toMatch(/is not trusted, so its plugins \(\.pi\/plugin\.ts\) did not load/);
  });

  it("--trust, or the global trustedProjects setting, lets it load", async () => {
    const { marker, pluginMarker } = projectWithCode();
    const r = await runCli(["--no-session", "--trust", "-p", "hi"], e, { env: script(["ok"]) });
    expect(r.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(existsSync(pluginMarker)).toBe(true);
    rmSync(marker);
    writeFileSync(join(e.agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", trustedProjects: [e.cwd] }));
    const r2 = await runCli(["--no-session", "-p", "hi"], e, { env: script(["ok"]) });
    expect(r2.stderr).not.toMatch(/not trusted/);
    expect(existsSync(marker)).toBe(true);
  });
});

describe("project trust: pi.config.ts", () => {
  it("a project's pi.config.ts (code) runs only in a trusted project", async () => {
    const marker = join(e.root, "ran-config");
    writeFileSync(join(e.cwd, "pi.config.ts"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "x");\nexport default { quietStartup: true };\n`);
    const r = await runCli(["--no-session", "-p", "hi"], e, { env: script(["ok"]) });
    expect([r.code, r.stderr]).toEqual([0, expect.any(String)]);
    expect(existsSync(marker)).toBe(false);
    expect(r.stderr).toMatch(/pi\.config\.ts is code from a project that is not trusted, so it was not run/);
    const r2 = await runCli(["--no-session", "--trust", "-p", "hi"], e, { env: script(["ok"]) });
    expect(r2.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});

describe("the permission gate", () => {
  it("print mode: a dangerous command is blocked, the reason is in the tool result and on stderr", async () => {
    const env = script([{ toolCalls: [{ name: "bash", arguments: { command: "rm -rf /" } }] }, "could not"]);
    const r = await runCli(["--no-session", "--mode", "json", "gone"], e, { env });
    expect(r.code).toBe(0);
    const [end] = toolEnds(r.stdout);
    expect(end.isError).toBe(true);
    expect(end.result.content[0].text).toMatch(/^Blocked by the permission gate: bash: rm -rf \/ needs permission \(recursive rm of \/\), and there is no user interface to ask/);
    expect(r.stderr).toContain("warning: permission-gate (tool_call): blocked bash: rm -rf /: it needs permission (recursive rm of /) and this mode has no UI to ask");
  });

  it("deny beats --yolo; --yolo turns ask into allow", async () => {
    writeFileSync(
      join(e.agentDir, "settings.json"),
      JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", permissions: { deny: ["bash(echo denied*)"], ask: ["bash(echo asked*)"] } }),
    );
    const env = script([{ toolCalls: [{ name: "bash", arguments: { command: "echo denied now" } }, { name: "bash", arguments: { command: "echo asked now" } }] }, "ok"]);
    const r = await runCli(["--no-session", "--mode", "json", "--yolo", "go"], e, { env });
    expect(r.code).toBe(0);
    const [denied, asked] = toolEnds(r.stdout);
    expect(denied).toMatchObject({ isError: true, result: { content: [{ text: 'Blocked by the permission gate: bash: echo denied now matches deny rule "bash(echo denied*)".' }] } });
    expect(asked).toMatchObject({ isError: false, result: { content: [{ text: "asked now\n" }] } });
  });
});

// ---- RPC ---------------------------------------------------------------------------------------

class Rpc {
  private buf = "";
  readonly records: any[] = [];
  private waiters: Array<{ pred: (r: any) => boolean; resolve: (r: any) => void }> = [];
  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      this.buf += d;
      let n;
      while ((n = this.buf.indexOf("\n")) >= 0) {
        const line = this.buf.slice(0, n);
        this.buf = this.buf.slice(n + 1);
        if (!line) continue;
        const rec = JSON.parse(line);
        this.records.push(rec);
        for (const w of [...this.waiters]) if (w.pred(rec)) (this.waiters.splice(this.waiters.indexOf(w), 1), w.resolve(rec));
      }
    });
  }
  next(pred: (r: any) => boolean, timeoutMs = 10000): Promise<any> {
    const seen = this.records.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("timed out waiting for an RPC record")), timeoutMs);
      this.waiters.push({ pred, resolve: (r) => (clearTimeout(t), resolve(r)) });
    });
  }
  send(obj: unknown) {
    this.child.stdin!.write(JSON.stringify(obj) + "\n");
  }
  async close(): Promise<void> {
    this.child.stdin!.end();
    await new Promise<void>((r) => (this.child.exitCode !== null ? r() : this.child.on("close", () => r())));
  }
}

describe("the permission gate over RPC", () => {
  it("asks with select: Yes runs the tool, No blocks it, no answer times out and blocks", async () => {
    writeFileSync(
      join(e.agentDir, "settings.json"),
      JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", permissions: { ask: ["bash(echo gate*)"], askTimeoutMs: 400 } }),
    );
    const env = script([
      { toolCalls: [{ name: "bash", arguments: { command: "echo gate-yes" } }] },
      "1",
      { toolCalls: [{ name: "bash", arguments: { command: "echo gate-no" } }] },
      "2",
      { toolCalls: [{ name: "bash", arguments: { command: "echo gate-late" } }] },
      "3",
    ]);
    const rpc = new Rpc(spawnCli(["--mode", "rpc", "--no-session"], e, env));
    try {
      const turn = async (id: string, answer: string | undefined) => {
        const settledBefore = rpc.records.filter((r) => r.type === "agent_settled").length;
        rpc.send({ id, type: "prompt", message: `prompt ${id}` });
        const req = await rpc.next((r) => r.type === "extension_ui_request" && r.method === "select" && !r.__seen);
        req.__seen = true;
        expect(req.options).toEqual(["Yes", "No"]);
        expect(req.timeout).toBe(400);
        if (answer) rpc.send({ type: "extension_ui_response", id: req.id, value: answer });
        await rpc.next((r) => r.type === "agent_settled" && rpc.records.filter((x) => x.type === "agent_settled").indexOf(r) === settledBefore);
        return rpc.records.filter((r) => r.type === "tool_execution_end").at(-1);
      };
      const yes = await turn("a", "Yes");
      expect(yes).toMatchObject({ isError: false, result: { content: [{ text: "gate-yes\n" }] } });
      const no = await turn("b", "No");
      expect(no).toMatchObject({ isError: true, result: { content: [{ text: "Blocked by the permission gate: the user did not allow bash: echo gate-no." }] } });
      const late = await turn("c", undefined);
      expect(late.isError).toBe(true);
      expect(late.result.content[0].text).toBe("Blocked by the permission gate: bash: echo gate-late needs permission (ask rule \"bash(echo gate*)\") and nobody answered within 400 ms.");
      expect(rpc.records.some((r) => r.type === "extension_error" && /no answer to the permission dialog/.test(r.error))).toBe(true);
    } finally {
      await rpc.close();
    }
  });
});

describe("pi new extension", () => {
  it("scaffolds an extension whose own test passes after npm install", async () => {
    const dir = join(e.root, "my-ext");
    const r = await runCli(["new", "extension", dir], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Created the extension "my-ext"');
    const again = await runCli(["new", "extension", dir], e);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists and is not empty");
    const { spawnSync } = await import("node:child_process");
    const npmEnv = { ...e.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
    const install = spawnSync("npm", ["install", "--offline"], { cwd: dir, env: npmEnv, encoding: "utf8", timeout: 85_000 });
    expect([install.status, install.stderr]).toEqual([0, expect.any(String)]);
    const test = spawnSync("npm", ["test"], { cwd: dir, env: npmEnv, encoding: "utf8", timeout: 85_000 });
    expect([test.status, test.stdout]).toEqual([0, expect.stringMatching(/# pass 2/)]);
  });
});
