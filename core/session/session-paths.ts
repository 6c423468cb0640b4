/**
 * Paths through a session's entry tree, as pure functions of the entries (SessionManager's
 * getBranch() and getTree() are these with its own maps).
 */
import type { SessionEntry, SessionTreeNode } from "./session-entries.js";

/** The path root → `start`, every entry type included (a cycle stops the walk). */
export function branchTo(byId: ReadonlyMap<string, SessionEntry>, start: string | null | undefined): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let cur = start ? byId.get(start) : undefined;
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    path.push(cur);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
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
  // A chain of more steps than there are entries loops; only then is the loop's entry looked for
  // (a set of the ids seen cost ~4 ms on a 10,000-entry load).
  let steps = 0;
  let cur = leafId ? byId.get(leafId) : undefined;
  while (cur) {
    if (++steps > byId.size) return `the parent chain loops at entry ${loopEntry(byId, leafId!)}`;
    if (!cur.parentId) return undefined;
    const parent = byId.get(cur.parentId);
    if (!parent) return `entry ${cur.id} names a parent ${cur.parentId} that is not in the file`;
    cur = parent;
  }
  return undefined;
}

/** The first entry met twice walking up from `leafId` (the chain is known to loop). */
function loopEntry(byId: ReadonlyMap<string, SessionEntry>, leafId: string): string | undefined {
  const seen = new Set<string>();
  for (let cur = byId.get(leafId); cur; cur = cur.parentId ? byId.get(cur.parentId) : undefined) {
    if (seen.has(cur.id)) return cur.id;
    seen.add(cur.id);
  }
  return undefined;
}

/** The latest session_info name among the entries (trimmed; "" clears), or undefined. */
export function latestSessionName(entries: readonly SessionEntry[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === "session_info") return e.name?.trim() || undefined;
  }
  return undefined;
}
