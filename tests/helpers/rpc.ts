/**
 * A raw RPC harness for end-to-end tests: spawns `pi --mode rpc` and exposes stdin writes and
 * the parsed stdout records, for tests that need exact bytes (framing) or flow control.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { JsonlLineReader } from "../../core/stores/io/jsonl.js";
import { CLI, type E2eEnv } from "./e2e.js";

export class RawRpc {
  readonly child: ChildProcess;
  readonly records: any[] = [];
  stderr = "";
  private readonly waiters = new Set<() => void>();
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(e: Pick<E2eEnv, "env" | "cwd">, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [CLI, "--mode", "rpc", ...args], { cwd: e.cwd, env: { ...e.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    const reader = new JsonlLineReader((line) => {
      this.records.push(JSON.parse(line));
      for (const w of [...this.waiters]) w();
    });
    this.child.stdout!.on("data", (c: Buffer) => reader.push(c));
    this.child.stdout!.on("end", () => reader.end());
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (c: string) => (this.stderr += c));
    this.child.stdin!.on("error", () => {});
    this.closed = new Promise((resolve) => this.child.on("close", (code, signal) => resolve({ code, signal })));
  }

  write(text: string | Buffer): void {
    this.child.stdin!.write(text);
  }
  send(obj: unknown): void {
    this.write(JSON.stringify(obj) + "\n");
  }
  end(text?: string): void {
    this.child.stdin!.end(text);
  }

  /** The first record (from the start) matching `pred`; rejects after `timeoutMs` naming `what`. */
  waitFor(pred: (r: any) => boolean, what = "a record", timeoutMs = 90_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.records.find(pred);
        if (hit !== undefined) {
          done();
          resolve(hit);
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const onClose = () => {
        if (!check()) {
          done();
          reject(new Error(`the process exited while waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`));
        }
      };
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        this.child.off("close", onClose);
      };
      const waiter = () => void check();
      if (check()) return;
      this.waiters.add(waiter);
      this.child.on("close", onClose);
    });
  }

  response(id: string | number, timeoutMs?: number): Promise<any> {
    return this.waitFor((r) => r.type === "response" && r.id === id, `the response to ${id}`, timeoutMs);
  }

  /** Kills the process if it still runs and waits for it. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.closed;
  }
}

/** VmRSS of a process in KiB (Linux /proc), or undefined when it is gone. */
export async function rssKiB(pid: number): Promise<number | undefined> {
  const { readFile } = await import("node:fs/promises");
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes the process has written so far (all descriptors), from /proc/<pid>/io. */
export async function writtenBytes(pid: number): Promise<number | undefined> {
  const { readFile } = await import("node:fs/promises");
  try {
    const io = await readFile(`/proc/${pid}/io`, "utf8");
    const m = /wchar:\s+(\d+)/.exec(io);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
