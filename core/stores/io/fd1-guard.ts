/**
 * Descriptor 1 in the protocol modes (json, rpc, acp): writes that go straight to fd 1 instead of
 * through `process.stdout` — `fs.writeSync(1, …)`, `fs.write(1, …)`, `fs.createWriteStream(null,
 * {fd: 1})`, `fs.writeFileSync(1, …)`, and a child process started with inherited stdout
 * (`stdio: "inherit"`, `[0, 1, 2]`, `process.stdout`) — are sent to fd 2 (stderr), so the
 * protocol on stdout cannot be corrupted by an extension or a dependency.
 *
 * Node has no `dup2`, so the protocol cannot move to a descriptor of its own while fd 1 points at
 * stderr (opening `/proc/self/fd/1` fails for sockets, which is what Node-based clients give a
 * child); instead the `fs` and `child_process` functions that take a descriptor or a stdio list
 * are wrapped, and the ESM named exports are re-synced, so `import { writeSync } from "node:fs"`
 * gets the wrapped function too. The protocol writer itself (StdoutGuard) writes through
 * `process.stdout`'s handle, or through `unguardedFsWrite` below. Native code writing to fd 1
 * is not covered.
 */
import type * as FS from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";

const load = createRequire(import.meta.url);
/** The mutable CommonJS objects behind `node:fs` (the ESM namespace cannot be assigned to). */
const fs = load("node:fs") as typeof FS;

/** `fs.write` as it was before the guard (for the protocol writer's own fd writes). */
export const unguardedFsWrite: typeof FS.write = fs.write;

let installed = false;

/** A function of `fs` or `child_process` as it is wrapped: called with what its caller passed. */
type WrappableFn = (this: unknown, ...args: unknown[]) => unknown;

const toStderr = (fd: unknown) => (fd === 1 ? 2 : fd);

/** One stdio entry: inherited or explicit fd 1 becomes fd 2. */
function stdioEntry(entry: unknown, index: number): unknown {
  if (entry === 1) return 2;
  if (entry === "inherit" && index === 1) return 2;
  if (entry && typeof entry === "object" && (entry as { fd?: unknown }).fd === 1) return 2;
  return entry;
}

/** The options with stdout never inherited. */
export function guardStdio<T>(options: T): T {
  if (!options || typeof options !== "object") return options;
  const stdio = (options as { stdio?: unknown }).stdio;
  if (stdio === undefined) return options;
  let list: unknown[];
  if (stdio === "inherit") list = ["inherit", "inherit", "inherit"];
  else if (Array.isArray(stdio)) list = stdio;
  else return options;
  const next = list.map(stdioEntry);
  if (next.every((v, i) => v === list[i]) && stdio !== "inherit") return options;
  return { ...options, stdio: next };
}

/** Finds the options object among a child_process function's arguments and guards it. */
function guardArgs(name: string, args: unknown[]): unknown[] {
  const out = args.map((a) => (a && typeof a === "object" && !Array.isArray(a) && "stdio" in a ? guardStdio(a) : a));
  if (name === "fork") {
    // fork inherits stdout unless told otherwise (`silent` pipes it).
    const i = out.findIndex((a) => a && typeof a === "object" && !Array.isArray(a));
    const opts = (i >= 0 ? out[i] : undefined) as { stdio?: unknown; silent?: unknown } | undefined;
    if (!opts?.stdio && !opts?.silent) {
      const fixed = { ...opts, stdio: ["inherit", 2, "inherit", "ipc"] };
      if (i >= 0) out[i] = fixed;
      else return [out[0], Array.isArray(out[1]) ? out[1] : [], fixed];
    }
  }
  return out;
}

/** Send direct fd-1 writes and inherited child stdout to stderr. Idempotent. */
export function guardDescriptorOne(): void {
  if (installed) return;
  installed = true;
  const f = fs as unknown as Record<string, WrappableFn>;
  for (const name of ["write", "writeSync", "writev", "writevSync", "writeFile", "writeFileSync", "appendFile", "appendFileSync"]) {
    const original = f[name];
    if (typeof original !== "function") continue;
    const wrapped = function (this: unknown, fd: unknown, ...rest: unknown[]) {
      return original.call(this, toStderr(fd), ...rest);
    };
    Object.defineProperty(wrapped, "name", { value: original.name });
    f[name] = wrapped;
  }
  const originalCreateWriteStream = fs.createWriteStream;
  f.createWriteStream = function (path: unknown, options?: unknown) {
    if (options && typeof options === "object" && (options as { fd?: unknown }).fd === 1) options = { ...options, fd: 2 };
    return (originalCreateWriteStream as (...a: unknown[]) => unknown)(path, options);
  };
  // Loaded now (a few milliseconds of start-up in these modes): an ES module that imported it
  // before a wrap would keep the plain functions otherwise.
  wrapChildProcess(load("node:child_process") as Record<string, WrappableFn>);
  syncBuiltinESMExports();
}

let childProcessWrapped = false;
function wrapChildProcess(cp: Record<string, WrappableFn>): void {
  if (childProcessWrapped) return;
  childProcessWrapped = true;
  for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
    const original = cp[name];
    if (typeof original !== "function") continue;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      return original.apply(this, guardArgs(name, args));
    };
    Object.defineProperty(wrapped, "name", { value: original.name });
    cp[name] = wrapped;
  }
  syncBuiltinESMExports();
}
