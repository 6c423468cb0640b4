import { describe, it, expect } from "@jest/globals";
import type { AnyModel } from "../../kernel/types.js";
import { clampThinkingLevel, supportedThinkingLevels } from "./thinking.js";

const model = (over: Partial<AnyModel> & { thinkingLevelMap?: Record<string, string | null> }): AnyModel =>
  ({ id: "m", name: "m", api: "openai-completions", provider: "p", baseUrl: "http://x", reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100, ...over }) as AnyModel;

describe("thinking levels from the model definition", () => {
  it("a model without reasoning takes only off", () => {
    expect(supportedThinkingLevels(model({ reasoning: false }))).toEqual(["off"]);
    expect(clampThinkingLevel(model({ reasoning: false }), "high")).toBe("off");
  });

  it("xhigh only where mapped; a level mapped to null is not offered", () => {
    expect(supportedThinkingLevels(model({}))).toEqual(["off", "minimal", "low", "medium", "high"]);
    expect(supportedThinkingLevels(model({ thinkingLevelMap: { minimal: null, xhigh: "xhigh" } }))).toEqual(["off", "low", "medium", "high", "xhigh"]);
    expect(clampThinkingLevel(model({}), "xhigh")).toBe("high");
  });

  it("max only where mapped to a provider value; without it max comes down to the highest level offered", () => {
    const deep = model({ thinkingLevelMap: { xhigh: "xhigh", max: "max" } });
    expect(supportedThinkingLevels(deep)).toEqual(["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
    expect(clampThinkingLevel(deep, "max")).toBe("max");
    expect(supportedThinkingLevels(model({ thinkingLevelMap: { max: null } }))).toEqual(["off", "minimal", "low", "medium", "high"]);
    expect(clampThinkingLevel(model({ thinkingLevelMap: { xhigh: "xhigh" } }), "max")).toBe("xhigh");
    expect(clampThinkingLevel(model({}), "max")).toBe("high");
    // max mapped while xhigh is not: xhigh goes up to max, as pi 1.6 clamps upward first
    const skip = model({ thinkingLevelMap: { max: "max" } });
    expect(supportedThinkingLevels(skip)).toEqual(["off", "minimal", "low", "medium", "high", "max"]);
    expect(clampThinkingLevel(skip, "xhigh")).toBe("max");
  });

  it("a model that always thinks (off mapped to null, as pi 1.6's catalog has it) clamps off to its lowest level", () => {
    const always = model({ thinkingLevelMap: { off: null, minimal: null, low: "low", medium: "medium", high: "high", xhigh: "xhigh" } });
    expect(supportedThinkingLevels(always)).toEqual(["low", "medium", "high", "xhigh"]);
    expect(clampThinkingLevel(always, "off")).toBe("low");
    expect(clampThinkingLevel(always, "minimal")).toBe("low");
    expect(clampThinkingLevel(always, "medium")).toBe("medium");
  });

  it("a level the model does not offer goes to the nearest higher one it offers, else the nearest lower (as pi 1.6 clamps)", () => {
    const gaps = model({ thinkingLevelMap: { minimal: null, medium: null, low: "low", high: "high" } });
    expect(supportedThinkingLevels(gaps)).toEqual(["off", "low", "high"]);
    expect(clampThinkingLevel(gaps, "minimal")).toBe("low");
    expect(clampThinkingLevel(gaps, "medium")).toBe("high");
    expect(clampThinkingLevel(gaps, "xhigh")).toBe("high");
  });
});
