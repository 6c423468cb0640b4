import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalKey, fromBlessed, keyFromData, Keybindings, parseExtendedKey } from "./keys.js";

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
  });

  it("normalises blessed key events", () => {
    expect(fromBlessed("a", { name: "a", full: "a" })).toMatchObject({ id: "a", text: "a" });
    expect(fromBlessed("A", { name: "a", shift: true, full: "S-a" })).toMatchObject({ id: "shift+a", text: "A" });
    expect(fromBlessed("\x03", { name: "c", ctrl: true, full: "C-c" })).toMatchObject({ id: "ctrl+c", text: undefined });
    expect(fromBlessed("/", { full: "/" })).toMatchObject({ id: "/", text: "/" });
    expect(fromBlessed("\r", { name: "enter", full: "enter" })).toBeUndefined();
    expect(fromBlessed("\r", { name: "return", full: "return" })).toMatchObject({ id: "enter" });
    expect(fromBlessed("\n", { name: "linefeed", full: "linefeed" })).toMatchObject({ id: "ctrl+j" });
    expect(fromBlessed(undefined, { name: "up", meta: true, full: "M-up" })).toMatchObject({ id: "alt+up" });
  });

  it("parses kitty and modifyOtherKeys sequences", () => {
    expect(parseExtendedKey("\x1b[13;2u")?.id).toBe("shift+enter");
    expect(parseExtendedKey("\x1b[27;5;13~")?.id).toBe("ctrl+enter");
    expect(parseExtendedKey("\x1b[97;5u")?.id).toBe("ctrl+a");
    expect(parseExtendedKey("x")).toBeUndefined();
    expect(keyFromData("\x1b[A")).toBe("up");
    expect(keyFromData("\x01")).toBe("ctrl+a");
  });

  it("loads keybindings.json overrides, including old ids, and reports bad entries", () => {
    const d = mkdtempSync(join(tmpdir(), "pi-keys-"));
    dirs.push(d);
    const file = join(d, "keybindings.json");
    writeFileSync(file, JSON.stringify({ "app.tools.expand": "ctrl+x", expandTools: ["ctrl+x", "f2"], "app.exit": 5 }));
    const kb = Keybindings.load(file);
    expect(kb.matches("ctrl+x", "app.tools.expand")).toBe(true);
    expect(kb.matches("f2", "app.tools.expand")).toBe(true);
    expect(kb.matches("ctrl+o", "app.tools.expand")).toBe(false);
    expect(kb.matches("ctrl+d", "app.exit")).toBe(true);
    expect(kb.errors.join("\n")).toMatch(/app\.exit/);
    writeFileSync(file, "{ not json");
    expect(Keybindings.load(file).errors.join("\n")).toMatch(/not valid JSON/);
  });
});
