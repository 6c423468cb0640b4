/**
 * The stdout guard (protocol.md §1): in the non-interactive modes (print, json, rpc) stdout
 * carries protocol output only, written by exactly one serialised writer with backpressure.
 *
 * ## Why the guard writes through `process.stdout`'s own stream (measured, Node 20.20, Linux)
 *
 * - stdout is a **pipe** (`pi --mode rpc` under a parent, `pi --mode json | jq`): `process.stdout`
 *   is a `net.Socket`; libuv puts fd 1 in O_NONBLOCK mode the first time `process.stdout` is
 *   touched (fdinfo flags `02000001` → `02004001`). `write()` tries the syscall at once and, when
 *   the pipe is full, queues the rest in user space and returns. With a reader that stopped,
 *   timers kept firing (the event loop is NOT blocked) while `writableLength` grew to 12.8 MB in
 *   1.5 s of a plain `process.stdout.write` loop — the real danger is unbounded memory, and a
 *   `process.exit()` then drops everything still queued (64 KiB of 12.8 MB arrived).
 * - `fs.writeSync(1, …)` on a pipe nobody made non-blocking blocks the whole thread until the
 *   reader drains (1.9 s with a reader asleep 2 s: the RPC server could not read `abort`); once
 *   libuv made fd 1 non-blocking, the same call throws EAGAIN instead. `fs.write` (async) would
 *   park a thread-pool thread or need EAGAIN polling.
 * - stdout is a **file**: a `SyncWriteStream` (synchronous `writeSync`, fine: files never stall).
 *   A **TTY**: a `tty.WriteStream` with blocking writes (fine for a terminal).
 *
 * So the guard keeps using the stream Node already made for fd 1 (epoll-driven, never blocks the
 * loop on a pipe, correct for files and TTYs, no second handle on fd 1), and adds what it lacks:
 * one queue, one write in flight at a time (the records queued meanwhile are joined into one
 * chunk: fewer syscalls, no interleaving), and promises that wait while more than
 * `highWaterMark` bytes are queued, so an awaiting producer (the agent loop) slows down to the
 * reader's pace and memory stays bounded. Passing a file descriptor number as `output` instead
 * selects a plain `fs.write` writer (partial writes continued, EAGAIN retried with backoff).
 *
 * Measured with 200,000 small `message_update` records (7.8 MB) into a pipe, producer awaiting
 * each write: plain `process.stdout.write` 403 ms / 189 MiB RSS; the guard 226 ms / 67 MiB
 * (batching makes it faster). With a reader asleep for 2 s: plain 193 MiB RSS, the guard 65 MiB
 * with at most 64 KiB queued, and its 5 ms timer fired 395 times meanwhile (the loop stayed live).
 *
 * ## What takeover() can and cannot redirect
 *
 * It replaces `write` on the target (`process.stdout` by default), which is what `console.log`,
 * `console.info`, `process.stdout.write` and most libraries go through. Writes straight to fd 1
 * (`fs.writeSync(1, …)`, a child process inheriting fd 1) are sent to stderr by fd1-guard.ts,
 * which the protocol modes install with it.
 *
 * Node built-ins only.
 */
import { unguardedFsWrite as fsWrite, guardDescriptorOne } from "./fd1-guard.js";
import { isatty } from "node:tty";
import { serializeRecord } from "./jsonl.js";

/** The part of a Writable the guard writes through (a `net.Socket`, `tty.WriteStream`, `SyncWriteStream`, a test fake). */
export interface GuardOutput {
  write(chunk: string | Uint8Array, callback: (error?: Error | null) => void): boolean;
  /** When present, the guard listens for `"error"` so a broken stream never raises an unhandled error. */
  on?(event: "error", listener: (error: Error) => void): unknown;
  /** When a stream was destroyed by a transient error, the guard continues on its fd if it has one. */
  readonly destroyed?: boolean;
  readonly fd?: number;
}

/** Anything with a Writable-style `write` (for stderr and the takeover target). */
export interface WritableLike {
  write(...args: any[]): boolean;
}

export interface StdoutGuardOptions {
  /**
   * The real output: a stream (default `process.stdout`, looked up when the guard is created) or a file descriptor
   * number (written with `fs.write`).
   */
  output?: GuardOutput | number;
  /** Where stray stdout writes go during takeover, and where the default `onBroken` reports. Default `process.stderr`. */
  stderr?: WritableLike;
  /** The object whose `write` takeover() replaces. Default `process.stdout`. */
  target?: WritableLike;
  /**
   * `write()`/`writeRecord()` promises resolve only while fewer than this many bytes (UTF-8) are
   * queued and not yet accepted by the OS. Default 64 KiB (one Linux pipe buffer).
   */
  highWaterMark?: number;
  /**
   * Called once when the output breaks (EPIPE, EBADF, a closed or destroyed stream, ENOSPC…);
   * queued data is dropped and later writes resolve without writing. Default: report to stderr
   * (except for EPIPE, the reader going away), flush stderr, `process.exit(1)`.
   */
  onBroken?: (error: Error) => void;
}

type RawWrite = (chunk: string | Uint8Array, done: (error: Error | null) => void) => void;

const DEFAULT_HIGH_WATER_MARK = 64 * 1024;
const RETRY_MIN_MS = 1;
const RETRY_MAX_MS = 50;
const RESOLVED: Promise<void> = Promise.resolve();
/** takeover() redirect functions → the `write` each one replaced. */
const REDIRECTED = new WeakMap<Function, (...args: any[]) => boolean>();

/** EAGAIN / EWOULDBLOCK / EINTR: the write may simply be tried again. */
export function isTransientWriteError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "EAGAIN" || code === "EWOULDBLOCK" || code === "EINTR";
}

/**
 * The one writer that owns real stdout.
 *
 * - `write()` / `writeRecord()` append to one FIFO queue; records never interleave, even when
 *   called concurrently without awaiting. They never reject for I/O reasons; they reject only
 *   for invalid input (a non-string given to `write`, a value without a JSON form given to
 *   `writeRecord`), and then queue nothing.
 * - Each returned promise resolves once the data is queued and fewer than `highWaterMark` bytes
 *   are waiting; awaiting it is the backpressure. Callers that do not await still get ordered
 *   output, only without the memory bound.
 * - `flush()` resolves when everything written so far has been accepted by the OS (the stream's
 *   write callback ran), or the output broke.
 * - Transient errors (EAGAIN, EWOULDBLOCK, EINTR) are retried with a backoff of 1 ms doubling to
 *   50 ms, indefinitely (a reader that stalls is backpressure, not failure). Any other error
 *   breaks the guard: `onBroken(error)` is called once, pending promises resolve, later writes are
 *   dropped. Nothing is ever thrown or left as an unhandled rejection.
 * - `takeover()` sends every other stdout write to stderr; `release()` undoes it.
 */
export class StdoutGuard {
  private readonly rawWriteStream: RawWrite | undefined;
  private rawWrite: RawWrite;
  private readonly outputStream: GuardOutput | undefined;
  private readonly stderrStream: WritableLike;
  private readonly targetOption: WritableLike | undefined;
  private readonly highWaterMark: number;
  private readonly onBrokenCallback: (error: Error) => void;

  private pending: Array<string | Uint8Array> = [];
  private pendingBytes = 0;
  private inflight: string | Uint8Array | null = null;
  private inflightBytes = 0;
  private retryDelay = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private waiters: Array<() => void> = [];
  private flushWaiters: Array<() => void> = [];
  private brokenError: Error | null = null;

  private takenTarget: WritableLike | undefined;
  private redirect: WritableLike["write"] | undefined;
  /** The target's own `write` property before takeover (undefined: it came from the prototype). */
  private savedOwnWrite: { value: WritableLike["write"] } | undefined;

  constructor(options: StdoutGuardOptions = {}) {
    const hwm = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
    if (!Number.isFinite(hwm) || hwm <= 0) {
      throw new RangeError(`StdoutGuard: highWaterMark must be a positive number of bytes, got ${String(hwm)}`);
    }
    this.highWaterMark = hwm;
    this.stderrStream = options.stderr ?? process.stderr;
    this.targetOption = options.target;
    this.onBrokenCallback = options.onBroken ?? ((error) => exitAfterStderr(error, this.stderrStream));

    const output = options.output ?? process.stdout;
    if (typeof output === "number") {
      if (!Number.isInteger(output) || output < 0) {
        throw new RangeError(`StdoutGuard: output fd must be a non-negative integer, got ${output}`);
      }
      this.rawWrite = fdWriter(output);
    } else {
      if (!output || typeof output.write !== "function") {
        throw new TypeError("StdoutGuard: output must be a writable stream (with write()) or a file descriptor number");
      }
      this.outputStream = output;
      // Captured now, so takeover() replacing `write` on the same object does not affect the guard;
      // if another guard already took this object over, write through what that redirect replaced.
      let write: GuardOutput["write"] = output.write;
      for (let inner = REDIRECTED.get(write); inner; inner = REDIRECTED.get(write)) write = inner;
      this.rawWriteStream = (chunk, done) => {
        write.call(output, chunk, (error?: Error | null) => done(error ?? null));
      };
      this.rawWrite = this.rawWriteStream;
      if (typeof output.on === "function") {
        // A Writable emits "error" after the failed write's callback; without a listener that
        // would be an uncaught exception. Transient errors are handled on the callback path.
        output.on("error", (error: Error) => {
          if (!isTransientWriteError(error)) this.fail(error);
        });
      }
    }
  }

  /** Bytes queued (waiting or being written) and not yet accepted by the OS. */
  get queuedBytes(): number {
    return this.pendingBytes + this.inflightBytes;
  }

  /** The error that broke the output, or null while it works. */
  get broken(): Error | null {
    return this.brokenError;
  }

  /** Whether takeover() is in effect. */
  get isTakenOver(): boolean {
    return this.takenTarget !== undefined;
  }

  /**
   * Queues raw text, or bytes already encoded as UTF-8 (the caller supplies any newline). See the
   * class comment for the promise contract.
   */
  write(text: string | Uint8Array): Promise<void> {
    const bytes = text instanceof Uint8Array;
    if (typeof text !== "string" && !bytes) {
      return Promise.reject(new TypeError(`StdoutGuard.write: expected a string or bytes, got ${typeof text}`));
    }
    if (this.brokenError || text.length === 0) return RESOLVED;
    this.pending.push(text);
    this.pendingBytes += bytes ? text.length : Buffer.byteLength(text, "utf8");
    if (this.inflight === null) this.startWrite();
    if (this.queuedBytes < this.highWaterMark || this.brokenError) return RESOLVED;
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /**
   * Queues one JSONL record, `JSON.stringify(v) + "\n"`. Rejects (before queueing anything) when
   * `v` has no JSON form or JSON.stringify throws (a cycle, a BigInt).
   */
  writeRecord(v: unknown): Promise<void> {
    let line: string;
    try {
      line = serializeRecord(v);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write(line);
  }

  /** Resolves when everything written so far has reached the OS (or the output broke). */
  flush(): Promise<void> {
    if (this.brokenError || (this.inflight === null && this.pending.length === 0)) return RESOLVED;
    return new Promise<void>((resolve) => this.flushWaiters.push(resolve));
  }

  /**
   * From now on every other write to the target (`process.stdout` by default: `console.log`,
   * `process.stdout.write`, library warnings) goes to stderr instead; only this guard writes to
   * the real output. Idempotent.
   */
  takeover(): void {
    if (this.takenTarget) return;
    const target = this.targetOption ?? process.stdout;
    const stderr = this.stderrStream;
    const redirect = function redirectedStdoutWrite(...args: any[]): boolean {
      return stderr.write(...args);
    };
    this.savedOwnWrite = Object.prototype.hasOwnProperty.call(target, "write") ? { value: target.write } : undefined;
    REDIRECTED.set(redirect, target.write);
    target.write = redirect;
    this.redirect = redirect;
    this.takenTarget = target;
  }

  /**
   * Undoes takeover(). If someone replaced `write` again after takeover(), their function is left
   * in place (restoring would silently drop their wrapper). Idempotent.
   */
  release(): void {
    const target = this.takenTarget;
    if (!target) return;
    if (target.write === this.redirect) {
      if (this.savedOwnWrite) target.write = this.savedOwnWrite.value;
      else delete (target as { write?: unknown }).write;
    }
    this.takenTarget = undefined;
    this.redirect = undefined;
    this.savedOwnWrite = undefined;
  }

  // ---- the one writer ----------------------------------------------------------------------

  /** Moves everything pending into one in-flight chunk and writes it. */
  private startWrite(): void {
    if (this.inflight !== null || this.brokenError || this.pending.length === 0) return;
    const p = this.pending;
    // bytes among the records: joined as bytes (each string encoded once)
    this.inflight = p.length === 1 ? p[0]! : p.some((x) => typeof x !== "string") ? Buffer.concat(p.map((x) => (typeof x === "string" ? Buffer.from(x, "utf8") : x))) : (p as string[]).join("");
    this.inflightBytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.attempt();
  }

  private attempt(): void {
    const chunk = this.inflight;
    if (chunk === null || this.brokenError) return;
    let settled = false;
    const done = (error: Error | null) => {
      if (settled) return;
      settled = true;
      this.afterWrite(error);
    };
    try {
      this.rawWrite(chunk, done);
    } catch (error) {
      done(toError(error));
    }
  }

  private afterWrite(error: Error | null): void {
    if (this.brokenError) return;
    if (error) {
      if (!isTransientWriteError(error)) {
        this.fail(error);
        return;
      }
      const delay = this.retryDelay;
      this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.retryAfterTransient(error);
      }, delay);
      return;
    }
    this.retryDelay = RETRY_MIN_MS;
    this.inflight = null;
    this.inflightBytes = 0;
    this.startWrite();
    this.wakeWaiters();
    if (this.inflight === null && this.pending.length === 0) this.wakeFlushers();
  }

  /** A Writable destroys itself on any error; if that happened, continue on its fd. */
  private retryAfterTransient(error: Error): void {
    if (this.brokenError) return;
    const stream = this.outputStream;
    if (stream && this.rawWrite === this.rawWriteStream && stream.destroyed === true) {
      const fd = fdOf(stream);
      if (fd === undefined) {
        this.fail(error);
        return;
      }
      this.rawWrite = fdWriter(fd);
    }
    this.attempt();
  }

  private wakeWaiters(): void {
    while (this.waiters.length > 0 && (this.brokenError || this.queuedBytes < this.highWaterMark)) {
      this.waiters.shift()!();
    }
  }

  private wakeFlushers(): void {
    const flushers = this.flushWaiters;
    this.flushWaiters = [];
    for (const resolve of flushers) resolve();
  }

  private fail(error: Error): void {
    if (this.brokenError) return;
    this.brokenError = error;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.pending = [];
    this.pendingBytes = 0;
    this.inflight = null;
    this.inflightBytes = 0;
    this.wakeWaiters();
    this.wakeFlushers();
    try {
      this.onBrokenCallback(error);
    } catch (callbackError) {
      try {
        this.stderrStream.write(`pi: stdout guard onBroken handler threw: ${toError(callbackError).message}\n`);
      } catch {
        // stderr is gone too; nothing left to report to.
      }
    }
  }
}

/** Whether fd 1 is a terminal (does not instantiate `process.stdout`). */
export function isStdoutTTY(): boolean {
  return isatty(1);
}

/** Whether fd 0 is a terminal (does not instantiate `process.stdin`). */
export function isStdinTTY(): boolean {
  return isatty(0);
}

// ---- helpers ------------------------------------------------------------------------------------

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function fdOf(stream: GuardOutput): number | undefined {
  if (typeof stream.fd === "number" && stream.fd >= 0) return stream.fd;
  const handleFd = (stream as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof handleFd === "number" && handleFd >= 0 ? handleFd : undefined;
}

/**
 * `fs.write` on a descriptor: continues partial writes and retries transient errors itself (it
 * knows how much was written), reporting only success or a hard error.
 */
function fdWriter(fd: number): RawWrite {
  return (chunk, done) => {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let offset = 0;
    let delay = RETRY_MIN_MS;
    const step = () => {
      fsWrite(fd, buffer, offset, buffer.length - offset, null, (error, written) => {
        if (error) {
          if (!isTransientWriteError(error)) return done(error);
          setTimeout(step, delay);
          delay = Math.min(delay * 2, RETRY_MAX_MS);
          return;
        }
        delay = RETRY_MIN_MS;
        offset += written;
        if (offset < buffer.length) step();
        else done(null);
      });
    };
    if (buffer.length === 0) done(null);
    else step();
  };
}

/**
 * The default `onBroken`: one line on stderr (not for EPIPE, the reader going away), then exit 1
 * — at once when stderr has nothing queued (the usual case, and the only one that also works
 * while a producer spins on already-resolved writes), else once stderr drained (at most 1 s).
 */
function exitAfterStderr(error: Error, stderr: WritableLike): void {
  process.exitCode = 1;
  const stream = stderr as WritableLike & {
    writableLength?: number;
    once?: (event: string, listener: () => void) => unknown;
  };
  let exited = false;
  const exit = () => {
    if (exited) return;
    exited = true;
    process.exit(1);
  };
  try {
    stream.once?.("error", exit);
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EPIPE") stream.write(`pi: stdout is broken (${error.message}); exiting\n`);
    if (!stream.writableLength) return exit();
    stream.once?.("drain", exit);
    setTimeout(exit, 1000);
  } catch {
    exit();
  }
}

// ---- protocol stdout from the first byte (security hardening) -------------------------
let earlyGuard: StdoutGuard | undefined;

/** The `--mode` value in raw argv (`--mode json`, `--mode=rpc`), or undefined. */
export function modeInArgv(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") break;
    if (a === "--mode") return argv[i + 1];
    if (a.startsWith("--mode=")) return a.slice("--mode=".length);
  }
  return undefined;
}

/**
/**
 * Whether raw argv asks for print mode explicitly: `-p`, `--print`, `--mode print`; `--mode text`
 * only without a terminal (in a terminal it opens the TUI).
 */
export function printModeInArgv(argv: readonly string[], inTerminal = isStdinTTY() && isStdoutTTY()): boolean {
  const mode = modeInArgv(argv);
  if (mode === "print" || (mode === "text" && !inTerminal)) return true;
  for (const a of argv) {
    if (a === "--") break;
    if (a === "-p" || a === "--print") return true;
  }
  return false;
}

/**
 * Send every stdout write to stderr from now on (idempotent): what the non-interactive modes
 * call before extensions and dependencies run, so stdout carries only the mode's own output (a
 * guard created later writes through to the real stdout, as does writeRealStdout()).
 */
export function protectStdout(): void {
  if (earlyGuard) return;
  earlyGuard = new StdoutGuard({ onBroken: () => undefined });
  earlyGuard.takeover();
}

/**
 * In the non-interactive modes (`--mode json|rpc|acp|text`, `-p`, or no terminal on stdin or
 * stdout) send every stdout write to stderr from now on — before any plugin, extension or
 * dependency module loads — so stdout carries only what the mode's own guard writes: the
 * protocol, or print mode's answer. In the protocol modes (json, rpc, acp) writes straight to
 * descriptor 1 and children inheriting stdout go to stderr too. Returns whether stdout is now
 * protected.
 */
export function protectProtocolStdout(argv: readonly string[], tty: { stdin?: boolean; stdout?: boolean } = {}): boolean {
  const mode = modeInArgv(argv);
  const protocol = mode === "json" || mode === "rpc" || mode === "acp";
  // No terminal on either side means print mode too (unless a mode is named).
  const noTerminal = !(tty.stdin ?? isStdinTTY()) || !(tty.stdout ?? isStdoutTTY());
  if (!protocol && !printModeInArgv(argv, !noTerminal) && !(mode === undefined && noTerminal)) return false;
  if (protocol) guardDescriptorOne();
  protectStdout();
  return true;
}

/**
 * Write to the real stdout even while stray writes are redirected (the CLI's own answers before
 * a mode starts: help, listings, a subcommand's output).
 */
export function writeRealStdout(chunk: string): boolean {
  let write = process.stdout.write as (...args: any[]) => boolean;
  for (let inner = REDIRECTED.get(write); inner; inner = REDIRECTED.get(write)) write = inner;
  return write.call(process.stdout, chunk);
}
// ---- end protocol stdout from the first byte ------------------------------------------------------
