/**
 * pi 1.6 package exports for tools: the PowerShell tool, image helpers, and
 * the codemode / MCP / tool-search extension factories. Each loads its heavy part (Photon,
 * QuickJS, the MCP SDK) only when used.
 */
import type { ToolResultEvent } from "../../plugins/extensions/types.js";
import type { PowerShellToolDetails } from "../../plugins/tools/powershell.js";

export { resizeImage, convertToPng, formatDimensionNote, type ImageResizeOptions, type ResizedImage } from "../../plugins/tools/images.js";
export {
  getPowerShellConfig,
  createLocalPowerShellOperations,
  createPowerShellTool,
  createPowerShellToolDefinition,
  type PowerShellOperations,
  type PowerShellSpawnContext,
  type PowerShellSpawnHook,
  type PowerShellToolDetails,
  type PowerShellToolInput,
  type PowerShellToolOptions,
} from "../../plugins/tools/powershell.js";
export { createCodemodeExtension, type CodemodeExtensionOptions } from "../../plugins/codemode/codemode.js";
export { createMcpExtension, createToolSearchExtension, type McpExtensionOptions, type LoadedMcpConfig, type McpServerEntry } from "../../plugins/mcp/extension-factories.js";

/** Narrows a tool_result event to the powershell tool's. */
export const isPowerShellToolResult = (e: ToolResultEvent): e is ToolResultEvent & { toolName: "powershell"; details: PowerShellToolDetails | undefined } =>
  e?.toolName === "powershell";
