/**
 * The context sent to the model: the path root → leaf, with the latest compaction on that
 * path standing in for everything it summarised.
 */
import type { AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage } from "../../kernel/types.js";
import type { CompactionEntry, ContextEditEntry, SessionContext, SessionEntry } from "./session-entries.js";
import { pathToRoot } from "./session-paths.js";

function toMillis(isoTimestamp: string): number {
  return new Date(isoTimestamp).getTime();
}

export function createCompactionSummaryMessage(
  summary: string,
  tokensBefore: number,
  isoTimestamp: string,
): CompactionSummaryMessage {
  return { role: "compactionSummary", summary, tokensBefore, timestamp: toMillis(isoTimestamp) };
}

export function createBranchSummaryMessage(summary: string, fromId: string, isoTimestamp: string): BranchSummaryMessage {
  return { role: "branchSummary", summary, fromId, timestamp: toMillis(isoTimestamp) };
}

export function createCustomMessage(
  customType: string,
  content: CustomMessage["content"],
  display: boolean,
  details: unknown,
  isoTimestamp: string,
): CustomMessage {
  return { role: "custom", customType, content, display, details, timestamp: toMillis(isoTimestamp) };
}

/**
 * A message as a context edit leaves it for the model: null (left out) or the message with the
 * replacement content (a string for an assistant or toolResult message becomes one text block).
 * Messages of other roles are not editable and come back unchanged.
 */
export function applyContextEdit(m: AgentMessage, edit: ContextEditEntry): AgentMessage | null {
  const role = (m as { role: string }).role;
  if (role !== "user" && role !== "assistant" && role !== "toolResult" && role !== "custom") return m;
  if (edit.replacement === null) return null;
  const content = edit.replacement.content;
  const blocks = (role === "assistant" || role === "toolResult") && typeof content === "string" ? [{ type: "text", text: content }] : content;
  return { ...m, content: blocks } as AgentMessage;
}

/** The newest compaction entry of a list, or null. */
export function getLatestCompactionEntry(entries: readonly SessionEntry[]): CompactionEntry | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === "compaction") return e;
  }
  return null;
}

/**
 * Build the model context from the entries.
 *
 * - `leafId === null`: nothing (the leaf was reset to before the first entry).
 * - `leafId` undefined or unknown: the last entry of `entries` is the leaf.
 * Walking root → leaf: the last thinking_level_change sets the thinking level ("off" if none);
 * the last model_change or assistant message sets the model. With a compaction on the path the
 * messages are its summary, then the path entries from `firstKeptEntryId` up to the compaction,
 * then the entries after it. `message` entries give their message, `custom_message` entries a
 * `custom` message, `branch_summary` entries (with a summary) a `branchSummary` message. As in
 * pi 1.6: a compaction's `systemMessage` leads the compacted context and the system messages
 * of the kept range are dropped; the latest `context_edit` of each entry is applied (see
 * applyContextEdit); `usage`, `custom`, `label` and unknown entry types give no message.
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId?: ReadonlyMap<string, SessionEntry>,
): SessionContext {
  if (leafId === null) return { messages: [], thinkingLevel: "off", model: null };
  let index = byId;
  if (!index) {
    const m = new Map<string, SessionEntry>();
    for (const e of entries) m.set(e.id, e);
    index = m;
  }
  let leaf = leafId ? index.get(leafId) : undefined;
  if (!leaf) leaf = entries[entries.length - 1];
  if (!leaf) return { messages: [], thinkingLevel: "off", model: null };

  const path = pathToRoot(leaf, index);

  let thinkingLevel = "off";
  let model: SessionContext["model"] = null;
  let compactionIdx = -1;
  for (let i = 0; i < path.length; i++) {
    const e = path[i]!;
    if (e.type === "thinking_level_change") thinkingLevel = e.thinkingLevel;
    else if (e.type === "model_change") model = { provider: e.provider, modelId: e.modelId };
    else if (e.type === "message" && e.message.role === "assistant") {
      model = { provider: e.message.provider, modelId: e.message.model };
    } else if (e.type === "compaction") compactionIdx = i;
  }

  // The selected entries: with a compaction, it, then the non-system entries it kept, then the rest.
  let selected: SessionEntry[] = path;
  if (compactionIdx >= 0) {
    const c = path[compactionIdx] as CompactionEntry;
    selected = [c];
    let keeping = false;
    for (let i = 0; i < compactionIdx; i++) {
      const e = path[i]!;
      if (e.id === c.firstKeptEntryId) keeping = true;
      if (keeping && !(e.type === "message" && e.message.role === "system")) selected.push(e);
    }
    selected.push(...path.slice(compactionIdx + 1));
  }
  // pi 1.6 context edits: the latest edit of each target among the selected entries.
  const edits = new Map<string, ContextEditEntry>();
  for (const e of selected) if (e.type === "context_edit") edits.set(e.targetId, e);

  const messages: AgentMessage[] = [];
  for (const e of selected) {
    if (e.type === "compaction") {
      // Only the newest compaction (first of the selection) stands for what it summarised.
      if (e !== selected[0] || compactionIdx < 0) continue;
      if (e.systemMessage) messages.push(e.systemMessage);
      messages.push(createCompactionSummaryMessage(e.summary, e.tokensBefore, e.timestamp));
      continue;
    }
    let m: AgentMessage | undefined;
    if (e.type === "message") m = e.message;
    else if (e.type === "custom_message") m = createCustomMessage(e.customType, e.content, e.display, e.details, e.timestamp);
    else if (e.type === "branch_summary" && e.summary) m = createBranchSummaryMessage(e.summary, e.fromId, e.timestamp);
    if (!m) continue;
    const edit = edits.get(e.id);
    if (edit) {
      const edited = applyContextEdit(m, edit);
      if (edited) messages.push(edited);
    } else messages.push(m);
  }
  return { messages, thinkingLevel, model };
}
