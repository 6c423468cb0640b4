/**
 * A host running two independent sessions in one process: separate working folders and agent
 * dirs (their own settings, sessions and extensions), prompts running at the same time against
 * their own faux models, and no event, tool call or file crossing from one to the other.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createAgentSession, type CreateAgentSessionResult } from "../sdk/sdk.js";
import { FauxModel, createFauxPlugin, type FauxStep } from "../plugins/faux/index.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import type { AgentSessionEvent } from "../core/kernel/types.js";
import type { ExtensionAPI } from "../plugins/extensions/types.js";

const root = mkdtempSync(join(tmpdir(), "pi-sdk-host-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Host {
  name: string;
  cwd: string;
  agentDir: string;
  result: CreateAgentSessionResult;
  events: AgentSessionEvent[];
  starts: string[];
}

async function host(name: string, steps: FauxStep[]): Promise<Host> {
  const cwd = join(root, name, "project");
  const agentDir = join(root, name, "agent");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(join(agentDir, "extensions"), { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
  // An extension in each agent dir: each one must load only into its own session.
  writeFileSync(join(agentDir, "extensions", `${name}-ext.ts`), `export default function (pi: any) { pi.registerCommand("${name}-only", { handler: async () => {} }); }\n`);
  const faux = new FauxModel({ steps, delayMs: 2 });
  const starts: string[] = [];
  const result = await createAgentSession({
    cwd,
    agentDir,
    plugins: (builtins: PluginManifest[]) => builtins.map((p) => (p.name === "faux" ? createFauxPlugin(faux) : p)),
    extensionFactories: [(pi: ExtensionAPI) => void pi.on("session_start", (_e, ctx) => void starts.push(ctx.cwd))],
  });
  const events: AgentSessionEvent[] = [];
  result.session.subscribe((e) => void events.push(e));
  await result.runtime.bindExtensions();
  return { name, cwd, agentDir, result, events, starts };
}

const deltas = (events: AgentSessionEvent[]) =>
  events.map((e) => (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta" ? e.assistantMessageEvent.delta : "")).join("");

describe("two independent sessions in one process", () => {
  it("run concurrently without sharing events, tools, files, extensions or session folders", async () => {
    const answer = (who: string) => `${who} says ${Array.from({ length: 40 }, (_, i) => `${who}${i}`).join(" ")}`;
    const alpha = await host("alpha", [{ toolCalls: [{ name: "write", arguments: { path: "note.txt", content: "from alpha" } }] }, answer("alpha")]);
    const beta = await host("beta", [{ toolCalls: [{ name: "write", arguments: { path: "note.txt", content: "from beta" } }] }, answer("beta")]);
    try {
      // Both stream at once: the chunks interleave in time.
      const order: string[] = [];
      for (const h of [alpha, beta]) h.result.session.subscribe((e) => void (e.type === "message_update" && order.push(h.name)));
      await Promise.all([alpha.result.session.prompt("write your note"), beta.result.session.prompt("write your note")]);
      const firstBeta = order.indexOf("beta");
      const lastAlpha = order.lastIndexOf("alpha");
      expect(firstBeta).toBeGreaterThanOrEqual(0);
      expect(firstBeta).toBeLessThan(lastAlpha);

      for (const [h, other] of [
        [alpha, beta],
        [beta, alpha],
      ] as const) {
        expect(deltas(h.events)).toBe(answer(h.name));
        expect(deltas(h.events)).not.toContain(other.name);
        const toolEnds = h.events.filter((e) => e.type === "tool_execution_end");
        expect(toolEnds).toHaveLength(1);
        expect(readFileSync(join(h.cwd, "note.txt"), "utf8")).toBe(`from ${h.name}`);
        expect(h.starts).toEqual([resolve(h.cwd)]);
        const kernel = h.result.services.kernel;
        expect(kernel.commands.has(`${h.name}-only`)).toBe(true);
        expect(kernel.commands.has(`${other.name}-only`)).toBe(false);
        const file = h.result.session.sessionFile!;
        expect(file.startsWith(join(resolve(h.agentDir), "sessions"))).toBe(true);
        expect(existsSync(file)).toBe(true);
        expect(readFileSync(file, "utf8")).not.toContain(`from ${other.name}`);
        expect(h.result.diagnostics.filter((d) => d.level === "error")).toEqual([]);
      }
    } finally {
      await alpha.result.runtime.dispose();
      await beta.result.runtime.dispose();
    }
  });
});
