/**
 * Small helpers extensions import from the host package (`@mariozechner/pi-coding-agent`,
 * aliased to our sdk): tool definition and event type guards, the agent dir, a plain theme.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { expandHome } from "../../core/kernel/index.js";
import type { TSchema } from "typebox";
import type {
  BashToolCallEvent,
  BashToolResultEvent,
  EditToolCallEvent,
  EditToolResultEvent,
  FindToolCallEvent,
  FindToolResultEvent,
  GrepToolCallEvent,
  GrepToolResultEvent,
  LsToolCallEvent,
  LsToolResultEvent,
  ReadToolCallEvent,
  ReadToolResultEvent,
  ToolCallEvent,
  ToolDefinition,
  ToolResultEvent,
  WriteToolCallEvent,
  WriteToolResultEvent,
} from "./types.js";

/** Keeps the parameter types of a tool defined apart from `registerTool()`. */
export function defineTool<TParams extends TSchema, TDetails = unknown, TState = any>(
  tool: ToolDefinition<TParams, TDetails, TState>,
): ToolDefinition<TParams, TDetails, TState> & ToolDefinition<any, any, any> {
  return tool as ToolDefinition<TParams, TDetails, TState> & ToolDefinition<any, any, any>;
}

export function isToolCallEventType(toolName: "bash", event: ToolCallEvent): event is BashToolCallEvent;
export function isToolCallEventType(toolName: "read", event: ToolCallEvent): event is ReadToolCallEvent;
export function isToolCallEventType(toolName: "edit", event: ToolCallEvent): event is EditToolCallEvent;
export function isToolCallEventType(toolName: "write", event: ToolCallEvent): event is WriteToolCallEvent;
export function isToolCallEventType(toolName: "grep", event: ToolCallEvent): event is GrepToolCallEvent;
export function isToolCallEventType(toolName: "find", event: ToolCallEvent): event is FindToolCallEvent;
export function isToolCallEventType(toolName: "ls", event: ToolCallEvent): event is LsToolCallEvent;
export function isToolCallEventType<TName extends string, TInput extends Record<string, unknown>>(
  toolName: TName,
  event: ToolCallEvent,
): event is ToolCallEvent & { toolName: TName; input: TInput };
export function isToolCallEventType(toolName: string, event: ToolCallEvent): boolean {
  return !!event && event.toolName === toolName;
}

export const isBashToolResult = (e: ToolResultEvent): e is BashToolResultEvent => e?.toolName === "bash";
export const isReadToolResult = (e: ToolResultEvent): e is ReadToolResultEvent => e?.toolName === "read";
export const isEditToolResult = (e: ToolResultEvent): e is EditToolResultEvent => e?.toolName === "edit";
export const isWriteToolResult = (e: ToolResultEvent): e is WriteToolResultEvent => e?.toolName === "write";
export const isGrepToolResult = (e: ToolResultEvent): e is GrepToolResultEvent => e?.toolName === "grep";
export const isFindToolResult = (e: ToolResultEvent): e is FindToolResultEvent => e?.toolName === "find";
export const isLsToolResult = (e: ToolResultEvent): e is LsToolResultEvent => e?.toolName === "ls";

let currentAgentDir: string | undefined;

/** Set by the extensions plugin: the agent dir of the CLI that loads extensions. */
export function setCurrentAgentDir(dir: string | undefined): void {
  currentAgentDir = dir;
}

/**
 * The agent dir: the running CLI's (inside a kernel), else `$PI_CODING_AGENT_DIR`, else
 * `~/.pi/agent`.
 */
export function getAgentDir(): string {
  if (currentAgentDir) return currentAgentDir;
  const env = process.env.PI_CODING_AGENT_DIR?.trim();
  if (env) return resolve(expandHome(env));
  return join(homedir(), ".pi", "agent");
}

/**
 * A theme for modes that draw nothing: every styling call returns its text unchanged
 * (`theme.fg("accent", s) === s`, `theme.bold(s) === s`), so extensions that style status
 * text keep working in print, json and RPC mode.
 */
export const plainTheme: any = new Proxy(
  {},
  {
    get(_t, prop) {
      if (prop === "name") return "plain";
      if (prop === Symbol.toPrimitive || prop === "then") return undefined;
      return (...args: unknown[]) => {
        for (let i = args.length - 1; i >= 0; i--) if (typeof args[i] === "string") return args[i];
        return "";
      };
    },
  },
);
