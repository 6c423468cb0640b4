/**
 * pi's library functions as the package entry exports them (sdk/pi-package/functions.ts and the
 * functions it re-exports): usage arithmetic, the compaction threshold, the last usable usage of
 * a branch, the event bus, and a re-exported parser, each on inputs made here.
 */
import { describe, expect, it, jest } from "@jest/globals";
import { CONFIG_DIR_NAME, calculateContextTokens, createEventBus, getLastAssistantUsage, parseFrontmatter, shouldCompact, type SessionEntry } from "../index.js";

const assistant = (id: string, usage: Record<string, number>, stopReason = "stop") =>
  ({ type: "message", id, parentId: null, timestamp: "", message: { role: "assistant", content: [], usage, stopReason, timestamp: 0 } }) as unknown as SessionEntry;

describe("the package's library functions", () => {
  it("names pi's project folder", () => {
    expect(CONFIG_DIR_NAME).toBe(".pi");
  });

  it("takes a usage's total, or adds its parts when there is none", () => {
    expect(calculateContextTokens({ totalTokens: 900, input: 1 })).toBe(900);
    expect(calculateContextTokens({ input: 100, output: 20, cacheRead: 3, cacheWrite: 4 })).toBe(127);
  });

  it("compacts only when enabled and the context crosses the window less the reserve", () => {
    const settings = { enabled: true, reserveTokens: 1000 };
    expect(shouldCompact(9001, 10000, settings)).toBe(true);
    expect(shouldCompact(9000, 10000, settings)).toBe(false);
    expect(shouldCompact(9999, 10000, { ...settings, enabled: false })).toBe(false);
  });

  it("finds the last assistant usage of a branch, skipping aborted and failed answers", () => {
    const entries = [assistant("a", { totalTokens: 10 }), assistant("b", { totalTokens: 20 }), assistant("c", { totalTokens: 30 }, "aborted"), assistant("d", { totalTokens: 40 }, "error")];
    expect(getLastAssistantUsage(entries)).toEqual({ totalTokens: 20 });
    expect(getLastAssistantUsage([])).toBeUndefined();
  });

  it("runs an event bus: handlers per channel, unsubscribe, a throwing handler skipped", () => {
    const bus = createEventBus();
    const seen: unknown[] = [];
    const error = jest.spyOn(console, "error").mockImplementation(() => {});
    bus.on("x", () => {
      throw new Error("boom");
    });
    const off = bus.on("x", (d) => void seen.push(d));
    bus.on("y", (d) => void seen.push(`y:${String(d)}`));
    bus.emit("x", 1);
    off();
    bus.emit("x", 2);
    bus.emit("y", 3);
    bus.clear();
    bus.emit("y", 4);
    expect(seen).toEqual([1, "y:3"]);
    expect(error).toHaveBeenCalledTimes(2);
    error.mockRestore();
  });

  it("re-exports the frontmatter parser", () => {
    expect(parseFrontmatter("---\nname: scout\n---\nbody").frontmatter).toEqual({ name: "scout" });
  });
});
