import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createBashTool, prepareBashTool, type BashToolDetails } from "./bash.js";
import { discardPreparedShell, prepareWantedShell, preparedShellPid } from "./prepared-shell.js";
import { installCommandWrapper, type AgentToolResult } from "../../core/kernel/index.js";
import { alive, errorOf } from "../../tests/helpers/processes.js";
import { waitUntil } from "../../tests/helpers/system.js";

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-prepared-")));
});
afterEach(() => {
  discardPreparedShell();
  rmSync(dir, { recursive: true, force: true });
});

type Result = AgentToolResult<BashToolDetails | undefined>;
const text = (r: Result) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const run = (command: string, cwd = dir) => createBashTool(cwd).execute("id", { command } as any, undefined, undefined, undefined) as Promise<Result>;

/** What a command can see of how it was started (the run token's value differs per command). */
const PROBE = [
  "echo argv0=$0",
  "echo cwd=$(pwd)",
  "env | grep -v -e '^PI_TOOL_RUN=' -e '^_=' | sort",
  "echo token=${#PI_TOOL_RUN}",
  "if read -r line; then echo stdin=data; else echo stdin=eof; fi",
  "echo group=$(( $(cut -d' ' -f5 /proc/$$/stat) == $$ ))",
  "echo fds=$(cd /proc/$$/fd && echo *)",
  "echo to-err >&2",
].join("; ");

describe("a bash started ahead of its command", () => {
  it("runs the bash tool's next command, which sees what a directly started bash gives it", async () => {
    const direct = text(await run(PROBE));
    prepareBashTool(dir, undefined);
    const pid = preparedShellPid();
    expect(pid).toBeGreaterThan(0);
    const prepared = text(await run(`echo pid=$$; ${PROBE}`));
    expect(prepared).toBe(`pid=${pid}\n${direct}`);
    expect(direct).toContain(`cwd=${dir}\n`);
    expect(direct).toContain("token=24\n");
    expect(direct).toContain("stdin=eof\n");
    expect(direct).toContain("group=1\n");
  });

  it("does not read ~/.bashrc when SHLVL is unset (a CLI started by an IDE, cron or a service)", async () => {
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".bashrc"), "echo from-bashrc\nexport FROM_BASHRC=1\n");
    const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL };
    process.env.HOME = home;
    delete process.env.SHLVL;
    try {
      const direct = text(await run("echo rc=${FROM_BASHRC:-none} level=$SHLVL"));
      prepareBashTool(dir, undefined);
      const pid = preparedShellPid();
      expect(pid).toBeGreaterThan(0);
      expect(text(await run("echo pid=$$ rc=${FROM_BASHRC:-none} level=$SHLVL"))).toBe(`pid=${pid} ${direct}`);
      expect(direct).toBe("rc=none level=1\n");
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it("reports exit codes, a signal and output as a direct start does", async () => {
    prepareBashTool(dir, undefined);
    expect(await errorOf(run("echo partial; exit 3"))).toBe("partial\n\nCommand exited with code 3");
    prepareBashTool(dir, undefined);
    expect(await errorOf(run("kill -9 $$"))).toContain("Command was killed by signal SIGKILL");
    prepareBashTool(dir, undefined);
    expect(text(await run("true"))).toBe("(no output)");
  });

  it("stops the command's whole process tree on abort", async () => {
    prepareBashTool(dir, undefined);
    const pid = preparedShellPid()!;
    const ac = new AbortController();
    let seen = "";
    const pending = createBashTool(dir).execute("id", { command: "sleep 30 & echo bg=$!; wait" } as any, ac.signal, (u: Result) => (seen = text(u)), undefined);
    await waitUntil(() => /bg=\d+/.test(seen), "the command output");
    const bg = Number(/bg=(\d+)/.exec(seen)![1]);
    ac.abort();
    expect(await errorOf(pending)).toMatch(/Command aborted$/);
    await waitUntil(() => !alive(bg) && !alive(pid), "the process to end");
  });

  it("is used once; the next one starts only when asked, for the same shell, folder and environment", async () => {
    prepareBashTool(dir, undefined);
    const first = preparedShellPid()!;
    expect(text(await run("echo $$"))).toBe(`${first}\n`);
    expect(preparedShellPid()).toBeUndefined();
    // the command after runs as before
    expect(text(await run("echo $$"))).not.toBe(`${first}\n`);
    prepareWantedShell();
    const second = preparedShellPid()!;
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    expect(text(await run("echo $$"))).toBe(`${second}\n`);
  });

  it("is not used, and ends, for another environment or another folder", async () => {
    prepareBashTool(dir, undefined);
    const pid = preparedShellPid()!;
    const before = process.env.PI_PREPARED_SHELL_TEST;
    process.env.PI_PREPARED_SHELL_TEST = "changed";
    try {
      expect(text(await run("echo $$ $PI_PREPARED_SHELL_TEST"))).not.toBe(`${pid} changed\n`);
      expect(text(await run("echo $PI_PREPARED_SHELL_TEST"))).toBe("changed\n");
    } finally {
      if (before === undefined) delete process.env.PI_PREPARED_SHELL_TEST;
      else process.env.PI_PREPARED_SHELL_TEST = before;
    }
    await waitUntil(() => !alive(pid), "the process to end");

    const other = join(dir, "other");
    mkdirSync(other);
    prepareBashTool(other, undefined);
    const pid2 = preparedShellPid()!;
    expect(text(await run("echo $$"))).not.toBe(`${pid2}\n`);
    await waitUntil(() => !alive(pid2), "the process to end");
  });

  it("is not used in a folder removed and made again under the same name", async () => {
    const sub = join(dir, "sub");
    mkdirSync(sub);
    prepareBashTool(sub, undefined);
    const pid = preparedShellPid()!;
    rmSync(sub, { recursive: true });
    mkdirSync(sub);
    const [shellPid, cwd] = text(await run("echo $$; pwd", sub)).split("\n");
    expect(shellPid).not.toBe(String(pid));
    expect(cwd).toBe(sub);
    await waitUntil(() => !alive(pid), "the process to end");
  });

  it("leaves a long command (a file written through a heredoc) to a direct start and keeps waiting", async () => {
    prepareBashTool(dir, undefined);
    const pid = preparedShellPid()!;
    const body = "x".repeat(6000);
    const [printed, shellPid] = text(await run(`cat <<'EOF'\n${body}\nEOF\necho $$`)).split("\n");
    expect(printed).toBe(body);
    expect(shellPid).not.toBe(String(pid));
    expect(preparedShellPid()).toBe(pid);
  });

  it("is not prepared when the shell is not bash or BASH_ENV is set", async () => {
    prepareBashTool(dir, undefined, "/bin/sh");
    expect(preparedShellPid()).toBeUndefined();
    process.env.BASH_ENV = join(dir, "env.sh");
    try {
      prepareBashTool(dir, undefined);
      expect(preparedShellPid()).toBeUndefined();
    } finally {
      delete process.env.BASH_ENV;
    }
  });

  it("is not prepared, and a waiting one ends, while a command wrapper (the sandbox) takes bash commands", async () => {
    prepareBashTool(dir, undefined);
    const pid = preparedShellPid()!;
    const wrapped: string[] = [];
    const uninstall = installCommandWrapper({
      source: "test",
      wrap: (spec) => {
        wrapped.push(spec.args.at(-1)!);
        return { ...spec, args: [...spec.args.slice(0, -1), `echo wrapped; ${spec.args.at(-1)}`] };
      },
    });
    try {
      expect(text(await run("echo $$"))).not.toContain(`${pid}\n`);
      expect(text(await run("echo inner"))).toBe("wrapped\ninner\n");
      await waitUntil(() => !alive(pid), "the process to end");
      prepareBashTool(dir, undefined);
      expect(preparedShellPid()).toBeUndefined();
      prepareWantedShell();
      expect(preparedShellPid()).toBeUndefined();
    } finally {
      uninstall();
    }
    expect(wrapped).toEqual(["echo $$", "echo inner", ""]);
  });

  it("ends when discarded and when the process that started it exits", async () => {
    prepareBashTool(dir, undefined);
    const pid = preparedShellPid()!;
    discardPreparedShell();
    await waitUntil(() => !alive(pid), "the process to end");

    const module = resolve("dist/plugins/tools/prepared-shell.js");
    const script = `import { prepareShell, preparedShellPid } from ${JSON.stringify(module)}; prepareShell("/bin/bash", ${JSON.stringify(dir)}, process.env); console.log(preparedShellPid());`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const code = await new Promise((r) => child.on("close", r));
    expect(code).toBe(0);
    const orphan = Number(out.trim());
    expect(orphan).toBeGreaterThan(0);
    await waitUntil(() => !alive(orphan), "the process to end");
  });
});
