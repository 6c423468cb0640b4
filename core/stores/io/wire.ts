/**
 * The wire form of session events (protocol.md §2): `message_update` is delta-only — no
 * `partial`, no `message` — so bytes grow linearly with the answer. `toolcall_start` carries the
 * call's id and tool name. Every other event goes out as it is (one that carries a provider's
 * error with the credentials the CLI knows replaced by `[redacted]`).
 */
import { PROCESS_SECRETS } from "../../kernel/redact.js";
import type { AgentSessionEvent, AssistantMessageEvent, ToolCall } from "../../kernel/types.js";

export const PROTOCOL_VERSION = 1;

export function toWireEvent(event: AgentSessionEvent): unknown {
  // An event that carries a provider's error passes through the known credentials first (an
  // error that echoes the key). What a tool printed goes out as the model saw it.
  if (event.type !== "message_update") return carriesError(event) ? PROCESS_SECRETS.redact(event) : event;
  const ame = event.assistantMessageEvent as AssistantMessageEvent & { partial?: { usage?: unknown; content?: unknown[] } };
  const { partial, ...rest } = ame as { partial?: { usage?: unknown; content?: unknown[] } } & Record<string, unknown>;
  const inner: Record<string, unknown> = rest;
  if (ame.type === "toolcall_start" && partial?.content) {
    const block = partial.content[ame.contentIndex] as ToolCall | undefined;
    if (block) {
      inner.id = block.id;
      inner.toolName = block.name;
    }
  }
  return { type: "message_update", usage: partial?.usage ?? (event.message as { usage?: unknown }).usage, assistantMessageEvent: inner };
}

function carriesError(event: AgentSessionEvent): boolean {
  const e = event as { errorMessage?: unknown; message?: { errorMessage?: unknown }; messages?: Array<{ errorMessage?: unknown }> };
  return !!(e.errorMessage || e.message?.errorMessage || (Array.isArray(e.messages) && e.messages.some((m) => m?.errorMessage)));
}
