/**
 * The mode registry's resolution (core/kernel/modes.ts): --mode values, claims by priority, the
 * kernel_mode_select override, prepare() once, and what a session records.
 */
import { afterAll, describe, it, expect } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kernel, type ModeDefinition } from "./kernel.js";
import { SettingsManager } from "./settings.js";
import { defineApp } from "./config.js";
import { ModeSelectError, prepareMode, resolveMode, sessionTraitsOf } from "./modes.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function kernelWith(modes: ModeDefinition[]): Kernel {
  const dir = mkdtempSync(join(tmpdir(), "pi-modes-"));
  dirs.push(dir);
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory() });
  for (const m of modes) kernel.scope(`mode-${m.name}`).registerMode(m);
  return kernel;
}

const run = async () => 0;
const print: ModeDefinition = { name: "print", modeFlag: ["text", "print"], claims: (i) => !!i.flags.print || i.pipedInput || !i.stdinIsTTY || !i.stdoutIsTTY, priority: 10, input: "print", run };
const tui: ModeDefinition = { name: "interactive", claims: () => true, priority: 0, hasUI: true, input: "interactive", sessionMode: "tui", run };
const acp: ModeDefinition = { name: "acp", ownsStdin: true, run };
const tty = { stdinIsTTY: true, stdoutIsTTY: true, pipedInput: false };

describe("mode registry", () => {
  it("--mode picks the mode listing the value; a third-party mode by its own name", () => {
    const k = kernelWith([print, tui, acp]);
    expect(resolveMode(k, { flags: {}, modeFlag: "text", ...tty }).name).toBe("print");
    expect(resolveMode(k, { flags: {}, modeFlag: "acp", ...tty }).name).toBe("acp");
    expect(() => resolveMode(k, { flags: {}, modeFlag: "nope", ...tty })).toThrow(new ModeSelectError('unknown --mode "nope" (expected text, print, interactive or acp)'));
  });

  it("without --mode the highest-priority claimant wins", () => {
    const k = kernelWith([tui, print, acp]);
    expect(resolveMode(k, { flags: {}, ...tty }).name).toBe("interactive");
    expect(resolveMode(k, { flags: { print: true }, ...tty }).name).toBe("print");
    expect(resolveMode(k, { flags: {}, ...tty, stdoutIsTTY: false }).name).toBe("print");
    expect(() => resolveMode(kernelWith([acp]), { flags: {}, ...tty })).toThrow(/no installed mode claims this run \(installed: acp\)/);
  });

  it("a kernel_mode_select tap may answer another registered mode", () => {
    const k = kernelWith([print, tui, acp]);
    k.scope("router").on("kernel_mode_select", ({ argv }) => (argv.acp ? "acp" : undefined));
    expect(resolveMode(k, { flags: { acp: true }, ...tty }).name).toBe("acp");
    expect(resolveMode(k, { flags: {}, ...tty }).name).toBe("interactive");
  });

  it("prepare runs once per kernel; the session records the mode's own name unless it names another", () => {
    let prepared = 0;
    const ui: ModeDefinition = { ...acp, name: "ui-mode", prepare: () => void prepared++ };
    const k = kernelWith([ui]);
    prepareMode(k, ui);
    prepareMode(k, ui);
    expect(prepared).toBe(1);
    expect(sessionTraitsOf(acp)).toEqual({ mode: "acp", hasUI: false, inputSource: "sdk" });
    expect(sessionTraitsOf(tui)).toEqual({ mode: "tui", hasUI: true, inputSource: "interactive" });
  });
});
