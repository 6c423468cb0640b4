/**
 * pi 1.6's TreeSelectorComponent as a pi-tui component, on this project's session tree
 * (SessionManager.getTree(): entries with their children and labels). The list is the TUI's /tree
 * model (tree-model.ts: the same rows, filters, search, folding and keys); this file frames it as
 * pi 1.6 does (borders, title, search line, the "›" cursor, the position line), edits a label in
 * an Input (Shift+L), and reports Enter as onSelect(entryId); Escape clears the search, then cancels.
 */
import type { Component, Container, Input } from "@earendil-works/pi-tui";
import type { SessionTreeNode } from "../../../core/stores/index.js";
import { DynamicBorder } from "../pi-theme.js";
import { TREE_FILTERS, TreeModel, type TreeFilter } from "../tree-model.js";
import { fit, keyIs, keyText, lazyClass, piTui, theme, windowOf } from "./selector-kit.js";

export type FilterMode = TreeFilter;

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

/** The list part: the shared tree model, drawn with pi 1.6's cursor, selection colour and position line. */
class EntryTree implements TreeList {
  onSelect?: (entryId: string) => void;
  onCancel?: () => void;
  onCopy?: (text: string | undefined) => void;
  onLabelEdit?: (entryId: string, currentLabel: string | undefined) => void;
  private readonly model: TreeModel;

  constructor(
    tree: SessionTreeNode[],
    leafId: string | null,
    private readonly maxRows: number,
    initialSelectedId?: string,
    filter: FilterMode = "default",
  ) {
    if (!Array.isArray(tree)) throw new TypeError("TreeSelectorComponent: tree must be the session's tree (SessionManager.getTree())");
    const modes = TREE_FILTERS.map((f) => f.mode);
    if (!modes.includes(filter)) throw new TypeError(`TreeSelectorComponent: filter mode must be one of ${modes.join(", ")} (got ${JSON.stringify(filter)})`);
    this.model = new TreeModel(tree, leafId, filter, initialSelectedId);
  }

  invalidate(): void {}
  getSearchQuery(): string {
    return this.model.query;
  }
  getFilterMode(): FilterMode {
    return this.model.filter;
  }
  getSelectedNode(): SessionTreeNode | undefined {
    return this.model.selectedRow?.node;
  }
  updateNodeLabel(entryId: string, label: string | undefined, labelTimestamp?: string): void {
    this.model.setLabel(entryId, label, labelTimestamp);
  }
  copySelected(): void {
    const r = this.model.selectedRow;
    this.onCopy?.(r ? this.model.copyText(r.entry) : undefined);
  }

  render(width: number): string[] {
    const t = theme();
    const m = this.model;
    const status = t.fg("muted", m.marks());
    if (!m.shown.length) return [fit(t.fg("muted", "  No entries found"), width), fit(t.fg("muted", "  (0/0)") + status, width)];
    const out: string[] = [];
    const [start, end] = windowOf(m.selected, m.shown.length, this.maxRows);
    for (let i = start; i < end; i++) {
      const sel = i === m.selected;
      const line = fit((sel ? t.fg("accent", "› ") : "  ") + m.drawRow(m.shown[i]!, t, sel), width);
      out.push(sel ? t.bg("selectedBg", line) : line);
    }
    out.push(fit(t.fg("muted", `  (${m.selected + 1}/${m.shown.length})`) + status, width));
    return out;
  }

  handleInput(data: string): void {
    const r = this.model.selectedRow;
    if (keyIs(data, "tui.select.confirm")) {
      if (r) this.onSelect?.(r.id);
    } else if (keyIs(data, "app.tree.editLabel")) {
      if (r) this.onLabelEdit?.(r.id, r.node.label);
    } else if (keyIs(data, "app.message.copy")) this.copySelected();
    else if (keyIs(data, "tui.select.cancel") && !this.model.query) this.onCancel?.();
    else this.model.handleKey((id) => keyIs(data, id), data, this.maxRows);
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
