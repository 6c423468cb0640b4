import { describe, it, expect } from "@jest/globals";
import { createHooks, tapHook, HOOK_KINDS, HOOK_NAMES, PI_CONVENTIONS, type HookError } from "./hooks.js";

describe("tap removal", () => {
  it("removes a tap without recompiling through tapable's private API, and later taps still run", async () => {
    const errors: HookError[] = [];
    const hooks = createHooks((e) => errors.push(e));
    const seen: string[] = [];
    const offA = tapHook(hooks, "tool_call", { name: "a" }, () => void seen.push("a"));
    tapHook(hooks, "tool_call", { name: "b" }, () => {
      seen.push("b");
      return { block: true, reason: "b says no" };
    });
    const ev = { type: "tool_call" as const, toolCallId: "1", toolName: "x", input: {} };
    expect(await hooks.tool_call.promise(ev)).toEqual({ block: true, reason: "b says no" });
    expect(seen).toEqual(["a", "b"]);
    offA();
    offA(); // twice is harmless
    // the compiled call still holds the old list: the removed tap passes without running
    seen.length = 0;
    expect(await hooks.tool_call.promise(ev)).toEqual({ block: true, reason: "b says no" });
    expect(seen).toEqual(["b"]);
    expect(hooks.tool_call.taps.map((t) => t.name)).toEqual(["b"]);
    // a new tap recompiles without the removed one
    tapHook(hooks, "tool_call", { name: "c", stage: -1 }, () => void seen.push("c"));
    seen.length = 0;
    await hooks.tool_call.promise(ev);
    expect(seen).toEqual(["c", "b"]);
    expect(errors).toEqual([]);
  });

  it("a removed waterfall tap leaves the payload to the others", async () => {
    const hooks = createHooks(() => undefined);
    const off = tapHook(hooks, "context", { name: "a" }, (e) => ({ ...e, messages: [] }));
    tapHook(hooks, "context", { name: "b" }, (e) => ({ ...e, messages: [...e.messages, { role: "user", content: "b", timestamp: 0 }] as never }));
    off();
    const out = await hooks.context.promise({ type: "context", messages: [{ role: "user", content: "x", timestamp: 0 } as never] });
    expect(out.messages.map((m) => (m as { content: string }).content)).toEqual(["x", "b"]);
  });
});

describe("hook kinds and pi conventions", () => {
  it("declares a kind for every hook and a convention only where the kind allows a result", () => {
    for (const n of HOOK_NAMES) expect(HOOK_KINDS[n]).toBeDefined();
    for (const [n, c] of Object.entries(PI_CONVENTIONS)) {
      expect(HOOK_NAMES).toContain(n);
      if (HOOK_KINDS[n as keyof typeof HOOK_KINDS] === "observer") expect((c as { fromPi?: unknown }).fromPi).toBeUndefined();
    }
  });

  it("has the 13 events of pi 1.6", () => {
    for (const n of [
      "session_info_changed", "session_compact_failed", "context_with_system", "before_provider_headers",
      "after_provider_response", "provider_stream_event", "agent_before_settle", "thinking_level_select",
      "project_trust", "mcp_servers_change", "cache_warming_decision", "ui_prompt_start", "ui_prompt_end",
    ]) expect(HOOK_NAMES).toContain(n);
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
