/**
 * Session and entry ids come from random bytes read in blocks from the system's generator
 * (session-entries.ts): well-formed, and not repeated across many ids (pool refills included).
 */
import { describe, it, expect } from "@jest/globals";
import { createSessionId, generateEntryId } from "./session-entries.js";

describe("ids", () => {
  it("session ids are version 7 UUIDs carrying the time, all different", () => {
    const seen = new Set<string>();
    const now = Date.UTC(2026, 11, 2, 10, 0, 0);
    for (let i = 0; i < 2000; i++) {
      const id = createSessionId(now);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(now);
      seen.add(id);
    }
    expect(seen.size).toBe(2000); // 32 KB of random bytes: the 4 KB pool refilled several times
  });

  it("entry ids are 8 hex characters not already taken", () => {
    const taken = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const id = generateEntryId(taken);
      expect(id).toMatch(/^[0-9a-f]{8}$/);
      expect(taken.has(id)).toBe(false);
      taken.add(id);
    }
    // every candidate taken: falls back to a full id
    expect(generateEntryId({ has: () => true })).toMatch(/^[0-9a-f]{8}-/);
  });
});
