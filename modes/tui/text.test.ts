import { describe, it, expect } from "@jest/globals";
import { charWidth, homePath, sanitize, stripAnsi, truncate, visibleWidth, wrapLine, wrapText, padToWidth } from "./text.js";
import { termName } from "./blessed-setup.js";

describe("text widths", () => {
  it("counts CJK and emoji as two columns, combining marks as zero", () => {
    expect(visibleWidth("abc")).toBe(3);
    expect(visibleWidth("你好")).toBe(4);
    expect(visibleWidth("🎉✅")).toBe(4);
    expect(visibleWidth("e\u0301")).toBe(1);
    expect(visibleWidth("\x1b[31mred\x1b[39m")).toBe(3);
    expect(charWidth(0x1f680)).toBe(2);
    expect(charWidth(0x41)).toBe(1);
  });

  it("sanitize keeps SGR and drops other escapes, joiners and controls", () => {
    const s = sanitize("a\x1b]8;;http://x\x07link\x1b]8;;\x07\x1b[2K\x1b[31mred\x1b[0m\tz\u200d👍🏽\x07");
    expect(s).toBe("alink\x1b[31mred\x1b[0m    z👍");
    expect(stripAnsi(s)).toBe("alinkred    z👍");
  });
});

describe("wrapping", () => {
  it("wraps words to the width and breaks long words", () => {
    expect(wrapLine("the quick brown fox jumps", 10)).toEqual(["the quick", "brown fox", "jumps"]);
    expect(wrapLine("abcdefghijkl", 5)).toEqual(["abcde", "fghij", "kl"]);
  });

  it("never exceeds the width with wide characters", () => {
    const lines = wrapText("你好世界你好世界 🎉🎉🎉 mixed 文字 text", 7);
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(7);
    expect(lines.join("").replace(/ /g, "")).toBe("你好世界你好世界🎉🎉🎉mixed文字text");
  });

  it("closes and reopens SGR state across wrapped lines", () => {
    const lines = wrapLine("\x1b[31mred words that wrap around\x1b[39m plain", 10);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines[0]!.endsWith("\x1b[0m")).toBe(true);
    expect(lines[1]!.startsWith("\x1b[31m")).toBe(true);
    expect(stripAnsi(lines.join(" "))).toBe("red words that wrap around plain");
  });

  it("truncates with an ellipsis and pads to a width", () => {
    expect(truncate("hello world", 8)).toBe("hello w…");
    expect(visibleWidth(truncate("你好你好你好", 5))).toBeLessThanOrEqual(5);
    expect(padToWidth("ab", 4)).toBe("ab  ");
  });
});

describe("terminal type", () => {
  it("maps modern terminals to xterm-256color and reports an odd TERM", () => {
    expect(termName({ TERM: "tmux-256color" })).toEqual({ term: "xterm-256color" });
    expect(termName({ TERM: "xterm" })).toEqual({ term: "xterm" });
    const odd = termName({ TERM: "weird-term" });
    expect(odd.term).toBe("xterm-256color");
    expect(odd.notice).toMatch(/weird-term/);
  });
});

describe("homePath", () => {
  it("writes the home folder as ~, leaves paths outside it (and look-alike siblings) as they are", () => {
    expect(homePath("/home/ann/project/a.ts", "/home/ann")).toBe("~/project/a.ts");
    expect(homePath("/home/ann", "/home/ann")).toBe("~");
    expect(homePath("/home/anna/x", "/home/ann")).toBe("/home/anna/x");
    expect(homePath("relative/x", "/home/ann")).toBe("relative/x");
  });
});
