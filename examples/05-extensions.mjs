/**
 * Extensions and binding. Extensions (discovered, listed in `resources.extensions`, or inline
 * factories) load when the session is created, but they are bound only when the host calls
 * bindExtensions(): until then session_start has not run, MCP servers are not connected, and
 * extension actions that need the live session throw "Extension runtime not initialized".
 * The bindings give extensions a UI (ctx.ui), an error callback and ctx.shutdown().
 *
 *   node examples/05-extensions.mjs
 */
import { createAgentSession, SessionManager, Type } from "pi-kernel";

let api;
const greeter = (pi) => {
  api = pi;
  pi.on("session_start", (_event, ctx) => ctx.ui.notify(`greeter ready in ${ctx.mode} mode`, "info"));
  pi.registerTool({
    name: "greet",
    label: "Greet",
    description: "Greet someone by name",
    parameters: Type.Object({ name: Type.String() }),
    async execute(_id, params, _signal, _onUpdate, ctx) {
      ctx.ui.setStatus?.("greeter", `greeted ${params.name}`);
      return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: {} };
    },
  });
};

const { session, runtime, extensionsResult } = await createAgentSession({
  extensionFactories: [greeter],
  sessionManager: SessionManager.inMemory(),
});
console.log(`loaded: ${extensionsResult.extensions.map((e) => `${e.path} (${e.origin})`).join(", ")}`);

try {
  api.sendUserMessage("too early");
} catch (error) {
  console.log(`before binding: ${error.message.split(".")[0]}`);
}

// A UI for extensions: this host just prints what they say.
const ui = {
  kind: "rpc",
  notify: (message, level = "info") => console.log(`[${level}] ${message}`),
  setStatus: (key, text) => console.log(`[status ${key}] ${text}`),
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
};
await session.bindExtensions({ uiContext: ui, onError: (e) => console.error(`extension error: ${e.error}`) });

await session.prompt("Please greet Ada.");
console.log(`answer: ${session.getLastAssistantText()}`);
await runtime.dispose();
