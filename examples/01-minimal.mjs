/**
 * Minimal: every default. The agent dir is $PI_CODING_AGENT_DIR or ~/.pi/agent (settings, keys,
 * models), the project is the current folder (AGENTS.md, .pi/ extensions, skills, prompt
 * templates), the model comes from the settings (or the first provider with a key), and the
 * session is saved under <agentDir>/sessions/.
 *
 *   node examples/01-minimal.mjs "What files are in the current directory?"
 */
import { createAgentSession } from "pi-kernel";

const { session, runtime, modelFallbackMessage } = await createAgentSession();
if (modelFallbackMessage) console.error(`note: ${modelFallbackMessage}`);

// Stream the answer as it arrives.
session.subscribe((event) => {
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
    process.stdout.write(event.assistantMessageEvent.delta);
  }
});

// Extensions (and MCP servers) start when the host binds them; prompting works either way.
await runtime.bindExtensions();
await session.prompt(process.argv[2] ?? "What files are in the current directory?");
process.stdout.write("\n");
console.log(`(${session.model?.provider}/${session.model?.id}, saved to ${session.sessionFile ?? "nowhere"})`);
await runtime.dispose();
