/**
 * Issue 20: the stdout guard also takes bytes already encoded as UTF-8 (RPC get_messages writes
 * its record as bytes copied from the session file), in order with text records, counting bytes
 * for backpressure, through a stream and through a file descriptor.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StdoutGuard, type GuardOutput } from "./stdout-guard.js";

/** Completes each write on a later turn, recording what it got (as bytes). */
class Sink implements GuardOutput {
  chunks: Buffer[] = [];
  write(chunk: string | Uint8Array, cb: (e?: Error | null) => void): boolean {
    this.chunks.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk));
    setImmediate(() => cb());
    return false;
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

describe("StdoutGuard with bytes", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("keeps the order of text and byte records, joined while a write is in flight", async () => {
    const sink = new Sink();
    const guard = new StdoutGuard({ output: sink, stderr: { write: () => true }, target: { write: () => true } });
    void guard.write("first ü\n");
    void guard.write(Buffer.from("second 🚀\n", "utf8"));
    void guard.writeRecord({ third: "漢字" });
    void guard.write(new Uint8Array(Buffer.from("fourth\n")));
    void guard.write("fifth\n");
    await guard.flush();
    expect(sink.text).toBe('first ü\nsecond 🚀\n{"third":"漢字"}\nfourth\nfifth\n');
    // the first write went alone; the four queued behind it went out as one chunk
    expect(sink.chunks).toHaveLength(2);
  });

  it("counts bytes for backpressure: a large byte record waits until it is written", async () => {
    const sink = new Sink();
    const guard = new StdoutGuard({ output: sink, highWaterMark: 1024, stderr: { write: () => true }, target: { write: () => true } });
    let resolved = false;
    const p = guard.write(Buffer.alloc(4096, 0x61)).then(() => (resolved = true));
    expect(guard.queuedBytes).toBe(4096);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(resolved).toBe(false); // the sink has not completed the write yet (it does on a later turn)
    await p;
    expect(resolved).toBe(true);
    expect(guard.queuedBytes).toBe(0);
    expect(sink.text).toBe("a".repeat(4096));
  });

  it("writes bytes through a file descriptor as they are", async () => {
    dir = mkdtempSync(join(tmpdir(), "guard-bytes-"));
    const file = join(dir, "out.jsonl");
    const fd = openSync(file, "w");
    try {
      const guard = new StdoutGuard({ output: fd, stderr: { write: () => true }, target: { write: () => true } });
      void guard.write("a ü\n");
      void guard.write(Buffer.from("b 🚀\n", "utf8"));
      await guard.flush();
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(file, "utf8")).toBe("a ü\nb 🚀\n");
  });

  it("rejects what is neither text nor bytes, and queues nothing", async () => {
    const sink = new Sink();
    const guard = new StdoutGuard({ output: sink, stderr: { write: () => true }, target: { write: () => true } });
    await expect(guard.write(42 as unknown as string)).rejects.toThrow(/expected a string or bytes, got number/);
    expect(guard.queuedBytes).toBe(0);
  });
});
