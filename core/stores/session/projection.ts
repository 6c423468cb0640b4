/**
 * pi 1.6's provenance-preserving views of a session branch (ctx.sessionManager's
 * buildContextEntries and buildSessionProjection):
 * - buildContextEntries: the entries on the path root → leaf that make up the context — with
 *   a compaction on the path, the newest compaction entry first, then the kept entries from its
 *   firstKeptEntryId, then everything after it;
 * - buildSessionProjection: those entries, each with the messages it contributes to the model
 *   (a `context_edit` entry, where a session has one, replaces or omits its target's content),
 *   all the messages, the thinking level and the model — the same messages as buildSessionContext.
 * Read-only: built from the store's getBranch() on every call.
 */
import type { AgentMessage } from "../../kernel/types.js";
import { buildSessionContext, createBranchSummaryMessage, createCompactionSummaryMessage, createCustomMessage } from "./session-context.js";
import type { SessionEntry } from "./session-entries.js";

export interface ProjectedSessionEntry {
  /** The entry that contributes. */
  sourceEntry: SessionEntry;
  /** What the model sees of it (empty for state-only entries and omitted ones). */
  messages: AgentMessage[];
}
export interface SessionProjection {
  entries: ProjectedSessionEntry[];
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

type Loose = Record<string, any>;

export function buildContextEntries(path: readonly SessionEntry[]): SessionEntry[] {
  let at = -1;
  for (let i = 0; i < path.length; i++) if (path[i]!.type === "compaction") at = i;
  if (at < 0) return [...path];
  const c = path[at] as SessionEntry & { firstKeptEntryId?: string };
  const out: SessionEntry[] = [c];
  let keeping = false;
  for (let i = 0; i < at; i++) {
    const e = path[i]!;
    if (e.id === c.firstKeptEntryId) keeping = true;
    if (keeping && !(e.type === "message" && (e.message as Loose).role === "system")) out.push(e);
  }
  out.push(...path.slice(at + 1));
  return out;
}

function entryMessages(e: SessionEntry): AgentMessage[] {
  const x = e as Loose;
  switch (x.type) {
    case "message":
      return [x.message];
    case "custom_message":
      return [createCustomMessage(x.customType, x.content ?? [], x.display, x.details, x.timestamp)];
    case "branch_summary":
      return x.summary ? [createBranchSummaryMessage(x.summary, x.fromId, x.timestamp)] : [];
    case "compaction":
      return [createCompactionSummaryMessage(x.summary, x.tokensBefore, x.timestamp)];
    default:
      return [];
  }
}

function applyEdit(messages: AgentMessage[], edit: Loose | undefined): AgentMessage[] {
  if (!edit) return messages;
  if (edit.replacement === null) return [];
  const content = edit.replacement?.content;
  return messages.map((m) => {
    const role = (m as Loose).role;
    if (role !== "user" && role !== "assistant" && role !== "toolResult" && role !== "custom") return m;
    const c = (role === "assistant" || role === "toolResult") && typeof content === "string" ? [{ type: "text", text: content }] : content;
    return { ...m, content: c } as AgentMessage;
  });
}

export function buildSessionProjection(path: readonly SessionEntry[]): SessionProjection {
  const ctx = buildSessionContext(path);
  const entries = buildContextEntries(path);
  const edits = new Map<string, Loose>();
  for (const e of entries) if ((e as Loose).type === "context_edit") edits.set((e as Loose).targetId, e as Loose);
  const projected = entries.map((sourceEntry, i) => ({
    sourceEntry,
    // an older compaction kept inside the newest one's range contributes nothing
    messages: sourceEntry.type === "compaction" && i > 0 ? [] : applyEdit(entryMessages(sourceEntry), edits.get(sourceEntry.id)),
  }));
  return { entries: projected, messages: projected.flatMap((p) => p.messages), thinkingLevel: ctx.thinkingLevel, model: ctx.model };
}
