import { describe, it, expect } from "@jest/globals";
import { createExtensionHarness } from "../../sdk/extension-harness.js";
import type { ExtensionAPI } from "./types.js";

describe("an extension's renderers live in the kernel registries and go with the extension", () => {
  it("registers tool renderers in load order and entry renderers under the extension's name; /reload leaves only what the new load registered", async () => {
    let loads = 0;
    const first = (pi: ExtensionAPI) => {
      loads++;
      // Only the first load registers: after /reload nothing of it may be left.
      if (loads > 1) return;
      pi.registerToolRenderer((name: string, next: () => unknown) => (name === "a" ? "first" : next()));
      pi.registerEntryRenderer("card", () => "first-card");
      pi.registerMarkdownTransformer((md: string) => md);
    };
    const second = (pi: ExtensionAPI) => {
      pi.registerToolRenderer((name: string, next: () => unknown) => (name === "b" ? "second" : next()));
    };
    const h = await createExtensionHarness({ extensions: [first, second] });
    try {
      const k = h.kernel;
      const resolvers = k.toolRenderers.list();
      expect(resolvers).toHaveLength(2);
      // load order: the first extension's resolver is asked first
      expect(resolvers[0]!.value("a", () => "base")).toBe("first");
      expect(resolvers[1]!.value("b", () => "base")).toBe("second");
      expect(resolvers[0]!.source).not.toBe(resolvers[1]!.source);
      expect(k.entryRenderers.list().map((e) => [e.source, e.value.customType])).toEqual([[resolvers[0]!.source, "card"]]);
      expect(k.markdownTransformers.list()).toHaveLength(1);

      await k.service("extensions")!.reload();

      expect(loads).toBe(2);
      const after = k.toolRenderers.list();
      expect(after).toHaveLength(1);
      expect(after[0]!.value("b", () => "base")).toBe("second");
      expect(after[0]!.value("a", () => "base")).toBe("base");
      expect(k.entryRenderers.list()).toEqual([]);
      expect(k.markdownTransformers.list()).toEqual([]);
    } finally {
      await h.dispose();
    }
  });

  it("an extension that fails while loading leaves no renderer behind", async () => {
    const failing = (pi: ExtensionAPI) => {
      pi.registerToolRenderer((_name: string, next: () => unknown) => next());
      pi.registerEntryRenderer("card", () => "card");
      throw new Error("boom in factory");
    };
    const h = await createExtensionHarness({ extensions: [failing] });
    try {
      expect(h.diagnostics.some((d) => d.level === "error" && /boom in factory/.test(d.message))).toBe(true);
      expect(h.kernel.toolRenderers.list()).toEqual([]);
      expect(h.kernel.entryRenderers.list()).toEqual([]);
    } finally {
      await h.dispose();
    }
  });
});
