import { describe, it, expect } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeHandle } from "./contracts.js";
import { Kernel } from "./kernel.js";
import { PluginHost } from "./plugin-host.js";
import { definePlugin, checkManifest, KERNEL_API_VERSION } from "./plugin.js";
import { SettingsManager } from "./settings.js";
import { defineApp } from "./config.js";
import { HOOK_NAMES } from "./hooks.js";

function makeKernel() {
  const dir = mkdtempSync(join(tmpdir(), "pi-kernel-"));
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory() });
  return { kernel, host: new PluginHost(kernel), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const noop = () => {};

describe("hook table", () => {
  it("has every hook of the architecture table, frozen", () => {
    const { kernel, cleanup } = makeKernel();
    for (const name of [
      "session_start", "session_shutdown", "session_switch", "session_fork", "session_compact", "session_tree",
      "session_before_switch", "session_before_fork", "session_before_tree", "session_before_compact",
      "session_directory", "resources_discover", "input", "before_agent_start", "context", "before_provider_request",
      "tool_call", "tool_result", "agent_start", "agent_end", "turn_start", "turn_end", "message_start",
      "message_update", "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
      "model_select", "agent_settled", "user_bash", "kernel_mode_select",
    ]) {
      expect(HOOK_NAMES).toContain(name);
      expect((kernel.hooks as Record<string, unknown>)[name]).toBeDefined();
    }
    expect(Object.isFrozen(kernel.hooks)).toBe(true);
    expect(() => {
      (kernel.hooks as Record<string, unknown>).extra = 1;
    }).toThrow();
    cleanup();
  });

  it("isolates a throwing tap: reported with plugin and hook, later taps still run", async () => {
    const { kernel, cleanup } = makeKernel();
    const a = kernel.scope("plugin-a");
    const b = kernel.scope("plugin-b");
    const seen: string[] = [];
    a.on("agent_start", () => {
      throw new Error("boom");
    });
    b.on("agent_start", () => {
      seen.push("b ran");
    });
    await kernel.hooks.agent_start.promise({ type: "agent_start" });
    expect(seen).toEqual(["b ran"]);
    const d = kernel.diagnostics.list().find((x) => x.hook === "agent_start");
    expect(d?.source).toBe("plugin-a");
    expect((d?.error as Error).message).toBe("boom");
    cleanup();
  });

  it("tool_call fails closed: a throwing handler blocks the tool", async () => {
    const { kernel, cleanup } = makeKernel();
    kernel.scope("guard").on("tool_call", () => {
      throw new Error("policy file unreadable");
    });
    const r = await kernel.hooks.tool_call.promise({ type: "tool_call", toolCallId: "1", toolName: "bash", input: {} });
    expect(r?.block).toBe(true);
    expect(r?.reason).toContain("policy file unreadable");
    cleanup();
  });

  it("bail hooks stop at the first answer; a throwing bail tap does not bail", async () => {
    const { kernel, cleanup } = makeKernel();
    kernel.scope("x").on("session_before_switch", () => {
      throw new Error("x");
    });
    kernel.scope("y").on("session_before_switch", () => ({ cancel: true }));
    kernel.scope("z").on("session_before_switch", () => {
      throw new Error("must not run");
    });
    const r = await kernel.hooks.session_before_switch.promise({ type: "session_before_switch", reason: "new" });
    expect(r).toEqual({ cancel: true });
    expect(kernel.diagnostics.list().filter((d) => d.hook === "session_before_switch")).toHaveLength(1);
    cleanup();
  });

  it("waterfall hooks pass the returned payload on; taps can be removed", async () => {
    const { kernel, cleanup } = makeKernel();
    const p = kernel.scope("p");
    const off = p.on("context", (ev) => ({ ...ev, messages: [...ev.messages, { role: "user", content: "added", timestamp: 1 }] }));
    p.on("context", (ev) => ({ ...ev, messages: [...ev.messages, { role: "user", content: "second", timestamp: 2 }] }));
    let r = await kernel.hooks.context.promise({ type: "context", messages: [] });
    expect(r.messages.map((m: any) => m.content)).toEqual(["added", "second"]);
    off();
    r = await kernel.hooks.context.promise({ type: "context", messages: [] });
    expect(r.messages.map((m: any) => m.content)).toEqual(["second"]);
    cleanup();
  });

  it("kernel_mode_select is a sync bail hook", () => {
    const { kernel, cleanup } = makeKernel();
    kernel.scope("rpc").on("kernel_mode_select", (a) => (a.requested === "rpc" ? "rpc" : undefined));
    kernel.scope("other").on("kernel_mode_select", () => "fallback");
    const args = { argv: {}, stdinIsTTY: true, stdoutIsTTY: true };
    expect(kernel.hooks.kernel_mode_select.call({ ...args, requested: "rpc" })).toBe("rpc");
    expect(kernel.hooks.kernel_mode_select.call({ ...args, requested: "print" })).toBe("fallback");
    cleanup();
  });
});

describe("plugin contract", () => {
  const good = (name: string, extra: object = {}) => definePlugin({ name, version: "1.0.0", kernel: "^1.0.0", setup: noop, ...extra });

  it("checks manifests", () => {
    expect(checkManifest(good("ok"))).toBeUndefined();
    expect(checkManifest(null)).toMatch(/does not export a plugin manifest/);
    expect(checkManifest({ ...good("x"), name: "" })).toMatch(/no name/);
    expect(checkManifest({ ...good("x"), name: "Bad Name" })).toMatch(/kebab-case/);
    expect(checkManifest({ ...good("x"), version: "one" })).toMatch(/not a semver version/);
    expect(checkManifest({ ...good("x"), kernel: "nonsense range!" })).toMatch(/not a semver range/);
    expect(checkManifest({ ...good("x"), kernel: "^2.0.0" })).toMatch(`needs kernel API ^2.0.0, but this kernel provides ${KERNEL_API_VERSION}`);
    expect(checkManifest({ ...good("x"), setup: 1 })).toMatch(/no setup/);
    expect(checkManifest({ ...good("x"), dependsOn: "a" })).toMatch(/dependsOn/);
  });

  it("refuses bad user plugins with one diagnostic each and keeps going", async () => {
    const { kernel, host, cleanup } = makeKernel();
    const loaded: string[] = [];
    await host.load([
      { manifest: good("fine", { setup: () => void loaded.push("fine") }), origin: "a.ts" },
      { manifest: good("future", { kernel: "^2.0.0" }), origin: "b.ts" },
      { manifest: { name: "broken" }, origin: "c.ts" },
      { manifest: good("fine"), origin: "d.ts" },
      { manifest: good("needs-missing", { dependsOn: ["nowhere"] }), origin: "e.ts" },
      {
        manifest: good("thrower", {
          setup: (api: any) => {
            api.registerTool({ name: "half", description: "", parameters: {}, execute: async () => ({ content: [] }) });
            throw new Error("setup exploded");
          },
        }),
        origin: "f.ts",
      },
    ]);
    expect(loaded).toEqual(["fine"]);
    const msgs = kernel.diagnostics.list().map((d) => `${d.source}: ${d.message}`);
    expect(msgs).toEqual([
      expect.stringContaining("b.ts: plugin future refused: it needs kernel API ^2.0.0"),
      expect.stringContaining("c.ts: plugin broken refused: manifest version"),
      expect.stringContaining('d.ts: plugin fine refused: the name "fine" is already taken'),
      expect.stringContaining('e.ts: plugin needs-missing refused: it depends on "nowhere"'),
      expect.stringContaining("f.ts: plugin thrower refused: setup() threw: setup exploded"),
    ]);
    // What the failed plugin registered was undone.
    expect(kernel.tools.has("half")).toBe(false);
    expect([...host.loaded.keys()]).toEqual(["fine"]);
    cleanup();
  });

  it("orders by dependsOn and detects cycles", async () => {
    const { kernel, host, cleanup } = makeKernel();
    const order: string[] = [];
    const p = (name: string, dependsOn: string[] = []) => good(name, { dependsOn, setup: () => void order.push(name) });
    await host.load([
      { manifest: p("c", ["b"]), origin: "c" },
      { manifest: p("b", ["a"]), origin: "b" },
      { manifest: p("a"), origin: "a" },
      { manifest: p("x", ["y"]), origin: "x" },
      { manifest: p("y", ["x"]), origin: "y" },
    ]);
    expect(order).toEqual(["a", "b", "c"]);
    expect(kernel.diagnostics.list().some((d) => /dependency cycle/.test(d.message))).toBe(true);
    cleanup();
  });

  it("built-in plugins fail fast", async () => {
    const { host, cleanup } = makeKernel();
    await expect(
      host.load([{ manifest: good("core-thing", { setup: () => { throw new Error("bug"); } }), origin: "builtin", builtin: true }]),
    ).rejects.toThrow("bug");
    await expect(host.load([{ manifest: good("old", { kernel: "^0.1.0" }), origin: "builtin", builtin: true }])).rejects.toThrow(/needs kernel API/);
    cleanup();
  });

  it("actions that need a live session throw until the kernel is bound", async () => {
    const { kernel, host, cleanup } = makeKernel();
    let error: unknown;
    await host.load([
      {
        manifest: good("eager", {
          setup: (api: any) => {
            try {
              api.kernel.bound("sendMessage");
            } catch (e) {
              error = e;
            }
          },
        }),
        origin: "x",
      },
    ]);
    expect((error as Error).message).toMatch(/sendMessage needs a live session/);
    const runtime = { cwd: "/x" } as unknown as RuntimeHandle;
    kernel.bind(runtime);
    expect(kernel.bound("sendMessage")).toBe(runtime);
    cleanup();
  });
});

describe("registries", () => {
  it("report every name conflict; override replaces and is reported too", () => {
    const { kernel, cleanup } = makeKernel();
    const tool = (description: string) => ({ name: "read", description, parameters: {}, execute: async () => ({ content: [] }) });
    kernel.scope("tools").registerTool(tool("builtin"));
    kernel.scope("ext-a").registerTool(tool("a"));
    expect(kernel.tools.get("read")?.description).toBe("builtin");
    kernel.scope("ext-b").registerTool(tool("b"), { override: true });
    expect(kernel.tools.get("read")?.description).toBe("b");
    const msgs = kernel.diagnostics.list().map((d) => d.message);
    expect(msgs[0]).toMatch(/tool "read" from ext-a conflicts with the one from tools/);
    expect(msgs[1]).toMatch(/tool "read" from ext-b replaces the one from tools/);
    for (const [reg, name] of [
      [kernel.commands, "cmd"], [kernel.flags, "flag"], [kernel.modes, "mode"], [kernel.subcommands, "sub"],
      [kernel.shortcuts, "ctrl+x"], [kernel.messageRenderers, "note"], [kernel.providers, "api"], [kernel.models, "prov"],
    ] as const) {
      (reg as any).register(name, {}, "first");
      (reg as any).register(name, {}, "second");
      expect(kernel.diagnostics.list().at(-1)?.message).toContain(`"${name}" from second conflicts with the one from first`);
    }
    cleanup();
  });

  it("tool middleware wraps in registration order and is visible", async () => {
    const { kernel, cleanup } = makeKernel();
    const calls: string[] = [];
    kernel.scope("tools").registerTool({
      name: "echo", description: "echo", parameters: {},
      execute: async (_id: string, p: any) => { calls.push("inner"); return { content: [{ type: "text", text: p.x }] }; },
    });
    const wrapWith = (label: string) => (t: any) => ({
      ...t,
      execute: async (...a: any[]) => { calls.push(`${label} before`); const r = await t.execute(...a); calls.push(`${label} after`); return r; },
    });
    kernel.scope("first-wrapper").wrapTool("echo", wrapWith("first"));
    kernel.scope("second-wrapper").wrapTool("echo", wrapWith("second"));
    await kernel.tools.get("echo")!.execute("1", { x: "hi" }, undefined, undefined, undefined);
    expect(calls).toEqual(["second before", "first before", "inner", "first after", "second after"]);
    expect(kernel.tools.describe()).toEqual([{ name: "echo", source: "tools", wrappedBy: ["first-wrapper", "second-wrapper"], description: "echo" }]);
    cleanup();
  });

  it("dispose() of a scope removes its taps and registrations", async () => {
    const { kernel, cleanup } = makeKernel();
    const s = kernel.scope("ext");
    let n = 0;
    s.on("agent_start", () => void n++);
    s.registerCommand({ name: "hello", handler: noop });
    s.dispose();
    await kernel.hooks.agent_start.promise({ type: "agent_start" });
    expect(n).toBe(0);
    expect(kernel.commands.has("hello")).toBe(false);
    cleanup();
  });
});
