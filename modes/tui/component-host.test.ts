import { describe, it, expect } from "@jest/globals";
import { fitComponentLine, loadPiTui } from "./component-host.js";
import { visibleWidth } from "./text.js";

describe("fitComponentLine", () => {
  it("keeps a line pi-tui measured as fitting inside its width when it holds a ZWJ emoji sequence", async () => {
    const m = (await loadPiTui()) as unknown as { visibleWidth(s: string): number };
    const line = "│ Emoji: 👨‍👩‍👧‍👦 🚀 │";
    // pi-tui lays the family out in 2 columns; blessed would draw it as four emoji (8 columns).
    const width = m.visibleWidth(line);
    const out = fitComponentLine(line, width);
    expect(out.endsWith("│")).toBe(true);
    expect(visibleWidth(out)).toBe(width);
    expect(out).toContain("👨");
    expect(out).not.toContain("👩");
  });

  it("cuts a line wider than the region and drops cursor movement", () => {
    const out = fitComponentLine("\x1b[2Kabcdef漢字", 7);
    expect(visibleWidth(out)).toBeLessThanOrEqual(7);
    expect(out).not.toContain("\x1b[2K");
  });
});
