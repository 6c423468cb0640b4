/**
 * Full control: nothing is discovered or read from ~/.pi. Explicit folders, in-memory settings
 * and keys, a chosen plugin list, an inline extension, an exact tool list, a system prompt, an
 * in-memory session. The scripted faux model stands in for a provider here; with a real one,
 * drop the faux plugin swap, put its key into the AuthStorage and pick its model.
 *
 *   node examples/04-full-control.mjs
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthStorage, createAgentSession, createFauxPlugin, FauxModel, SessionManager } from "pi-kernel";

const agentDir = mkdtempSync(join(tmpdir(), "my-agent-")); // nothing from ~/.pi/agent
const cwd = process.cwd();

// The model's replies, scripted: first it lists the folder, then it answers.
const model = new FauxModel({ steps: [{ toolCalls: [{ name: "ls", arguments: { path: "." } }] }, "Listed the folder."] });

// Keep only what this host needs: providers, the faux model, tools, the permission gate and extensions.
const keep = new Set(["providers", "faux", "tools", "project-trust", "permission-gate", "extensions"]);

const log = [];
const { session, runtime, services } = await createAgentSession({
  cwd,
  agentDir,
  settings: { compaction: { enabled: false }, retry: { enabled: false } }, // in memory, nothing read or written
  authStorage: AuthStorage.inMemory(), // e.g. AuthStorage.inMemory({ anthropic: { type: "api_key", key: process.env.MY_KEY } })
  plugins: (builtins) => builtins.filter((p) => keep.has(p.name)).map((p) => (p.name === "faux" ? createFauxPlugin(model) : p)),
  resources: { noExtensions: true },
  extensionFactories: [
    (pi) => {
      pi.on("tool_call", (event) => void log.push(`tool_call ${event.toolName}`));
      pi.on("agent_end", (event) => void log.push(`agent_end (${event.messages.length} new messages)`));
    },
  ],
  model: "faux/faux-1",
  thinkingLevel: "off",
  tools: ["read", "ls"],
  systemPrompt: "You are a minimal assistant. Be concise.",
  sessionManager: SessionManager.inMemory(cwd),
});

await runtime.bindExtensions({ onError: (e) => console.error(`extension error in ${e.extensionPath} (${e.event}): ${e.error}`) });
console.log(`plugins: ${[...keep].join(", ")}`);
console.log(`tools: ${session.getActiveToolNames().join(", ")}`);
console.log(`system prompt starts: ${(await session.getSystemPrompt()).split("\n")[0]}`);
await session.prompt("What is in this folder?");
console.log(`answer: ${session.getLastAssistantText()}`);
console.log(log.join("\n"));
console.log(`diagnostics: ${services.diagnostics.filter((d) => d.level !== "info").length}`);
await runtime.dispose();
rmSync(agentDir, { recursive: true, force: true });
