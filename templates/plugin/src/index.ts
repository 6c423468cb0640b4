/**
 * {{NAME}}: a native kernel plugin. Where a pi extension gets the `pi` object, a plugin gets the
 * kernel's PluginApi: it taps the same hooks (`api.on`), registers tools, commands, flags,
 * providers and modes, and can provide services to other plugins. `setup()` only registers;
 * anything that needs a live session happens in hooks and handlers.
 *
 * - a tool: `word_count`
 * - a guard: the `bash` tool may not run `rm -rf /` (a `tool_call` tap that blocks)
 * - a command: `/{{NAME}}` (how many words were counted)
 *
 * Try it: `{{APP}} -e ./src/index.ts`, or list the file in the `plugins` setting. Test it: `npm test`.
 */
import { definePlugin, Type } from "{{HOST_NAME}}";

export default definePlugin({
  name: "{{NAME}}",
  version: "0.1.0",
  kernel: "^1.0.0",
  description: "Counts words; refuses rm -rf /",
  setup(api) {
    let counted = 0;

    api.registerTool({
      name: "word_count",
      label: "Word count",
      description: "Count the words of a text",
      parameters: Type.Object({ text: Type.String({ description: "The text" }) }),
      async execute(_toolCallId, params: { text: string }) {
        const words = params.text.split(/\s+/).filter(Boolean).length;
        counted += words;
        return { content: [{ type: "text", text: `${words} words` }], details: { words } };
      },
    });

    api.on("tool_call", (event) => {
      const command = String(event.input.command ?? "");
      if (event.toolName === "bash" && /\brm\s+-rf\s+\/(\s|$)/.test(command)) {
        return { block: true, reason: "{{NAME}} does not allow rm -rf /" };
      }
      return undefined;
    });

    api.registerCommand({
      name: "{{NAME}}",
      description: "How many words were counted",
      handler: async (_args: string, ctx: { ui?: { notify(message: string, level?: string): void } }) => {
        ctx.ui?.notify(`${counted} words counted`, "info");
      },
    });
  },
});
