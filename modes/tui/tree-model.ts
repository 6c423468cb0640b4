/**
 * The session tree as a selector list, the one model behind the TUI's /tree and the exported
 * TreeSelectorComponent: the entries in tree order with the active branch first, pi 1.6's filter
 * modes (default hides bookkeeping entries, no-tools also tool results, user-only, labeled-only,
 * all), its search (every word of the query in the entry's label, role and text), folding, the
 * selection kept on an entry (or its nearest shown ancestor) across changes, the tree keys
 * (fold / branch steps, pages, filters, label times, typing), and the drawing of one row. The
 * hosts only frame it: each draws the selection and the window its own way.
 *
 * The list's shape comes first: each row's parent is its nearest ancestor still in the list;
 * folding hides the rows under a row, branch steps move between branch starts, and the branch
 * drawing puts connectors and rails in front of each row.
 */
import type { SessionEntry, SessionTreeNode } from "../../core/stores/index.js";
import { homePath } from "./text.js";

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

export type TreeFilter = "default" | "no-tools" | "user-only" | "labeled-only" | "all";

/** The filter modes in pi 1.6's order (Ctrl+O steps through them), each with its keybinding id and its mark. */
export const TREE_FILTERS: ReadonlyArray<{ mode: TreeFilter; key: string; mark: string }> = [
  { mode: "default", key: "app.tree.filter.default", mark: "" },
  { mode: "no-tools", key: "app.tree.filter.noTools", mark: "[no-tools]" },
  { mode: "user-only", key: "app.tree.filter.userOnly", mark: "[user]" },
  { mode: "labeled-only", key: "app.tree.filter.labeledOnly", mark: "[labeled]" },
  { mode: "all", key: "app.tree.filter.all", mark: "[all]" },
];

/** The filter a name stands for ("user" and "user-only" alike), or undefined. */
export function treeFilterNamed(name: unknown): TreeFilter | undefined {
  const s = String(name);
  return TREE_FILTERS.find((f) => f.mode === s || f.mode === `${s}-only`)?.mode;
}

/** Bookkeeping entries the default view leaves out. */
const BOOKKEEPING = new Set(["label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"]);

/** What a row's drawing needs of a theme. */
export interface Painter {
  fg(token: string, text: string): string;
  bold(text: string): string;
  italic(text: string): string;
}

export interface TreeRow extends NavRow {
  node: SessionTreeNode;
  entry: SessionEntry;
}

/** The text blocks of a message's content, joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c: any) => (c?.type === "text" ? c.text : "")).join("");
}
const oneLine = (s: string) => s.replace(/[\n\t]/g, " ").trim();
const short = (c: unknown) => contentText(c).slice(0, 200);

/** ":10" / ":10-29" for a read's offset and limit. */
function lineRange(offset: unknown, limit: unknown): string {
  const num = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? Number(v) : v);
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : num(offset);
  if (typeof start !== "number" || !Number.isFinite(start)) return "";
  if (limit == null) return `:${start}`;
  const count = num(limit);
  if (typeof count !== "number" || !Number.isFinite(count)) return "";
  const end = start + count - 1;
  return `:${start}${end ? `-${end}` : ""}`;
}

/** A tool call as a tool result's row shows it: "[read: ~/a.ts:1-20]", "[bash: ls -la]". */
export function toolCallText(name: string, args: Record<string, unknown>): string {
  const path = (fallback = "") => homePath(String(args.path || args.file_path || fallback));
  switch (name) {
    case "read":
      return `[read: ${path()}${lineRange(args.offset, args.limit)}]`;
    case "write":
    case "edit":
      return `[${name}: ${path()}]`;
    case "bash": {
      const cmd = String(args.command || "");
      return `[bash: ${oneLine(cmd).slice(0, 50)}${cmd.length > 50 ? "..." : ""}]`;
    }
    case "grep":
      return `[grep: /${String(args.pattern || "")}/ in ${path(".")}]`;
    case "find":
      return `[find: ${String(args.pattern || "")} in ${path(".")}]`;
    case "ls":
      return `[ls: ${path(".")}]`;
    default: {
      const json = JSON.stringify(args) ?? "";
      return `[${name}: ${json.slice(0, 40)}${json.length > 40 ? "..." : ""}]`;
    }
  }
}

/** The words an entry is found by, per entry type (besides its label). */
const SEARCH_WORDS: Record<string, (e: any) => unknown[]> = {
  message: (e) => [e.message.role, e.message.content ? short(e.message.content) : "", e.message.role === "bashExecution" ? e.message.command : ""],
  custom_message: (e) => [e.customType, short(e.content)],
  compaction: () => ["compaction"],
  branch_summary: (e) => ["branch summary", e.summary],
  session_info: (e) => ["title", e.name],
  model_change: (e) => ["model", e.modelId],
  thinking_level_change: (e) => ["thinking", e.thinkingLevel],
  custom: (e) => ["custom", e.customType],
  context_edit: (e) => ["context edit", e.replacement === null ? "omit" : "replace", e.targetId],
  label: (e) => ["label", e.label],
};

/** The row text of the entries other than messages, per entry type. */
const ROW_TEXT: Record<string, (x: any, t: Painter) => string> = {
  custom_message: (x, t) => t.fg("customMessageLabel", `[${x.customType}]: `) + oneLine(contentText(x.content)),
  compaction: (x, t) => t.fg("borderAccent", `[compaction: ${Math.round((x.tokensBefore ?? 0) / 1000)}k tokens]`),
  branch_summary: (x, t) => t.fg("warning", "[branch summary]: ") + oneLine(x.summary ?? ""),
  model_change: (x, t) => t.fg("dim", `[model: ${x.modelId}]`),
  thinking_level_change: (x, t) => t.fg("dim", `[thinking: ${x.thinkingLevel}]`),
  custom: (x, t) => t.fg("dim", `[custom: ${x.customType}]`),
  context_edit: (x, t) => t.fg("dim", `[context ${x.replacement === null ? "omit" : "replace"}: ${x.targetId}]`),
  label: (x, t) => t.fg("dim", `[label: ${x.label ?? "(cleared)"}]`),
  session_info: (x, t) => t.fg("dim", "[title: ") + (x.name ? t.fg("dim", x.name) : t.italic(t.fg("dim", "empty"))) + t.fg("dim", "]"),
};

const isUser = (e: SessionEntry) => e.type === "message" && (e.message as { role?: string }).role === "user";

/** Whether an entry is a user message (the rows /tree forks from and jumps before). */
export const isUserRow = (r: TreeRow) => isUser(r.entry);

export class TreeModel {
  filter: TreeFilter;
  query = "";
  labelTimes = false;
  readonly folded = new Set<string>();
  /** The entries from the leaf up to the root. */
  readonly activePath = new Set<string>();
  /** The rows the filter and the search leave (before folding), in list order. */
  rows: TreeRow[] = [];
  /** The rows on screen (folded branches hidden). */
  shown: TreeRow[] = [];
  selected = 0;
  private readonly nodes: SessionTreeNode[] = [];
  private readonly byId = new Map<string, SessionTreeNode>();
  private readonly tools = new Map<string, { name: string; arguments: Record<string, unknown> }>();
  private prefixes = new Map<string, { prefix: string; connector: boolean }>();

  constructor(
    roots: SessionTreeNode[],
    readonly leafId: string | null,
    filter: TreeFilter = "default",
    selectId?: string,
  ) {
    this.filter = filter;
    for (const n of this.flatten(roots)) {
      this.nodes.push(n);
      this.byId.set(n.entry.id, n);
      type Call = { type?: string; id: string; name: string; arguments?: Record<string, unknown> };
      const m = (n.entry as { message?: { role?: string; content?: unknown } }).message;
      if (n.entry.type === "message" && m?.role === "assistant" && Array.isArray(m.content)) {
        for (const c of m.content as Call[]) if (c?.type === "toolCall") this.tools.set(c.id, { name: c.name, arguments: c.arguments ?? {} });
      }
    }
    for (let id = leafId; id; id = this.byId.get(id)?.entry.parentId ?? null) this.activePath.add(id);
    this.refresh(selectId ?? leafId ?? undefined);
  }

  /** Depth first, the branch holding the leaf before its siblings (iteratively: long sessions are deep chains). */
  private flatten(roots: SessionTreeNode[]): SessionTreeNode[] {
    const order: SessionTreeNode[] = [];
    const pre = [...roots];
    while (pre.length) {
      const n = pre.pop()!;
      order.push(n);
      for (let i = (n.children ?? []).length - 1; i >= 0; i--) pre.push(n.children[i]!);
    }
    const holdsLeaf = new Set<SessionTreeNode>();
    for (let i = order.length - 1; i >= 0; i--) {
      const n = order[i]!;
      if (n.entry.id === this.leafId || (n.children ?? []).some((c) => holdsLeaf.has(c))) holdsLeaf.add(n);
    }
    const first = (list: SessionTreeNode[]) => [...list.filter((n) => holdsLeaf.has(n)), ...list.filter((n) => !holdsLeaf.has(n))];
    const out: SessionTreeNode[] = [];
    const stack = first(roots).reverse();
    while (stack.length) {
      const n = stack.pop()!;
      out.push(n);
      stack.push(...first(n.children ?? []).reverse());
    }
    return out;
  }

  private passes(n: SessionTreeNode): boolean {
    const e = n.entry as any;
    if (e.type === "usage") return false;
    // An assistant message with tool calls only (no text, no error) is left out, the leaf always shown.
    if (e.type === "message" && e.message?.role === "assistant" && e.id !== this.leafId) {
      const m = e.message;
      if (!contentText(m.content).trim() && (!m.stopReason || m.stopReason === "stop" || m.stopReason === "toolUse")) return false;
    }
    switch (this.filter) {
      case "user-only":
        if (!isUser(e)) return false;
        break;
      case "no-tools":
        if (BOOKKEEPING.has(e.type) || (e.type === "message" && e.message?.role === "toolResult")) return false;
        break;
      case "labeled-only":
        if (n.label === undefined) return false;
        break;
      case "all":
        break;
      default:
        if (BOOKKEEPING.has(e.type)) return false;
    }
    const words = this.query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return true;
    const hay = this.searchText(n).toLowerCase();
    return words.every((w) => hay.includes(w));
  }

  /** Re-filter and redraw the branch lines; the selection stays on `keepId` (else the selected entry) or its nearest shown ancestor, else the last row. */
  refresh(keepId: string | undefined = this.shown[this.selected]?.id): void {
    const kept = new Set<string>();
    const rows: TreeRow[] = [];
    for (const n of this.nodes) {
      if (!this.passes(n)) continue;
      let parentId = n.entry.parentId ?? null;
      while (parentId !== null && !kept.has(parentId)) parentId = this.byId.get(parentId)?.entry.parentId ?? null;
      kept.add(n.entry.id);
      rows.push({ id: n.entry.id, parentId, node: n, entry: n.entry });
    }
    this.rows = rows;
    this.shown = unfoldedRows(rows, this.folded);
    const shape = listShape(this.shown, rows);
    this.prefixes = branchPrefixes(this.shown, rows, (id) => (this.folded.has(id) ? "folded" : canFold(id, shape) ? "foldable" : undefined));
    this.selected = this.nearestShown(keepId);
  }

  /** The index of entry `id` among the shown rows, or of its nearest shown ancestor; the last row when none is shown. */
  nearestShown(id: string | null | undefined): number {
    const at = new Map(this.shown.map((r, i) => [r.id, i]));
    for (let cur = id ?? null; cur !== null; cur = this.byId.get(cur)?.entry.parentId ?? null) {
      const i = at.get(cur);
      if (i !== undefined) return i;
      if (!this.byId.has(cur)) break;
    }
    return Math.max(0, this.shown.length - 1);
  }

  get selectedRow(): TreeRow | undefined {
    return this.shown[this.selected];
  }

  /** " [user] [+label time]": the filter's and the label times' marks. */
  marks(): string {
    const f = TREE_FILTERS.find((x) => x.mode === this.filter)!.mark;
    return (f ? ` ${f}` : "") + (this.labelTimes ? " [+label time]" : "");
  }

  setFilter(mode: TreeFilter): void {
    this.filter = mode;
    this.folded.clear();
    this.refresh();
  }

  setQuery(query: string): void {
    this.query = query;
    this.folded.clear();
    this.refresh();
  }

  /** Set (or clear, with undefined) an entry's label in the model. */
  setLabel(id: string, label: string | undefined, timestamp?: string): void {
    const n = this.byId.get(id);
    if (!n) return;
    n.label = label;
    n.labelTimestamp = label === undefined ? undefined : (timestamp ?? new Date().toISOString());
    this.refresh();
  }

  /**
   * The tree's own keys, `is(id)` telling whether the key is a keybinding id, `text` the printable
   * text it types (if any), `page` the rows a page moves: "moved" when only the selection moved,
   * "changed" when the rows changed, undefined when the key is none of them.
   */
  handleKey(is: (id: string) => boolean, text: string | undefined, page: number): "moved" | "changed" | undefined {
    const n = this.shown.length;
    const moved = (to: number) => {
      this.selected = to;
      return "moved" as const;
    };
    if (is("tui.select.up")) return moved(n ? (this.selected + n - 1) % n : 0);
    if (is("tui.select.down")) return moved(n ? (this.selected + 1) % n : 0);
    const fold = is("app.tree.foldOrUp");
    if (fold || is("app.tree.unfoldOrDown")) {
      const id = this.selectedRow?.id;
      if (id === undefined) return "moved";
      const shape = listShape(this.shown, this.rows);
      if (fold ? !this.folded.has(id) && canFold(id, shape) : this.folded.has(id)) {
        if (fold) this.folded.add(id);
        else this.folded.delete(id);
        this.refresh(id);
        return "changed";
      }
      return moved(branchStep(fold ? "up" : "down", this.selected, this.shown, shape));
    }
    if (is("tui.editor.cursorLeft") || is("tui.select.pageUp")) return moved(Math.max(0, this.selected - page));
    if (is("tui.editor.cursorRight") || is("tui.select.pageDown")) return moved(Math.max(0, Math.min(n - 1, this.selected + page)));
    if (is("tui.select.cancel") && this.query) {
      this.setQuery("");
      return "changed";
    }
    const direct = TREE_FILTERS.find((f) => is(f.key));
    const forward = is("app.tree.filter.cycleForward");
    if (direct || forward || is("app.tree.filter.cycleBackward")) {
      const at = TREE_FILTERS.findIndex((f) => f.mode === this.filter);
      const next = TREE_FILTERS[(at + (forward ? 1 : TREE_FILTERS.length - 1)) % TREE_FILTERS.length]!.mode;
      this.setFilter(direct ? (direct.mode === "default" || this.filter !== direct.mode ? direct.mode : "default") : next);
      return "changed";
    }
    if (is("tui.editor.deleteCharBackward")) {
      if (this.query) this.setQuery(Array.from(this.query).slice(0, -1).join(""));
      return "changed";
    }
    if (is("app.tree.toggleLabelTimestamp")) {
      this.labelTimes = !this.labelTimes;
      return "changed";
    }
    if (text && ![...text].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 0x7f || (ch.charCodeAt(0) >= 0x80 && ch.charCodeAt(0) <= 0x9f))) {
      this.setQuery(this.query + text);
      return "changed";
    }
    return undefined;
  }

  /** What the search looks in: the label, the role or kind, and the text. */
  searchText(n: SessionTreeNode): string {
    return [n.label, ...(SEARCH_WORDS[n.entry.type]?.(n.entry) ?? [])].filter(Boolean).join(" ");
  }

  /** The text Ctrl+X copies of an entry (its full text, a command, a summary), or undefined. */
  copyText(e: SessionEntry): string | undefined {
    const x = e as any;
    let text: string | undefined;
    if (e.type === "message") {
      if (x.message.role === "bashExecution") text = x.message.command;
      else if ("content" in x.message) text = contentText(x.message.content) || (x.message.role === "assistant" ? x.message.errorMessage : undefined);
    } else if (e.type === "custom_message") text = contentText(x.content);
    else if (e.type === "compaction" || e.type === "branch_summary") text = x.summary;
    return text?.trim() ? text : undefined;
  }

  /** An entry's text in its row: its kind in colour, then its content on one line. */
  describe(e: SessionEntry, t: Painter): string {
    const x = e as any;
    switch (e.type) {
      case "message": {
        const m = x.message;
        if (m.role === "user") return t.fg("accent", "user: ") + oneLine(short(m.content));
        if (m.role === "assistant") {
          const text = oneLine(short(m.content));
          const rest = text || (m.stopReason === "aborted" ? t.fg("muted", "(aborted)") : m.errorMessage ? t.fg("error", oneLine(m.errorMessage).slice(0, 80)) : t.fg("muted", "(no content)"));
          return t.fg("success", "assistant: ") + rest;
        }
        if (m.role === "toolResult") {
          const call = m.toolCallId ? this.tools.get(m.toolCallId) : undefined;
          return t.fg("muted", call ? toolCallText(call.name, call.arguments) : `[${m.toolName ?? "tool"}]`);
        }
        if (m.role === "bashExecution") return t.fg("dim", `[bash]: ${oneLine(m.command ?? "")}`);
        return t.fg("dim", `[${m.role}]`);
      }
      default:
        return ROW_TEXT[e.type]?.(x, t) ?? "";
    }
  }

  /** A row as pi 1.6 draws it: the branch lines, ⊞ on a folded root, • on the active path, the label (and its time), the entry. */
  drawRow(r: TreeRow, t: Painter, selected = false): string {
    const p = this.prefixes.get(r.id) ?? { prefix: "", connector: false };
    const fold = this.folded.has(r.id) && !p.connector ? t.fg("accent", "⊞ ") : "";
    const mark = this.activePath.has(r.id) ? t.fg("accent", "• ") : "";
    const when = this.labelTimes && r.node.label && r.node.labelTimestamp ? labelTime(r.node.labelTimestamp) : "";
    const label = r.node.label ? t.fg("warning", `[${r.node.label}] `) + (when ? t.fg("muted", `${when} `) : "") : "";
    const body = this.describe(r.entry, t);
    return t.fg("dim", p.prefix) + fold + mark + label + (selected ? t.bold(body) : body);
  }
}
