import { describe, it, expect } from "@jest/globals";
import toolsPlugin from "./index.js";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import { waitUntil } from "../../tests/helpers/system.js";
import { existsSync } from "node:fs";
import { join } from "node:path";

describe("user bash (session.executeBash through the tools plugin's executor)", () => {
  it("runs the command, records a bashExecution message, honours excludeFromContext", async () => {
    const t = await createTestKernel({ plugins: [toolsPlugin], steps: [(ctx: any) => JSON.stringify(ctx.messages.map((m: any) => m.role))] });
    const r = await t.session.executeBash("echo out; echo err 1>&2; exit 4");
    expect(r.output).toContain("out");
    expect(r.output).toContain("err");
    expect(r.exitCode).toBe(4);
    expect(r.cancelled).toBe(false);
    await t.session.executeBash("echo private", { excludeFromContext: true });
    const msgs = t.session.messages as any[];
    expect(msgs.map((m) => m.role)).toEqual(["bashExecution", "bashExecution"]);
    expect(msgs[1].excludeFromContext).toBe(true);
    await t.session.prompt("what ran?");
    // Only the first bash run reached the model (as a user message).
    expect(t.session.getLastAssistantText()).toBe(JSON.stringify(["user", "user"]));
    t.cleanup();
  });

  it("the user_bash hook can answer instead; abortBash cancels a running command", async () => {
    const t = await createTestKernel({ plugins: [toolsPlugin] });
    const off = t.kernel.scope("ext").on("user_bash", (e) => (e.command === "fake" ? { result: { output: "from hook", exitCode: 0, cancelled: false, truncated: false } } : undefined));
    expect((await t.session.executeBash("fake")).output).toBe("from hook");
    off();
    const marker = join(t.cwd, "bash-started.marker");
    const p = t.session.executeBash(`touch '${marker}'; sleep 20`);
    await waitUntil(() => existsSync(marker), "the command to start");
    t.session.abortBash();
    const r = await p;
    expect(r.cancelled).toBe(true);
    t.cleanup();
  });
});
