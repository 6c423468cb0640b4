/**
 * End-to-end helpers: a throwaway agent dir whose models.json points at the loopback LLM
 * server, and a runner that spawns the real CLI (the bundled bin, dist/bundle/cli.js) against it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { alive } from "./processes.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The shipped `pi` binary (package.json "bin"). */
export const CLI = join(ROOT, "dist", "bundle", "cli.js");

/** The session files (`*.jsonl`) under `dir`, at any depth; none when it does not exist. */
export function sessionFilesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sessionFilesIn(join(dir, d.name)) : d.name.endsWith(".jsonl") ? [join(dir, d.name)] : []));
}

export interface E2eEnv {
  root: string;
  agentDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/**
 * Agent dir with providers "mock" (openai-completions) and "mock-anthropic" (anthropic-messages)
 * at `url`, default model mock/mock-model, fast agent-level retries, no silent SDK retries.
 */
export function makeE2eEnv(url: string, opts: { settings?: Record<string, unknown>; noDefaultModel?: boolean } = {}): E2eEnv {
  const root = mkdtempSync(join(tmpdir(), "pi-e2e-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const model = (id: string) => ({ id, name: id, reasoning: false, input: ["text", "image"], contextWindow: 128000, maxTokens: 4096 });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: { baseUrl: `${url}/v1`, api: "openai-completions", apiKey: "MOCK_KEY_VALUE_123", models: [model("mock-model")] },
        "mock-anthropic": { baseUrl: url, api: "anthropic-messages", apiKey: "MOCK_ANTHROPIC_KEY_456", models: [model("mock-claude")] },
      },
    }),
  );
  writeFileSync(
    join(agentDir, "settings.json"),
    JSON.stringify({
      ...(opts.noDefaultModel ? {} : { defaultProvider: "mock", defaultModel: "mock-model" }),
      retry: { enabled: true, maxRetries: 3, baseDelayMs: 10, maxDelayMs: 50, provider: { maxRetries: 0 } },
      // MCP test servers are node processes: on a busy machine they may take many seconds to start.
      mcp: { connectTimeoutMs: 120_000 },
      ...opts.settings,
    }),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  for (const k of Object.keys(env)) if (/_API_KEY$|^ANTHROPIC_OAUTH_TOKEN$/.test(k)) delete env[k];
  // Retried: a CLI that is still exiting (a TUI whose tmux was just killed) may be writing its
  // session or other files under the folder while it is removed (ENOTEMPTY).
  const cleanup = () => {
    endProcessesIn(root);
    rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
  };
  return { root, agentDir, cwd, env, cleanup };
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Ends the processes still working in `root` (their working folder is in it; Linux /proc): a
 * CLI a test killed with SIGKILL leaves its children running, such as the git processes of a
 * checkpoint capture, which go on writing under the agent dir while the folder is removed.
 * Waits (at most 5 s) until they are gone.
 */
export function endProcessesIn(root: string): void {
  if (process.platform !== "linux") return;
  const inRoot = (pid: string) => {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      return cwd === root || cwd.startsWith(root + "/");
    } catch {
      return false;
    }
  };
  let pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid && inRoot(d));
  for (const pid of pids) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      /* gone meanwhile */
    }
  }
  const deadline = Date.now() + 5000;
  while (pids.length && Date.now() < deadline) {
    pids = pids.filter((pid) => alive(Number(pid)));
    if (pids.length) Atomics.wait(pause, 0, 0, 10);
  }
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to completion. stdin gets `input` (or is closed at once). */
export function runCli(args: string[], e: Pick<E2eEnv, "env" | "cwd">, opts: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: e.cwd, env: { ...e.env, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    const timer = setTimeout(() => {
      // A run that never ends: say what it was doing (its output so far and its child processes), then end it.
      let children = "";
      try {
        children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim();
      } catch {
        /* not Linux, or gone */
      }
      console.error(`runCli: ${args.join(" ")} still running after ${opts.timeoutMs ?? 120_000} ms (child processes: ${children || "none"}); stderr so far:\n${Buffer.concat(err).toString("utf8").slice(-4000)}\nstdout so far (end):\n${Buffer.concat(out).toString("utf8").slice(-2000)}`);
      child.kill("SIGKILL");
    }, opts.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** Spawn without waiting (for signals, RPC). */
export function spawnCli(args: string[], e: Pick<E2eEnv, "env" | "cwd">, env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { cwd: e.cwd, env: { ...e.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
}

export function jsonLines(stdout: string): any[] {
  return stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}
