import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalKey, Keybindings } from "./keys.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("keys", () => {
  it("canonicalises key strings", () => {
    expect(canonicalKey("Shift+Ctrl+P")).toBe("ctrl+shift+p");
    expect(canonicalKey("alt+Enter")).toBe("alt+enter");
    expect(canonicalKey("return")).toBe("enter");
    expect(canonicalKey("pageup")).toBe("pageUp");
    expect(canonicalKey("super+Ctrl+k")).toBe("ctrl+super+k");
  });

  it("loads keybindings.json overrides, including old ids, and reports bad entries", () => {
    const d = mkdtempSync(join(tmpdir(), "pi-keys-"));
    dirs.push(d);
    const file = join(d, "keybindings.json");
    writeFileSync(file, JSON.stringify({ $schema: "https://pi.dev/schemas/keybindings.schema.json", expandTools: ["ctrl+x", "f2"], "app.exit": 5, "tui.altScreen.top": [] }));
    const kb = Keybindings.load(file);
    expect(kb.matches("ctrl+x", "app.tools.expand")).toBe(true);
    expect(kb.matches("f2", "app.tools.expand")).toBe(true);
    expect(kb.matches("ctrl+o", "app.tools.expand")).toBe(false);
    expect(kb.matches("ctrl+d", "app.exit")).toBe(true);
    expect(kb.errors.join("\n")).toMatch(/app\.exit/);
    // "$schema" is an editor hint, not an action; an empty list unbinds.
    expect(kb.entries().some(([id]) => id.startsWith("$"))).toBe(false);
    expect(kb.getKeys("tui.altScreen.top")).toEqual([]);
    expect(kb.errors).toHaveLength(1);
    // A byte-order mark is fine; the namespaced id wins over its old name, wherever it stands.
    writeFileSync(file, "\uFEFF" + JSON.stringify({ "app.tools.expand": "f3", expandTools: "f4" }));
    const kb2 = Keybindings.load(file);
    expect(kb2.errors).toEqual([]);
    expect(kb2.getKeys("app.tools.expand")).toEqual(["f3"]);
    writeFileSync(file, "{ not json");
    expect(Keybindings.load(file).errors.join("\n")).toMatch(/not valid JSON/);
  });
});
