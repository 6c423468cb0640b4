import { describe, it, expect } from "@jest/globals";
import { PassThrough } from "node:stream";
import { JsonlLineReader, attachJsonlReader, parseJsonLine, serializeRecord } from "./jsonl.js";

function collect(chunks: Array<Buffer | string>): string[] {
  const lines: string[] = [];
  const reader = new JsonlLineReader((line) => lines.push(line));
  for (const chunk of chunks) reader.push(chunk);
  reader.end();
  return lines;
}

function byteChunks(buffer: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buffer.length; i += size) out.push(buffer.subarray(i, i + size));
  return out;
}

describe("serializeRecord", () => {
  it("is JSON.stringify plus one LF and leaves U+2028/U+2029 unescaped", () => {
    const value = { type: "x", text: "a\u2028b\u2029c\nd" };
    const line = serializeRecord(value);
    expect(line).toBe(JSON.stringify(value) + "\n");
    expect(line.includes("\u2028")).toBe(true);
    expect(line.includes("\u2029")).toBe(true);
    expect(line.indexOf("\n")).toBe(line.length - 1);
  });

  it("refuses values without a JSON form with a clear error", () => {
    expect(() => serializeRecord(undefined)).toThrow(/undefined value has no JSON form/);
    expect(() => serializeRecord(() => 1)).toThrow(/function value has no JSON form/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => serializeRecord(cyclic)).toThrow(TypeError);
  });
});

describe("JsonlLineReader", () => {
  it("splits on LF and strips one trailing CR (CRLF input)", () => {
    expect(collect(['{"a":1}\r\n{"b":2}\r\n', '{"c":3}\n'])).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("strips only one CR and keeps CRs inside a line", () => {
    expect(collect(['"x"\r\r\n', 'a\rb\n'])).toEqual(['"x"\r', "a\rb"]);
  });

  it("keeps U+2028 and U+2029 inside lines", () => {
    const record = serializeRecord({ text: "one\u2028two\u2029three" });
    const lines = collect([Buffer.from(record + record, "utf8")]);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(JSON.parse(line)).toEqual({ text: "one\u2028two\u2029three" });
    }
  });

  it("reassembles a record split across chunks, also fed byte by byte", () => {
    const input = Buffer.from('{"type":"prompt","message":"héllo wörld ✓ 😀"}\n{"type":"abort"}\n', "utf8");
    const expected = ['{"type":"prompt","message":"héllo wörld ✓ 😀"}', '{"type":"abort"}'];
    expect(collect([input.subarray(0, 10), input.subarray(10, 33), input.subarray(33)])).toEqual(expected);
    expect(collect(byteChunks(input, 1))).toEqual(expected);
    expect(collect(byteChunks(input, 3))).toEqual(expected);
  });

  it("reassembles multi-byte characters split between chunks", () => {
    const text = "€😀\u2028ü";
    const input = Buffer.from(JSON.stringify(text) + "\n", "utf8");
    // Split inside the 4-byte emoji and inside the 3-byte euro sign.
    const euroAt = input.indexOf(Buffer.from("€"));
    const emojiAt = input.indexOf(Buffer.from("😀"));
    const lines = collect([
      input.subarray(0, euroAt + 1),
      input.subarray(euroAt + 1, emojiAt + 2),
      input.subarray(emojiAt + 2, emojiAt + 3),
      input.subarray(emojiAt + 3),
    ]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toBe(text);
    expect(lines[0]!.includes("\uFFFD")).toBe(false);
  });

  it("delivers an unterminated last line when the input ends", () => {
    const lines: string[] = [];
    const reader = new JsonlLineReader((line) => lines.push(line));
    reader.push('{"a":1}\n{"b"');
    reader.push(":2}");
    expect(lines).toEqual(['{"a":1}']);
    expect(reader.hasPartialLine).toBe(true);
    reader.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    reader.end(); // idempotent
    expect(lines).toHaveLength(2);
    expect(() => reader.push("x")).toThrow(/after end/);
  });

  it("strips the CR of an unterminated last line too", () => {
    expect(collect(['{"a":1}\r'])).toEqual(['{"a":1}']);
  });

  it("skips empty lines, including CR-only lines", () => {
    expect(collect(["\n\n{\"a\":1}\n\r\n\n", "\n{\"b\":2}\n\n"])).toEqual(['{"a":1}', '{"b":2}']);
    expect(collect(["\n", "\r\n", ""])).toEqual([]);
  });

  it("delivers whitespace-only lines (they are not empty)", () => {
    expect(collect(["  \n"])).toEqual(["  "]);
  });

  it("handles a 5 MB line arriving in 64 KiB chunks", () => {
    const big = "x".repeat(5 * 1024 * 1024);
    const input = Buffer.from(`{"data":"${big}"}\n{"after":true}\n`, "utf8");
    const lines = collect(byteChunks(input, 64 * 1024));
    expect(lines).toHaveLength(2);
    expect(lines[0]!.length).toBe(big.length + 11);
    expect((JSON.parse(lines[0]!) as { data: string }).data.length).toBe(big.length);
    expect(JSON.parse(lines[1]!)).toEqual({ after: true });
  });

  it("turns invalid UTF-8 into U+FFFD instead of failing", () => {
    const lines = collect([Buffer.from([0x22, 0xff, 0x22, 0x0a])]);
    expect(lines).toEqual(['"\uFFFD"']);
  });
});

describe("attachJsonlReader", () => {
  it("reads lines from a stream, delivers the last unterminated one, then calls onEnd", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const ended = new Promise<Error | undefined>((resolve) => {
      attachJsonlReader(stream, (line) => lines.push(line), resolve);
    });
    stream.write(Buffer.from('{"a":"\u2028"}\r\n{"b"', "utf8"));
    stream.write(Buffer.from(":2}\n\n{\"c\":3}", "utf8"));
    stream.end();
    expect(await ended).toBeUndefined();
    expect(lines).toEqual(['{"a":"\u2028"}', '{"b":2}', '{"c":3}']);
  });

  it("reports a stream error to onEnd and drops the partial line", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const ended = new Promise<Error | undefined>((resolve) => {
      attachJsonlReader(stream, (line) => lines.push(line), resolve);
    });
    stream.write('{"a":1}\n{"trunc');
    await new Promise((r) => setImmediate(r));
    stream.destroy(new Error("boom"));
    const error = await ended;
    expect(error?.message).toBe("boom");
    expect(lines).toEqual(['{"a":1}']);
  });

  it("detach stops delivery without calling onEnd", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    let endCalls = 0;
    const detach = attachJsonlReader(stream, (line) => lines.push(line), () => endCalls++);
    stream.write("1\n");
    await new Promise((r) => setImmediate(r));
    detach();
    stream.resume();
    stream.write("2\n");
    stream.end();
    await new Promise((r) => setImmediate(r));
    expect(lines).toEqual(["1"]);
    expect(endCalls).toBe(0);
  });
});

describe("parseJsonLine", () => {
  it("returns the value for valid JSON", () => {
    expect(parseJsonLine('{"type":"prompt","message":"a\u2028b"}')).toEqual({
      ok: true,
      value: { type: "prompt", message: "a\u2028b" },
    });
    expect(parseJsonLine("null")).toEqual({ ok: true, value: null });
  });

  it.each([
    ['{"a":}', 5, /Unexpected token/],
    ["abc", 0, /Unexpected token/],
    ["{", 1, /Expected property name/],
    ["", 0, /Unexpected end of JSON input/],
    ['{"a":1', 6, /Expected ',' or '}'/],
    ['{"a":1}x', 7, /Unexpected non-whitespace character after JSON/],
    ["[1,2", 4, /Expected ',' or ']'/],
    ['{"a": tru', 9, /Unexpected end/],
    ['{"a": trux}', 9, /Unexpected token/],
    ['[1, 2, "x", {"k": [null, fals]}]', 29, /Unexpected token/],
    ['["\\u12G4"]', 6, /./],
  ])("reports %j as invalid at position %i", (line, position, reason) => {
    const result = parseJsonLine(line);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.position).toBe(position);
    expect(result.error).toContain(`Invalid JSON at position ${position}: `);
    expect(result.error).toMatch(reason);
    // The V8 "in JSON at position N" tail is not repeated.
    expect(result.error.match(/position/g)).toHaveLength(1);
  });

  it("locates errors in deeply nested input without overflowing the stack", () => {
    const depth = 200_000;
    const line = "[".repeat(depth) + "x";
    const result = parseJsonLine(line);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.position).toBe(depth);
  });
});

describe("JsonlLineReader line limit", () => {
  it("drops a line over the limit as it arrives, reports its length, keeps reading", () => {
    const lines: string[] = [];
    const over: number[] = [];
    const r = new JsonlLineReader((l) => lines.push(l), { maxLineLength: 10, onOversized: (n) => over.push(n) });
    r.push("short\n0123456");
    r.push("789abcdef");
    r.push("ghij\nok\n");
    r.push("0123456789ABC\nlast");
    r.end();
    expect(lines).toEqual(["short", "ok", "last"]);
    expect(over).toEqual([20, 13]);
  });
});
