/**
 * pi 1.6's TreeSelectorComponent as a pi-tui component, on this project's session tree
 * (SessionManager.getTree(): entries with their children and labels): the entries indented at
 * branch points, the active path marked "•", the current leaf selected; typing searches, the
 * filter keys of pi 1.6 (Ctrl+D default, Ctrl+T no tools, Ctrl+U user only, Ctrl+L labeled,
 * Ctrl+A all, Ctrl+O cycle) narrow it, Shift+L edits the selected entry's label, Enter picks the
 * entry (onSelect(entryId)), Escape clears the search, then cancels.
 */
import type { Component, Container, Input } from "@earendil-works/pi-tui";
import type { SessionEntry, SessionTreeNode } from "../../../core/stores/index.js";
import { DynamicBorder } from "../pi-theme.js";
import { fit, keyIs, keyText, lazyClass, piTui, theme, windowOf } from "./selector-kit.js";

export type FilterMode = "default" | "no-tools" | "user-only" | "labeled-only" | "all";
const FILTERS: FilterMode[] = ["default", "no-tools", "user-only", "labeled-only", "all"];
const FILTER_KEYS: Array<[string, FilterMode]> = [
  ["app.tree.filter.noTools", "no-tools"],
  ["app.tree.filter.userOnly", "user-only"],
  ["app.tree.filter.labeledOnly", "labeled-only"],
  ["app.tree.filter.all", "all"],
];
/** Bookkeeping entries the default view leaves out. */
const BOOKKEEPING = new Set(["label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"]);

interface Row {
  node: SessionTreeNode;
  indent: number;
  /** "├─ " / "└─ " before the entry when it is one of several children. */
  connector: string;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c: any) => (c?.type === "text" ? c.text : "")).join("");
}
const oneLine = (s: string) => s.replace(/[\n\t]+/g, " ").trim();

/** The row text of an entry (role prefix, content) and whether it has anything to show. */
function describe(e: SessionEntry, tools: Map<string, { name: string; arguments: unknown }>): string {
  const t = theme();
  const x = e as any;
  switch (e.type) {
    case "message": {
      const m = x.message;
      if (m.role === "user") return t.fg("accent", "user: ") + oneLine(textOf(m.content));
      if (m.role === "assistant") {
        const text = oneLine(textOf(m.content));
        const rest = text || (m.stopReason === "aborted" ? t.fg("muted", "(aborted)") : m.errorMessage ? t.fg("error", oneLine(m.errorMessage).slice(0, 80)) : t.fg("muted", "(no content)"));
        return t.fg("success", "assistant: ") + rest;
      }
      if (m.role === "toolResult") {
        const call = m.toolCallId ? tools.get(m.toolCallId) : undefined;
        return t.fg("muted", call ? `[${call.name}: ${oneLine(JSON.stringify(call.arguments ?? {})).slice(0, 60)}]` : `[${m.toolName ?? "tool"}]`);
      }
      if (m.role === "bashExecution") return t.fg("dim", `[bash]: ${oneLine(m.command ?? "")}`);
      return t.fg("dim", `[${m.role}]`);
    }
    case "custom_message":
      return t.fg("customMessageLabel", `[${x.customType}]: `) + oneLine(textOf(x.content));
    case "compaction":
      return t.fg("borderAccent", `[compaction: ${Math.round((x.tokensBefore ?? 0) / 1000)}k tokens]`);
    case "branch_summary":
      return t.fg("warning", "[branch summary]: ") + oneLine(x.summary ?? "");
    case "model_change":
      return t.fg("dim", `[model: ${x.modelId}]`);
    case "thinking_level_change":
      return t.fg("dim", `[thinking: ${x.thinkingLevel}]`);
    case "session_info":
      return t.fg("dim", `[name: ${x.name ?? ""}]`);
    case "label":
      return t.fg("dim", `[label: ${x.label ?? "(cleared)"}]`);
    default:
      return t.fg("dim", `[${e.type}${x.customType ? `: ${x.customType}` : ""}]`);
  }
}

export interface TreeList extends Component {
  onSelect?: (entryId: string) => void;
  onCancel?: () => void;
  onCopy?: (text: string | undefined) => void;
  onLabelEdit?: (entryId: string, currentLabel: string | undefined) => void;
  getSearchQuery(): string;
  getSelectedNode(): SessionTreeNode | undefined;
  getFilterMode(): FilterMode;
  updateNodeLabel(entryId: string, label: string | undefined, labelTimestamp?: string): void;
  copySelected(): void;
  handleInput(data: string): void;
}

class EntryTree implements TreeList {
  onSelect?: (entryId: string) => void;
  onCancel?: () => void;
  onCopy?: (text: string | undefined) => void;
  onLabelEdit?: (entryId: string, currentLabel: string | undefined) => void;
  private readonly rows: Row[] = [];
  private shown: Row[] = [];
  private selected = 0;
  private query = "";
  private readonly activePath = new Set<string>();
  private readonly tools = new Map<string, { name: string; arguments: unknown }>();
  private readonly parents = new Map<string, string | null>();

  constructor(
    tree: SessionTreeNode[],
    private readonly leafId: string | null,
    private readonly maxRows: number,
    initialSelectedId?: string,
    private filter: FilterMode = "default",
  ) {
    if (!Array.isArray(tree)) throw new TypeError("TreeSelectorComponent: tree must be the session's tree (SessionManager.getTree())");
    if (!FILTERS.includes(filter)) throw new TypeError(`TreeSelectorComponent: filter mode must be one of ${FILTERS.join(", ")} (got ${JSON.stringify(filter)})`);
    const parents = this.parents;
    // depth-first, iteratively (long sessions are deep chains); a chain of single children stays at one indent
    const stack: Array<{ node: SessionTreeNode; indent: number; connector: string; parent: string | null }> = [];
    const pushChildren = (kids: SessionTreeNode[], indent: number, parent: string | null) => {
      const many = kids.length > 1;
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i]!, indent: many ? indent + 1 : indent, connector: many ? (i === kids.length - 1 ? "└─ " : "├─ ") : "", parent });
    };
    pushChildren(tree, tree.length > 1 ? -1 : 0, null);
    while (stack.length) {
      const { node, indent, connector, parent } = stack.pop()!;
      this.rows.push({ node, indent: Math.max(0, indent), connector: tree.length > 1 && indent <= 0 ? "" : connector });
      parents.set(node.entry.id, parent);
      const m = (node.entry as any).message;
      if (node.entry.type === "message" && m?.role === "assistant" && Array.isArray(m.content)) {
        for (const c of m.content) if (c?.type === "toolCall") this.tools.set(c.id, { name: c.name, arguments: c.arguments });
      }
      pushChildren(node.children ?? [], indent, node.entry.id);
    }
    for (let id: string | null | undefined = leafId; id; id = parents.get(id)) this.activePath.add(id);
    this.apply(initialSelectedId ?? leafId ?? undefined);
  }

  private visible(r: Row): boolean {
    const e = r.node.entry as any;
    if (e.type === "usage") return false;
    const isLeaf = e.id === this.leafId;
    if (e.type === "message" && e.message?.role === "assistant" && !isLeaf) {
      const m = e.message;
      if (!oneLine(textOf(m.content)) && (!m.stopReason || m.stopReason === "stop" || m.stopReason === "toolUse")) return false;
    }
    const user = e.type === "message" && e.message?.role === "user";
    switch (this.filter) {
      case "user-only":
        if (!user) return false;
        break;
      case "no-tools":
        if (BOOKKEEPING.has(e.type) || (e.type === "message" && e.message?.role === "toolResult")) return false;
        break;
      case "labeled-only":
        if (r.node.label === undefined) return false;
        break;
      case "all":
        break;
      default:
        if (BOOKKEEPING.has(e.type)) return false;
    }
    const words = this.query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return true;
    const hay = `${r.node.label ?? ""} ${piTui().stripTerminalSequences(describe(r.node.entry, this.tools))}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  }

  /** Re-filter, keeping `keepId` (else the selected entry) selected, or its nearest shown ancestor. */
  private apply(keepId?: string): void {
    const keep = keepId ?? this.shown[this.selected]?.node.entry.id;
    this.shown = this.rows.filter((r) => this.visible(r));
    const at = new Map(this.shown.map((r, i) => [r.node.entry.id, i]));
    let i: number | undefined;
    for (let id: string | null | undefined = keep; id && i === undefined; id = this.parents.get(id)) i = at.get(id);
    this.selected = i ?? Math.max(0, this.shown.length - 1);
  }

  invalidate(): void {}
  getSearchQuery(): string {
    return this.query;
  }
  getFilterMode(): FilterMode {
    return this.filter;
  }
  getSelectedNode(): SessionTreeNode | undefined {
    return this.shown[this.selected]?.node;
  }
  updateNodeLabel(entryId: string, label: string | undefined, labelTimestamp?: string): void {
    const r = this.rows.find((x) => x.node.entry.id === entryId);
    if (!r) return;
    r.node.label = label;
    r.node.labelTimestamp = label === undefined ? undefined : (labelTimestamp ?? new Date().toISOString());
  }
  copySelected(): void {
    const n = this.getSelectedNode();
    this.onCopy?.(n ? piTui().stripTerminalSequences(describe(n.entry, this.tools)) : undefined);
  }

  render(width: number): string[] {
    const t = theme();
    const status = t.fg("muted", this.filter === "default" ? "" : ` [${this.filter}]`);
    if (!this.shown.length) return [fit(t.fg("muted", "  No entries found"), width), fit(t.fg("muted", "  (0/0)") + status, width)];
    const out: string[] = [];
    const [start, end] = windowOf(this.selected, this.shown.length, this.maxRows);
    for (let i = start; i < end; i++) {
      const r = this.shown[i]!;
      const sel = i === this.selected;
      const prefix = "   ".repeat(Math.max(0, r.indent - (r.connector ? 1 : 0))) + r.connector;
      const mark = this.activePath.has(r.node.entry.id) ? t.fg("accent", "• ") : "";
      const label = r.node.label ? t.fg("warning", `[${r.node.label}] `) : "";
      const body = t.fg("dim", prefix) + mark + label + describe(r.node.entry, this.tools);
      const line = fit((sel ? t.fg("accent", "› ") : "  ") + body, width);
      out.push(sel ? t.bg("selectedBg", line) : line);
    }
    out.push(fit(t.fg("muted", `  (${this.selected + 1}/${this.shown.length})`) + status, width));
    return out;
  }

  private setFilter(mode: FilterMode): void {
    this.filter = mode;
    this.apply();
  }

  handleInput(data: string): void {
    const n = this.shown.length;
    if (keyIs(data, "tui.select.up")) this.selected = n ? (this.selected + n - 1) % n : 0;
    else if (keyIs(data, "tui.select.down")) this.selected = n ? (this.selected + 1) % n : 0;
    else if (keyIs(data, "tui.select.pageUp") || keyIs(data, "tui.editor.cursorLeft")) this.selected = Math.max(0, this.selected - this.maxRows);
    else if (keyIs(data, "tui.select.pageDown") || keyIs(data, "tui.editor.cursorRight")) this.selected = Math.max(0, Math.min(n - 1, this.selected + this.maxRows));
    else if (keyIs(data, "tui.select.confirm")) {
      const r = this.shown[this.selected];
      if (r) this.onSelect?.(r.node.entry.id);
    } else if (keyIs(data, "tui.select.cancel")) {
      if (this.query) {
        this.query = "";
        this.apply();
      } else this.onCancel?.();
    } else if (keyIs(data, "app.tree.filter.default")) this.setFilter("default");
    else if (keyIs(data, "app.tree.filter.cycleForward")) this.setFilter(FILTERS[(FILTERS.indexOf(this.filter) + 1) % FILTERS.length]!);
    else if (keyIs(data, "app.tree.filter.cycleBackward")) this.setFilter(FILTERS[(FILTERS.indexOf(this.filter) + FILTERS.length - 1) % FILTERS.length]!);
    else if (FILTER_KEYS.some(([id]) => keyIs(data, id))) {
      const mode = FILTER_KEYS.find(([id]) => keyIs(data, id))![1];
      this.setFilter(this.filter === mode ? "default" : mode);
    } else if (keyIs(data, "tui.editor.deleteCharBackward")) {
      if (this.query) {
        this.query = this.query.slice(0, -1);
        this.apply();
      }
    } else if (keyIs(data, "app.tree.editLabel")) {
      const r = this.shown[this.selected];
      if (r) this.onLabelEdit?.(r.node.entry.id, r.node.label);
    } else if (keyIs(data, "app.message.copy")) this.copySelected();
    else if (data.length > 0 && ![...data].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 0x7f)) {
      this.query += data;
      this.apply();
    }
  }
}

export interface TreeSelectorComponent extends Container {
  onCopy?: (text: string | undefined) => void;
  focused: boolean;
  readonly capturesViewportInput: boolean;
  handleInput(data: string): void;
  getTreeList(): TreeList;
}

export const TreeSelectorComponent: new (
  tree: SessionTreeNode[],
  currentLeafId: string | null,
  terminalHeight: number,
  onSelect: (entryId: string) => void,
  onCancel: () => void,
  onLabelChange?: (entryId: string, label: string | undefined) => void,
  initialSelectedId?: string,
  initialFilterMode?: FilterMode,
) => TreeSelectorComponent = lazyClass("TreeSelectorComponent", () => {
  const { Container: PiContainer, Input: PiInput, Spacer } = piTui();
  class TreeSelector extends PiContainer {
    onCopy?: (text: string | undefined) => void;
    private readonly list: EntryTree;
    private readonly body = new PiContainer();
    private labelInput: Input | null = null;
    private _focused = false;

    constructor(
      tree: SessionTreeNode[],
      currentLeafId: string | null,
      terminalHeight: number,
      onSelect: (entryId: string) => void,
      onCancel: () => void,
      private readonly onLabelChange?: (entryId: string, label: string | undefined) => void,
      initialSelectedId?: string,
      initialFilterMode?: FilterMode,
    ) {
      super();
      this.list = new EntryTree(tree, currentLeafId, Math.max(5, Math.floor((terminalHeight || 24) / 2)), initialSelectedId, initialFilterMode ?? "default");
      this.list.onSelect = onSelect;
      this.list.onCancel = onCancel;
      this.list.onCopy = (text) => this.onCopy?.(text);
      this.list.onLabelEdit = (id, label) => this.editLabel(id, label);
      const t = theme();
      const line = (f: () => string): Component => ({ render: (w) => [fit(f(), w)], invalidate() {} });
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder());
      this.addChild(line(() => "  " + t.bold("Session Tree")));
      this.addChild(
        line(() =>
          t.fg("muted", `  ↑/↓ move · ${keyText("tui.select.confirm")} select · ${keyText("app.tree.editLabel")} label · ${keyText("app.tree.filter.cycleForward")} filter · ${keyText("tui.select.cancel")} cancel`),
        ),
      );
      this.addChild(line(() => `  ${t.fg("muted", "Type to search:")} ${t.fg("accent", this.list.getSearchQuery())}`));
      this.addChild(new DynamicBorder());
      this.addChild(new Spacer(1));
      this.body.addChild(this.list);
      this.addChild(this.body);
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder());
      // nothing to navigate: the selector closes itself
      if (!tree.length) setTimeout(() => onCancel(), 100);
    }

    get focused(): boolean {
      return this._focused;
    }
    set focused(v: boolean) {
      this._focused = v;
      if (this.labelInput) this.labelInput.focused = v;
    }
    get capturesViewportInput(): boolean {
      return this.labelInput === null;
    }

    private editLabel(entryId: string, current: string | undefined): void {
      const input = new PiInput();
      input.setValue(current ?? "");
      input.handleInput("\x05"); // the cursor to the end
      input.focused = this._focused;
      const close = () => {
        this.labelInput = null;
        this.body.clear();
        this.body.addChild(this.list);
      };
      input.onSubmit = (value) => {
        const label = value.trim() || undefined;
        this.list.updateNodeLabel(entryId, label);
        this.onLabelChange?.(entryId, label);
        close();
      };
      input.onEscape = close;
      this.labelInput = input;
      const t = theme();
      this.body.clear();
      this.body.addChild({ render: (w) => [fit("  " + t.bold("Label") + t.fg("muted", ` (${keyText("tui.select.confirm")} save · empty clears · ${keyText("tui.select.cancel")} cancel)`), w)], invalidate() {} });
      this.body.addChild(input);
    }

    handleInput(data: string): void {
      if (this.labelInput) {
        if (keyIs(data, "tui.select.cancel")) return this.labelInput.onEscape?.();
        return this.labelInput.handleInput(data);
      }
      this.list.handleInput(data);
    }

    getTreeList(): TreeList {
      return this.list;
    }
  }
  return TreeSelector as never;
});
