/** Terminal input split into keys for the standalone settings screen (`pi config`). */
import { describe, it, expect } from "@jest/globals";
import { splitKeys } from "./standalone-screen.js";

describe("splitKeys", () => {
  it("keeps escape sequences whole and two Escapes apart", () => {
    expect(splitKeys("\x1b\x1b")).toEqual(["\x1b", "\x1b"]);
    expect(splitKeys("\x1b[A\x1b[6~ab")).toEqual(["\x1b[A", "\x1b[6~", "a", "b"]);
    expect(splitKeys("\x1bOB\x1bx")).toEqual(["\x1bOB", "\x1bx"]);
    expect(splitKeys("é ")).toEqual(["é", " "]);
  });
});
