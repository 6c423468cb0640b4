/**
 * Shared types of the kernel: messages, tools, events.
 *
 * Message shapes are those of pi-ai (imported as types only, so nothing heavy loads at run
 * time): the content parts and the user message from pi-ai 1.6, whose declarations of them are
 * those of the old scope's 0.73; the others, which 1.6 changed (JSON-typed tool arguments, more
 * stop reasons, a system role), still from @mariozechner/pi-ai. The coding-agent roles (custom,
 * bashExecution, summaries) are added here the way the reference CLI adds them.
 */
import type { ImageContent, TextContent, ThinkingContent, UserMessage } from "@earendil-works/pi-ai";
import type { Api, AssistantMessage, AssistantMessageEvent, Message, Model, ToolCall, ToolResultMessage, Usage } from "@mariozechner/pi-ai";
import type { TSchema } from "typebox";

export type {
  Api,
  AssistantMessage,
  AssistantMessageEvent,
  ImageContent,
  Message,
  Model,
  TextContent,
  ThinkingContent,
  ToolCall,
  ToolResultMessage,
  Usage,
  UserMessage,
};

export type AnyModel = Model<Api>;
/** Thinking levels, lowest first, as pi 1.6 names them ("xhigh" and "max" only where a model maps them). */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** A message an extension or plugin injects into the conversation. */
export interface CustomMessage<T = unknown> {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: T;
  timestamp: number;
}

/** Output of a user `!cmd` run; `!!cmd` sets excludeFromContext. */
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  timestamp: number;
  excludeFromContext?: boolean;
}

export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/**
 * pi 1.6's system message: the prompt sections and tool declarations at a point of the
 * conversation. The first request of a session records every section and tool; later ones patch
 * `sections` by name (null removes one) and list toolsAdded/toolsRemoved. Kept in the session and
 * the context; never sent as a message (the system prompt is sent on its own).
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: { name: string; description: string; parameters: unknown }[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

export type AgentMessage =
  | Message
  | SystemMessage
  | CustomMessage
  | BashExecutionMessage
  | BranchSummaryMessage
  | CompactionSummaryMessage;

// ---------------------------------------------------------------------------------------------
// Tools

/** A JSON Schema object; TypeBox schemas are JSON Schema, so any TypeBox `TSchema` fits. */
export type JsonSchema = TSchema | Record<string, unknown>;

export interface AgentToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  /** Set by the runtime when execute() threw; tools signal errors by throwing. */
  isError?: boolean;
}

export type AgentToolUpdateCallback<TDetails = unknown> = (partial: AgentToolResult<TDetails>) => void;

/**
 * A tool as pi extensions and built-ins define it. `execute` throws to report an error
 * the model can read.
 */
export type ToolExposure = "direct" | "codemode" | "deferred" | "hidden";

/**
 * What every tool call's `execute()` can rely on in its context (core/kernel/contracts.ts's
 * ToolContext is the full shape the engine builds: the session, its store and UI as well).
 */
export interface ToolExecutionContext {
  readonly cwd: string;
  /** A person answers dialogs (the interactive mode). */
  readonly hasUI: boolean;
  /** The mode that runs the session. */
  readonly mode: string;
  /** The session's model when the context was made. */
  readonly model?: AnyModel;
  /** The running call a nested call belongs to (codemode scripts, executeTool). */
  readonly toolScope?: unknown;
}

export interface ToolDefinition<TParams = any, TDetails = any> {
  name: string;
  label?: string;
  description: string;
  parameters: JsonSchema;
  promptSnippet?: string;
  promptGuidelines?: string[];
  /** Turns older argument shapes into the current schema before validation (e.g. edit's single oldText/newText). */
  prepareArguments?: (args: Record<string, unknown>) => unknown;
  /** "sequential" tools never run beside another call of the same batch. */
  executionMode?: "parallel" | "sequential";
  /**
   * How the model reaches the tool (pi 1.6): "direct" (default) — declared when active;
   * "codemode" / "deferred" — callable from other tools (codemode scripts) whenever registered,
   * even when not declared to the model; "hidden" — unreachable.
   */
  exposure?: ToolExposure;
  execute(
    toolCallId: string,
    params: TParams,
    signal: AbortSignal | undefined,
    onUpdate: AgentToolUpdateCallback<TDetails> | undefined,
    ctx?: ToolExecutionContext,
  ): Promise<AgentToolResult<TDetails>>;
  renderCall?: (...args: any[]) => unknown;
  renderResult?: (...args: any[]) => unknown;
}

// ---------------------------------------------------------------------------------------------
// Events (protocol.md §2). In process, message_update carries the growing message.

export type AgentEvent =
  | { type: "agent_start" }
  | { type: "agent_end"; messages: AgentMessage[]; willRetry?: boolean }
  | { type: "turn_start"; turnIndex: number; timestamp: number }
  | { type: "turn_end"; turnIndex: number; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown }
  | {
      type: "tool_execution_update";
      toolCallId: string;
      toolName: string;
      args: unknown;
      partialResult: AgentToolResult;
    }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: AgentToolResult;
      isError: boolean;
      durationMs: number;
    };

export type SessionEvent =
  | { type: "agent_settled"; aborted: boolean }
  | { type: "queue_update"; steering: string[]; followUp: string[] }
  | { type: "compaction_start"; reason: "manual" | "threshold" | "overflow" }
  | {
      type: "compaction_end";
      reason: "manual" | "threshold" | "overflow";
      result?: unknown;
      aborted: boolean;
      willRetry: boolean;
      errorMessage?: string;
    }
  | { type: "auto_retry_start"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: "auto_retry_end"; success: boolean; attempt: number; finalError?: string }
  | { type: "summarization_retry_scheduled"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: "summarization_retry_attempt_start"; source: "compaction"; reason: "manual" | "threshold" | "overflow" }
  | { type: "summarization_retry_attempt_start"; source: "branchSummary" }
  | { type: "summarization_retry_finished" }
  | { type: "model_select"; model: AnyModel; previousModel: AnyModel | undefined; source: "set" | "cycle" | "restore" }
  /** pi 1.6: an extension appended a custom entry (pi.appendEntry); `entry` is the stored entry. */
  | { type: "entry_appended"; entry: { type: string; id: string; parentId: string | null; timestamp: string } & Record<string, unknown> };

export type AgentSessionEvent = AgentEvent | SessionEvent;
export type AgentSessionEventType = AgentSessionEvent["type"];

/** Attributed error, as every failure a plugin or extension causes is reported. */
export interface Diagnostic {
  level: "error" | "warning" | "info";
  /** Plugin name or extension path or file that caused it. */
  source: string;
  /** The hook or event it happened in, when there is one. */
  hook?: string;
  message: string;
  error?: unknown;
}
