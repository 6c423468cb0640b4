/**
 * Running npm and git, and reading a package.json out of an npm tarball.
 *
 * Child output never reaches our stdout (it may carry JSON or RPC records): it goes to the
 * `output` callback (stderr by default) and its tail is kept for the error message.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Receives the child's stdout and stderr as they arrive. */
  output?: (chunk: string) => void;
  /** Kill the child after this long. */
  timeoutMs?: number;
}

export class CommandError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

/** Run `command args…`; resolves with the captured output, rejects with a CommandError. */
export function runCommand(command: string, args: string[], opts: RunOptions = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let child;
    try {
      child = spawn(command, args, {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        stdio: ["ignore", "pipe", "pipe"],
        shell: process.platform === "win32" && !/\.(exe|com)$/i.test(command),
      });
    } catch (error) {
      reject(new CommandError(`cannot run ${command}: ${(error as Error).message}`, ""));
      return;
    }
    let captured = "";
    const take = (b: Buffer) => {
      const s = b.toString("utf8");
      captured += s;
      if (captured.length > 64 * 1024) captured = captured.slice(-32 * 1024);
      opts.output?.(s);
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    let timedOut = false;
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          child.kill("SIGKILL");
        }, opts.timeoutMs)
      : undefined;
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (timer) clearTimeout(timer);
      const why = error.code === "ENOENT" ? `${command} is not installed or not on PATH` : error.message;
      reject(new CommandError(`cannot run ${command}: ${why}`, captured));
    });
    child.once("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (code === 0) return resolvePromise(captured);
      const tail = captured.trim().split("\n").slice(-8).join("\n");
      const status = timedOut ? `timed out after ${opts.timeoutMs} ms` : code === null ? `was killed (${signal})` : `exited with code ${code}`;
      reject(new CommandError(`${[command, ...args].join(" ")} ${status}${tail ? `:\n${tail}` : ""}`, captured));
    });
  });
}

/** The package.json of an npm tarball (the first `<dir>/package.json` entry) or of a folder. */
export function readPackageJsonOf(path: string): Record<string, unknown> {
  const st = statSync(path);
  if (st.isDirectory()) {
    const pj = join(path, "package.json");
    if (!existsSync(pj)) throw new Error(`${path} has no package.json`);
    return JSON.parse(readFileSync(pj, "utf8"));
  }
  let data = readFileSync(path);
  if (data[0] === 0x1f && data[1] === 0x8b) data = gunzipSync(data);
  let longName: string | undefined;
  for (let off = 0; off + 512 <= data.length; ) {
    const header = data.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const str = (a: number, b: number) => header.subarray(a, b).toString("utf8").replace(/\0.*$/s, "");
    let name = str(0, 100);
    const prefix = str(345, 500);
    if (prefix) name = `${prefix}/${name}`;
    if (longName) {
      name = longName;
      longName = undefined;
    }
    const size = parseInt(str(124, 136).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48);
    const body = data.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = body.toString("utf8").replace(/\0.*$/s, "");
      continue;
    }
    if ((type === "0" || type === "\0") && /^[^/]+\/package\.json$/.test(name)) return JSON.parse(body.toString("utf8"));
  }
  throw new Error(`${path} is not an npm package tarball (no package.json inside)`);
}
