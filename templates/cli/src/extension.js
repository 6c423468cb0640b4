// @ts-check
/**
 * The team's extension, built into {{NAME}} (no file to install). It is a pi extension like any
 * other: tools, commands, event handlers. Here:
 *
 *   - a tool the model can call: `team_info`
 *   - a command: `/team`
 */
import { Type } from "{{HOST_NAME}}";

/** @param {import("{{HOST_NAME}}").ExtensionAPI} pi */
export default function teamExtension(pi) {
  pi.registerTool({
    name: "team_info",
    label: "Team info",
    description: "What this team's agent is called and where its configuration lives",
    parameters: Type.Object({}),
    async execute() {
      return {
        content: [{ type: "text", text: "This is {{NAME}}; project settings live in .{{NAME}}/" }],
        details: {},
      };
    },
  });

  pi.registerCommand("team", {
    description: "Say which agent this is",
    handler: async (_args, ctx) => {
      ctx.ui.notify("You are using {{NAME}}", "info");
    },
  });
}
