/**
 * Tree operations on a session: navigating in place (with an optional summary of the branch
 * left behind), the user messages a fork can start from, and copying a branch into another
 * store. AgentSession exposes them (navigateTree, getUserMessagesForForking); the runtime uses
 * the copy for forks and clones of sessions that have no file.
 */
import type { SessionHandle } from "../kernel/contracts.js";
import type { BranchSummaryEntry, SessionEntry } from "../stores/session/session-entries.js";
import type { SessionManager } from "../stores/session/session-manager.js";
import { asTreeStore, type TreeSessionStore } from "../stores/session/store.js";

export interface NavigateTreeOptions {
  /** Summarise the branch being left (needs the "branch-summarizer" service, from the compaction plugin). */
  summarize?: boolean;
  /** Extra focus for the summary. */
  customInstructions?: string;
  /** customInstructions replace the default summary instructions instead of adding to them. */
  replaceInstructions?: boolean;
  /** Label for the summary entry (or, without a summary, for the target entry). */
  label?: string;
}

export interface NavigateTreeResult {
  /** Text of the user (or custom) message navigated to, for the editor. */
  editorText?: string;
  cancelled: boolean;
  /** The summary was aborted (abortBranchSummary()). */
  aborted?: boolean;
  summaryEntry?: BranchSummaryEntry;
}

/** What session_before_tree handlers see (and may change through their return value). */
export interface TreePreparation {
  targetId: string;
  oldLeafId: string | null;
  commonAncestorId: string | null;
  entriesToSummarize: SessionEntry[];
  userWantsSummary: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/** The kernel service "branch-summarizer". */
export type BranchSummarizer = (
  session: SessionHandle,
  entries: SessionEntry[],
  opts: { customInstructions?: string; replaceInstructions?: boolean; signal: AbortSignal },
) => Promise<{ summary: string; details?: unknown } | { aborted: true }>;

/** Text of user message content: the string, or its text blocks joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text" && typeof (b as { text?: unknown }).text === "string")
    .map((b) => (b as { text: string }).text)
    .join("");
}

/** Every user message of the session (all branches, file order) with its text, for a fork picker. */
export function getUserMessagesForForking(store: Pick<TreeSessionStore, "getEntries">): Array<{ entryId: string; text: string }> {
  const out: Array<{ entryId: string; text: string }> = [];
  for (const e of store.getEntries()) {
    if (e.type !== "message" || e.message.role !== "user") continue;
    const text = contentText(e.message.content);
    if (text) out.push({ entryId: e.id, text });
  }
  return out;
}

/**
 * The entries between the old leaf and the deepest entry it shares with the target's path
 * (oldest first), and that shared entry's id (null when the paths share nothing).
 */
export function collectEntriesForBranchSummary(
  store: Pick<TreeSessionStore, "getBranch" | "getEntry">,
  oldLeafId: string | null,
  targetId: string,
): { entries: SessionEntry[]; commonAncestorId: string | null } {
  if (!oldLeafId) return { entries: [], commonAncestorId: null };
  const onOldPath = new Set(store.getBranch(oldLeafId).map((e) => e.id));
  const targetPath = store.getBranch(targetId);
  let commonAncestorId: string | null = null;
  for (let i = targetPath.length - 1; i >= 0; i--) {
    if (onOldPath.has(targetPath[i]!.id)) {
      commonAncestorId = targetPath[i]!.id;
      break;
    }
  }
  const entries: SessionEntry[] = [];
  const seen = new Set<string>();
  for (let id: string | null = oldLeafId; id && id !== commonAncestorId && !seen.has(id); ) {
    seen.add(id);
    const e = store.getEntry(id);
    if (!e) break;
    entries.push(e);
    id = e.parentId;
  }
  return { entries: entries.reverse(), commonAncestorId };
}

/** Where the leaf goes for a target: a user/custom message's parent (its text to the editor), else the target. */
export function leafForTarget(entry: SessionEntry): { leafId: string | null; editorText?: string } {
  if (entry.type === "message" && entry.message.role === "user") {
    return { leafId: entry.parentId, editorText: contentText(entry.message.content) };
  }
  if (entry.type === "custom_message") return { leafId: entry.parentId, editorText: contentText(entry.content) };
  return { leafId: entry.id };
}

/**
 * Move the session's leaf to `targetId` in the same file (AgentSession.navigateTree).
 * session_before_tree may cancel, or supply the summary and change instructions and label;
 * session_tree reports the move.
 */
export async function navigateTree(
  session: SessionHandle,
  targetId: string,
  opts: NavigateTreeOptions,
  signal: AbortSignal,
): Promise<NavigateTreeResult> {
  const store = asTreeStore(session.sessionManager, "navigateTree");
  const hooks = session.kernel.hooks;
  const oldLeafId = store.getLeafId();
  if (targetId === oldLeafId) return { cancelled: false };
  const target = store.getEntry(targetId);
  if (!target) throw new Error(`navigateTree: no entry "${targetId}" in this session`);
  if (opts.summarize && !session.model) throw new Error("navigateTree: a branch summary needs a model, and none is selected");

  const { entries, commonAncestorId } = collectEntriesForBranchSummary(store, oldLeafId, targetId);
  const preparation: TreePreparation = {
    targetId,
    oldLeafId,
    commonAncestorId,
    entriesToSummarize: entries,
    userWantsSummary: !!opts.summarize,
    customInstructions: opts.customInstructions,
    replaceInstructions: opts.replaceInstructions,
    label: opts.label,
  };
  let { customInstructions, replaceInstructions, label } = opts;
  let hookSummary: { summary: string; details?: unknown } | undefined;
  if (hooks.session_before_tree.isUsed()) {
    const r = (await hooks.session_before_tree.promise({
      type: "session_before_tree",
      preparation: preparation as unknown as Record<string, unknown>,
      signal,
    })) as
      | { cancel?: boolean; summary?: { summary?: unknown; details?: unknown }; customInstructions?: string; replaceInstructions?: boolean; label?: string }
      | undefined;
    if (r?.cancel) return { cancelled: true };
    if (opts.summarize && r?.summary && typeof r.summary.summary === "string") {
      hookSummary = { summary: r.summary.summary, details: r.summary.details };
    }
    if (r?.customInstructions !== undefined) customInstructions = r.customInstructions;
    if (r?.replaceInstructions !== undefined) replaceInstructions = r.replaceInstructions;
    if (r?.label !== undefined) label = r.label;
  }

  let summary: { summary: string; details?: unknown } | undefined = hookSummary;
  if (opts.summarize && !summary && entries.length > 0) {
    const summarizer = session.kernel.service("branch-summarizer");
    if (!summarizer) throw new Error("navigateTree: summarize needs the branch summarizer, which the compaction plugin provides; it is not installed");
    const r = await summarizer(session, entries, { customInstructions, replaceInstructions, signal });
    if ("aborted" in r || signal.aborted) return { cancelled: true, aborted: true };
    summary = r;
  }
  if (signal.aborted) return { cancelled: true, aborted: true };

  const { leafId, editorText } = leafForTarget(target);
  let summaryEntry: BranchSummaryEntry | undefined;
  if (summary) {
    const id = store.branchWithSummary(leafId, session.redactSecrets(summary.summary), session.redactSecrets(summary.details), !!hookSummary);
    summaryEntry = store.getEntry(id) as BranchSummaryEntry;
    if (label) store.appendLabelChange(id, label);
  } else {
    if (leafId === null) store.resetLeaf();
    else store.branch(leafId);
    if (label) store.appendLabelChange(targetId, label);
  }
  session.reloadFromStore();
  if (hooks.session_tree.isUsed()) {
    await hooks.session_tree.promise({
      type: "session_tree",
      newLeafId: store.getLeafId(),
      oldLeafId,
      summaryEntry,
      fromExtension: summary ? !!hookSummary : undefined,
    });
  }
  return { editorText, cancelled: false, summaryEntry };
}

/** The appending side of SessionManager, for copying a branch. */
type Appender = Pick<
  SessionManager,
  | "appendMessage"
  | "appendModelChange"
  | "appendThinkingLevelChange"
  | "appendCompaction"
  | "appendCustomEntry"
  | "appendCustomMessageEntry"
  | "appendLabelChange"
  | "appendSessionInfo"
  | "appendContextEdit"
  | "appendUsage"
  | "branchWithSummary"
  | "getLeafId"
>;

/**
 * Append copies of `entries` (a root → leaf path) to `target`, in order. Entries get new ids;
 * references between them (compaction's firstKeptEntryId, labels) follow.
 */
export function copyBranch(target: Appender, entries: readonly SessionEntry[]): Map<string, string> {
  const ids = new Map<string, string>();
  // Entry ids a compaction keeps from may come after it in file order only in broken files; fall back to the compaction's own position.
  for (const e of entries) {
    let id: string | undefined;
    switch (e.type) {
      case "message":
        id = target.appendMessage(e.message as never);
        break;
      case "model_change":
        id = target.appendModelChange(e.provider, e.modelId);
        break;
      case "thinking_level_change":
        id = target.appendThinkingLevelChange(e.thinkingLevel);
        break;
      case "compaction": {
        const kept = ids.get(e.firstKeptEntryId);
        id = target.appendCompaction(e.summary, kept ?? "", e.tokensBefore, e.details, e.fromHook, e.usage);
        break;
      }
      case "branch_summary":
        id = target.branchWithSummary(target.getLeafId(), e.summary, e.details, e.fromHook);
        break;
      case "custom":
        id = target.appendCustomEntry(e.customType, e.data);
        break;
      case "custom_message":
        id = target.appendCustomMessageEntry(e.customType, e.content, e.display, e.details);
        break;
      case "label": {
        const t = ids.get(e.targetId);
        if (t) id = target.appendLabelChange(t, e.label);
        break;
      }
      case "session_info":
        id = target.appendSessionInfo(e.name ?? "");
        break;
      case "context_edit": {
        const t = ids.get(e.targetId);
        if (t) id = target.appendContextEdit(t, e.replacement);
        break;
      }
      case "usage":
        id = target.appendUsage(e.kind, e.provider, e.model, e.usage, e.note);
        break;
    }
    if (id) ids.set(e.id, id);
  }
  return ids;
}
