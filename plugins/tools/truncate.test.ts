import { describe, expect, it } from "@jest/globals";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  GREP_MAX_LINE_LENGTH,
  formatSize,
  sanitizeOutput,
  truncateHead,
  truncateLine,
  truncateTail,
} from "./truncate.js";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("constants", () => {
  it("match pi's limits", () => {
    expect(DEFAULT_MAX_LINES).toBe(2000);
    expect(DEFAULT_MAX_BYTES).toBe(50 * 1024);
    expect(GREP_MAX_LINE_LENGTH).toBe(500);
  });
});

describe("truncateHead", () => {
  it("leaves short content alone", () => {
    const r = truncateHead("a\nb");
    expect(r).toMatchObject({ content: "a\nb", truncated: false, truncatedBy: null, totalLines: 2, outputLines: 2 });
  });

  it("keeps the first lines when over the line limit", () => {
    const r = truncateHead(numbered(10), { maxLines: 3 });
    expect(r.content).toBe("line 1\nline 2\nline 3");
    expect(r).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 10, outputLines: 3 });
  });

  it("keeps whole lines within the byte limit", () => {
    const r = truncateHead("aaaa\nbbbb\ncccc", { maxBytes: 10 });
    expect(r.content).toBe("aaaa\nbbbb");
    expect(r).toMatchObject({ truncatedBy: "bytes", outputBytes: 9 });
  });

  it("returns nothing when the first line alone is too big", () => {
    const r = truncateHead("x".repeat(100) + "\nshort", { maxBytes: 50 });
    expect(r).toMatchObject({ content: "", firstLineExceedsLimit: true, outputLines: 0, truncatedBy: "bytes" });
  });

  it("counts bytes, not characters", () => {
    const r = truncateHead("ééé\nb", { maxBytes: 6 });
    expect(r.content).toBe("ééé");
    expect(r.totalBytes).toBe(8);
  });
});

describe("truncateTail", () => {
  it("keeps the last lines", () => {
    const r = truncateTail(numbered(10), { maxLines: 2 });
    expect(r.content).toBe("line 9\nline 10");
    expect(r).toMatchObject({ truncated: true, truncatedBy: "lines", outputLines: 2, totalLines: 10 });
  });

  it("keeps the end of a last line that alone is over the byte limit", () => {
    const r = truncateTail("start\n" + "y".repeat(40) + "END", { maxBytes: 10 });
    expect(r.content).toBe("yyyyyyyEND");
    expect(r).toMatchObject({ lastLinePartial: true, outputLines: 1, truncatedBy: "bytes" });
  });

  it("does not split a multi-byte character", () => {
    const r = truncateTail("ab" + "é".repeat(10), { maxBytes: 5 });
    expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(5);
    expect(r.content).toBe("éé");
  });
});

describe("helpers", () => {
  it("formatSize", () => {
    expect(formatSize(512)).toBe("512B");
    expect(formatSize(1536)).toBe("1.5KB");
    expect(formatSize(10 * 1024 * 1024)).toBe("10.0MB");
  });

  it("truncateLine marks the cut", () => {
    expect(truncateLine("short")).toEqual({ text: "short", wasTruncated: false });
    const long = truncateLine("z".repeat(600));
    expect(long.wasTruncated).toBe(true);
    expect(long.text).toBe(`${"z".repeat(500)}... [truncated]`);
  });

  it("sanitizeOutput drops colour codes and control characters but keeps tabs and line breaks", () => {
    expect(sanitizeOutput("\x1b[31mred\x1b[0m\tok\r\nnul\x00here\x07")).toBe("red\tok\r\nnulhere");
  });
});
