/**
 * The ctx an extension tool's execute() gets (pi 1.6 ExtensionToolContext): the extension's
 * ctx plus `tools` (what it may call) and `executeTool(name, args, options)`, which runs another
 * tool as a nested call through the loop (validation, tool_call / tool_result hooks and the
 * permission gate, tool_execution_* events with parentToolCallId). The loop hands the scope of
 * the running call in as execute()'s fifth argument (`toolScope`); without one (a tool called
 * outside a run), executeTool answers an error outcome and tools is empty.
 */
import type { ToolCallScope } from "../../core/engine/index.js";

export function toolContext<T extends object>(base: T, callCtx: unknown): T {
  const scope = (callCtx as { toolScope?: ToolCallScope } | undefined)?.toolScope;
  const ctx = Object.create(base) as Record<string, unknown>;
  Object.defineProperty(ctx, "tools", { get: () => (scope ? scope.tools.map((t) => ({ ...t })) : []), enumerable: true });
  ctx.executeTool = async (name: string, args: unknown, options?: Parameters<ToolCallScope["executeTool"]>[2]) => {
    if (!scope) {
      return {
        toolCall: { type: "toolCall", id: "", name, arguments: args ?? {} },
        result: { content: [{ type: "text", text: `executeTool("${name}"): no tool call is running, so no tool can be called` }], details: undefined },
        isError: true,
      };
    }
    return scope.executeTool(name, args, options);
  };
  return ctx as T;
}
