/**
 * Our session events and stored messages as ACP `session/update` payloads:
 * - live: text/thinking deltas → agent_message_chunk / agent_thought_chunk; tool execution →
 *   tool_call (pending, with kind, title, locations, rawInput) then tool_call_update
 *   (in_progress with streamed output, then completed/failed with content, rawOutput and, for
 *   write/edit, a diff of the file before and after);
 * - replay (session/load): the whole conversation as user/agent chunks and tool calls.
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { AgentMessage, AgentSessionEvent } from "../../core/kernel/index.js";
import type { PendingToolCall } from "./ui.js";

export type Update = Record<string, unknown> & { sessionUpdate: string };

const KINDS: Record<string, string> = {
  read: "read",
  write: "edit",
  edit: "edit",
  bash: "execute",
  grep: "search",
  find: "search",
  ls: "search",
  fetch: "fetch",
  web_fetch: "fetch",
  web_search: "fetch",
};

/** ACP ToolKind of one of our tools. */
export function toolKind(name: string): string {
  return KINDS[name] ?? "other";
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v ? v : undefined;
}

/** A short human title for a tool call. */
export function toolTitle(name: string, args: unknown): string {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const cut = (s: string) => (s.length > 120 ? `${s.slice(0, 117)}...` : s);
  if (name === "bash" && str(a.command)) return cut(`bash: ${String(a.command).split("\n")[0]}`);
  const path = str(a.path) ?? str(a.file_path);
  if (path) return `${name} ${path}`;
  if (str(a.pattern)) return cut(`${name} ${a.pattern}`);
  return name;
}

/** The files a call touches, absolute. */
export function toolLocations(args: unknown, cwd: string): Array<{ path: string; line?: number }> | undefined {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const path = str(a.path) ?? str(a.file_path);
  if (!path) return undefined;
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  const line = typeof a.offset === "number" && a.offset > 0 ? a.offset : undefined;
  return [line ? { path: abs, line } : { path: abs }];
}

const MAX_DIFF_BYTES = 1024 * 1024;
function readSmall(path: string): string | null {
  try {
    if (statSync(path).size > MAX_DIFF_BYTES) return null;
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

type Block = { type: string; text?: string; thinking?: string; data?: string; mimeType?: string; id?: string; name?: string; arguments?: unknown };

function resultContent(content: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(content)) return [];
  const out: Array<Record<string, unknown>> = [];
  for (const b of content as Block[]) {
    if (b.type === "text" && b.text) out.push({ type: "content", content: { type: "text", text: b.text } });
    else if (b.type === "image" && b.data) out.push({ type: "content", content: { type: "image", data: b.data, mimeType: b.mimeType ?? "image/png" } });
  }
  return out;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[]).flatMap((b) => (b.type === "text" && b.text ? [b.text] : [])).join("");
}

interface Tracked {
  name: string;
  args: unknown;
  path?: string;
  before?: string | null;
}

/** Turns live session events into updates; remembers the tool call being checked (for the permission UI). */
export class LiveUpdates {
  private readonly tools = new Map<string, Tracked>();
  private current: PendingToolCall | undefined;
  /** Terminals shown in tool calls (client terminals running our bash). */
  private readonly terminals = new Map<string, string>();

  constructor(
    private readonly send: (u: Update) => Promise<void>,
    private readonly cwd: () => string,
  ) {}

  currentToolCall(): PendingToolCall | undefined {
    return this.current;
  }

  async embedTerminal(toolCallId: string, terminalId: string): Promise<void> {
    if (this.current?.toolCallId === toolCallId) this.current = undefined;
    this.terminals.set(toolCallId, terminalId);
    await this.send({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", content: [{ type: "terminal", terminalId }] });
  }

  async onEvent(ev: AgentSessionEvent): Promise<void> {
    switch (ev.type) {
      case "message_update": {
        const e = ev.assistantMessageEvent as { type: string; delta?: string };
        if (e.type === "text_delta" && e.delta) await this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.delta } });
        else if (e.type === "thinking_delta" && e.delta) await this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.delta } });
        return;
      }
      case "tool_execution_start": {
        const cwd = this.cwd();
        const locations = toolLocations(ev.args, cwd);
        const tracked: Tracked = { name: ev.toolName, args: ev.args };
        if ((ev.toolName === "write" || ev.toolName === "edit") && locations) {
          tracked.path = locations[0]!.path;
          tracked.before = readSmall(tracked.path);
        }
        this.tools.set(ev.toolCallId, tracked);
        const call: PendingToolCall = { toolCallId: ev.toolCallId, title: toolTitle(ev.toolName, ev.args), kind: toolKind(ev.toolName), rawInput: ev.args, locations };
        this.current = call;
        await this.send({ sessionUpdate: "tool_call", ...call, status: "pending", ...(locations ? {} : { locations: [] }) });
        return;
      }
      case "tool_execution_update": {
        if (this.current?.toolCallId === ev.toolCallId) this.current = undefined;
        await this.send({ sessionUpdate: "tool_call_update", toolCallId: ev.toolCallId, status: "in_progress", content: resultContent(ev.partialResult?.content) });
        return;
      }
      case "tool_execution_end": {
        if (this.current?.toolCallId === ev.toolCallId) this.current = undefined;
        const tracked = this.tools.get(ev.toolCallId);
        this.tools.delete(ev.toolCallId);
        const content = resultContent(ev.result?.content);
        if (!ev.isError && tracked?.path) {
          // write: the new text is the content given (the client may hold it in a buffer); edit: the file now.
          const given = tracked.name === "write" ? (tracked.args as { content?: unknown })?.content : undefined;
          const after = typeof given === "string" ? given : readSmall(tracked.path);
          if (after !== null) content.unshift({ type: "diff", path: tracked.path, oldText: tracked.before ?? null, newText: after });
        }
        const terminalId = this.terminals.get(ev.toolCallId);
        if (terminalId) {
          this.terminals.delete(ev.toolCallId);
          content.unshift({ type: "terminal", terminalId });
        }
        await this.send({
          sessionUpdate: "tool_call_update",
          toolCallId: ev.toolCallId,
          status: ev.isError ? "failed" : "completed",
          content,
          rawOutput: { content: textOf(ev.result?.content), ...(ev.result?.details !== undefined ? { details: ev.result.details } : {}) },
        });
        return;
      }
      case "agent_end":
        this.current = undefined;
        return;
      default:
        return;
    }
  }
}

/** The conversation as updates, for session/load. */
export function replayUpdates(messages: readonly AgentMessage[], cwd: string): Update[] {
  const out: Update[] = [];
  for (const m of messages as Array<AgentMessage & { role: string; content?: unknown }>) {
    if (m.role === "user") {
      const blocks: Block[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : ((m.content as Block[]) ?? []);
      for (const b of blocks) {
        if (b.type === "text" && b.text) out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: b.text } });
        else if (b.type === "image" && b.data) out.push({ sessionUpdate: "user_message_chunk", content: { type: "image", data: b.data, mimeType: b.mimeType ?? "image/png" } });
      }
    } else if (m.role === "assistant") {
      for (const b of (m.content as Block[]) ?? []) {
        if (b.type === "thinking" && b.thinking) out.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: b.thinking } });
        else if (b.type === "text" && b.text) out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: b.text } });
        else if (b.type === "toolCall" && b.id && b.name) {
          const locations = toolLocations(b.arguments, cwd);
          out.push({ sessionUpdate: "tool_call", toolCallId: b.id, title: toolTitle(b.name, b.arguments), kind: toolKind(b.name), status: "pending", rawInput: b.arguments, locations: locations ?? [] });
        }
      }
    } else if (m.role === "toolResult") {
      const r = m as unknown as { toolCallId: string; isError?: boolean; content: unknown };
      out.push({ sessionUpdate: "tool_call_update", toolCallId: r.toolCallId, status: r.isError ? "failed" : "completed", content: resultContent(r.content), rawOutput: { content: textOf(r.content) } });
    } else if (m.role === "bashExecution") {
      const b = m as unknown as { command: string; output: string };
      out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: `!${b.command}\n${b.output}` } });
    }
  }
  return out;
}
