import { describe, it, expect } from "@jest/globals";
import { Kernel } from "./kernel.js";
import { PluginHost } from "./plugin-host.js";
import { checkManifest, definePlugin } from "./plugin.js";
import { SettingsManager } from "./settings.js";
import { defineApp } from "./config.js";
import { withDeadline, DeadlineError } from "./deadline.js";

const makeKernel = () => new Kernel({ app: defineApp("pi", "0.0.0"), cwd: "/nonexistent", agentDir: "/nonexistent", settings: SettingsManager.inMemory() });
const plugin = (name: string, rest: Partial<Parameters<typeof definePlugin>[0]> = {}) =>
  definePlugin({ name, version: "1.0.0", kernel: "^1.0.0", setup: () => undefined, ...rest });
const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe("setup deadline", () => {
  it("refuses a user plugin whose setup() does not settle in time, naming it, and undoes its late registrations", async () => {
    const kernel = makeKernel();
    const host = new PluginHost(kernel, { setupTimeoutMs: 50 });
    const release = deferred();
    let lateDone!: () => void;
    const late = new Promise<void>((r) => (lateDone = r));
    await host.load([
      {
        origin: "/plugins/slow.ts",
        manifest: plugin("slow", {
          async setup(api) {
            api.registerCommand({ name: "early", handler: () => undefined });
            await release.promise;
            api.registerCommand({ name: "late", handler: () => undefined });
            lateDone();
          },
        }),
      },
      { origin: "/plugins/fine.ts", manifest: plugin("fine", { setup: (api) => void api.registerCommand({ name: "fine", handler: () => undefined }) }) },
    ]);
    expect([...host.loaded.keys()]).toEqual(["fine"]);
    const errors = kernel.diagnostics.list().filter((d) => d.level === "error");
    expect(errors.map((d) => [d.source, d.message])).toEqual([["/plugins/slow.ts", "plugin slow refused: setup() did not finish within 50 ms"]]);
    expect(kernel.commands.has("early")).toBe(false);
    // the setup finishes after its deadline: what it registered then is undone as well
    release.resolve();
    await late;
    await new Promise((r) => setImmediate(r));
    expect(kernel.commands.has("late")).toBe(false);
    expect(kernel.commands.has("fine")).toBe(true);
  });

  it("fails fast for a built-in plugin whose setup() hangs", async () => {
    const host = new PluginHost(makeKernel(), { setupTimeoutMs: 20 });
    const never = new Promise<void>(() => undefined);
    await expect(host.load([{ origin: "builtin", builtin: true, manifest: plugin("stuck", { setup: () => never }) }])).rejects.toThrow(
      "plugin stuck refused: setup() did not finish within 20 ms",
    );
  });

  it("has no deadline when the timeout is 0", async () => {
    const host = new PluginHost(makeKernel(), { setupTimeoutMs: 0 });
    await host.load([{ origin: "x", manifest: plugin("quick", { setup: () => new Promise<void>((r) => setImmediate(r)) }) }]);
    expect(host.loaded.has("quick")).toBe(true);
  });
});

describe("teardown", () => {
  it("runs manifest teardown and onClose steps once, in reverse order, at kernel disposal", async () => {
    const kernel = makeKernel();
    const host = new PluginHost(kernel);
    const order: string[] = [];
    await host.load([
      { origin: "a", manifest: plugin("a", { setup: (api) => void api.onClose(() => void order.push("a:onClose")), teardown: () => void order.push("a:teardown") }) },
      { origin: "b", manifest: plugin("b", { dependsOn: ["a"], teardown: async () => void order.push("b:teardown") }) },
      { origin: "c", manifest: plugin("c", { dependsOn: ["b"], setup: (api) => void api.onClose(async () => void order.push("c:onClose")) }) },
    ]);
    expect(order).toEqual([]);
    expect(await kernel.dispose()).toEqual([]);
    expect(order).toEqual(["c:onClose", "b:teardown", "a:teardown", "a:onClose"]);
    await kernel.dispose();
    expect(order).toHaveLength(4);
  });

  it("reports a failing or hanging teardown with the plugin's name and still runs the others", async () => {
    const kernel = makeKernel();
    const host = new PluginHost(kernel);
    const ran: string[] = [];
    await host.load([
      { origin: "a", manifest: plugin("a", { teardown: () => void ran.push("a") }) },
      { origin: "b", manifest: plugin("b", { teardown: () => { throw new Error("socket already closed"); } }) },
      { origin: "c", manifest: plugin("c", { teardown: () => new Promise<void>(() => undefined) }) },
    ]);
    const failures = await kernel.dispose(30);
    expect(failures.map((d) => [d.source, d.message, (d.error as Error).message])).toEqual([
      ["c", "plugin c teardown failed", "plugin c teardown did not finish within 30 ms"],
      ["b", "plugin b teardown failed", "socket already closed"],
    ]);
    expect(kernel.diagnostics.list().filter((d) => d.level === "error")).toHaveLength(2);
    expect(ran).toEqual(["a"]);
  });

  it("drops the onClose steps of a plugin whose setup failed", async () => {
    const kernel = makeKernel();
    const host = new PluginHost(kernel);
    const ran: string[] = [];
    await host.load([
      {
        origin: "broken",
        manifest: plugin("broken", {
          setup(api) {
            api.onClose(() => void ran.push("broken"));
            throw new Error("no config");
          },
          teardown: () => void ran.push("broken:teardown"),
        }),
      },
    ]);
    expect(kernel.teardowns.size).toBe(0);
    await kernel.dispose();
    expect(ran).toEqual([]);
  });

  it("refuses a manifest whose teardown is not a function", () => {
    expect(checkManifest({ ...plugin("x"), teardown: "later" })).toBe("manifest teardown must be a function");
  });
});

describe("withDeadline", () => {
  it("passes the work's value and error through, and rejects with a DeadlineError when late", async () => {
    await expect(withDeadline(Promise.resolve(7), 1000, "w")).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error("boom")), 1000, "w")).rejects.toThrow("boom");
    const late = withDeadline(new Promise(() => undefined), 10, "the thing");
    await expect(late).rejects.toBeInstanceOf(DeadlineError);
    await expect(late).rejects.toThrow("the thing did not finish within 10 ms");
  });
});
