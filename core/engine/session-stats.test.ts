import { describe, it, expect } from "@jest/globals";
import type { AgentMessage, AnyModel } from "../kernel/types.js";
import { contextUsage } from "./session-stats.js";

const model = { id: "m", provider: "p", contextWindow: 1000 } as unknown as AnyModel;
const user = (text: string) => ({ role: "user", content: text, timestamp: 0 }) as unknown as AgentMessage;
const answer = (text: string, total: number, stopReason = "stop") =>
  ({
    role: "assistant",
    content: [{ type: "text", text }],
    usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason,
    timestamp: 0,
  }) as unknown as AgentMessage;
const summary = (text: string) => ({ role: "compactionSummary", summary: text, tokensBefore: 500, timestamp: 0 }) as unknown as AgentMessage;

describe("context use, counted as pi 1.6 counts it", () => {
  it("before the first answer the messages are estimated (characters / 4)", () => {
    expect(contextUsage([user("x".repeat(400))], model)).toEqual({ tokens: 100, contextWindow: 1000, percent: 10 });
    expect(contextUsage([], model)).toEqual({ tokens: 0, contextWindow: 1000, percent: 0 });
  });

  it("the last answer's usage, plus an estimate of what came after it", () => {
    const t = [user("q"), answer("a", 200), user("y".repeat(40))];
    expect(contextUsage(t, model)).toEqual({ tokens: 210, contextWindow: 1000, percent: 21 });
  });

  it("an aborted or failed answer, or one reporting no tokens, is estimated instead of trusted", () => {
    const t = [user("q"), answer("a", 200), user("r"), answer("b".repeat(8), 900, "aborted"), answer("c".repeat(4), 0)];
    // 200, then "r" (1), the aborted answer's 8 characters (2) and the empty usage's 4 (1)
    expect(contextUsage(t, model).tokens).toBe(204);
  });

  it("after a compaction, unknown until an answer comes after it", () => {
    const before = [summary("s".repeat(40)), user("q"), answer("kept", 300)];
    expect(contextUsage([answer("old", 700), ...before.slice(0, 2)], model)).toEqual({ tokens: null, contextWindow: 1000, percent: null });
    expect(contextUsage(before, model).tokens).toBe(300);
  });

  it("the system message counts: its text, sections and the tools it declares", () => {
    const system = { role: "system", content: "p".repeat(40), sections: { a: "s".repeat(20), gone: null }, toolsAdded: [{ name: "t" }], timestamp: 0 } as unknown as AgentMessage;
    // 40 + 20 + '[{"name":"t"}]' (14) = 74 characters
    expect(contextUsage([system], model).tokens).toBe(19);
  });

  it("no window: tokens without a percent", () => {
    expect(contextUsage([user("abcd")], undefined)).toEqual({ tokens: 1, contextWindow: 0, percent: null });
  });
});
