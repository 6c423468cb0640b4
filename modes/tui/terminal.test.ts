import { describe, it, expect } from "@jest/globals";
import { PassThrough } from "node:stream";
import { ProgramStatusReporter } from "./program-status.js";
import { TerminalModes } from "./terminal.js";

function modes(statusOverride = "0") {
  const written: string[] = [];
  let raw = false;
  const input = Object.assign(new PassThrough(), { isTTY: true, get isRaw() { return raw; }, setRawMode: (on: boolean) => void (raw = on) });
  const status = new ProgramStatusReporter(() => {}, "pi", () => undefined, statusOverride);
  const t = new TerminalModes({ write: (s) => void written.push(s), input, status });
  return { t, written, out: () => written.join(""), isRaw: () => raw, status };
}

describe("terminal modes", () => {
  it("goes raw before asking, then pushes the kitty flags, queries them and sends the DA sentinel", () => {
    const m = modes();
    m.t.enter({ mouse: true });
    expect(m.isRaw()).toBe(true);
    expect(m.out()).toContain("\x1b[?2004h\x1b[>7u\x1b[?u\x1b[c");
    expect(m.out()).toContain("\x1b[?1006h");
  });

  it("keeps modifyOtherKeys when the DA reply comes without a kitty answer (tmux)", () => {
    const m = modes();
    m.t.enter({ mouse: false });
    // Requested with the queries, so a key pressed before the reply is extended already.
    expect(m.out()).toContain("\x1b[c\x1b[>4;2m");
    expect(m.t.takeReplies("\x1b[?1;2c")).toBe("");
    expect(m.t.modifyOtherKeys).toBe(true);
    expect(m.t.kitty).toBe(false);
    expect(m.out()).toContain("\x1b[>4;2m");
    // A later DA reply we did not ask for is left as input.
    expect(m.t.takeReplies("x\x1b[?1;2c")).toBe("x\x1b[?1;2c");
  });

  it("uses the kitty protocol when the terminal answers its flags before DA", () => {
    const m = modes();
    let told: boolean | undefined;
    m.t.onKitty = (on) => (told = on);
    m.t.enter({ mouse: false });
    expect(m.t.takeReplies("\x1b[?7u\x1b[?62;22c")).toBe("");
    expect(m.t.kitty).toBe(true);
    expect(m.t.modifyOtherKeys).toBe(false);
    expect(told).toBe(true);
    expect(m.out().endsWith("\x1b[>4;0m")).toBe(true);
  });

  it("joins a reply cut across reads and never types it", () => {
    const m = modes();
    m.t.enter({ mouse: false });
    expect(m.t.takeReplies("a\x1b[?1;")).toBe("a");
    expect(m.t.takeReplies("2cb")).toBe("b");
    expect(m.t.owedReplies).toBe(0);
  });

  it("ends the program-status probe on the same DA reply", () => {
    const m = modes("");
    m.t.enter({ mouse: false });
    expect(m.out()).toContain("\x1b]7501;?\x1b\\\x1b[c");
    expect(m.status.probing).toBe(true);
    m.t.takeReplies("\x1b]7501;?\x1b\\\x1b[?62c");
    expect(m.status.supported).toBe(true);
    expect(m.status.probing).toBe(false);
  });

  it("turns everything off on the way out, waiting (bounded) for replies still owed", async () => {
    const m = modes();
    m.t.enter({ mouse: true });
    const t0 = Date.now();
    const drained = m.t.drain(2000, 20);
    setTimeout(() => m.t.takeReplies("\x1b[?1;2c"), 30);
    await drained;
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(m.t.owedReplies).toBe(0);
    expect(m.out()).toContain("\x1b[?1006l");
    expect(m.out()).toContain("\x1b[<u");
    m.t.leave();
    expect(m.out().endsWith("\x1b[?2004l")).toBe(true);
  });
});
