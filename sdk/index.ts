/**
 * The host package surface: what extensions and plugins import. The loader aliases
 * `@mariozechner/pi-coding-agent`, `@earendil-works/pi-coding-agent` and `pi-kernel` to this
 * file, so an extension written for pi finds the names it imports here.
 *
 * Sections: extension API (types and helpers), built-in tools, kernel plugins, SDK for hosts
 * and custom CLIs, testing.
 */
import { readFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import { SessionManager as SessionManagerClass } from "../core/stores/session/session-manager.js";
import { getAgentDir as agentDirOfApp } from "../plugins/extensions/helpers.js";

// A host's SessionManager.create(cwd) / continueRecent(cwd) / list(cwd) without a session folder
// use `<agentDir>/sessions` (PI_CODING_AGENT_DIR, else ~/.pi/agent), as pi's do, until a root is set.
SessionManagerClass.setDefaultRootResolver(() => joinPath(agentDirOfApp(), "sessions"));

/** This package's version. */
export const VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
})();

// ---- extension API -----------------------------------------------------------------------------

export type * from "../plugins/extensions/types.js";
export {
  defineTool,
  getAgentDir,
  isBashToolResult,
  isEditToolResult,
  isFindToolResult,
  isGrepToolResult,
  isLsToolResult,
  isReadToolResult,
  isToolCallEventType,
  isWriteToolResult,
} from "../plugins/extensions/helpers.js";
export { Type } from "typebox";
export type { Static, TSchema } from "typebox";

// Messages and sessions (read access for extensions).
export { convertToLlm, createCustomMessage, createUserMessage } from "../core/engine/agent/messages.js";
export { SessionManager } from "../core/stores/session/session-manager.js";
export type {
  CustomEntry,
  CustomMessageEntry,
  LabelEntry,
  ReadonlySessionManager,
  SessionEntry,
  SessionHeader,
  SessionInfo,
  SessionMessageEntry,
  SessionTreeNode,
} from "../core/stores/session/session-manager.js";
export type {
  AgentMessage,
  AgentToolResult,
  AgentToolUpdateCallback,
  AssistantMessage,
  CustomMessage,
  ImageContent,
  TextContent,
  ThinkingLevel,
  ToolResultMessage,
  UserMessage,
} from "../core/kernel/types.js";
export type { ExtensionUI } from "../core/kernel/ui.js";

// ---- built-in tools (factories with pluggable operations, output limits) ------------------------

export {
  createBashTool,
  createBashToolDefinition,
  createEditTool,
  createEditToolDefinition,
  createFindTool,
  createFindToolDefinition,
  createGrepTool,
  createGrepToolDefinition,
  createLocalBashOperations,
  createLsTool,
  createLsToolDefinition,
  createReadTool,
  createReadToolDefinition,
  createWriteTool,
  createWriteToolDefinition,
  createCodingTools,
  createReadOnlyTools,
  createAllTools,
  withFileMutationQueue,
  truncateHead,
  truncateTail,
  truncateLine,
  formatSize,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  type BashOperations,
  type BashSpawnContext,
  type BashSpawnHook,
  type BashToolDetails,
  type BashToolInput,
  type EditOperations,
  type EditToolDetails,
  type EditToolInput,
  type FindOperations,
  type FindToolDetails,
  type FindToolInput,
  type GrepOperations,
  type GrepToolDetails,
  type GrepToolInput,
  type LsOperations,
  type LsToolDetails,
  type LsToolInput,
  type ReadOperations,
  type ReadToolDetails,
  type ReadToolInput,
  type WriteOperations,
  type WriteToolInput,
  type TruncationOptions,
  type TruncationResult,
} from "../plugins/tools/index.js";

// ---- kernel plugins ------------------------------------------------------------------------------

export { definePlugin, KERNEL_API_VERSION, type PluginManifest } from "../core/kernel/plugin.js";
export type { Kernel, PluginApi, SlashCommand, Subcommand, CliFlag, FlagActionContext, ModeDefinition, ModeClaimInput, ModeContext } from "../core/kernel/kernel.js";
export type { KernelServices, ServiceName, ParsedArgv } from "../core/kernel/services.js";
export type { ToolWrapper as KernelToolWrapper, ToolDescription } from "../core/kernel/tool-registry.js";
export type { ProjectTrust } from "../plugins/trust/index.js";
export type { PermissionGate } from "../plugins/permission-gate/index.js";
export type { Scaffold, ScaffoldContext } from "../plugins/scaffolds/index.js";

// ---- SDK: sessions in a host process, run modes, custom CLIs (docs/sdk.md) -----------------------------

export {
  createAgentSession,
  createAgentSessionServices,
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  SdkAgentSession,
  SdkSessionRuntime,
  type AppIdentity,
  type HostTool,
  type ResourceOptions,
  type SessionOptions,
  type CreateAgentSessionOptions,
  type CreateAgentSessionServicesOptions,
  type CreateAgentSessionFromServicesOptions,
  type CreateAgentSessionResult,
  type AgentSessionServices,
  type ExtensionsResult,
  type ExtensionBindings,
  type ExtensionError,
} from "./sdk.js";
export { runPrintMode, runRpcMode, runInteractiveMode, runModeByFlag, type PrintModeOptions, type RpcModeOptions, type InteractiveModeOptions, type ModeRunOptions } from "./run-modes.js";
export { AgentSession, type AgentSessionOptions, type SessionMode, type BashResult } from "../core/engine/agent-session.js";
export type { PromptOptions, Disposition, QueueMode } from "../core/engine/run-controller.js";
export { AgentSessionRuntime, type SessionBuildInput, type SessionFactory, type ReplaceReason, type ForkOptions } from "../core/engine/runtime.js";
export { SettingsManager, DEFAULT_SETTINGS, type Settings } from "../core/kernel/settings.js";
export { AuthStorage, type AuthCredential, type ApiKeyCredential, type OAuthCredential } from "../core/stores/models/auth-storage.js";
export { ModelRegistry } from "../core/stores/models/model-registry.js";
export type { AnyModel, AgentEvent, AgentSessionEvent, AgentSessionEventType, Diagnostic, SessionEvent, ToolDefinition as KernelToolDefinition } from "../core/kernel/types.js";
export { createCli, type CliOptions, type Cli, type CliIo } from "./main.js";
export { runBinary, type BinaryOptions } from "./binary.js";
export { builtinPlugins } from "./builtins.js";
export { defineApp, resolveAgentDir, type AppConfig } from "../core/kernel/config.js";

// ---- testing ---------------------------------------------------------------------------------------

export { createExtensionHarness, type ExtensionHarness, type ExtensionHarnessOptions } from "./extension-harness.js";
export { FauxModel, createFauxPlugin, setFauxScript, type FauxStep, type FauxResponse } from "../plugins/faux/index.js";
export { RpcClient, RpcCommandError, type RpcClientOptions } from "./rpc-client.js";
export * from "./pi-package/functions.js";
// ---- pi 1.6 package exports: helpers, session/compaction functions, pi-tui components (loaded on first use)
export * from "./pi-package/helpers.js";
export * from "./pi-package/session.js";
export { Theme } from "../modes/tui/pi-components/theme.js";
export * from "./pi-package/stores.js";
export { CustomEditor, BorderedLoader, type CustomEditorOptions, type KeybindingsLike } from "../modes/tui/pi-components/components.js";
export * from "../modes/tui/pi-components/interactive-components.js";
export * from "./pi-package/selector-exports.js";
// ---- end pi 1.6 package exports
// pi-tui theme helpers for extensions:
export { DynamicBorder, getEditorTheme, getMarkdownTheme, getSelectListTheme, getSettingsListTheme } from "../modes/tui/pi-theme.js";
export * from "./pi-package/runtime.js"; // pi 1.6 SDK runtimes: DefaultResourceLoader, DefaultPackageManager, ModelRuntime, parseArgs, ExtensionRunner, …
// pi 1.6 exports: PowerShell tool, image helpers, MCP / tool-search extension factories
export * from "./pi-package/tools.js";
