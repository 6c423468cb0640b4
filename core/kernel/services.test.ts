/**
 * Typed services: `requires` in a manifest is checked at registration like dependsOn (a plugin
 * waits for a provider later in the batch; without one it is refused, naming the service);
 * kernel_ready is a hook; a flag carries its own action.
 */
import { afterAll, describe, it, expect } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kernel } from "./kernel.js";
import { PluginHost } from "./plugin-host.js";
import { checkManifest, definePlugin, type PluginManifest } from "./plugin.js";
import { SettingsManager } from "./settings.js";
import { defineApp } from "./config.js";

declare module "./services.js" {
  interface KernelServices {
    "test-clock": { now(): number };
  }
}

const dirs: string[] = [];
function makeKernel() {
  const dir = mkdtempSync(join(tmpdir(), "pi-services-"));
  dirs.push(dir);
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory() });
  return { kernel, host: new PluginHost(kernel) };
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const plugin = (name: string, extra: Partial<PluginManifest> = {}) => definePlugin({ name, version: "1.0.0", kernel: "^1.0.0", setup: () => {}, ...extra });

describe("typed services", () => {
  it("a plugin that requires a service is set up after the plugin that provides it, even later in the batch", async () => {
    const { kernel, host } = makeKernel();
    const order: string[] = [];
    await host.load([
      { manifest: plugin("consumer", { requires: ["test-clock"], setup: (api) => void order.push(`consumer sees ${api.service("test-clock")!.now()}`) }), origin: "a" },
      { manifest: plugin("provider", { setup: (api) => void (order.push("provider"), api.provide("test-clock", { now: () => 42 })) }), origin: "b" },
    ]);
    expect(order).toEqual(["provider", "consumer sees 42"]);
    expect(kernel.diagnostics.list()).toEqual([]);
  });

  it("a required service nobody provides refuses the plugin (and its dependents), naming the service", async () => {
    const { kernel, host } = makeKernel();
    const ran: string[] = [];
    await host.load([
      { manifest: plugin("lonely", { requires: ["test-clock"], setup: () => void ran.push("lonely") }), origin: "lonely.ts" },
      { manifest: plugin("follower", { dependsOn: ["lonely"], setup: () => void ran.push("follower") }), origin: "follower.ts" },
      { manifest: plugin("fine", { setup: () => void ran.push("fine") }), origin: "fine.ts" },
    ]);
    expect(ran).toEqual(["fine"]);
    const msgs = kernel.diagnostics.list().map((d) => `${d.source}: ${d.message}`);
    expect(msgs).toEqual([
      'lonely.ts: plugin lonely refused: it requires the service "test-clock", which no installed plugin provides',
      expect.stringContaining("follower.ts: plugin follower refused"),
    ]);
  });

  it("a built-in plugin with a missing service fails fast", async () => {
    const { host } = makeKernel();
    await expect(host.load([{ manifest: plugin("core-thing", { requires: ["compactor"] }), origin: "builtin", builtin: true }])).rejects.toThrow(/requires the service "compactor"/);
  });

  it("requires must list service names", () => {
    expect(checkManifest(plugin("x", { requires: "test-clock" as never }))).toMatch(/requires must be an array/);
    expect(checkManifest(plugin("x", { requires: ["test-clock"] }))).toBeUndefined();
  });

  it("kernel_ready runs the taps of every plugin once, in plugin order", async () => {
    const { kernel, host } = makeKernel();
    const seen: string[] = [];
    await host.load([
      { manifest: plugin("one", { setup: (api) => void api.on("kernel_ready", () => void seen.push("one")) }), origin: "1" },
      { manifest: plugin("two", { setup: (api) => void api.on("kernel_ready", async () => void seen.push("two")) }), origin: "2" },
    ]);
    expect(seen).toEqual([]);
    await kernel.hooks.kernel_ready.promise({ type: "kernel_ready" });
    expect(seen).toEqual(["one", "two"]);
  });

  it("a flag keeps its own action in the flag registry", async () => {
    const { kernel, host } = makeKernel();
    await host.load([
      {
        manifest: plugin("answers", { setup: (api) => void api.registerFlag({ name: "say", type: "string", description: "say it", action: (v) => `said ${String(v)}` }) }),
        origin: "x",
      },
    ]);
    const flag = kernel.flags.get("say")!;
    expect(await flag.action!("hi", { kernel, cwd: kernel.cwd, positionals: [] })).toBe("said hi");
    expect(kernel.flags.entry("say")?.source).toBe("answers");
  });
});
