/**
 * The engine's face: the agent runtime, importing the kernel and the stores — the agent loop
 * (agent/), the session facade and its parts (run controller, provider gateway, turn boundary,
 * compaction, tree navigation), and the runtime that switches sessions.
 *
 * The engine implements the kernel's handles: the declarations below widen `SessionHandle` and
 * `RuntimeHandle` to the full classes, and type the services the engine consumes.
 */
import type { AgentSession, BashExecutor } from "./agent-session.js";
import type { AgentSessionRuntime } from "./runtime.js";
import type { SystemPromptBuilder } from "./system-prompt.js";
import type { Compactor } from "./compaction-service.js";
import type { BranchSummarizer } from "./tree.js";

export * from "./agent/loop.js";
export * from "./agent/messages.js";
export * from "./agent/validate.js";
export * from "./agent-session.js";
export * from "./compaction-service.js";
export * from "./model-source.js";
export * from "./setter-hooks.js";
export * from "./run-hooks.js";
export * from "./provider-errors.js";
export * from "./provider-events.js";
export * from "./provider-gateway.js";
export * from "./run-controller.js";
export * from "./runtime.js";
export * from "./session-events.js";
export * from "./session-stats.js";
export * from "./context-tokens.js";
export * from "./system-message.js";
export * from "./system-prompt.js";
export * from "./tree.js";
export * from "./turn-boundary.js";
export * from "./virtual-route.js";

declare module "../kernel/contracts.js" {
  interface SessionHandle extends AgentSession {}
  interface RuntimeHandle extends AgentSessionRuntime {}
}

declare module "../kernel/services.js" {
  interface KernelServices {
    "system-prompt": SystemPromptBuilder;
    "bash-executor": BashExecutor;
    compactor: Compactor;
    "branch-summarizer": BranchSummarizer;
  }
}
