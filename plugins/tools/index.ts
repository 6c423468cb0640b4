/**
 * The built-in tools plugin: read, bash, edit, write (active by default) and grep, find, ls
 * (registered, off until enabled), as in pi. Each tool comes from a factory taking the working
 * folder and pluggable operations, so an extension can run the same tool elsewhere (ssh, a
 * container); the SDK re-exports the factories.
 */
import { definePlugin, type ToolDefinition, DEFAULT_ACTIVE_TOOLS as CORE_DEFAULT_ACTIVE_TOOLS } from "../../core/kernel/index.js";
import { createBashToolDefinition, prepareBashTool, type BashToolOptions } from "./bash.js";
import { discardPreparedShell, prepareWantedShell } from "./prepared-shell.js";
import { createEditToolDefinition, type EditToolOptions } from "./edit.js";
import { createFindToolDefinition, type FindToolOptions } from "./find.js";
import { createGrepToolDefinition, type GrepToolOptions } from "./grep.js";
import { createLsToolDefinition, type LsToolOptions } from "./ls.js";
import { createReadToolDefinition, type ReadToolOptions } from "./read.js";
import { createWriteToolDefinition, type WriteToolOptions } from "./write.js";
import { createBashExecutor } from "./bash-executor.js";
import { fitImageForModel } from "./images.js";

export type ToolName = "read" | "bash" | "edit" | "write" | "grep" | "find" | "ls";

/** The tools a new session starts with. */
/** The tools a session starts with (one definition, in the kernel: core/kernel/services.ts). */
export const DEFAULT_ACTIVE_TOOLS = CORE_DEFAULT_ACTIVE_TOOLS as readonly ToolName[];
/** Every built-in tool, in the order they are registered. */
export const ALL_TOOL_NAMES: readonly ToolName[] = Object.freeze(["read", "bash", "edit", "write", "grep", "find", "ls"]);
/** The tools that never change anything. */
export const READ_ONLY_TOOL_NAMES: readonly ToolName[] = Object.freeze(["read", "grep", "find", "ls"]);

export interface ToolsOptions {
  read?: ReadToolOptions;
  bash?: BashToolOptions;
  edit?: EditToolOptions;
  write?: WriteToolOptions;
  grep?: GrepToolOptions;
  find?: FindToolOptions;
  ls?: LsToolOptions;
}

export function createToolDefinition(name: ToolName, cwd: string, options: ToolsOptions = {}): ToolDefinition {
  switch (name) {
    case "read":
      return createReadToolDefinition(cwd, options.read);
    case "bash":
      return createBashToolDefinition(cwd, options.bash);
    case "edit":
      return createEditToolDefinition(cwd, options.edit);
    case "write":
      return createWriteToolDefinition(cwd, options.write);
    case "grep":
      return createGrepToolDefinition(cwd, options.grep);
    case "find":
      return createFindToolDefinition(cwd, options.find);
    case "ls":
      return createLsToolDefinition(cwd, options.ls);
    default:
      throw new Error(`Unknown tool "${String(name)}"; the built-in tools are ${ALL_TOOL_NAMES.join(", ")}`);
  }
}

export function createAllToolDefinitions(cwd: string, options?: ToolsOptions): Record<ToolName, ToolDefinition> {
  const out = {} as Record<ToolName, ToolDefinition>;
  for (const name of ALL_TOOL_NAMES) out[name] = createToolDefinition(name, cwd, options);
  return out;
}

/** read, bash, edit, write. */
export function createCodingTools(cwd: string, options?: ToolsOptions): ToolDefinition[] {
  return DEFAULT_ACTIVE_TOOLS.map((n) => createToolDefinition(n, cwd, options));
}

/** read, grep, find, ls. */
export function createReadOnlyTools(cwd: string, options?: ToolsOptions): ToolDefinition[] {
  return READ_ONLY_TOOL_NAMES.map((n) => createToolDefinition(n, cwd, options));
}

export const createAllTools = createAllToolDefinitions;
export const createCodingToolDefinitions = createCodingTools;
export const createReadOnlyToolDefinitions = createReadOnlyTools;

export default definePlugin({
  name: "tools",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Built-in tools: read, bash, edit, write, grep, find, ls",
  setup(api) {
    const cwd = api.kernel.cwd;
    const settings = () => api.kernel.settings.get();

    // images.autoResize: images are fitted to 2000x2000 px and 4.5 MB as in pi 1.6, with its dimension note (Photon loads on the first image).
    api.registerTool(createReadToolDefinition(cwd, { autoResizeImages: settings().images?.autoResize ?? true, resizeImage: fitImageForModel }));

    // shellPath and shellCommandPrefix are read when the command runs, so a settings change applies at once.
    const bash = createBashToolDefinition(cwd);
    const bashTool: ToolDefinition = {
      ...bash,
      execute(id, params, signal, onUpdate, ctx) {
        const s = settings();
        const current = createBashToolDefinition(cwd, { shellPath: s.shellPath || undefined, commandPrefix: s.shellCommandPrefix || undefined });
        return current.execute(id, params, signal, onUpdate, ctx);
      },
    };
    api.registerTool(bashTool);
    // A session whose model may run this bash tool gets a bash started for its first command:
    // the tool call skips a fork (prepared-shell.ts).
    api.on("session_start", () => {
      if (!api.kernel.isBound || api.kernel.tools.get("bash") !== bashTool) return;
      const session = api.kernel.bound("tools").session;
      if (!session.getActiveToolNames().includes("bash")) return;
      prepareBashTool(cwd, session.contextFactory(), settings().shellPath || undefined);
    });
    // The next command's bash starts while the model answers (this process only waits then).
    api.on("message_start", (e) => {
      if ((e as { message?: { role?: string } }).message?.role === "assistant") prepareWantedShell();
    });
    api.on("session_shutdown", () => discardPreparedShell());

    api.registerTool(createEditToolDefinition(cwd));
    api.registerTool(createWriteToolDefinition(cwd));
    api.registerTool(createGrepToolDefinition(cwd));
    api.registerTool(createFindToolDefinition(cwd));
    api.registerTool(createLsToolDefinition(cwd));
    api.provide("default-active-tools", [...DEFAULT_ACTIVE_TOOLS]);
    api.provide("bash-executor", createBashExecutor(settings));
  },
});

// ---- re-exports (the SDK re-exports these) ------------------------------------------------------

export {
  createBashTool,
  createBashToolDefinition,
  createLocalBashOperations,
  getShellConfig,
  killProcessTree,
  OutputCollector,
  KILL_GRACE_MS,
  type BashExecOptions,
  type BashOperations,
  type BashSpawnContext,
  type BashSpawnHook,
  type BashToolDetails,
  type BashToolInput,
  type BashToolOptions,
  type ShellConfig,
} from "./bash.js";
export {
  createEditTool,
  createEditToolDefinition,
  createLocalEditOperations,
  prepareEditArguments,
  type EditOperations,
  type EditToolDetails,
  type EditToolInput,
  type EditToolOptions,
} from "./edit.js";
export {
  applyEdits,
  buildNormalizedView,
  detectLineEnding,
  diffLines,
  generateDiffString,
  locateEdits,
  normalizeForFuzzyMatch,
  normalizeToLF,
  restoreLineEndings,
  stripBom,
  type DiffPart,
  type Edit,
  type EditMatch,
} from "./edit-diff.js";
export {
  createFindTool,
  createFindToolDefinition,
  createLocalFindOperations,
  findInProcess,
  DEFAULT_FIND_LIMIT,
  type FindGlobOptions,
  type FindOperations,
  type FindToolDetails,
  type FindToolInput,
  type FindToolOptions,
} from "./find.js";
export {
  createGrepTool,
  createGrepToolDefinition,
  createLocalGrepOperations,
  localGrepSearch,
  DEFAULT_GREP_LIMIT,
  type GrepOperations,
  type GrepToolDetails,
  type GrepToolInput,
  type GrepToolOptions,
  type SearchBackend,
} from "./grep.js";
export { searchInProcess, type GrepMatch, type GrepSearchRequest, type GrepSearchResult } from "./grep-search.js";
export {
  createLsTool,
  createLsToolDefinition,
  createLocalLsOperations,
  DEFAULT_LS_LIMIT,
  type LsOperations,
  type LsToolDetails,
  type LsToolInput,
  type LsToolOptions,
} from "./ls.js";
export {
  createReadTool,
  createReadToolDefinition,
  createLocalReadOperations,
  sniffImageMimeType,
  MAX_INLINE_IMAGE_BASE64,
  type ReadOperations,
  type ReadToolDetails,
  type ReadToolInput,
  type ReadToolOptions,
} from "./read.js";
export {
  createWriteTool,
  createWriteToolDefinition,
  createLocalWriteOperations,
  type WriteOperations,
  type WriteToolInput,
  type WriteToolOptions,
} from "./write.js";
export { withFileMutationQueue } from "./file-mutation-queue.js";
export { describeFsError, expandPath, resolveReadPath, resolveToCwd } from "./path-utils.js";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  GREP_MAX_LINE_LENGTH,
  formatSize,
  sanitizeOutput,
  truncateHead,
  truncateLine,
  truncateTail,
  type TruncationOptions,
  type TruncationResult,
} from "./truncate.js";
export { findExecutable, fdPath, ripgrepPath } from "./external-tools.js";
