import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { Writable } from "node:stream";
import { Console } from "node:console";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { StdoutGuard, isTransientWriteError, type GuardOutput } from "./stdout-guard.js";

const here = dirname(fileURLToPath(import.meta.url));
const tick = () => new Promise<void>((r) => setImmediate(r));

function errnoError(code: string): NodeJS.ErrnoException {
  const error = new Error(`write ${code}`) as NodeJS.ErrnoException;
  error.code = code;
  return error;
}

/** A real Writable with a small buffer whose write completes only after a few event-loop turns. */
class SlowWritable extends Writable {
  chunks: string[] = [];
  maxWritableLength = 0;
  constructor(private readonly turns = 2) {
    super({ highWaterMark: 1024, decodeStrings: false });
  }
  override _write(chunk: string | Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.maxWritableLength = Math.max(this.maxWritableLength, this.writableLength);
    const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    let left = this.turns;
    const step = () => {
      if (--left > 0) return setImmediate(step);
      this.chunks.push(text);
      cb();
    };
    setImmediate(step);
  }
  get text(): string {
    return this.chunks.join("");
  }
}

/** A sink that holds every write callback until open() is called (a reader that stopped). */
class GateSink implements GuardOutput {
  chunks: string[] = [];
  private held: Array<() => void> = [];
  private isOpen = false;
  write(chunk: string, cb: (e?: Error | null) => void): boolean {
    const complete = () => {
      this.chunks.push(chunk);
      cb();
    };
    if (this.isOpen) setImmediate(complete);
    else this.held.push(complete);
    return false;
  }
  open(): void {
    this.isOpen = true;
    for (const complete of this.held.splice(0)) setImmediate(complete);
  }
  get heldCount(): number {
    return this.held.length;
  }
}

/** A stderr stand-in that records what it gets. */
class Sink {
  text = "";
  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean {
    this.text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    const cb = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    cb?.();
    return true;
  }
}

const noBroken = (error: Error) => {
  throw new Error(`unexpected onBroken: ${error.message}`);
};

describe("StdoutGuard writer", () => {
  it("never interleaves records from many concurrent writers, and keeps each writer's order", async () => {
    const out = new SlowWritable(1);
    const guard = new StdoutGuard({ output: out, stderr: new Sink(), highWaterMark: 8 * 1024, onBroken: noBroken });
    const writers = 40;
    const perWriter = 15;
    const producer = async (w: number) => {
      for (let i = 0; i < perWriter; i++) {
        // Large records of varying size with non-ASCII content.
        const body = `${w}:${i}:` + "é✓".repeat(200 + ((w * 7919 + i * 104729) % 6000));
        const p = guard.writeRecord({ w, i, body, len: body.length });
        if (i % 3 !== 0) await p; // some writes are not awaited at all
      }
    };
    await Promise.all(Array.from({ length: writers }, (_, w) => producer(w)));
    await guard.flush();

    const text = out.text;
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.slice(0, -1).split("\n");
    expect(lines).toHaveLength(writers * perWriter);
    const next = new Array<number>(writers).fill(0);
    for (const line of lines) {
      const record = JSON.parse(line) as { w: number; i: number; body: string; len: number };
      expect(record.body.length).toBe(record.len);
      expect(record.body.startsWith(`${record.w}:${record.i}:`)).toBe(true);
      expect(record.i).toBe(next[record.w]);
      next[record.w]!++;
    }
    expect(guard.queuedBytes).toBe(0);
  });

  it("applies backpressure: an awaiting producer is held while the reader stalls, and queued bytes stay bounded", async () => {
    const sink = new GateSink();
    const hwm = 4096;
    const guard = new StdoutGuard({ output: sink, stderr: new Sink(), highWaterMark: hwm, onBroken: noBroken });
    const record = { type: "message_update", delta: "x".repeat(500) };
    const recordBytes = JSON.stringify(record).length + 1;
    const total = 200;
    let produced = 0;
    let maxQueued = 0;
    const producer = (async () => {
      for (let i = 0; i < total; i++) {
        const p = guard.writeRecord({ ...record, seq: i });
        maxQueued = Math.max(maxQueued, guard.queuedBytes);
        await p;
        produced++;
      }
    })();

    for (let i = 0; i < 50; i++) await tick();
    // The reader has not accepted anything: the producer is parked after about hwm bytes.
    expect(produced).toBeLessThan(total);
    expect(produced).toBeLessThanOrEqual(Math.ceil(hwm / recordBytes) + 1);
    expect(sink.heldCount).toBe(1); // one write in flight at a time
    expect(guard.queuedBytes).toBeGreaterThanOrEqual(hwm);

    sink.open();
    await producer;
    await guard.flush();
    expect(maxQueued).toBeLessThanOrEqual(hwm + recordBytes + 20);
    const seqs = sink.chunks.join("").trimEnd().split("\n").map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i));
    // Records queued while a write was in flight were batched into fewer writes.
    expect(sink.chunks.length).toBeLessThan(total);
  });

  it("keeps a real slow Writable's own buffer small (one chunk in flight)", async () => {
    const out = new SlowWritable(3);
    const hwm = 2048;
    const guard = new StdoutGuard({ output: out, stderr: new Sink(), highWaterMark: hwm, onBroken: noBroken });
    const line = "y".repeat(300);
    for (let i = 0; i < 300; i++) await guard.write(`${i} ${line}\n`);
    await guard.flush();
    expect(out.maxWritableLength).toBeLessThanOrEqual(hwm + line.length + 10);
    const lines = out.text.trimEnd().split("\n");
    expect(lines.map((l) => Number(l.split(" ")[0]))).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it("flush() resolves only after the output accepted everything written so far", async () => {
    const sink = new GateSink();
    const guard = new StdoutGuard({ output: sink, stderr: new Sink(), onBroken: noBroken });
    void guard.write("a\n");
    void guard.write("b\n");
    let flushed = false;
    const flushing = guard.flush().then(() => (flushed = true));
    for (let i = 0; i < 10; i++) await tick();
    expect(flushed).toBe(false);
    sink.open();
    await flushing;
    expect(sink.chunks.join("")).toBe("a\nb\n");
    expect(guard.queuedBytes).toBe(0);
    await guard.flush(); // nothing pending: resolves at once
  });

  it("retries EAGAIN without losing, duplicating or reordering data", async () => {
    let attempts = 0;
    const written: string[] = [];
    const output: GuardOutput = {
      write(chunk, cb) {
        attempts++;
        if (attempts <= 3) setImmediate(() => cb(errnoError("EAGAIN")));
        else if (attempts === 5) setImmediate(() => cb(errnoError("EWOULDBLOCK")));
        else {
          written.push(chunk as string); // (the guard may pass bytes; these tests write text)
          setImmediate(() => cb(null));
        }
        return true;
      },
    };
    let brokenCalls = 0;
    const guard = new StdoutGuard({ output, stderr: new Sink(), onBroken: () => brokenCalls++ });
    for (let i = 0; i < 20; i++) void guard.writeRecord({ seq: i });
    await guard.flush();
    expect(brokenCalls).toBe(0);
    expect(attempts).toBeGreaterThanOrEqual(6);
    const seqs = written.join("").trimEnd().split("\n").map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("continues on the fd when EAGAIN destroyed a real stream", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-io-guard-"));
    const file = join(dir, "out.jsonl");
    const fd = openSync(file, "w");
    try {
      class FailingOnce extends Writable {
        readonly fd = fd;
        override _write(_c: unknown, _e: BufferEncoding, cb: (e?: Error | null) => void): void {
          cb(errnoError("EAGAIN")); // the Writable destroys itself after this
        }
      }
      let broken: Error | null = null;
      const guard = new StdoutGuard({ output: new FailingOnce(), stderr: new Sink(), onBroken: (e) => (broken = e) });
      await guard.writeRecord({ n: 1, text: "a\u2028b" });
      await guard.writeRecord({ n: 2 });
      await guard.flush();
      expect(broken).toBeNull();
      expect(readFileSync(file, "utf8")).toBe('{"n":1,"text":"a\u2028b"}\n{"n":2}\n');
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes to a file descriptor given as output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-io-guard-"));
    const file = join(dir, "out.jsonl");
    const fd = openSync(file, "w");
    try {
      const guard = new StdoutGuard({ output: fd, stderr: new Sink(), onBroken: noBroken });
      const big = "z".repeat(300_000);
      await Promise.all([guard.writeRecord({ a: 1 }), guard.writeRecord({ big }), guard.writeRecord({ c: "ü" })]);
      await guard.flush();
      expect(readFileSync(file, "utf8")).toBe(`{"a":1}\n{"big":"${big}"}\n{"c":"ü"}\n`);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("EPIPE calls onBroken once, releases waiting producers and drops later writes", async () => {
    const sink = new GateSink();
    const errors: Error[] = [];
    let failNext = false;
    const output: GuardOutput = {
      write(chunk, cb) {
        if (failNext) {
          setImmediate(() => cb(errnoError("EPIPE")));
          return false;
        }
        return sink.write(chunk as string, cb); // (text only in this test)
      },
    };
    const guard = new StdoutGuard({ output, stderr: new Sink(), highWaterMark: 100, onBroken: (e) => errors.push(e) });
    const first = guard.write("x".repeat(150) + "\n"); // in flight, held by the gate
    const second = guard.write("y".repeat(150) + "\n"); // queued, over the high-water mark
    let secondDone = false;
    void second.then(() => (secondDone = true));
    await tick();
    expect(secondDone).toBe(false);
    failNext = true;
    sink.open(); // the first write completes, the batch with the second fails with EPIPE
    await first;
    await second;
    await guard.flush();
    expect(errors).toHaveLength(1);
    expect((errors[0] as NodeJS.ErrnoException).code).toBe("EPIPE");
    expect(guard.broken).toBe(errors[0]);
    expect(guard.queuedBytes).toBe(0);
    await guard.writeRecord({ after: true });
    await guard.flush();
    expect(errors).toHaveLength(1);
    expect(sink.chunks.join("")).toBe("x".repeat(150) + "\n");
  });

  it("a real Writable failing with EPIPE raises no unhandled error and breaks once", async () => {
    class Broken extends Writable {
      override _write(_c: unknown, _e: BufferEncoding, cb: (e?: Error | null) => void): void {
        cb(errnoError("EPIPE"));
      }
    }
    const errors: Error[] = [];
    const output = new Broken();
    const guard = new StdoutGuard({ output, stderr: new Sink(), onBroken: (e) => errors.push(e) });
    await guard.writeRecord({ a: 1 });
    await guard.writeRecord({ b: 2 });
    await guard.flush();
    for (let i = 0; i < 5; i++) await tick(); // let the stream emit "error"
    expect(output.destroyed).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it("reports an onBroken handler that throws to stderr instead of throwing", async () => {
    const stderr = new Sink();
    const output: GuardOutput = { write: (_c, cb) => (setImmediate(() => cb(errnoError("EBADF"))), false) };
    const guard = new StdoutGuard({
      output,
      stderr,
      onBroken: () => {
        throw new Error("handler failed");
      },
    });
    await guard.write("a\n");
    await guard.flush();
    expect(stderr.text).toContain("handler failed");
  });

  it("writeRecord rejects values without a JSON form and writes nothing", async () => {
    const out = new SlowWritable(1);
    const guard = new StdoutGuard({ output: out, stderr: new Sink(), onBroken: noBroken });
    await expect(guard.writeRecord(undefined)).rejects.toThrow(/no JSON form/);
    await expect(guard.writeRecord({ n: 10n })).rejects.toThrow(TypeError);
    await guard.flush();
    expect(out.text).toBe("");
  });

  it("validates its options", () => {
    expect(() => new StdoutGuard({ output: new Sink() as unknown as GuardOutput, highWaterMark: 0 })).toThrow(/highWaterMark/);
    expect(() => new StdoutGuard({ output: -1 })).toThrow(/output fd/);
    expect(() => new StdoutGuard({ output: {} as GuardOutput })).toThrow(/output must be a writable stream/);
  });

  it("classifies transient errors", () => {
    expect(isTransientWriteError(errnoError("EAGAIN"))).toBe(true);
    expect(isTransientWriteError(errnoError("EINTR"))).toBe(true);
    expect(isTransientWriteError(errnoError("EPIPE"))).toBe(false);
    expect(isTransientWriteError(null)).toBe(false);
  });
});

describe("StdoutGuard takeover", () => {
  it("sends console output to stderr while taken over, and restores on release", async () => {
    const stdoutSink = new Sink();
    const stderr = new Sink();
    const target = new Writable({
      write(chunk: Buffer, _enc, cb) {
        stdoutSink.write(chunk.toString("utf8"));
        cb();
      },
    });
    const out = new SlowWritable(1);
    const guard = new StdoutGuard({ output: out, target, stderr, onBroken: noBroken });
    const console = new Console({ stdout: target, stderr: target });

    console.log("before");
    guard.takeover();
    expect(guard.isTakenOver).toBe(true);
    console.log("from an extension", { a: 1 });
    target.write("library warning\n");
    await guard.writeRecord({ type: "agent_start" });
    guard.release();
    expect(guard.isTakenOver).toBe(false);
    console.log("after");
    await guard.flush();
    for (let i = 0; i < 3; i++) await tick();

    expect(stderr.text).toBe("from an extension { a: 1 }\nlibrary warning\n");
    expect(stdoutSink.text).toBe("before\nafter\n");
    expect(out.text).toBe('{"type":"agent_start"}\n');
    expect(Object.prototype.hasOwnProperty.call(target, "write")).toBe(false);
  });

  it("keeps writing to an output that is also the takeover target", async () => {
    const out = new SlowWritable(1);
    const stderr = new Sink();
    const guard = new StdoutGuard({ output: out, target: out, stderr, onBroken: noBroken });
    guard.takeover();
    out.write("stray\n");
    await guard.writeRecord({ ok: true });
    await guard.flush();
    guard.release();
    expect(out.text).toBe('{"ok":true}\n');
    expect(stderr.text).toBe("stray\n");
  });

  it("a guard created after another one's takeover still writes to the real output", async () => {
    const out = new SlowWritable(1);
    const stderr = new Sink();
    const first = new StdoutGuard({ output: out, target: out, stderr, onBroken: noBroken });
    first.takeover();
    const second = new StdoutGuard({ output: out, target: out, stderr, onBroken: noBroken });
    await second.writeRecord({ from: "second" });
    await second.flush();
    first.release();
    expect(out.text).toBe('{"from":"second"}\n');
    expect(stderr.text).toBe("");
  });

  it("takes over the real process.stdout by default and restores it exactly", () => {
    const original = process.stdout.write;
    const hadOwn = Object.prototype.hasOwnProperty.call(process.stdout, "write");
    const stderr = new Sink();
    const guard = new StdoutGuard({ output: new SlowWritable(1), stderr, onBroken: noBroken });
    guard.takeover();
    guard.takeover(); // idempotent
    try {
      process.stdout.write("stray to real stdout\n");
    } finally {
      guard.release();
    }
    guard.release(); // idempotent
    expect(stderr.text).toBe("stray to real stdout\n");
    expect(process.stdout.write).toBe(original);
    expect(Object.prototype.hasOwnProperty.call(process.stdout, "write")).toBe(hadOwn);
  });

  it("release() leaves a wrapper installed after takeover() in place", () => {
    const target = new Sink();
    const guard = new StdoutGuard({ output: new SlowWritable(1), target, stderr: new Sink(), onBroken: noBroken });
    guard.takeover();
    const wrapper = () => true;
    target.write = wrapper;
    guard.release();
    expect(target.write).toBe(wrapper);
  });
});

// ---- a real stdout pipe, in a child process ------------------------------------------------------

describe("StdoutGuard on a real pipe (child process)", () => {
  const fixture = resolve(here, "../../../tests/fixtures/io/guard-child.mjs");
  let compiled: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // The child runs plain JS: compile the modules with swc (already used by jest) into a temp dir.
    const swc = await import("@swc/core");
    compiled = mkdtempSync(join(tmpdir(), "pi-io-child-"));
    writeFileSync(join(compiled, "package.json"), '{"type":"module"}\n');
    for (const name of ["stdout-guard", "fd1-guard", "jsonl"]) {
      const { code } = swc.transformFileSync(join(here, `${name}.ts`), {
        jsc: { parser: { syntax: "typescript" }, target: "es2022" },
        module: { type: "es6" },
        swcrc: false,
        configFile: false,
      });
      writeFileSync(join(compiled, `${name}.js`), code);
    }
  });

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  afterAll(() => {
    if (compiled) rmSync(compiled, { recursive: true, force: true });
  });

  function run(scenario: string) {
    const child = spawn(process.execPath, [fixture, compiled, scenario], { stdio: ["pipe", "pipe", "pipe"] });
    children.push(child);
    const reports: Array<Record<string, unknown>> = [];
    let stderrText = "";
    const listeners: Array<() => void> = [];
    let buffered = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderrText += chunk;
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith("@@ ")) reports.push(JSON.parse(line.slice(3)) as Record<string, unknown>);
        for (const l of listeners) l();
      }
    });
    const waitFor = (event: string) =>
      new Promise<Record<string, unknown>>((resolvePromise, reject) => {
        const check = () => {
          const found = reports.find((r) => r.event === event);
          if (found) resolvePromise(found);
        };
        listeners.push(check);
        child.once("exit", () => {
          check();
          reject(new Error(`child exited before "${event}"; stderr:\n${stderrText}`));
        });
        check();
      });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    return { child, waitFor, exited, stderr: () => stderrText };
  }

  it("holds the producer while the reader stalls, keeps the event loop answering stdin, loses nothing", async () => {
    const { child, waitFor, exited, stderr } = run("backpressure");
    // Nobody reads the child's stdout yet: the pipe fills and the guard makes the producer wait.
    await waitFor("blocked");
    child.stdin!.write('{"type":"ping"}\n');
    const pong = await waitFor("pong");
    expect(pong.produced as number).toBeLessThan(4000);

    // Now read everything.
    let out = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => (out += chunk));
    const done = await waitFor("done");
    expect(await exited).toBe(0);

    expect(done.maxQueued as number).toBeLessThanOrEqual((done.hwm as number) + (done.record as number));
    expect(done.queuedAfterFlush).toBe(0);
    const lines = out.trimEnd().split("\n");
    expect(lines).toHaveLength(4000);
    lines.forEach((line, i) => expect((JSON.parse(line) as { seq: number }).seq).toBe(i));
    // Stray writes went to stderr, not into the protocol stream.
    expect(out).not.toContain("stray");
    expect(stderr()).toContain("stray console.log from an extension\n");
    expect(stderr()).toContain("stray process.stdout.write\n");
  });

  it("ends the process with code 1 and no uncaught error when the reader closes stdout", async () => {
    const { child, waitFor, exited, stderr } = run("epipe");
    await waitFor("started");
    child.stdout!.destroy();
    expect(await exited).toBe(1);
    expect(stderr()).not.toMatch(/Unhandled|Uncaught|at .*stdout-guard/);
  });
});
