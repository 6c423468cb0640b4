import { describe, it, expect } from "@jest/globals";
import { builtinTheme, parseThemeJson } from "./theme.js";

describe("theme: the max thinking level's colour", () => {
  it("the built-in themes have their own thinkingMax colour, used for the max border", () => {
    for (const name of ["dark", "light"] as const) {
      const t = builtinTheme(name);
      expect(t.thinkingBorder("max")).toBe("thinkingMax");
      expect(t.colors.thinkingMax).not.toBe(t.colors.thinkingXhigh);
    }
  });

  it("a theme file without thinkingMax uses its thinkingXhigh (pi 1.6's fallback); one with it keeps it", () => {
    const without = parseThemeJson({ name: "a", colors: { thinkingXhigh: 99 } }, "a.json");
    expect(without.errors).toEqual([]);
    expect(without.theme!.colors.thinkingMax).toBe(99);
    const withMax = parseThemeJson({ name: "b", colors: { thinkingXhigh: 99, thinkingMax: "#ff0000" } }, "b.json");
    expect(withMax.theme!.colors.thinkingMax).toBe(196);
  });
});
