/**
 * The context sent to the model: the path root → leaf, with the latest compaction on that
 * path standing in for everything it summarised.
 */
import type { AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage } from "../types.js";
import type { CompactionEntry, SessionContext, SessionEntry } from "./session-entries.js";

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
 * `custom` message, `branch_summary` entries (with a summary) a `branchSummary` message.
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

  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  for (let cur: SessionEntry | undefined = leaf; cur && !seen.has(cur.id); ) {
    seen.add(cur.id);
    path.push(cur);
    cur = cur.parentId ? index.get(cur.parentId) : undefined;
  }
  path.reverse();

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

  const messages: AgentMessage[] = [];
  const emit = (e: SessionEntry): void => {
    if (e.type === "message") messages.push(e.message);
    else if (e.type === "custom_message") {
      messages.push(createCustomMessage(e.customType, e.content, e.display, e.details, e.timestamp));
    } else if (e.type === "branch_summary" && e.summary) {
      messages.push(createBranchSummaryMessage(e.summary, e.fromId, e.timestamp));
    }
  };

  if (compactionIdx >= 0) {
    const c = path[compactionIdx] as CompactionEntry;
    messages.push(createCompactionSummaryMessage(c.summary, c.tokensBefore, c.timestamp));
    let keeping = false;
    for (let i = 0; i < compactionIdx; i++) {
      const e = path[i]!;
      if (e.id === c.firstKeptEntryId) keeping = true;
      if (keeping) emit(e);
    }
    for (let i = compactionIdx + 1; i < path.length; i++) emit(path[i]!);
  } else {
    for (const e of path) emit(e);
  }
  return { messages, thinkingLevel, model };
}
