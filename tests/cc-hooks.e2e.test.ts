/**
 * End to end: Claude-Code-format hooks (plugins/cc-hooks) in print, json and RPC mode, with the
 * scripted model and our own hook scripts (node scripts written into a throwaway folder).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

const HOOK_SCRIPT = String.raw`
import { appendFileSync, readFileSync } from "node:fs";
const input = JSON.parse(readFileSync(0, "utf8"));
const [mode, log] = process.argv.slice(2);
appendFileSync(log, JSON.stringify({ mode, input, env: { CLAUDE_PROJECT_DIR: process.env.CLAUDE_PROJECT_DIR, PI_PROJECT_DIR: process.env.PI_PROJECT_DIR } }) + "\n");
const out = (o) => process.stdout.write(JSON.stringify(o));
switch (mode) {
  case "block2":
    if (String(input.tool_input?.command ?? "").includes("rm ")) {
      process.stderr.write("HOOK_BLOCK_REASON: rm is not allowed here");
      process.exit(2);
    }
    break;
  case "deny-json":
    out({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "HOOK_DENY_REASON: writes are frozen" } });
    break;
  case "rewrite":
    out({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "echo REWRITTEN_BY_HOOK" } } });
    break;
  case "allow":
    out({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    break;
  case "ask":
    out({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "HOOK_ASK_REASON" } });
    break;
  case "post-context":
    out({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "POST_CONTEXT_MARKER" } });
    break;
  case "prompt-context":
    process.stdout.write("PROMPT_CONTEXT_MARKER");
    break;
  case "prompt-block":
    if (input.prompt.includes("secret")) {
      process.stderr.write("PROMPT_BLOCK_REASON: the prompt holds a secret");
      process.exit(2);
    }
    break;
  case "session-start":
    process.stdout.write("SESSION_START_MARKER");
    break;
  case "stop":
    if (!input.stop_hook_active) out({ decision: "block", reason: "STOP_MARKER: also run the tests" });
    break;
  case "stop-always":
    out({ decision: "block", reason: "STOP_AGAIN_MARKER" });
    break;
  case "exit2":
    process.stderr.write("EXIT2_REASON from " + input.hook_event_name);
    process.exit(2);
  case "marker":
    break;
}
`;

let server: LlmServer;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [] } });
});
afterEach(() => {
  while (envs.length) envs.pop()!.cleanup();
});
afterAll(async () => {
  await server.close();
});

type Group = { matcher?: string; hooks: Array<{ type: "command"; command: string; timeout?: number }> };

/** A throwaway env whose global settings.json carries `hooks`; `cmd(mode)` is the command for one script mode. */
function setup(hooks: (cmd: (mode: string) => string, root: string) => Record<string, Group[]>, extraSettings: Record<string, unknown> = {}) {
  const e = makeE2eEnv(server.url, { settings: extraSettings });
  envs.push(e);
  const script = join(e.root, "hook.mjs");
  writeFileSync(script, HOOK_SCRIPT);
  const log = join(e.root, "hook-log.jsonl");
  const cmd = (mode: string) => `"${process.execPath}" "${script}" ${mode} "${log}"`;
  const settingsFile = join(e.agentDir, "settings.json");
  const settings = JSON.parse(readFileSync(settingsFile, "utf8"));
  writeFileSync(settingsFile, JSON.stringify({ ...settings, hooks: hooks(cmd, e.root) }));
  const calls = (): Array<{ mode: string; input: any; env: Record<string, string> }> =>
    existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
  return { e, cmd, log, calls, script };
}

const requestText = (i: number) => JSON.stringify(server.stats().requests[i]?.body?.messages ?? null);

describe("cc-hooks in print mode", () => {
  it("PreToolUse exit 2 blocks a bash call and its stderr reaches the model; stdin carries Claude Code's fields", async () => {
    const { e, calls } = setup((cmd) => ({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: cmd("block2") }] }] }));
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] }, { text: "understood" }] });
    server.reset();
    const r = await runCli(["-p", "clean up"], e, { timeoutMs: 30000 });
    expect(r.stdout).toContain("understood");
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(2);
    expect(requestText(1)).toContain("HOOK_BLOCK_REASON: rm is not allowed here");
    const [c] = calls();
    expect(c!.input).toMatchObject({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf build" },
      cwd: e.cwd,
      permission_mode: "default",
    });
    expect(typeof c!.input.session_id).toBe("string");
    expect(c!.input.session_id.length).toBeGreaterThan(0);
    expect(typeof c!.input.transcript_path).toBe("string");
    expect(c!.input.transcript_path).toMatch(/\.jsonl$/);
    expect(existsSync(c!.input.transcript_path)).toBe(true);
    expect(c!.input.tool_use_id).toBeTruthy();
    expect(c!.env.CLAUDE_PROJECT_DIR).toBe(e.cwd);
    expect(c!.env.PI_PROJECT_DIR).toBe(e.cwd);
  });

  it("UserPromptSubmit exit 2 blocks the prompt: no model request, the reason is shown to the person", async () => {
    const { e, calls } = setup((cmd) => ({ UserPromptSubmit: [{ hooks: [{ type: "command", command: cmd("prompt-block") }] }] }));
    server.setScript({ default: { text: "should not be asked" } });
    server.reset();
    const r = await runCli(["-p", "here is my secret"], e, { timeoutMs: 30000 });
    expect(server.stats().requests).toHaveLength(0);
    expect(r.stderr).toContain("PROMPT_BLOCK_REASON: the prompt holds a secret");
    expect(r.code).not.toBe(0);
    expect(calls()[0]!.input).toMatchObject({ hook_event_name: "UserPromptSubmit", prompt: "here is my secret" });
  });

  it("SessionStart runs once and its stdout reaches the model as context; SessionEnd runs at exit; -c is a resume", async () => {
    const { e, calls } = setup((cmd) => ({
      SessionStart: [{ matcher: "startup|resume", hooks: [{ type: "command", command: cmd("session-start") }] }],
      SessionEnd: [{ hooks: [{ type: "command", command: cmd("marker") }] }],
    }));
    server.setScript({ default: { text: "hello" } });
    server.reset();
    const r = await runCli(["-p", "first", "second"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(2);
    expect(calls().map((c) => c.input.hook_event_name)).toEqual(["SessionStart", "SessionEnd"]);
    expect(calls()[0]!.input.source).toBe("startup");
    expect(calls()[1]!.input.reason).toBe("prompt_input_exit");
    expect(requestText(0)).toContain("SESSION_START_MARKER");
    expect(requestText(1).split("SESSION_START_MARKER").length - 1).toBe(1); // added once, not again with the second prompt
    const r2 = await runCli(["-p", "-c", "third"], e, { timeoutMs: 30000 });
    expect(r2.code).toBe(0);
    expect(calls()[2]!.input).toMatchObject({ hook_event_name: "SessionStart", source: "resume" });
  });

  it("a hanging hook is killed (with its process group) at its timeout, reported, and the run goes on", async () => {
    // A shell (quick to start even on a busy machine) that leaves a background child holding its pipes.
    const hang = (root: string) => `sleep 300 & echo $! > "${join(root, "hang.pid")}"; wait`;
    const { e } = setup((_cmd, root) => ({ PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: hang(root), timeout: 2 }] }] }));
    const pidFile = join(e.root, "hang.pid");
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo STILL_RAN" } }] }, { text: "finished" }] });
    server.reset();
    const r = await runCli(["-p", "go"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("finished");
    expect(r.stderr).toMatch(/PreToolUse hook .* did not finish within 2 s and was killed/);
    expect(requestText(1)).toContain("STILL_RAN");
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((res) => setTimeout(res, 100));
    expect(alive()).toBe(false);
  });

  it("an untrusted project's .claude/settings.json hooks do not run and are reported; trusted, they run", async () => {
    const { e, cmd, calls } = setup(() => ({}));
    mkdirSync(join(e.cwd, ".claude"), { recursive: true });
    writeFileSync(join(e.cwd, ".claude", "settings.json"), JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: cmd("marker") }] }] } }));
    server.setScript({ default: { text: "ok" } });
    let r = await runCli(["-p", "hi"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(calls()).toHaveLength(0);
    expect(r.stderr).toContain(`the hooks in ${join(e.cwd, ".claude", "settings.json")} do not run`);
    r = await runCli(["hooks", "list"], e);
    expect(r.stdout).toContain(`Not run (project not trusted`);
    expect(r.stdout).toContain(join(e.cwd, ".claude", "settings.json"));

    r = await runCli(["-p", "--trust", "hi"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(calls().map((c) => c.input.hook_event_name)).toEqual(["UserPromptSubmit"]);
    r = await runCli(["hooks", "list", "--trust"], e);
    expect(r.stdout).toContain("UserPromptSubmit");
    expect(r.stdout).toContain(`from ${join(e.cwd, ".claude", "settings.json")} at hooks.UserPromptSubmit[0].hooks[0]`);
  });

  it("a malformed hooks block is a diagnostic naming the file and the position", async () => {
    const { e } = setup(() => ({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: 42 as unknown as string }] }] }));
    const r = await runCli(["hooks", "list"], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(join(e.agentDir, "settings.json"));
    expect(r.stderr).toContain("hooks.PreToolUse[0].hooks[0].command");
    mkdirSync(join(e.cwd, ".claude"), { recursive: true });
    writeFileSync(join(e.cwd, ".claude", "settings.local.json"), '{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n');
    const r2 = await runCli(["hooks", "list", "--trust"], e);
    expect(r2.stderr).toMatch(/settings\.local\.json: not valid JSON at line 3, column \d+/);
  });
});

describe("cc-hooks and the permission gate", () => {
  it("a hook's allow skips the gate's ask but never a deny rule", async () => {
    const { e } = setup((cmd) => ({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: cmd("allow") }] }] }), {
      permissions: { ask: ["bash(echo ALLOWED*)"], deny: ["bash(echo DENIED*)"] },
    });
    // The ask rule makes the gate ask (no UI in json mode: blocked) unless the hook allowed the call.
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo ALLOWED_$((1+1))" } }] }, { toolCalls: [{ name: "bash", arguments: { command: "echo DENIED_$((1+1))" } }] }, { text: "ok" }] });
    server.reset();
    const r = await runCli(["--mode", "json", "go"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    const ends = jsonLines(r.stdout).filter((l) => l.type === "tool_execution_end");
    const text = (i: number) => ends[i].result.content.map((c: any) => c.text).join("");
    expect(ends[0].isError).toBe(false);
    expect(text(0)).toContain("ALLOWED_2");
    expect(ends[1].isError).toBe(true);
    expect(text(1)).toContain("Blocked by the permission gate");
    expect(text(1)).not.toContain("DENIED_2");
  });

  it("ask goes through the gate: blocked with no UI (print), answered by the RPC client's dialog", async () => {
    const { e, calls } = setup((cmd) => ({
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: cmd("ask") }] }],
      Notification: [{ matcher: "permission_prompt", hooks: [{ type: "command", command: cmd("marker") }] }],
    }));
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo ASKED_$((1+1))" } }] }, { text: "ok" }] });
    server.reset();
    const r = await runCli(["-p", "go"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(requestText(1)).toContain("no user interface to ask");
    expect(requestText(1)).not.toContain("ASKED_2");

    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo ASKED_$((1+1))" } }] }, { text: "ok" }] });
    server.reset();
    const titles: string[] = [];
    const client = new RpcClient({
      cliPath: CLI,
      cwd: e.cwd,
      env: e.env,
      inheritEnv: false,
      onExtensionUiRequest: (req: any) => {
        if (req.method !== "select") return undefined;
        titles.push(String(req.title));
        return "Yes";
      },
    });
    await client.start();
    try {
      await client.promptAndWait("go");
    } finally {
      await client.stop();
    }
    expect(titles.some((t) => t.includes("HOOK_ASK_REASON"))).toBe(true);
    expect(requestText(1)).toContain("ASKED_2");
    // Notification runs in the background when the dialog opens (also in print mode, where the gate fails closed before asking: no dialog, no notification).
    const notes = () => calls().filter((c) => c.input.hook_event_name === "Notification");
    for (let i = 0; i < 100 && notes().length === 0; i++) await new Promise((res) => setTimeout(res, 50));
    expect(notes()).toHaveLength(1);
    expect(notes()[0]!.input).toMatchObject({ notification_type: "permission_prompt" });
    expect(notes()[0]!.input.message).toContain("HOOK_ASK_REASON");
  });
});

describe("cc-hooks in json mode", () => {
  it("a JSON deny blocks a write; the reason reaches the model and the file is not written", async () => {
    const { e, calls } = setup((cmd) => ({ PreToolUse: [{ matcher: "Edit|Write", hooks: [{ type: "command", command: cmd("deny-json") }] }] }));
    server.setScript({ turns: [{ toolCalls: [{ name: "write", arguments: { path: "frozen.txt", content: "x" } }] }, { text: "ok" }] });
    server.reset();
    const r = await runCli(["--mode", "json", "write it"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    const end = jsonLines(r.stdout).find((l) => l.type === "tool_execution_end");
    expect(end.isError).toBe(true);
    expect(existsSync(join(e.cwd, "frozen.txt"))).toBe(false);
    expect(requestText(1)).toContain("HOOK_DENY_REASON: writes are frozen");
    expect(calls()[0]!.input).toMatchObject({ tool_name: "Write", tool_input: { file_path: join(e.cwd, "frozen.txt"), content: "x" } });
  });

  it("updatedInput rewrites a bash command (re-validated), and PostToolUse additionalContext reaches the model", async () => {
    const { e, calls } = setup((cmd) => ({
      PreToolUse: [{ matcher: "^Ba", hooks: [{ type: "command", command: cmd("rewrite") }] }],
      PostToolUse: [{ matcher: "bash", hooks: [{ type: "command", command: cmd("post-context") }] }],
    }));
    server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "echo original" } }] }, { text: "ok" }] });
    server.reset();
    const r = await runCli(["--mode", "json", "run it"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    const end = jsonLines(r.stdout).find((l) => l.type === "tool_execution_end");
    const text = end.result.content.map((c: any) => c.text).join("");
    expect(text).toContain("REWRITTEN_BY_HOOK");
    expect(text).not.toContain("original");
    expect(requestText(1)).toContain("REWRITTEN_BY_HOOK");
    expect(requestText(1)).toContain("POST_CONTEXT_MARKER");
    const post = calls().find((c) => c.input.hook_event_name === "PostToolUse")!;
    expect(post.input.tool_input).toEqual({ command: "echo REWRITTEN_BY_HOOK" });
    expect(post.input.tool_response.content).toContain("REWRITTEN_BY_HOOK");
  });

  it("an updatedInput the tool's schema rejects blocks the call with the reason", async () => {
    const { e } = setup((cmd) => ({ PreToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: cmd("rewrite") }] }] }));
    server.setScript({ turns: [{ toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "x" } }] }, { text: "ok" }] });
    server.reset();
    const r = await runCli(["--mode", "json", "write"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(existsSync(join(e.cwd, "a.txt"))).toBe(false);
    expect(requestText(1)).toContain("does not accept");
  });

  it("Stop with decision block gives one more turn; stop_hook_active then lets it stop", async () => {
    const { e, calls } = setup((cmd) => ({ Stop: [{ hooks: [{ type: "command", command: cmd("stop") }] }] }));
    server.setScript({ turns: [{ text: "first answer" }, { text: "second answer" }], turnBy: "assistant" });
    server.reset();
    const r = await runCli(["--mode", "json", "do the work"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(2);
    expect(requestText(1)).toContain("STOP_MARKER: also run the tests");
    const stops = calls().filter((c) => c.input.hook_event_name === "Stop");
    expect(stops.map((c) => c.input.stop_hook_active)).toEqual([false, true]);
    expect(stops[0]!.input.last_assistant_message).toBe("first answer");
    expect(jsonLines(r.stdout).filter((l) => l.type === "agent_settled")).toHaveLength(1);
  });

  it("a Stop hook that always blocks is cut off by the loop guard", async () => {
    const { e } = setup((cmd) => ({ Stop: [{ hooks: [{ type: "command", command: cmd("stop-always") }] }] }));
    server.setScript({ default: { text: "answer" } });
    server.reset();
    const r = await runCli(["--mode", "json", "go"], e, { timeoutMs: 30000 });
    expect(r.code).toBe(0);
    expect(server.stats().requests).toHaveLength(4); // the run + 3 more (STOP_LOOP_LIMIT)
    expect(r.stderr).toMatch(/loop guard/);
  });
});

describe("cc-hooks in RPC mode", () => {
  it("PreCompact exit 2 cancels a manual compaction; its input names the trigger", async () => {
    const { e, calls } = setup((cmd) => ({ PreCompact: [{ matcher: "manual", hooks: [{ type: "command", command: cmd("exit2") }] }] }), {
      compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 1 },
    });
    server.setScript({ default: { text: "a reasonably long answer ".repeat(20) } });
    server.reset();
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
    await client.start();
    try {
      await client.promptAndWait("one");
      await client.promptAndWait("two");
      const before = server.stats().requests.length;
      await expect(client.compact("keep the names")).rejects.toThrow(/cancel/i);
      expect(server.stats().requests.length).toBe(before); // no summary was requested
    } finally {
      await client.stop();
    }
    expect(calls()).toHaveLength(1);
    expect(calls()[0]!.input).toMatchObject({ hook_event_name: "PreCompact", trigger: "manual", custom_instructions: "keep the names" });
  });

  it("UserPromptSubmit adds context; exit 2 blocks a prompt; PreToolUse exit 2 blocks bash; SessionStart runs once", async () => {
    const { e, calls } = setup((cmd) => ({
      UserPromptSubmit: [{ hooks: [{ type: "command", command: cmd("prompt-context") }, { type: "command", command: cmd("prompt-block") }] }],
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: cmd("block2") }] }],
      SessionStart: [{ hooks: [{ type: "command", command: cmd("marker") }] }],
    }));
    server.setScript({ default: { text: "hi there" } });
    server.reset();
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: e.env, inheritEnv: false });
    const errors: any[] = [];
    client.onEvent((ev: any) => {
      if (ev.type === "extension_error") errors.push(ev);
    });
    await client.start();
    try {
      await client.promptAndWait("hello");
      expect(server.stats().requests).toHaveLength(1);
      expect(requestText(0)).toContain("PROMPT_CONTEXT_MARKER");

      await client.promptAndWait("my secret is 42");
      expect(server.stats().requests).toHaveLength(1);
      for (let i = 0; i < 100 && !errors.some((x) => String(x.error).includes("PROMPT_BLOCK_REASON")); i++) await new Promise((res) => setTimeout(res, 50));
      expect(errors.some((x) => String(x.error).includes("PROMPT_BLOCK_REASON"))).toBe(true);

      server.setScript({ turns: [{ toolCalls: [{ name: "bash", arguments: { command: "rm -rf x" } }] }, { text: "cleaned" }] });
      await client.promptAndWait("please clean");
      expect(server.stats().requests).toHaveLength(3);
      expect(requestText(2)).toContain("HOOK_BLOCK_REASON: rm is not allowed here");
    } finally {
      await client.stop();
    }
    expect(calls().filter((c) => c.input.hook_event_name === "SessionStart")).toHaveLength(1);
  });
});
