/**
 * {{NAME}}: a pi extension.
 *
 * - a tool the model can call: `greet`
 * - a command: `/greetings` (how many greetings so far; saved in the session)
 *
 * Try it: `{{APP}} -e ./src/index.ts`. Test it: `npm test` (runs against the scripted faux
 * model, no API key needed).
 */
import { Type, type ExtensionAPI } from "{{HOST_NAME}}";

export default function (pi: ExtensionAPI) {
  let greeted = 0;

  // Restore the count when a session starts or is resumed.
  pi.on("session_start", (_event, ctx) => {
    greeted = 0;
    for (const entry of ctx.sessionManager.getEntries()) {
      if (entry.type === "custom" && entry.customType === "greetings") greeted = (entry.data as { greeted: number }).greeted;
    }
  });

  pi.registerTool({
    name: "greet",
    label: "Greet",
    description: "Greet someone by name",
    parameters: Type.Object({
      name: Type.String({ description: "Who to greet" }),
    }),
    async execute(_toolCallId, params) {
      greeted++;
      pi.appendEntry("greetings", { greeted });
      return {
        content: [{ type: "text", text: `Hello, ${params.name}!` }],
        details: { greeted },
      };
    },
  });

  pi.registerCommand("greetings", {
    description: "Show how many greetings were made in this session",
    handler: async (_args, ctx) => {
      ctx.ui.notify(`${greeted} greeting(s) so far`, "info");
    },
  });
}
