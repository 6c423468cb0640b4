import { describe, expect, it } from "@jest/globals";
import { applyMarkdownTransformers, colorDiffLines, cutLines, formatKeyHint, formatKeyText, formatReadLineRange, formatTokens, parseSkillBlock, rendererKeyHints, transformerSurfaces, truncateToVisualLines } from "./format.js";
import { builtinTheme } from "./theme.js";
import { stripAnsi } from "./text.js";

const t = builtinTheme("dark");

describe("formatTokens", () => {
  it("writes counts the way the footer shows them", () => {
    expect([999, 1000, 1234, 9999, 45_000, 999_499, 1_500_000, 12_000_000].map(formatTokens)).toEqual(["999", "1.0k", "1.2k", "10.0k", "45k", "999k", "1.5M", "12M"]);
  });
});

describe("formatReadLineRange", () => {
  it("gives the start and end line of a read", () => {
    expect(formatReadLineRange(5, 10)).toBe(":5-14");
    expect(formatReadLineRange(3, undefined)).toBe(":3");
    expect(formatReadLineRange(undefined, 4)).toBe(":1-4");
    expect(formatReadLineRange("7", "2")).toBe(":7-8");
    expect(formatReadLineRange(undefined, undefined)).toBe("");
  });
  it("gives nothing for values that are no line numbers", () => {
    expect(formatReadLineRange(-1, 2)).toBe("");
    expect(formatReadLineRange(2.5, undefined)).toBe("");
    expect(formatReadLineRange(1, "many")).toBe("");
  });
});

describe("colorDiffLines", () => {
  it("colours added, removed and context lines", () => {
    const out = colorDiffLines(" 1 keep\n-2 gone\n-3 gone too\n+2 new", t);
    expect(out.map(stripAnsi)).toEqual([" 1 keep", "-2 gone", "-3 gone too", "+2 new"]);
    expect(out[0]).toContain(t.getFgAnsi("toolDiffContext"));
    expect(out[1]).toContain(t.getFgAnsi("toolDiffRemoved"));
    expect(out[3]).toContain(t.getFgAnsi("toolDiffAdded"));
    // two removed lines and one added: no single-line replacement, no inverse
    expect(out.some((l) => l.includes("\x1b[7m"))).toBe(false);
  });
  it("marks the changed characters of a one-line replacement in inverse", () => {
    const [removed, added] = colorDiffLines("-1 foo bar\n+1 foo baz", t);
    expect(stripAnsi(removed!)).toBe("-1 foo bar");
    expect(removed).toContain(`${t.inverse("r")}`);
    expect(added).toContain(`${t.inverse("z")}`);
    expect(added).not.toContain(t.inverse("foo"));
  });
});

describe("formatKeyHint", () => {
  it("draws the key dim and the description muted", () => {
    const h = formatKeyHint(t, "ctrl+o", "to expand");
    expect(stripAnsi(h)).toBe("ctrl+o to expand");
    expect(h.indexOf(t.getFgAnsi("dim"))).toBeLessThan(h.indexOf("ctrl+o"));
    expect(h.indexOf(t.getFgAnsi("muted"))).toBeLessThan(h.indexOf("to expand"));
  });
});

describe("formatKeyText and rendererKeyHints", () => {
  it("joins an action's keys with / and writes alt as option on macOS", () => {
    expect(formatKeyText(["ctrl+o"], "linux")).toBe("ctrl+o");
    expect(formatKeyText(["alt+enter", "ctrl+j"], "linux")).toBe("alt+enter/ctrl+j");
    expect(formatKeyText(["alt+enter", "ctrl+j"], "darwin")).toBe("option+enter/ctrl+j");
    expect(formatKeyText([], "linux")).toBe("");
  });
  it("reads the keys of the action asked for", () => {
    const asked: string[] = [];
    const h = rendererKeyHints(t, (a) => (asked.push(a), a === "app.tools.expand" ? ["ctrl+o"] : []));
    expect(h.keyText("app.tools.expand")).toBe("ctrl+o");
    expect(stripAnsi(h.keyHint("app.tools.expand", "to expand"))).toBe("ctrl+o to expand");
    expect(h.keyText("app.unbound")).toBe("");
    expect(asked).toEqual(["app.tools.expand", "app.tools.expand", "app.unbound"]);
  });
});

describe("cutLines and truncateToVisualLines", () => {
  it("keeps the first or last lines and counts the rest", () => {
    expect(cutLines([1, 2, 3, 4], 2, "start")).toEqual({ kept: [1, 2], skipped: 2 });
    expect(cutLines([1, 2, 3, 4], 2, "end")).toEqual({ kept: [3, 4], skipped: 2 });
    expect(cutLines([1, 2], 5, "end")).toEqual({ kept: [1, 2], skipped: 0 });
    expect(cutLines([1, 2], -1, "end")).toEqual({ kept: [], skipped: 2 });
  });
  it("counts wrapped lines, not source lines", () => {
    expect(truncateToVisualLines("abcdefghij", 2, 4)).toEqual({ visualLines: ["efgh", "ij"], skippedCount: 1 });
    expect(truncateToVisualLines("one\ntwo\nthree", 2, 20, 0, "start")).toEqual({ visualLines: ["one", "two"], skippedCount: 1 });
    // padding narrows the width the text wraps at
    expect(truncateToVisualLines("abcdefgh", 10, 6, 1).visualLines).toEqual(["abcd", "efgh"]);
    expect(truncateToVisualLines("", 3, 10)).toEqual({ visualLines: [], skippedCount: 0 });
  });
});

describe("parseSkillBlock", () => {
  it("splits a /skill:name message into the skill and the user's text", () => {
    expect(parseSkillBlock('<skill name="deploy" location="/s/SKILL.md">\nline 1\nline 2\n</skill>\n\n  ship it  ')).toEqual({ name: "deploy", location: "/s/SKILL.md", content: "line 1\nline 2", userMessage: "ship it" });
    expect(parseSkillBlock('<skill name="a" location="/l">\nbody\n</skill>')).toEqual({ name: "a", location: "/l", content: "body", userMessage: undefined });
  });
  it("is null for anything else", () => {
    expect(parseSkillBlock("hello")).toBeNull();
    expect(parseSkillBlock('say <skill name="a" location="/l">\nbody\n</skill>')).toBeNull();
    expect(parseSkillBlock('<skill name="a" location="/l">\nbody\n</skill> trailing')).toBeNull();
  });
});

describe("markdown transformers", () => {
  const c = { messageType: "assistant" as const, isStreaming: false, availableWidth: 80 };
  it("run in order, each on the text the previous returned; a throw or a non-string keeps the text so far", () => {
    const out = applyMarkdownTransformers("a", c, [
      (md) => md + "b",
      () => {
        throw new Error("boom");
      },
      () => 42,
      (md) => md + "c",
    ]);
    expect(out).toBe("abc");
  });
  it("run on user, assistant and thinking text by default, or on the surfaces the options name", () => {
    expect([...transformerSurfaces(undefined)].sort()).toEqual(["assistant", "assistant-thinking", "user"]);
    expect([...transformerSurfaces({ messageTypes: ["summary", "changelog"] })]).toEqual(["summary", "changelog"]);
  });
});
