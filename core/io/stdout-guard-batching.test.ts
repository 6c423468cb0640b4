/**
 * The guard's batching (issue 20): records queued while a write is in flight go out together
 * once the current turn of the event loop is done (one write for a burst of records instead of
 * one per record), a lone record goes out at once, and nothing is reordered or lost.
 */
import { describe, it, expect } from "@jest/globals";
import { StdoutGuard, type GuardOutput } from "./stdout-guard.js";

/** Like a pipe with room: each write is accepted at once, its callback comes on the next tick. */
class PipeLike implements GuardOutput {
  writes: string[] = [];
  write(chunk: string, cb: (e?: Error | null) => void): boolean {
    this.writes.push(chunk);
    process.nextTick(cb);
    return true;
  }
}

describe("stdout guard batching", () => {
  it("a burst of awaited records in one turn of the event loop is a handful of writes, in order", async () => {
    const out = new PipeLike();
    const guard = new StdoutGuard({ output: out as never, onBroken: () => undefined });
    const n = 500;
    // Each record awaited and then a tick (as an event passes through hooks and streams): the
    // write callbacks come in between, yet the records wait for the end of the turn together.
    for (let i = 0; i < n; i++) {
      await guard.writeRecord({ i });
      await new Promise<void>((r) => process.nextTick(r));
    }
    await guard.flush();
    const lines = out.writes.join("").split("\n").filter(Boolean);
    expect(lines).toEqual(Array.from({ length: n }, (_, i) => JSON.stringify({ i })));
    expect(out.writes.length).toBeLessThanOrEqual(3);
  });

  it("a lone record is written at once, within write()", () => {
    const out = new PipeLike();
    const guard = new StdoutGuard({ output: out as never, onBroken: () => undefined });
    void guard.writeRecord({ a: 1 });
    expect(out.writes).toEqual(['{"a":1}\n']);
  });

  it("a burst past the high-water mark is not held for the turn", async () => {
    const out = new PipeLike();
    const guard = new StdoutGuard({ output: out as never, onBroken: () => undefined, highWaterMark: 100 });
    const big = "x".repeat(60);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) writes.push(guard.write(`${big}${i}\n`));
    // Over the mark: the producer is told to wait, and the queue is written without waiting for the turn.
    await new Promise<void>((r) => process.nextTick(r));
    await new Promise<void>((r) => process.nextTick(r));
    expect(out.writes.length).toBeGreaterThanOrEqual(2);
    await Promise.all(writes);
    await guard.flush();
    expect(out.writes.join("")).toBe(Array.from({ length: 6 }, (_, i) => `${big}${i}\n`).join(""));
  });
});
