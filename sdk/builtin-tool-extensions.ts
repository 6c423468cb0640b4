/**
 * pi 1.6's built-in tool extensions for the `pi` CLI: `codemode` (scripts calling tools) and
 * `tool_search` (loading deferred MCP tools). As in 1.6 their tools are registered but not
 * active: `--tools +codemode,+tool_search` or `defaultTools: ["+codemode"]` turns them on. Their
 * modules load inside the factories (after start-up's first steps, never for `pi --version`).
 */
import type { ExtensionAPI } from "../plugins/extensions/types.js";

/** Tool name → the built-in extension (`builtin:<name>`) that registers it. */
export const BUILTIN_EXTENSION_TOOLS: Readonly<Record<string, string>> = { codemode: "codemode", tool_search: "tool-search" };

export function builtinToolExtensions(): Array<(pi: ExtensionAPI) => Promise<void>> {
  return [
    async (pi) => {
      const { createCodemodeExtension } = await import("../plugins/codemode/codemode.js");
      await createCodemodeExtension()(pi);
    },
    async (pi) => {
      const { createToolSearchExtension } = await import("../plugins/mcp/extension-factories.js");
      await createToolSearchExtension()(pi);
    },
  ];
}
