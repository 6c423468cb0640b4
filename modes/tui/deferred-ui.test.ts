import { describe, it, expect } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kernel, SettingsManager, defineApp, createNoopUI, type ExtensionUI } from "../../core/kernel/index.js";
import { DeferredUi } from "./deferred-ui.js";
import { Theme } from "./theme.js";

function kernel() {
  return new Kernel({ app: defineApp("pi", "0.0.0"), cwd: "/tmp", agentDir: "/tmp/agent-none", settings: SettingsManager.inMemory({ theme: "light" } as any) });
}

describe("the ui before the screen exists", () => {
  it("replays drawing calls on attach, answers early dialogs with defaults and a diagnostic", async () => {
    const k = kernel();
    const d = new DeferredUi(k);
    expect(d.kind).toBe("tui");
    expect((d.theme as Theme).name).toBe("light");
    d.setStatus("ext", "ready");
    d.setWidget("w", ["line"], { placement: "belowEditor" });
    d.notify("hello", "warning");
    await expect(d.select("pick", ["a", "b"])).resolves.toBeUndefined();
    await expect(d.confirm("ok?", "sure")).resolves.toBe(false);
    expect(k.diagnostics.list().map((x) => x.message).join("\n")).toMatch(/select\(\) was called before the interactive UI started/);

    const calls: string[] = [];
    const real: ExtensionUI = {
      ...createNoopUI(),
      kind: "tui",
      setStatus: (key, text) => void calls.push(`status ${key}=${text}`),
      setWidget: (key, content, o) => void calls.push(`widget ${key} ${JSON.stringify(content)} ${o?.placement}`),
      notify: (m, t) => void calls.push(`notify ${m} ${t}`),
      select: async () => "b",
    };
    d.attach(real);
    expect(calls).toEqual(["status ext=ready", 'widget w ["line"] belowEditor', "notify hello warning"]);
    await expect(d.select("pick", ["a", "b"])).resolves.toBe("b");
    d.setStatus("ext", "live");
    expect(calls.at(-1)).toBe("status ext=live");

    d.detach();
    d.setStatus("ext", "gone");
    expect(calls.at(-1)).toBe("status ext=live");
    await expect(d.input("name?")).resolves.toBeUndefined();
  });
});

describe("themes before the screen exists", () => {
  it("getAllThemes() at session_start lists the themes of packages and extensions (the theme-paths service), not only dark and light", () => {
    const dir = mkdtempSync(join(tmpdir(), "deferred-themes-"));
    try {
      const file = join(dir, "ocean.json");
      writeFileSync(file, JSON.stringify({ name: "ocean", vars: {}, colors: {} }));
      const k = kernel();
      k.provide("theme-paths", () => [file], "test");
      const d = new DeferredUi(k);
      const names = (d.getAllThemes() as Array<{ name: string }>).map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["dark", "light", "ocean"]));
      expect((d.getTheme("ocean") as Theme).name).toBe("ocean");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
