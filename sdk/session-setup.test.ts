/**
 * The CLI's session factory (createSessionRuntime) through a test kernel: resuming restores the
 * model and thinking level, new sessions carry them over, and the session flags that cannot
 * work say why.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { createTestKernel } from "../tests/helpers/test-kernel.js";
import { createSessionRuntime } from "./session-setup.js";
import type { ParsedArgs } from "./args.js";
import type { ModeDefinition } from "../core/kernel/kernel.js";
import type { AgentSessionRuntime } from "../core/engine/runtime.js";

type TK = Awaited<ReturnType<typeof createTestKernel>>;
let tk: TK | undefined;
let rt: AgentSessionRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
  tk?.cleanup();
  tk = undefined;
});

const args = (flags: Record<string, unknown>): ParsedArgs => ({ flags, positionals: [], unknown: [] });

/** The modes as the mode registry knows them (only what session setup reads: the name, whether it has a UI). */
const MODES: Record<string, ModeDefinition> = {
  print: { name: "print", input: "print", run: async () => 0 },
  json: { name: "json", input: "print", run: async () => 0 },
  interactive: { name: "interactive", hasUI: true, input: "interactive", sessionMode: "tui", run: async () => 0 },
};

async function setup(flags: Record<string, unknown>, mode = "print") {
  return createSessionRuntime({ kernel: tk!.kernel, parsed: args(flags), cwd: tk!.cwd, mode: MODES[mode]! });
}

describe("createSessionRuntime", () => {
  it("switching back to a session restores its model and thinking level; /new keeps the current ones", async () => {
    tk = await createTestKernel({ steps: ["one", "two", "three"] });
    tk.faux.addModel({ id: "faux-think", reasoning: true });
    rt = await setup({ model: "faux/faux-think", thinking: "high" });
    expect(rt.session.model?.id).toBe("faux-think");
    expect(rt.session.thinkingLevel).toBe("high");
    await rt.session.prompt("first session");
    const first = rt.session.sessionFile!;

    await rt.newSession();
    expect(rt.session.model?.id).toBe("faux-think");
    expect(rt.session.thinkingLevel).toBe("high");
    // The new file starts with the model and thinking level, like the reference's.
    const head = rt.sessionManager.getEntries().map((e) => e.type);
    expect(head).toEqual(["model_change", "thinking_level_change"]);
    await rt.session.setModel(tk.registry.find("faux", "faux-1")!);
    expect(rt.session.thinkingLevel).toBe("off");
    await rt.session.prompt("second session");

    await rt.switchSession(first);
    expect(rt.session.model?.id).toBe("faux-think");
    expect(rt.session.thinkingLevel).toBe("high");
    expect(rt.session.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant"]); // (pi 1.6 system message entry)
  });

  it("--resume: a clear error outside the interactive mode or without a picker; with one, the mode starts on a new session and picks", async () => {
    tk = await createTestKernel();
    await expect(setup({ resume: true }, "print")).rejects.toThrow(/--resume \(-r\) opens an interactive session picker, which the print mode does not have; pass --session <path\|id>/);
    await expect(setup({ resume: true }, "json")).rejects.toThrow(/which the json mode does not have/);
    await expect(setup({ resume: true }, "interactive")).rejects.toThrow(/needs a session picker, and no installed plugin provides one/);
    let asked = 0;
    tk.kernel.provide("session-picker", async () => void asked++, "test");
    rt = await setup({ resume: true, model: "faux/faux-1" }, "interactive");
    expect(rt.session.messages).toHaveLength(0);
    expect(asked).toBe(0); // the interactive mode opens the picker once it runs
  });

  it("--fork cannot be combined with another session choice", async () => {
    tk = await createTestKernel();
    await expect(setup({ fork: "abc", continue: true, "no-session": true })).rejects.toThrow("--fork cannot be combined with --continue, --no-session");
    await expect(setup({ resume: true, session: "x" }, "interactive")).rejects.toThrow("--resume cannot be combined with --session");
  });
});
