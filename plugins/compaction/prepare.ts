/**
 * Deciding what a compaction keeps and what it summarises.
 *
 * Token counts are estimates (characters / 4) except where an answer reports real usage.
 * The cut walks back from the newest entry until `keepRecentTokens` are kept; it may fall on a
 * user, assistant, bash, custom or branch-summary message, never on a tool result (which must
 * stay with its call). A cut on anything but a user message splits a turn: the turn's beginning
 * is summarised on its own and the rest of the turn is kept.
 */
import type { AgentMessage, AssistantMessage } from "../../core/kernel/index.js";
import { estimateContextTokens, estimateTokens, usageTokens } from "../../core/engine/index.js";
import { type CompactionEntry, type SessionEntry, buildSessionContext, createBranchSummaryMessage, createCompactionSummaryMessage, createCustomMessage } from "../../core/stores/index.js";

export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}
export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = Object.freeze({ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 });

/** Files the summarised work read and changed. */
export interface FileOperations {
  read: Set<string>;
  modified: Set<string>;
}

/** What session_before_compact handlers get (field names as the reference's CompactionPreparation). */
export interface CompactionPreparation {
  firstKeptEntryId: string;
  messagesToSummarize: AgentMessage[];
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
  fileOps: FileOperations;
  settings: CompactionSettings;
}

// ---- tokens --------------------------------------------------------------------------------------

// The estimators live with the session's context use (core/engine/context-tokens.ts); compaction uses the same.
export { estimateContextTokens, estimateTokens, usageTokens };

/** The threshold rule: more context tokens than the window minus the reserve. */
export function overThreshold(contextTokens: number, contextWindow: number, settings: CompactionSettings): boolean {
  if (!contextWindow) return false;
  return contextTokens > contextWindow - settings.reserveTokens;
}

// ---- entries as messages -------------------------------------------------------------------------

/** The message an entry contributes to a summary (compaction entries contribute their summary only where asked). */
export function entryMessage(e: SessionEntry, includeCompaction = false): AgentMessage | undefined {
  switch (e.type) {
    case "message":
      // pi 1.6 system messages (prompt and tools) are nothing to summarise.
      return e.message.role === "system" ? undefined : e.message;
    case "custom_message":
      return createCustomMessage(e.customType, e.content, e.display, e.details, e.timestamp);
    case "branch_summary":
      return createBranchSummaryMessage(e.summary, e.fromId, e.timestamp);
    case "compaction":
      return includeCompaction ? createCompactionSummaryMessage(e.summary, e.tokensBefore, e.timestamp) : undefined;
    default:
      return undefined;
  }
}

function isCutPoint(e: SessionEntry): boolean {
  if (e.type === "branch_summary" || e.type === "custom_message") return true;
  if (e.type !== "message") return false;
  // A system message (pi 1.6) belongs to the run it opens: the cut goes on that run's user message.
  return e.message.role !== "toolResult" && e.message.role !== "system";
}

function startsTurn(e: SessionEntry): boolean {
  if (e.type === "branch_summary" || e.type === "custom_message") return true;
  return e.type === "message" && (e.message.role === "user" || e.message.role === "bashExecution");
}

export interface CutPoint {
  /** Index of the first kept entry. */
  firstKeptIndex: number;
  /** Index of the entry starting the turn the cut splits (-1 when the cut is on a turn boundary). */
  turnStartIndex: number;
  isSplitTurn: boolean;
}

/** Where to cut entries[start, end) so that about `keepRecentTokens` stay. */
export function findCutPoint(entries: readonly SessionEntry[], start: number, end: number, keepRecentTokens: number): CutPoint {
  const cuts: number[] = [];
  for (let i = start; i < end; i++) if (isCutPoint(entries[i]!)) cuts.push(i);
  if (!cuts.length) return { firstKeptIndex: start, turnStartIndex: -1, isSplitTurn: false };
  let cut = cuts[0]!;
  let kept = 0;
  for (let i = end - 1; i >= start; i--) {
    const e = entries[i]!;
    if (e.type !== "message") continue;
    kept += estimateTokens(e.message);
    if (kept >= keepRecentTokens) {
      cut = cuts.find((c) => c >= i) ?? cut;
      break;
    }
  }
  // Settings changes and other non-message entries just before the cut stay with what is kept.
  while (cut > start) {
    const prev = entries[cut - 1]!;
    if (prev.type === "compaction" || prev.type === "message") break;
    cut--;
  }
  const at = entries[cut]!;
  if (at.type === "message" && at.message.role === "user") return { firstKeptIndex: cut, turnStartIndex: -1, isSplitTurn: false };
  let turnStart = -1;
  for (let i = cut; i >= start; i--) {
    if (startsTurn(entries[i]!)) {
      turnStart = i;
      break;
    }
  }
  return { firstKeptIndex: cut, turnStartIndex: turnStart, isSplitTurn: turnStart !== -1 && turnStart !== cut };
}

// ---- file operations -----------------------------------------------------------------------------

export function createFileOps(): FileOperations {
  return { read: new Set(), modified: new Set() };
}

/** Record the paths of read / write / edit tool calls in an assistant message. */
export function addFileOps(m: AgentMessage, ops: FileOperations): void {
  const a = m as AssistantMessage;
  if (a.role !== "assistant" || !Array.isArray(a.content)) return;
  for (const b of a.content) {
    if (b.type !== "toolCall") continue;
    const path = (b.arguments as { path?: unknown } | undefined)?.path;
    if (typeof path !== "string" || !path) continue;
    if (b.name === "read") ops.read.add(path);
    else if (b.name === "write" || b.name === "edit") ops.modified.add(path);
  }
}

/** Carry over the file lists of an earlier summary we wrote ({readFiles, modifiedFiles} details). */
export function addDetailsFileOps(details: unknown, ops: FileOperations): void {
  const d = details as { readFiles?: unknown; modifiedFiles?: unknown } | undefined;
  if (!d || typeof d !== "object") return;
  if (Array.isArray(d.readFiles)) for (const f of d.readFiles) if (typeof f === "string") ops.read.add(f);
  if (Array.isArray(d.modifiedFiles)) for (const f of d.modifiedFiles) if (typeof f === "string") ops.modified.add(f);
}

/** Sorted lists; a file both read and modified counts as modified. */
export function fileLists(ops: FileOperations): { readFiles: string[]; modifiedFiles: string[] } {
  const modifiedFiles = [...ops.modified].sort();
  const readFiles = [...ops.read].filter((f) => !ops.modified.has(f)).sort();
  return { readFiles, modifiedFiles };
}

// ---- preparation ---------------------------------------------------------------------------------

/**
 * Plan a compaction of a root → leaf path. Undefined when there is nothing to do: the path
 * ends with a compaction, or everything would be kept.
 */
export function prepareCompaction(path: readonly SessionEntry[], settings: CompactionSettings): CompactionPreparation | undefined {
  if (!path.length || path[path.length - 1]!.type === "compaction") return undefined;
  let prevIndex = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]!.type === "compaction") {
      prevIndex = i;
      break;
    }
  }
  const prev = prevIndex >= 0 ? (path[prevIndex] as CompactionEntry) : undefined;
  // A later compaction summarises again what the previous one kept.
  let start = 0;
  if (prev) {
    const kept = path.findIndex((e) => e.id === prev.firstKeptEntryId);
    start = kept >= 0 ? kept : prevIndex + 1;
  }
  const tokensBefore = estimateContextTokens(buildSessionContext(path as SessionEntry[]).messages).tokens;
  const cut = findCutPoint(path, start, path.length, settings.keepRecentTokens);
  const firstKept = path[cut.firstKeptIndex];
  if (!firstKept) return undefined;
  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
  const messagesToSummarize: AgentMessage[] = [];
  for (let i = start; i < historyEnd; i++) {
    if (i === prevIndex) continue;
    const m = entryMessage(path[i]!);
    if (m) messagesToSummarize.push(m);
  }
  const turnPrefixMessages: AgentMessage[] = [];
  if (cut.isSplitTurn) {
    for (let i = cut.turnStartIndex; i < cut.firstKeptIndex; i++) {
      const m = entryMessage(path[i]!);
      if (m) turnPrefixMessages.push(m);
    }
  }
  if (!messagesToSummarize.length && !turnPrefixMessages.length) return undefined;
  const fileOps = createFileOps();
  if (prev && !prev.fromHook) addDetailsFileOps(prev.details, fileOps);
  for (const m of messagesToSummarize) addFileOps(m, fileOps);
  for (const m of turnPrefixMessages) addFileOps(m, fileOps);
  return {
    firstKeptEntryId: firstKept.id,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn: cut.isSplitTurn,
    tokensBefore,
    previousSummary: prev?.summary,
    fileOps,
    settings: { ...settings },
  };
}

/**
 * The messages of an abandoned branch for its summary, newest kept first within `tokenBudget`
 * (0 = no limit), and the file operations of the whole branch.
 */
export function prepareBranchEntries(entries: readonly SessionEntry[], tokenBudget = 0): { messages: AgentMessage[]; fileOps: FileOperations } {
  const fileOps = createFileOps();
  for (const e of entries) if (e.type === "branch_summary" && !e.fromHook) addDetailsFileOps(e.details, fileOps);
  const messages: AgentMessage[] = [];
  let total = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    const m = entryMessage(e, true);
    if (!m || (m as { role: string }).role === "toolResult") continue;
    addFileOps(m, fileOps);
    const t = estimateTokens(m);
    if (tokenBudget > 0 && total + t > tokenBudget) {
      // An earlier summary is dense context: squeeze it in while there is some room.
      if ((e.type === "compaction" || e.type === "branch_summary") && total < tokenBudget * 0.9) {
        messages.unshift(m);
        total += t;
      }
      break;
    }
    messages.unshift(m);
    total += t;
  }
  return { messages, fileOps };
}
