/**
 * The SDK's `session.checkpoints`: a session made with createAgentSession (and bound) captures the files
 * the faux model's write call changes, lists the point, previews and restores it.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentSession, type CreateAgentSessionResult } from "../sdk/sdk.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import { SessionManager } from "../core/stores/session/session-manager.js";
import { FauxModel, createFauxPlugin } from "../plugins/faux/index.js";

const roots: string[] = [];
const live: CreateAgentSessionResult[] = [];
afterEach(async () => {
  while (live.length) await live.pop()!.runtime.dispose();
  while (roots.length) rmSync(roots.pop()!, { recursive: true, force: true });
});

describe("session.checkpoints", () => {
  it("lists the point before a prompt, previews and restores it", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-cp-sdk-"));
    roots.push(root);
    const agentDir = join(root, "agent");
    const cwd = join(root, "project");
    mkdirSync(agentDir);
    mkdirSync(cwd);
    writeFileSync(join(cwd, "a.txt"), "one\n");
    const faux = new FauxModel({ steps: [{ toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "two\n" } }] }, "Done."] });
    const r = await createAgentSession({
      cwd,
      agentDir,
      model: "faux/faux-1",
      sessionManager: SessionManager.inMemory(cwd),
      plugins: (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p)),
    });
    live.push(r);
    await r.session.bindExtensions(); // captures follow the kernel's live session, as other plugins' hooks do
    await r.session.prompt("rewrite a.txt");
    await r.session.waitForIdle();
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("two\n");
    const cps = r.session.checkpoints!;
    const points = cps.list();
    expect(points.map((p) => [p.index, p.kind, p.label])).toEqual([[1, "prompt", "rewrite a.txt"]]);
    expect(await cps.diff(1)).toEqual({ changes: [{ path: "a.txt", status: "M" }], external: [] });
    const result = await cps.restore(1, "code");
    expect(result).toMatchObject({ mode: "code", restored: ["a.txt"], kept: [] });
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(agentDir, "checkpoints"))).toBe(true);
  }, 60_000);
});
