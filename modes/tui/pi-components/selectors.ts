/**
 * pi 1.6's list selectors as pi-tui components (constructor signatures and callbacks of its
 * dist/modes/interactive/components/*.d.ts), on this project's data: ThinkingSelectorComponent,
 * ThemeSelectorComponent (our themes), ShowImagesSelectorComponent and
 * UserMessageSelectorComponent. The model and OAuth selectors are in search-selectors.ts. Each
 * class is built on first use (see selector-kit.ts).
 */
import type { Component, Container, SelectItem, SelectList } from "@earendil-works/pi-tui";
import { DynamicBorder, getSelectListTheme } from "../pi-theme.js";
import { discoverThemes } from "../theme.js";
import { getAgentDir } from "../../../plugins/extensions/helpers.js";
import { fit, keyIs, keyText, lazyClass, moveSelection, piTui, row, theme, windowOf } from "./selector-kit.js";

// ---- ThinkingSelectorComponent ----------------------------------------------------------------

const LEVEL_TEXT: Record<string, string> = {
  off: "No reasoning",
  minimal: "Very brief reasoning (~1k tokens)",
  low: "Light reasoning (~2k tokens)",
  medium: "Moderate reasoning (~8k tokens)",
  high: "Deep reasoning (~16k tokens)",
  xhigh: "Extra-high reasoning (~32k tokens)",
  max: "Maximum reasoning",
};
const LIST_LAYOUT = { minPrimaryColumnWidth: 12, maxPrimaryColumnWidth: 32 };

export interface ThinkingSelectorComponent extends Container {
  focused: boolean;
  handleInput(data: string): void;
  getSelectList(): SelectList;
}

export const ThinkingSelectorComponent: new (
  currentLevel: string,
  availableLevels: string[],
  onSelect: (level: any) => void,
  onCancel: () => void,
  onSelectAsDefault?: (level: any) => void,
  defaultThinkingLevel?: string,
) => ThinkingSelectorComponent = lazyClass("ThinkingSelectorComponent", () => {
  const { Container: PiContainer, Input: PiInput, SelectList: PiSelectList, Spacer, fuzzyFilter } = piTui();
  class ThinkingSelector extends PiContainer {
    private readonly search = new PiInput();
    private list: SelectList;
    private readonly listIndex: number;
    private readonly items: SelectItem[];
    private _focused = false;

    constructor(
      currentLevel: string,
      availableLevels: string[],
      private readonly onSelect: (level: any) => void,
      private readonly onCancel: () => void,
      private readonly onSelectAsDefault?: (level: any) => void,
      defaultThinkingLevel?: string,
    ) {
      super();
      if (!Array.isArray(availableLevels)) throw new TypeError("ThinkingSelectorComponent: availableLevels must be a list of thinking levels");
      this.items = availableLevels.map((level) => ({
        value: level,
        label: `${level === currentLevel ? "✓ " : "  "}${level}`,
        description: (LEVEL_TEXT[level] ?? level) + (level === defaultThinkingLevel ? " · default" : ""),
      }));
      const t = theme();
      this.addChild(new DynamicBorder());
      this.addChild(new Spacer(1));
      this.addChild(row("Thinking Level"));
      this.addChild(new Spacer(1));
      this.addChild(row(`${keyText("app.thinking.cycle")} cycles thinking levels in-session`));
      this.addChild(new Spacer(1));
      this.search.onSubmit = () => this.list.handleInput("\r");
      this.addChild(this.search);
      this.addChild(new Spacer(1));
      this.list = this.makeList(this.items, currentLevel);
      this.listIndex = this.children.length;
      this.addChild(this.list);
      this.addChild(new Spacer(1));
      const save = onSelectAsDefault ? ` · ${keyText("app.thinking.save")} to set as default` : "";
      this.addChild(row(t.fg("dim", `  ${keyText("tui.select.confirm")} to select${save} · ${keyText("tui.select.cancel")} to cancel`)));
      this.addChild(new DynamicBorder());
    }

    get focused(): boolean {
      return this._focused;
    }
    set focused(v: boolean) {
      this._focused = v;
      this.search.focused = v;
    }

    private makeList(items: SelectItem[], preselect: string | undefined): SelectList {
      const list = new PiSelectList(items, Math.max(1, items.length), getSelectListTheme(), LIST_LAYOUT);
      const i = items.findIndex((x) => x.value === preselect);
      if (i >= 0) list.setSelectedIndex(i);
      list.onSelect = (item) => this.onSelect(item.value);
      list.onCancel = () => this.onCancel();
      return list;
    }

    handleInput(data: string): void {
      if (this.onSelectAsDefault && keyIs(data, "app.thinking.save")) {
        const item = this.list.getSelectedItem();
        if (item) this.onSelectAsDefault(item.value);
        return;
      }
      if (["tui.select.up", "tui.select.down", "tui.select.confirm", "tui.select.cancel"].some((id) => keyIs(data, id))) return this.list.handleInput(data);
      const before = this.search.getValue();
      this.search.handleInput(data);
      const query = this.search.getValue();
      if (query === before) return;
      const items = query ? fuzzyFilter(this.items, query, (x) => `${x.value} ${x.description ?? ""}`) : this.items;
      this.list = this.makeList(items, this.list.getSelectedItem()?.value);
      this.children[this.listIndex] = this.list;
    }

    getSelectList(): SelectList {
      return this.list;
    }
  }
  return ThinkingSelector as never;
});

// ---- ThemeSelectorComponent and ShowImagesSelectorComponent -------------------------------------

/** The names of the themes the TUI offers: built-in dark and light, then the agent dir's and the project's theme files. */
export function availableThemeNames(cwd: string = process.cwd(), agentDir: string = getAgentDir()): string[] {
  return [...discoverThemes({ agentDir, cwd }).themes.keys()];
}

/** A bordered SelectList (the shape of the theme and show-images selectors). */
function borderedList(items: SelectItem[], max: number, selectedIndex: number, onSelect: (v: string) => void, onCancel: () => void, onChange?: (v: string) => void) {
  const { Container: PiContainer, SelectList: PiSelectList } = piTui();
  const box = new PiContainer();
  const list = new PiSelectList(items, max, getSelectListTheme(), LIST_LAYOUT);
  if (selectedIndex >= 0) list.setSelectedIndex(selectedIndex);
  list.onSelect = (item) => onSelect(item.value);
  list.onCancel = () => onCancel();
  if (onChange) list.onSelectionChange = (item) => onChange(item.value);
  box.addChild(new DynamicBorder());
  box.addChild(list);
  box.addChild(new DynamicBorder());
  return { box, list };
}

export interface ListSelector extends Container {
  getSelectList(): SelectList;
  handleInput(data: string): void;
}

export const ThemeSelectorComponent: new (currentTheme: string, onSelect: (themeName: string) => void, onCancel: () => void, onPreview: (themeName: string) => void) => ListSelector = lazyClass(
  "ThemeSelectorComponent",
  () => {
    const { Container: PiContainer } = piTui();
    class ThemeSelector extends PiContainer {
      private readonly list: SelectList;
      constructor(currentTheme: string, onSelect: (name: string) => void, onCancel: () => void, onPreview: (name: string) => void) {
        super();
        const names = availableThemeNames();
        const items = names.map((n) => ({ value: n, label: n, description: n === currentTheme ? "(current)" : undefined }));
        const { box, list } = borderedList(items, 10, names.indexOf(currentTheme), onSelect, onCancel, (v) => onPreview?.(v));
        this.list = list;
        for (const c of box.children) this.addChild(c);
      }
      handleInput(data: string): void {
        this.list.handleInput(data);
      }
      getSelectList(): SelectList {
        return this.list;
      }
    }
    return ThemeSelector as never;
  },
);

export const ShowImagesSelectorComponent: new (currentValue: boolean, onSelect: (show: boolean) => void, onCancel: () => void) => ListSelector = lazyClass("ShowImagesSelectorComponent", () => {
  const { Container: PiContainer } = piTui();
  class ShowImagesSelector extends PiContainer {
    private readonly list: SelectList;
    constructor(currentValue: boolean, onSelect: (show: boolean) => void, onCancel: () => void) {
      super();
      const items = [
        { value: "yes", label: "Yes", description: "Show images inline in terminal" },
        { value: "no", label: "No", description: "Show text placeholder instead" },
      ];
      const { box, list } = borderedList(items, 5, currentValue ? 0 : 1, (v) => onSelect(v === "yes"), onCancel);
      this.list = list;
      for (const c of box.children) this.addChild(c);
    }
    handleInput(data: string): void {
      this.list.handleInput(data);
    }
    getSelectList(): SelectList {
      return this.list;
    }
  }
  return ShowImagesSelector as never;
});

// ---- UserMessageSelectorComponent -------------------------------------------------------------

interface UserMessageItem {
  id: string;
  text: string;
  timestamp?: string;
}

export interface UserMessageList extends Component {
  readonly capturesViewportInput: boolean;
  onSelect?: (entryId: string) => void;
  onCancel?: () => void;
  handleInput(data: string): void;
}
export interface UserMessageSelectorComponent extends Container {
  getMessageList(): UserMessageList;
  handleInput(data: string): void;
}

const MESSAGE_ROWS = 10;

class MessageList implements UserMessageList {
  readonly capturesViewportInput = true;
  onSelect?: (entryId: string) => void;
  onCancel?: () => void;
  private selected: number;
  constructor(private readonly messages: UserMessageItem[], initialSelectedId?: string) {
    const i = initialSelectedId ? messages.findIndex((m) => m.id === initialSelectedId) : -1;
    this.selected = i >= 0 ? i : Math.max(0, messages.length - 1);
  }
  invalidate(): void {}
  render(width: number): string[] {
    const t = theme();
    if (!this.messages.length) return [fit(t.fg("muted", "  No user messages found"), width)];
    const out: string[] = [];
    const [start, end] = windowOf(this.selected, this.messages.length, MESSAGE_ROWS);
    for (let i = start; i < end; i++) {
      const sel = i === this.selected;
      const text = fit(this.messages[i]!.text.replace(/\s*\n\s*/g, " ").trim(), width - 2);
      out.push((sel ? t.fg("accent", "› ") : "  ") + (sel ? t.bold(text) : text), fit(t.fg("muted", `  Message ${i + 1} of ${this.messages.length}`), width), "");
    }
    if (start > 0 || end < this.messages.length) out.push(fit(t.fg("muted", `  (${this.selected + 1}/${this.messages.length})`), width));
    return out;
  }
  handleInput(data: string): void {
    const moved = moveSelection(data, this.selected, this.messages.length, MESSAGE_ROWS);
    if (moved !== undefined) this.selected = moved;
    else if (keyIs(data, "tui.select.confirm")) {
      const m = this.messages[this.selected];
      if (m) this.onSelect?.(m.id);
    } else if (keyIs(data, "tui.select.cancel")) this.onCancel?.();
  }
}

export const UserMessageSelectorComponent: new (messages: UserMessageItem[], onSelect: (entryId: string) => void, onCancel: () => void, initialSelectedId?: string) => UserMessageSelectorComponent = lazyClass(
  "UserMessageSelectorComponent",
  () => {
    const { Container: PiContainer, Spacer } = piTui();
    class UserMessageSelector extends PiContainer {
      private readonly list: MessageList;
      constructor(messages: UserMessageItem[], onSelect: (entryId: string) => void, onCancel: () => void, initialSelectedId?: string) {
        super();
        if (!Array.isArray(messages)) throw new TypeError("UserMessageSelectorComponent: messages must be a list of { id, text }");
        const t = theme();
        this.addChild(new Spacer(1));
        this.addChild(row(" " + t.bold("Fork from Message")));
        this.addChild(row(" " + t.fg("muted", "Select a user message to copy the active path up to that point into a new session")));
        this.addChild(new Spacer(1));
        this.addChild(new DynamicBorder());
        this.addChild(new Spacer(1));
        this.list = new MessageList(messages, initialSelectedId);
        this.list.onSelect = onSelect;
        this.list.onCancel = onCancel;
        this.addChild(this.list);
        this.addChild(new Spacer(1));
        this.addChild(new DynamicBorder());
        // nothing to choose from: the selector closes itself
        if (!messages.length) setTimeout(() => onCancel(), 100);
      }
      handleInput(data: string): void {
        this.list.handleInput(data);
      }
      getMessageList(): UserMessageList {
        return this.list;
      }
    }
    return UserMessageSelector as never;
  },
);
