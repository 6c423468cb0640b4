import { describe, it, expect } from "@jest/globals";
import { HOOK_KINDS, HOOK_NAMES } from "../../core/kernel/index.js";
import { PI_CONVENTIONS } from "./pi-conventions.js";

describe("pi conventions of the hooks", () => {
  it("declares a convention only for a hook that exists, and a result mapping only where the kind allows a result", () => {
    for (const [n, c] of Object.entries(PI_CONVENTIONS)) {
      expect(HOOK_NAMES).toContain(n);
      if (HOOK_KINDS[n as keyof typeof HOOK_KINDS] === "observer") expect((c as { fromPi?: unknown }).fromPi).toBeUndefined();
    }
  });

  it("maps a cancel result only when it does something", () => {
    const env = { owner: "x", pendingSwitch: () => undefined, systemPromptOptions: () => ({}) };
    const c = PI_CONVENTIONS.session_before_switch!;
    const ev = { type: "session_before_switch" as const, reason: "new" as const };
    expect(c.fromPi!({ cancel: false }, ev, env)).toBeUndefined();
    expect(c.fromPi!({ cancel: true }, ev, env)).toEqual({ cancel: true });
    expect(c.toPi!({ ...ev, reason: "fork" }, env)).toBeUndefined();
  });
});
