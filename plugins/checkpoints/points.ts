/**
 * Checkpoints in the session tree: each capture is a `custom` entry (customType "checkpoint")
 * appended at the session's leaf, so the file state of any entry is the tree of the nearest
 * checkpoint entry on its path from the root. pi 1.6 keeps custom entries it does not know and
 * leaves them out of the model's context; fork and clone copy them with the path.
 */

export const CHECKPOINT_TYPE = "checkpoint";

export type CheckpointPhase = "before" | "after" | "pre-restore" | "restore";

export interface CheckpointData {
  /** Git tree of the project's files in the store. */
  tree: string;
  phase: CheckpointPhase;
  /** The tool (or "!" for a user command) it was taken around. */
  tool?: string;
  toolCallId?: string;
  /** Files left out because of their size. */
  skipped?: string[];
}

/** The parts of a session entry this plugin reads. */
export interface EntryLike {
  id: string;
  parentId?: string | null;
  type: string;
  timestamp?: string;
  customType?: string;
  data?: unknown;
  message?: { role?: string; content?: unknown };
}

export function checkpointOf(e: EntryLike): CheckpointData | undefined {
  if (e.type !== "custom" || e.customType !== CHECKPOINT_TYPE) return undefined;
  const d = e.data as CheckpointData | undefined;
  return d && typeof d.tree === "string" ? d : undefined;
}

/**
 * The checkpoint taken after a tool call, found from the call's result entry. A tool call's
 * after-state is captured while the model answers, so its entry follows the result instead of
 * preceding it; a path that ends at (or passes) the result does not contain it.
 */
export type AfterOf = (toolResult: EntryLike) => CheckpointData | undefined;

/** The file state at the end of `path` (root → entry): the last checkpoint on it (or after a tool result on it). */
export function stateAt(path: readonly EntryLike[], afterOf?: AfterOf): CheckpointData | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    const c = checkpointOf(e) ?? (afterOf && e.message?.role === "toolResult" ? afterOf(e) : undefined);
    if (c) return c;
  }
  return undefined;
}

export interface RewindPoint {
  /** 1-based, in branch order. */
  index: number;
  /** The entry a conversation restore navigates to (a user message: the leaf goes to its parent). */
  entryId: string;
  kind: "prompt" | "restore";
  /** What the list shows. */
  label: string;
  timestamp?: string;
  /** The file state of the point; undefined when no checkpoint precedes it. */
  tree?: string;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => (c && typeof c === "object" && (c as { type?: string }).type === "text" ? (c as { text: string }).text : "")).join(" ");
  return "";
}

/**
 * The points of a branch a rewind can go back to: before each user prompt (the state its
 * parent had) and each restore's own before-state (so a restore is undone like any point).
 */
export function rewindPoints(branch: readonly EntryLike[], afterOf?: AfterOf): RewindPoint[] {
  const points: RewindPoint[] = [];
  let state: CheckpointData | undefined;
  for (const e of branch) {
    if (afterOf && e.message?.role === "toolResult") state = afterOf(e) ?? state;
    const c = checkpointOf(e);
    if (c) {
      if (c.phase === "pre-restore") {
        points.push({ index: 0, entryId: e.id, kind: "restore", label: "(files before a restore)", timestamp: e.timestamp, tree: c.tree });
      }
      state = c;
      continue;
    }
    if (e.type === "message" && e.message?.role === "user") {
      const text = textOf(e.message.content).replace(/\s+/g, " ").trim();
      points.push({ index: 0, entryId: e.id, kind: "prompt", label: text.length > 60 ? text.slice(0, 59) + "…" : text || "(empty prompt)", timestamp: e.timestamp, tree: state?.tree });
    }
  }
  points.forEach((p, i) => (p.index = i + 1));
  return points;
}
