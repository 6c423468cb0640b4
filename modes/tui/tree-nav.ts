/**
 * Moving through /tree's rows by their shape: folding a branch (its rows hidden under the row
 * that starts it), stepping to the previous / next branch start, and the short time shown after
 * a label. The shape is the one the list shows: each row's parent is its nearest ancestor still
 * in the list.
 */

/** What navigation needs of a row: its id and its nearest ancestor the filter shows. */
export interface NavRow {
  id: string;
  parentId: string | null;
}

/** The rows left when the folded rows hide everything under them (rows in tree order). */
export function unfoldedRows<R extends NavRow>(rows: readonly R[], folded: ReadonlySet<string>): R[] {
  const hidden = new Set<string>();
  return rows.filter((r) => {
    if (r.parentId !== null && (folded.has(r.parentId) || hidden.has(r.parentId))) {
      hidden.add(r.id);
      return false;
    }
    return true;
  });
}

export interface Shape {
  parent: Map<string, string | null>;
  children: Map<string, string[]>;
  index: Map<string, number>;
}

/**
 * The tree as the list shows it: `shown` are the rows on screen (in order), `all` every row the
 * filter produced (so an ancestor a search hides is skipped to the next one shown).
 */
export function listShape(shown: readonly NavRow[], all: readonly NavRow[]): Shape {
  const byId = new Map(all.map((r) => [r.id, r]));
  const index = new Map(shown.map((r, i) => [r.id, i]));
  const parent = new Map<string, string | null>();
  const children = new Map<string, string[]>();
  for (const r of shown) {
    let p = r.parentId;
    while (p !== null && !index.has(p)) p = byId.get(p)?.parentId ?? null;
    parent.set(r.id, p);
    if (p !== null) children.set(p, [...(children.get(p) ?? []), r.id]);
  }
  return { parent, children, index };
}

/** A row can fold when rows hang under it and it starts a branch (a root, or one of several siblings). */
export function canFold(id: string, shape: Shape): boolean {
  if (!shape.children.get(id)?.length) return false;
  const p = shape.parent.get(id) ?? null;
  return p === null || (shape.children.get(p)?.length ?? 0) > 1;
}

/**
 * The index to move to from `from` (an index into the shown rows): "down" follows first children
 * to the next branch point and lands on its first child (or on the branch's last row); "up" walks
 * to the start of the branch the row is in (a first row below a branch point), or the root.
 */
export function branchStep(direction: "up" | "down", from: number, shown: readonly NavRow[], shape: Shape): number {
  const start = shown[from]?.id;
  if (start === undefined) return from;
  let id = start;
  if (direction === "down") {
    for (;;) {
      const kids = shape.children.get(id) ?? [];
      if (kids.length === 0) return shape.index.get(id) ?? from;
      if (kids.length > 1) return shape.index.get(kids[0]!) ?? from;
      id = kids[0]!;
    }
  }
  for (;;) {
    const p = shape.parent.get(id) ?? null;
    if (p === null) return shape.index.get(id) ?? from;
    const at = shape.index.get(id) ?? from;
    if ((shape.children.get(p)?.length ?? 0) > 1 && at < from) return at;
    id = p;
  }
}

/** A label's time: "14:05" today, "3/9 14:05" this year, "25/3/9 14:05" before (local time). */
export function labelTime(iso: string, now = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const hm = `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  const sameYear = d.getFullYear() === now.getFullYear();
  if (sameYear && d.getMonth() === now.getMonth() && d.getDate() === now.getDate()) return hm;
  const md = `${d.getMonth() + 1}/${d.getDate()}`;
  return sameYear ? `${md} ${hm}` : `${String(d.getFullYear()).slice(-2)}/${md} ${hm}`;
}

/**
 * The branch drawing in front of each shown row (in row order): a row under a branch point gets
 * a connector (`├─` or `└─` for the last one, `⊟` in place of `─` when it can fold, `⊞` when
 * folded), and `│` runs down from a connector while siblings follow below. A chain of single
 * children stays at its column; rows under a branch point (and their first child) move one step
 * right. Several roots hang, without connectors, from an invisible common root. `fold` is
 * "folded" / "foldable" / undefined per row id. A root that is folded has no connector: the
 * caller marks it.
 */
export function branchPrefixes(shown: readonly NavRow[], all: readonly NavRow[], fold: (id: string) => "folded" | "foldable" | undefined): Map<string, { prefix: string; connector: boolean }> {
  const shape = listShape(shown, all);
  const roots = shown.filter((r) => (shape.parent.get(r.id) ?? null) === null).map((r) => r.id);
  const multipleRoots = roots.length > 1;
  type Gutter = { position: number; show: boolean };
  type Item = { id: string; indent: number; justBranched: boolean; connector: boolean; isLast: boolean; gutters: Gutter[]; underVirtualRoot: boolean };
  const out = new Map<string, { prefix: string; connector: boolean }>();
  const stack: Item[] = roots
    .map((id, i) => ({ id, indent: multipleRoots ? 1 : 0, justBranched: multipleRoots, connector: multipleRoots, isLast: i === roots.length - 1, gutters: [], underVirtualRoot: multipleRoots }))
    .reverse();
  while (stack.length) {
    const it = stack.pop()!;
    const drawn = it.connector && !it.underVirtualRoot;
    const column = multipleRoots ? Math.max(0, it.indent - 1) : it.indent;
    let prefix = "";
    for (let level = 0; level < column; level++) {
      const gutter = it.gutters.find((g) => g.position === level);
      if (gutter) prefix += gutter.show ? "│  " : "   ";
      else if (drawn && level === column - 1) {
        const f = fold(it.id);
        prefix += (it.isLast ? "└" : "├") + (f === "folded" ? "⊞" : f === "foldable" ? "⊟" : "─") + " ";
      } else prefix += "   ";
    }
    out.set(it.id, { prefix, connector: drawn });
    const kids = shape.children.get(it.id) ?? [];
    const branches = kids.length > 1;
    const indent = branches || (it.justBranched && it.indent > 0) ? it.indent + 1 : it.indent;
    const gutters = drawn ? [...it.gutters, { position: Math.max(0, column - 1), show: !it.isLast }] : it.gutters;
    for (let i = kids.length - 1; i >= 0; i--) {
      stack.push({ id: kids[i]!, indent, justBranched: branches, connector: branches, isLast: i === kids.length - 1, gutters, underVirtualRoot: false });
    }
  }
  return out;
}
