import { describe, it, expect } from "@jest/globals";
import { createHooks, precompileHooks, tapHook, EVENT_HOOKS, HOOK_KINDS, HOOK_NAMES, HOOK_SPEC, type HookError } from "./hooks.js";

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

describe("precompiled dispatchers", () => {
  const nextTurns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it("compiles the tapped hooks ahead of their first call; they run their taps, and a later tap joins", async () => {
    const hooks = createHooks(() => undefined);
    const seen: string[] = [];
    tapHook(hooks, "tool_call", { name: "a" }, () => void seen.push("a"));
    tapHook(hooks, "tool_result", { name: "r" }, () => undefined);
    const before = { call: hooks.tool_call.promise, result: hooks.tool_result.promise, unused: hooks.turn_end.promise };
    precompileHooks(hooks);
    await nextTurns(4);
    expect(hooks.tool_call.promise).not.toBe(before.call);
    expect(hooks.tool_result.promise).not.toBe(before.result);
    expect(hooks.turn_end.promise).toBe(before.unused); // no taps: left alone
    const ev = { type: "tool_call" as const, toolCallId: "1", toolName: "x", input: {} };
    expect(await hooks.tool_call.promise(ev)).toBeUndefined();
    tapHook(hooks, "tool_call", { name: "b" }, () => ({ block: true, reason: "b" }));
    expect(await hooks.tool_call.promise(ev)).toEqual({ block: true, reason: "b" });
    expect(seen).toEqual(["a", "a"]);
  });

  it("stops once the answer has begun: the rest compile on their first call", async () => {
    const hooks = createHooks(() => undefined);
    tapHook(hooks, "tool_call", { name: "a" }, () => ({ block: true, reason: "a" }));
    const delegate = hooks.tool_call.promise;
    precompileHooks(hooks, () => true);
    await nextTurns(4);
    expect(hooks.tool_call.promise).toBe(delegate);
    expect(await hooks.tool_call.promise({ type: "tool_call", toolCallId: "1", toolName: "x", input: {} })).toEqual({ block: true, reason: "a" });
    // a later request compiles it ahead again
    const hooks2 = createHooks(() => undefined);
    tapHook(hooks2, "tool_result", { name: "r" }, () => undefined);
    const before = hooks2.tool_result.promise;
    precompileHooks(hooks2);
    await nextTurns(4);
    expect(hooks2.tool_result.promise).not.toBe(before);
  });
});

describe("hook kinds", () => {
  it("declares a kind for every hook", () => {
    for (const n of HOOK_NAMES) expect(HOOK_KINDS[n]).toBeDefined();
  });

  it("has the 13 events of pi 1.6", () => {
    for (const n of [
      "session_info_changed", "session_compact_failed", "context_with_system", "before_provider_headers",
      "after_provider_response", "provider_stream_event", "agent_before_settle", "thinking_level_select",
      "project_trust", "mcp_servers_change", "cache_warming_decision", "ui_prompt_start", "ui_prompt_end",
    ]) expect(HOOK_NAMES).toContain(n);
  });
});

describe("hooks built from one spec", () => {
  it("derives each hook's tapable class, its kind and the event list from HOOK_SPEC", () => {
    const hooks = createHooks(() => undefined);
    const classOf: Record<string, string> = {
      observer: "AsyncSeriesHook",
      collect: "AsyncSeriesHook",
      bail: "AsyncSeriesBailHook",
      waterfall: "AsyncSeriesWaterfallHook",
      "sync-bail": "SyncBailHook",
    };
    expect(Object.keys(hooks)).toEqual(Object.keys(HOOK_SPEC));
    for (const n of HOOK_NAMES) {
      expect(HOOK_KINDS[n]).toBe(HOOK_SPEC[n].kind);
      expect(hooks[n].constructor.name).toBe(classOf[HOOK_KINDS[n]]);
      expect(EVENT_HOOKS.has(n)).toBe(HOOK_SPEC[n].sessionEvent);
    }
    expect([...EVENT_HOOKS]).toEqual(expect.arrayContaining(["agent_start", "turn_end", "message_end", "agent_settled"]));
    expect(EVENT_HOOKS.has("tool_call")).toBe(false);
  });

  it("keeps tap removal per table: removing a tap in one table leaves another table's taps running", async () => {
    const a = createHooks(() => undefined);
    const b = createHooks(() => undefined);
    const seen: string[] = [];
    const offA = tapHook(a, "session_start", { name: "x" }, () => void seen.push("a"));
    tapHook(b, "session_start", { name: "x" }, () => void seen.push("b"));
    await a.session_start.promise({ type: "session_start", reason: "startup" });
    offA();
    await a.session_start.promise({ type: "session_start", reason: "startup" });
    await b.session_start.promise({ type: "session_start", reason: "startup" });
    expect(seen).toEqual(["a", "b"]);
  });

  it("taps the synchronous bail hook synchronously", () => {
    const hooks = createHooks(() => undefined);
    const off = tapHook(hooks, "kernel_mode_select", { name: "m" }, (args) => (args.requested === "x" ? "custom" : undefined));
    const args = { argv: {}, requested: "x", stdinIsTTY: false, stdoutIsTTY: false };
    expect(hooks.kernel_mode_select.call(args)).toBe("custom");
    off();
    expect(hooks.kernel_mode_select.call(args)).toBeUndefined();
  });
});
