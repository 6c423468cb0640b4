/**
 * Paths through a session's entry tree, as pure functions of the entries (SessionManager's
 * getBranch() and getTree() are these with its own maps).
 */
import type { SessionEntry, SessionTreeNode } from "./session-entries.js";

/** The path root → `start`, every entry type included (a cycle stops the walk). */
export function branchTo(byId: ReadonlyMap<string, SessionEntry>, start: string | null | undefined): SessionEntry[] {
  const leaf = start ? byId.get(start) : undefined;
  return leaf ? pathToRoot(leaf, byId) : [];
}

/**
 * The path root → `leaf` up the parent ids; a missing parent ends it, and so does a cycle, at the
 * first entry met twice. Steps are counted instead of ids kept in a set (~4 ms a walk on a
 * 10,000-entry session): a walk longer than the index is a cycle, and only then is it walked
 * again with a set.
 */
export function pathToRoot(leaf: SessionEntry, byId: ReadonlyMap<string, SessionEntry>): SessionEntry[] {
  const path: SessionEntry[] = [];
  const limit = byId.size + 1;
  for (let cur: SessionEntry | undefined = leaf; cur; cur = cur.parentId ? byId.get(cur.parentId) : undefined) {
    if (path.length === limit) {
      path.length = 0;
      const seen = new Set<string>();
      for (let c: SessionEntry | undefined = leaf; c && !seen.has(c.id); c = c.parentId ? byId.get(c.parentId) : undefined) {
        seen.add(c.id);
        path.push(c);
      }
      break;
    }
    path.push(cur);
  }
  return path.reverse();
}

/**
 * The entries as a forest (normally one root; entries whose parent is missing are roots too).
 * Children are sorted oldest first; nodes carry their current label.
 */
export function entryForest(entries: readonly SessionEntry[], labels: ReadonlyMap<string, string>, labelTimestamps: ReadonlyMap<string, string>): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  for (const entry of entries) {
    const node: SessionTreeNode = { entry, children: [] };
    const label = labels.get(entry.id);
    if (label !== undefined) {
      node.label = label;
      node.labelTimestamp = labelTimestamps.get(entry.id);
    }
    nodes.set(entry.id, node);
  }
  const roots: SessionTreeNode[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id)!;
    if (node.entry !== entry) continue; // a duplicate id: the later entry stands
    const parent = entry.parentId && entry.parentId !== entry.id ? nodes.get(entry.parentId) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    node.children.sort((a, b) => new Date(a.entry.timestamp).getTime() - new Date(b.entry.timestamp).getTime());
    stack.push(...node.children);
  }
  return roots;
}

/**
 * Why the parent chain from `leafId` back to the root breaks (a parent that is not in the file,
 * or a loop), or undefined when it is whole. A broken chain would silently show only part of
 * the conversation.
 */
export function parentChainProblem(byId: ReadonlyMap<string, SessionEntry>, leafId: string | null | undefined): string | undefined {
  // The walk stops at the root, at a missing parent, or before the first entry met twice.
  const top = branchTo(byId, leafId)[0];
  if (!top?.parentId) return undefined;
  return byId.has(top.parentId) ? `the parent chain loops at entry ${top.parentId}` : `entry ${top.id} names a parent ${top.parentId} that is not in the file`;
}

/** The latest session_info name among the entries (trimmed; "" clears), or undefined. */
export function latestSessionName(entries: readonly SessionEntry[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === "session_info") return e.name?.trim() || undefined;
  }
  return undefined;
}
