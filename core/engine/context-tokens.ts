/**
 * Token estimates of a context, as pi 1.6 makes them: characters / 4 for each message, and the
 * last answer's reported usage for everything up to it. The footer's context use, the
 * extension API's getContextUsage() and the compaction threshold all count with these.
 */
import type { AgentMessage, AssistantMessage, Usage } from "../kernel/types.js";

/** Tokens of the context an answer was given: its usage total, or the sum of its parts. */
export function usageTokens(u: Usage): number {
  return u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
}

const IMAGE_CHARS = 4800;

function blocksChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const b of content) {
    if (!b || typeof b !== "object") continue;
    const t = (b as { type?: string }).type;
    if (t === "text") n += String((b as { text?: unknown }).text ?? "").length;
    else if (t === "thinking") n += String((b as { thinking?: unknown }).thinking ?? "").length;
    else if (t === "toolCall") n += String((b as { name?: unknown }).name ?? "").length + JSON.stringify((b as { arguments?: unknown }).arguments ?? {}).length;
    else if (t === "image") n += IMAGE_CHARS;
  }
  return n;
}

/** Estimated tokens of one message (characters / 4, rounded up; an image counts as 1,200). */
export function estimateTokens(m: AgentMessage): number {
  const r = m as unknown as { role: string } & Record<string, unknown>;
  let chars = 0;
  switch (r.role) {
    case "system": {
      // The prompt's sections and the tool declarations it added count too.
      chars = blocksChars(r.content);
      for (const section of Object.values((r.sections as Record<string, string | null> | undefined) ?? {})) if (section) chars += section.length;
      if (r.toolsAdded) chars += JSON.stringify(r.toolsAdded).length;
      break;
    }
    case "user":
    case "assistant":
    case "toolResult":
    case "custom":
      chars = blocksChars(r.content);
      break;
    case "bashExecution":
      chars = String(r.command ?? "").length + String(r.output ?? "").length;
      break;
    case "compactionSummary":
    case "branchSummary":
      chars = String(r.summary ?? "").length;
      break;
  }
  return Math.ceil(chars / 4);
}

/** The usage of an answer that completed and reported some (pi 1.6: an aborted or failed one, or all zeros, does not count). */
export function usableUsage(m: AgentMessage): Usage | undefined {
  const a = m as AssistantMessage;
  if (a.role !== "assistant" || !a.usage || a.stopReason === "error" || a.stopReason === "aborted" || usageTokens(a.usage) <= 0) return undefined;
  return a.usage;
}

/** Context tokens of a message list: the last real usage plus estimates for what came after it. */
export function estimateContextTokens(messages: readonly AgentMessage[]): { tokens: number; lastUsageIndex: number | null } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const u = usableUsage(messages[i]!);
    if (!u) continue;
    let tokens = usageTokens(u);
    for (let j = i + 1; j < messages.length; j++) tokens += estimateTokens(messages[j]!);
    return { tokens, lastUsageIndex: i };
  }
  let tokens = 0;
  for (const m of messages) tokens += estimateTokens(m);
  return { tokens, lastUsageIndex: null };
}
