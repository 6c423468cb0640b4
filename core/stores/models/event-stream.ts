/**
 * A small AssistantMessageEvent stream with pi-ai's shape (push / end / async iterator /
 * result()), so plugins and the kernel can build streams without loading pi-ai's root module.
 *
 * Also: `createLazyStream()`, which returns a stream synchronously and forwards the events of a
 * stream that is produced later (a provider module still loading), and `errorMessage()`, the
 * one way a failure becomes a final `error` event. A stream made here never throws to its
 * reader: every failure ends it with `{type:"error", reason, error}`.
 */
import type { AssistantMessage, AssistantMessageEvent, Usage } from "@mariozechner/pi-ai";
import type { AssistantStream } from "../../kernel/kernel.js";

type Waiter = (r: IteratorResult<AssistantMessageEvent>) => void;

function isTerminal(e: AssistantMessageEvent): e is Extract<AssistantMessageEvent, { type: "done" | "error" }> {
  return e.type === "done" || e.type === "error";
}

export class AssistantMessageEventStream implements AssistantStream {
  private queue: AssistantMessageEvent[] = [];
  private head = 0;
  private waiters: Waiter[] = [];
  private drainWaiters: (() => void)[] = [];
  private reading = false;
  private closed = false;
  private settled = false;
  private resolveResult!: (m: AssistantMessage) => void;
  private readonly finalResult: Promise<AssistantMessage>;

  constructor() {
    this.finalResult = new Promise<AssistantMessage>((resolve) => {
      this.resolveResult = resolve;
    });
  }

  /** Where events go instead of this stream's queue (redirectTo). */
  private target?: { to: AssistantMessageEventStream; onEnd: (result: AssistantMessage | undefined, last: AssistantMessage | undefined) => void };
  private lastPartial?: AssistantMessage;

  /** True once a terminal event was pushed or end() was called. */
  get isDone(): boolean {
    return this.closed;
  }

  /** Events pushed and not yet taken by a reader. */
  get backlog(): number {
    return this.target ? this.target.to.backlog : this.queue.length - this.head;
  }

  /**
   * From now on every event pushed here goes straight to `to` (the queued ones first),
   * and drained()/backlog are `to`'s: one queue between producer and reader instead of two, and
   * the producer feels the real reader's pace. This stream's result() still settles. When it
   * ends without a terminal event, `onEnd(result given to end(), last partial)` decides how `to`
   * ends. For a stream nobody iterates yet (createLazyStream adopting its inner stream).
   */
  redirectTo(to: AssistantMessageEventStream, onEnd: (result: AssistantMessage | undefined, last: AssistantMessage | undefined) => void): void {
    if (this.reading || this.target) throw new Error("redirectTo: the stream is already being read");
    const queued = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    this.target = { to, onEnd };
    let terminal = false;
    for (const ev of queued) {
      if ("partial" in ev) this.lastPartial = ev.partial;
      if (isTerminal(ev)) terminal = true;
      to.push(ev);
    }
    if (this.closed && !terminal) onEnd(this.endResult, this.lastPartial);
  }

  private endResult?: AssistantMessage;

  /**
   * Resolves once a reader has taken every queued event: what a producer awaits to go no faster
   * than its reader (backpressure). Resolves at once when nothing is queued, when nobody iterates
   * the stream (a caller that only awaits result() must not stall its producer) or once closed.
   */
  drained(): Promise<void> {
    if (this.target) return this.target.to.drained();
    if (this.backlog === 0 || !this.reading) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Queue one event. Events after the terminal `done`/`error` are dropped. */
  push(event: AssistantMessageEvent): void {
    if (this.closed) return;
    if (isTerminal(event)) {
      this.closed = true;
      this.settle(event.type === "done" ? event.message : event.error);
    }
    if (this.target) {
      if ("partial" in event) this.lastPartial = event.partial;
      this.target.to.push(event);
      return;
    }
    const w = this.waiters.shift();
    if (w) w({ value: event, done: false });
    else this.queue.push(event);
    if (this.closed) this.flushWaiters();
  }

  /** Close the stream; `result` settles result() when no terminal event did. */
  end(result?: AssistantMessage): void {
    const terminated = this.closed;
    this.closed = true;
    if (result !== undefined) this.settle(result);
    if (this.target) {
      if (!terminated) this.target.onEnd(result, this.lastPartial);
      return;
    }
    this.endResult = result;
    this.flushWaiters();
  }

  result(): Promise<AssistantMessage> {
    return this.finalResult;
  }

  /** Whether a reader has started iterating this stream. */
  get isBeingRead(): boolean {
    return this.reading;
  }

  [Symbol.asyncIterator](): AsyncIterator<AssistantMessageEvent> {
    this.reading = true;
    return {
      next: (): Promise<IteratorResult<AssistantMessageEvent>> => {
        if (this.head < this.queue.length) {
          const value = this.queue[this.head++]!;
          if (this.head === this.queue.length) {
            // Everything queued is taken: release the producer and drop the references.
            this.queue.length = 0;
            this.head = 0;
            this.releaseProducer();
          }
          // Compact now and then so a long stream does not keep every event alive.
          if (this.head > 1024 && this.head * 2 > this.queue.length) {
            this.queue = this.queue.slice(this.head);
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<AssistantMessageEvent>>((resolve) => this.waiters.push(resolve));
      },
      return: (): Promise<IteratorResult<AssistantMessageEvent>> => {
        this.reading = false;
        this.releaseProducer();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private releaseProducer() {
    if (!this.drainWaiters.length) return;
    const w = this.drainWaiters;
    this.drainWaiters = [];
    for (const r of w) r();
  }

  private settle(m: AssistantMessage) {
    if (this.settled) return;
    this.settled = true;
    this.resolveResult(m);
  }

  private flushWaiters() {
    if (this.head < this.queue.length) return; // readers will drain the queue first
    this.releaseProducer();
    while (this.waiters.length) this.waiters.shift()!({ value: undefined, done: true });
  }
}

export function createAssistantMessageEventStream(): AssistantMessageEventStream {
  return new AssistantMessageEventStream();
}

/** The identity of the model a message is attributed to. */
export interface MessageOrigin {
  api: string;
  provider: string;
  id: string;
}

export function emptyUsage(): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/** An empty assistant message attributed to `model`. */
export function emptyAssistantMessage(model: MessageOrigin): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * The final message of a failed stream: `partial` content is kept, stopReason is "error" or
 * "aborted" and errorMessage says why.
 */
export function errorMessage(
  model: MessageOrigin,
  error: unknown,
  reason: "error" | "aborted" = "error",
  partial?: AssistantMessage,
): AssistantMessage {
  const base = partial ?? emptyAssistantMessage(model);
  return {
    ...base,
    stopReason: reason,
    errorMessage: reason === "aborted" && error === undefined ? "Request was aborted" : describeError(error),
  };
}

/** A stream that holds only a final `error` event. */
export function errorStream(model: MessageOrigin, error: unknown, reason: "error" | "aborted" = "error"): AssistantMessageEventStream {
  const s = new AssistantMessageEventStream();
  const msg = errorMessage(model, error, reason);
  s.push({ type: "error", reason, error: msg });
  s.end(msg);
  return s;
}

/** Events the lazy stream forwards ahead of its reader before it waits for it. */
const FORWARD_HIGH_WATER = 64;

/**
 * Return a stream now; call `start()` (which may load a module first, may throw synchronously
 * or reject) and forward what it produces. Guarantees exactly one terminal event: a failure to
 * start, an iteration error, or an inner stream that ends without `done`/`error` each become a
 * final `error` event (content received so far is kept).
 */
export function createLazyStream(
  model: MessageOrigin,
  start: () => AssistantStream | Promise<AssistantStream>,
  opts: { signal?: AbortSignal; label?: string } = {},
): AssistantMessageEventStream {
  const outer = new AssistantMessageEventStream();
  const label = opts.label ? `${opts.label}: ` : "";
  const fail = (error: unknown, partial?: AssistantMessage) => {
    if (outer.isDone) return;
    const reason = opts.signal?.aborted ? "aborted" : "error";
    const msg = errorMessage(model, reason === "aborted" ? undefined : `${label}${describeError(error)}`, reason, partial);
    outer.push({ type: "error", reason, error: msg });
    outer.end(msg);
  };
  void (async () => {
    let inner: AssistantStream;
    try {
      inner = await start();
    } catch (error) {
      fail(error);
      return;
    }
    if (inner instanceof AssistantMessageEventStream && !inner.isBeingRead) {
      // Our own stream: adopt it (one queue, the reader's pace straight to its producer).
      inner.redirectTo(outer, (result, last) => {
        if (result && result.stopReason !== "error" && result.stopReason !== "aborted") {
          outer.push({ type: "done", reason: result.stopReason, message: result });
          outer.end(result);
        } else fail(result?.errorMessage ?? "the provider stream ended without a final event", result ?? last);
      });
      return;
    }
    let last: AssistantMessage | undefined;
    try {
      for await (const ev of inner) {
        if ("partial" in ev) last = ev.partial;
        outer.push(ev);
        if (outer.isDone) break;
        // Backpressure: pull from the inner stream no faster than the outer one is read.
        if (outer.backlog >= FORWARD_HIGH_WATER) await outer.drained();
      }
    } catch (error) {
      fail(error, last);
      return;
    }
    if (!outer.isDone) {
      let final: AssistantMessage | undefined;
      try {
        final = await Promise.race([inner.result(), Promise.resolve(undefined)]);
      } catch {
        final = undefined;
      }
      if (final && final.stopReason !== "error" && final.stopReason !== "aborted") {
        outer.push({ type: "done", reason: final.stopReason, message: final });
        outer.end(final);
      } else fail(final?.errorMessage ?? "the provider stream ended without a final event", final ?? last);
    }
  })();
  return outer;
}

/** Call a provider's stream function (sync or async, possibly throwing) and get a stream that never throws. */
export function toAssistantStream(
  model: MessageOrigin,
  call: () => AssistantStream | Promise<AssistantStream>,
  opts: { signal?: AbortSignal; label?: string } = {},
): AssistantStream {
  let direct: AssistantStream | Promise<AssistantStream>;
  try {
    direct = call();
  } catch (error) {
    return createLazyStream(model, () => Promise.reject(error), opts);
  }
  if (direct instanceof AssistantMessageEventStream) return direct;
  return createLazyStream(model, () => direct, opts);
}
