import { describe, it, expect } from "@jest/globals";
import type { AssistantMessageEvent } from "@mariozechner/pi-ai";
import { AssistantMessageEventStream, createLazyStream, emptyAssistantMessage, errorStream, toAssistantStream } from "./event-stream.js";
import type { AssistantStream } from "../../kernel/kernel.js";

const model = { api: "test-api", provider: "test", id: "m1" };

async function collect(s: AsyncIterable<AssistantMessageEvent>): Promise<AssistantMessageEvent[]> {
  const out: AssistantMessageEvent[] = [];
  for await (const e of s) out.push(e);
  return out;
}

function textStream(text: string): AssistantMessageEventStream {
  const s = new AssistantMessageEventStream();
  const msg = emptyAssistantMessage(model);
  setTimeout(() => {
    s.push({ type: "start", partial: msg });
    msg.content.push({ type: "text", text });
    s.push({ type: "text_start", contentIndex: 0, partial: msg });
    s.push({ type: "text_delta", contentIndex: 0, delta: text, partial: msg });
    s.push({ type: "text_end", contentIndex: 0, content: text, partial: msg });
    s.push({ type: "done", reason: "stop", message: msg });
    s.end();
  }, 1);
  return s;
}

describe("AssistantMessageEventStream", () => {
  it("delivers pushed events in order, before and after the reader starts, and resolves result()", async () => {
    const s = new AssistantMessageEventStream();
    const msg = emptyAssistantMessage(model);
    s.push({ type: "start", partial: msg });
    const reading = collect(s);
    await Promise.resolve();
    s.push({ type: "text_start", contentIndex: 0, partial: msg });
    s.push({ type: "done", reason: "stop", message: msg });
    s.push({ type: "text_start", contentIndex: 1, partial: msg }); // after the terminal event: dropped
    const events = await reading;
    expect(events.map((e) => e.type)).toEqual(["start", "text_start", "done"]);
    await expect(s.result()).resolves.toBe(msg);
  });

  it("end(result) settles result() for a stream without a terminal event", async () => {
    const s = new AssistantMessageEventStream();
    const msg = emptyAssistantMessage(model);
    s.end(msg);
    expect(await collect(s)).toEqual([]);
    await expect(s.result()).resolves.toBe(msg);
  });

  it("errorStream holds a single error event with the message", async () => {
    const events = await collect(errorStream(model, new Error("nope")));
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect(e.type).toBe("error");
    if (e.type === "error") {
      expect(e.reason).toBe("error");
      expect(e.error.stopReason).toBe("error");
      expect(e.error.errorMessage).toBe("nope");
      expect(e.error.provider).toBe("test");
    }
  });
});

describe("createLazyStream", () => {
  it("forwards the events of a stream produced later", async () => {
    const s = createLazyStream(model, async () => textStream("hi"));
    const events = await collect(s);
    expect(events.map((e) => e.type)).toEqual(["start", "text_start", "text_delta", "text_end", "done"]);
    const final = await s.result();
    expect(final.content).toEqual([{ type: "text", text: "hi" }]);
  });

  it("turns a synchronous throw into a final error event", async () => {
    const s = createLazyStream(model, () => {
      throw new Error("No API key for provider: test");
    });
    const events = await collect(s);
    expect(events).toHaveLength(1);
    const final = await s.result();
    expect(final.stopReason).toBe("error");
    expect(final.errorMessage).toContain("No API key for provider: test");
  });

  it("turns a failed load into an error event, with the label", async () => {
    const s = createLazyStream(model, () => Promise.reject(new Error("Cannot find module x")), { label: "loading test-api" });
    const final = await s.result();
    expect((await collect(s)).map((e) => e.type)).toEqual(["error"]);
    expect(final.errorMessage).toBe("loading test-api: Cannot find module x");
  });

  it("reports 'aborted' when the signal fired", async () => {
    const ac = new AbortController();
    ac.abort();
    const s = createLazyStream(model, () => Promise.reject(new Error("whatever")), { signal: ac.signal });
    const final = await s.result();
    expect(final.stopReason).toBe("aborted");
  });

  it("ends with an error (keeping partial content) when the inner stream stops without a terminal event", async () => {
    const inner = new AssistantMessageEventStream();
    const partial = emptyAssistantMessage(model);
    partial.content.push({ type: "text", text: "half" });
    setTimeout(() => {
      inner.push({ type: "start", partial });
      inner.end();
    }, 1);
    const s = createLazyStream(model, () => inner);
    const events = await collect(s);
    expect(events.map((e) => e.type)).toEqual(["start", "error"]);
    const final = await s.result();
    expect(final.stopReason).toBe("error");
    expect(final.content).toEqual([{ type: "text", text: "half" }]);
  });

  it("ends with an error when iterating the inner stream throws", async () => {
    const inner: AssistantStream = {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: emptyAssistantMessage(model) } as AssistantMessageEvent;
        throw new Error("socket closed");
      },
      result: () => new Promise(() => {}),
    };
    const s = createLazyStream(model, () => inner);
    const events = await collect(s);
    expect(events.map((e) => e.type)).toEqual(["start", "error"]);
    expect((await s.result()).errorMessage).toBe("socket closed");
  });
});

describe("createLazyStream adopting our own stream", () => {
  it("forwards events queued before and after, ends with end(result) as done, and passes the reader's pace to the producer", async () => {
    const inner = new AssistantMessageEventStream();
    const partial = emptyAssistantMessage(model);
    inner.push({ type: "start", partial });
    inner.push({ type: "text_start", contentIndex: 0, partial });
    const s = createLazyStream(model, async () => inner);
    const it = s[Symbol.asyncIterator]();
    expect((await it.next()).value?.type).toBe("start");
    // The producer now waits for the outer reader: nothing forwards ahead of it.
    inner.push({ type: "text_delta", contentIndex: 0, delta: "a", partial });
    let released = false;
    const waiting = inner.drained().then(() => (released = true));
    await new Promise<void>((r) => setImmediate(r));
    expect(released).toBe(false);
    expect(inner.backlog).toBe(2);
    expect((await it.next()).value?.type).toBe("text_start");
    expect((await it.next()).value?.type).toBe("text_delta");
    await waiting;
    expect(released).toBe(true);
    const final = { ...partial, content: [{ type: "text" as const, text: "a" }] };
    inner.end(final);
    const rest: string[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value.type);
    expect(rest).toEqual(["done"]);
    expect(await s.result()).toBe(final);
    expect(await inner.result()).toBe(final);
  });

  it("a stream a reader left part-way is taken up from where that reader stopped", async () => {
    const inner = textStream("hi");
    const reader = inner[Symbol.asyncIterator]();
    const first = await reader.next();
    expect(first.value?.type).toBe("start");
    await reader.return!();
    const s = createLazyStream(model, () => inner);
    expect((await collect(s)).map((e) => e.type)).toEqual(["text_start", "text_delta", "text_end", "done"]);
  });
});

describe("toAssistantStream", () => {
  it("passes our own streams through and wraps throwing or async stream functions", async () => {
    const own = textStream("x");
    expect(toAssistantStream(model, () => own)).toBe(own);
    const thrown = toAssistantStream(model, () => {
      throw new Error("sync");
    });
    expect((await thrown.result()).errorMessage).toBe("sync");
    const later = toAssistantStream(model, async () => textStream("later"));
    expect((await later.result()).content).toEqual([{ type: "text", text: "later" }]);
  });
});

describe("drained() (backpressure)", () => {
  it("resolves once a reader took every queued event, at once without a reader", async () => {
    const { AssistantMessageEventStream, emptyAssistantMessage } = await import("./event-stream.js");
    const m = emptyAssistantMessage({ api: "a", provider: "p", id: "m" });
    const s = new AssistantMessageEventStream();
    s.push({ type: "start", partial: m });
    await s.drained(); // nobody iterates yet: a result()-only caller must not stall the producer
    const it = s[Symbol.asyncIterator]();
    s.push({ type: "text_start", contentIndex: 0, partial: m });
    expect(s.backlog).toBe(2);
    let released = false;
    const waiting = s.drained().then(() => (released = true));
    await it.next();
    await Promise.resolve();
    expect(released).toBe(false);
    await it.next();
    await waiting;
    expect(released).toBe(true);
    expect(s.backlog).toBe(0);
    s.push({ type: "text_delta", contentIndex: 0, delta: "x", partial: m });
    const again = s.drained();
    await it.return!();
    await again; // a reader that stops releases the producer
  });
});
