import { describe, expect, it } from "@jest/globals";
import { applyEdits, buildNormalizedView, detectLineEnding, diffLines, generateDiffString, normalizeForFuzzyMatch } from "./edit-diff.js";

describe("diffLines", () => {
  it("rebuilds both texts from its parts (random cases)", () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const a = Array.from({ length: rnd(12) }, () => "abcde"[rnd(5)]!);
      const b = Array.from({ length: rnd(12) }, () => "abcde"[rnd(5)]!);
      const parts = diffLines(a.join("\n"), b.join("\n"));
      const before = parts.filter((p) => p.kind !== "added").flatMap((p) => p.lines);
      const after = parts.filter((p) => p.kind !== "removed").flatMap((p) => p.lines);
      expect(before.join("\n")).toBe(a.join("\n"));
      expect(after.join("\n")).toBe(b.join("\n"));
    }
  });

  it("finds a minimal change", () => {
    const parts = diffLines("a\nb\nc\nd", "a\nx\nc\nd");
    expect(parts).toEqual([
      { kind: "equal", lines: ["a"] },
      { kind: "removed", lines: ["b"] },
      { kind: "added", lines: ["x"] },
      { kind: "equal", lines: ["c", "d"] },
    ]);
  });
});

describe("generateDiffString", () => {
  it("numbers lines and elides long unchanged runs", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n");
    const after = before.replace("l10", "L10");
    const { diff, firstChangedLine } = generateDiffString(before, after);
    expect(firstChangedLine).toBe(10);
    expect(diff.split("\n")).toEqual([
      "    ...",
      "  6 l6",
      "  7 l7",
      "  8 l8",
      "  9 l9",
      "-10 l10",
      "+10 L10",
      " 11 l11",
      " 12 l12",
      " 13 l13",
      " 14 l14",
      "    ...",
    ]);
  });

  it("reports the first changed line of an insertion", () => {
    expect(generateDiffString("a\nb", "a\nnew\nb").firstChangedLine).toBe(2);
    // a file's final newline ends its last line: no empty line numbered after it (as pi 1.6)
    expect(generateDiffString("w1\nw2\nw3\n", "w1\nW2\nw3\n").diff).toBe(" 1 w1\n-2 w2\n+2 W2\n 3 w3");
    expect(generateDiffString("a\nb\n", "a\nb\nc\n").diff).toBe(" 1 a\n 2 b\n+3 c");
    expect(generateDiffString("a\nb", "a\nb\n").firstChangedLine).toBe(3); // only one side: the newline is the change
  });
});

describe("normalised view", () => {
  it("maps normalised characters back to the original", () => {
    const raw = "x “q”  \r\ny";
    const v = buildNormalizedView(raw);
    expect(v.text).toBe('x "q"\ny');
    const at = v.text.indexOf('"q"');
    expect(raw.slice(v.starts[at]!, v.ends[at + 2]!)).toBe("“q”");
    const nl = v.text.indexOf("\n");
    expect(raw.slice(v.starts[nl]!, v.ends[nl]!)).toBe("  \r\n");
  });

  it("normalises what the model writes the same way", () => {
    expect(normalizeForFuzzyMatch("a\u2014b\u00a0c  \r\nd")).toBe("a-b c\nd");
  });

  it("detects the line ending from the first line", () => {
    expect(detectLineEnding("a\r\nb\n")).toBe("\r\n");
    expect(detectLineEnding("a\nb\r\n")).toBe("\n");
    expect(detectLineEnding("no newline")).toBe("\n");
  });

  it("applyEdits reports what matched fuzzily", () => {
    const { content, matches } = applyEdits("a “b” c", [{ oldText: '"b"', newText: "B" }], "f");
    expect(content).toBe("a B c");
    expect(matches[0]).toMatchObject({ fuzzy: true, start: 2, end: 5 });
  });
});
