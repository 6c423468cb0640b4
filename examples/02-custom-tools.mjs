/**
 * Custom tools: define a tool with defineTool() and a TypeBox schema, hand it to the session with
 * `customTools`, and choose exactly which tools the model may use with `tools` (names of
 * built-in, plugin, extension or custom tools). Tool calls show up as events.
 *
 *   node examples/02-custom-tools.mjs
 */
import { createAgentSession, defineTool, SessionManager, Type } from "pi-kernel";

const weather = defineTool({
  name: "weather",
  label: "Weather",
  description: "The current weather in a city",
  parameters: Type.Object({ city: Type.String({ description: "City name" }) }),
  async execute(_toolCallId, params) {
    // A real tool would call a service here; `signal` (3rd argument) aborts with the run.
    return { content: [{ type: "text", text: `Sunny in ${params.city}, 21 °C` }], details: { city: params.city } };
  },
});

const { session, runtime } = await createAgentSession({
  // Read-only built-ins plus our tool. Without `tools`, custom tools join read, bash, edit, write.
  tools: ["read", "ls", "weather"],
  customTools: [weather],
  sessionManager: SessionManager.inMemory(),
});
console.log(`tools: ${session.getActiveToolNames().join(", ")}`);

session.subscribe((event) => {
  if (event.type === "tool_execution_start") console.log(`tool ${event.toolName} ${JSON.stringify(event.args)}`);
  if (event.type === "tool_execution_end") console.log(`result: ${event.result.content[0].text}`);
});

await runtime.bindExtensions();
await session.prompt("What's the weather in Paris?");
console.log(`answer: ${session.getLastAssistantText()}`);
await runtime.dispose();
