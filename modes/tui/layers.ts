/**
 * Layers on the focus stack above the editor: list selectors (with search), confirm, text
 * input and multi-line editor dialogs, and hosted extension components. A layer renders to
 * lines (in the bottom panel in place of the editor, or as a centred overlay) and takes every
 * key while it is on top. Dialogs with a deadline show a countdown in their footer.
 */
import { disposeComponent, renderComponent, setFocused, type OverlayOptions } from "./component-host.js";
import { fuzzyFilter } from "../../core/stores/index.js";
import { Editor } from "./editor.js";
import type { KeyPress, Keybindings } from "./keys.js";
import type { Theme } from "./theme.js";
import { fitLine, padToWidth, sanitize, truncate, visibleWidth, wrapText } from "./text.js";

export interface LayerEnv {
  theme: Theme;
  keys: Keybindings;
  requestRender(): void;
}

export interface Layer {
  placement: "panel" | "overlay";
  /** Overlay size hints (columns / rows, or fractions of the screen). */
  overlay?: { width?: number | string; maxHeight?: number | string; anchor?: string };
  /** Milliseconds since epoch when the dialog resolves by itself (drawn as a countdown). */
  deadline?: number;
  render(width: number, maxRows: number, env: LayerEnv): string[];
  handleKey(k: KeyPress, env: LayerEnv): void;
  /** Called when the layer leaves the stack. */
  dispose?(): void;
}

function countdown(deadline: number | undefined, what: string): string {
  if (deadline === undefined) return "";
  const s = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  return ` · ${what} in ${s}s`;
}

/** A dialog title: the first line as a rule "── Title ────", further lines as text below it. */
export function titleBlock(title: string, width: number, theme: Theme): string[] {
  const [first, ...rest] = String(title ?? "").split("\n");
  return [titleRule(first ?? "", width, theme), ...(rest.length ? wrapText(sanitize(rest.join("\n")), width) : [])];
}

/** Title rule: "── Title ────". */
export function titleRule(title: string, width: number, theme: Theme, token = "borderAccent"): string {
  const t = truncate(sanitize(title, false), Math.max(1, width - 4));
  const rest = Math.max(0, width - visibleWidth(t) - 4);
  return theme.fg(token, "── ") + theme.bold(t) + theme.fg(token, " " + "─".repeat(rest));
}

export interface SelectItem<T> {
  label: string;
  description?: string;
  value: T;
  /** Text searched (default label + description). */
  searchText?: string;
  /** The row drawn by its owner (a shared list model), in place of label and description; `width` leaves out the cursor. */
  draw?(width: number, selected: boolean): string;
}

export interface SelectOptions<T> {
  title: string;
  items: SelectItem<T>[];
  onDone(value: T | undefined): void;
  search?: boolean;
  initialIndex?: number;
  hint?: string;
  /** Wrap a long hint over several lines (else it is cut at the width). */
  wrapHint?: boolean;
  maxVisible?: number;
  /** Keep the selection in the middle of the list where the rows allow (else the list scrolls only at its edges). */
  centered?: boolean;
  /** Extra keys; return true when handled. */
  onKey?(k: KeyPress, item: SelectItem<T> | undefined, layer: SelectLayer<T>): boolean;
  /** Custom filtering (default fuzzy over searchText). */
  filter?(items: SelectItem<T>[], query: string): SelectItem<T>[];
  placement?: "panel" | "overlay";
  /** The key hint under the title, the search as "Type to search:" and an "(n/m)" line under the list (pi 1.6's tree frame). */
  hintAbove?: boolean;
  /** The selected row's marker (default "❯ "; two columns wide). */
  cursor?: string;
  deadline?: number;
  /** What happens at the deadline (for the countdown text). */
  deadlineLabel?: string;
}

export class SelectLayer<T> implements Layer {
  placement: "panel" | "overlay";
  deadline?: number;
  items: SelectItem<T>[];
  private filtered: SelectItem<T>[];
  index: number;
  query = "";
  private top = 0;
  /** How many rows the last frame showed (a page for keys that page). */
  pageSize = 10;
  private done = false;
  title: string;
  hint: string | undefined;

  constructor(private opts: SelectOptions<T>) {
    this.placement = opts.placement ?? "panel";
    this.deadline = opts.deadline;
    this.items = opts.items;
    this.filtered = opts.items;
    this.index = Math.max(0, Math.min(opts.initialIndex ?? 0, opts.items.length - 1));
    this.title = opts.title;
    this.hint = opts.hint;
  }

  get selected(): SelectItem<T> | undefined {
    return this.filtered[this.index];
  }

  /** The items the search leaves, in the order shown. */
  get visible(): readonly SelectItem<T>[] {
    return this.filtered;
  }

  setItems(items: SelectItem<T>[], keepValue = true): void {
    const cur = keepValue ? this.selected?.value : undefined;
    this.items = items;
    this.applyFilter();
    if (cur !== undefined) {
      const i = this.filtered.findIndex((x) => x.value === cur);
      if (i >= 0) this.index = i;
    }
  }

  setQuery(q: string): void {
    this.query = q;
    this.applyFilter();
  }

  private applyFilter(): void {
    const q = this.query.trim();
    this.filtered = !q
      ? this.items
      : this.opts.filter
        ? this.opts.filter(this.items, q)
        : fuzzyFilter(this.items, q, (it) => it.searchText ?? `${it.label} ${it.description ?? ""}`);
    this.index = Math.min(this.index, Math.max(0, this.filtered.length - 1));
    if (q) this.index = 0;
  }

  finish(value: T | undefined): void {
    if (this.done) return;
    this.done = true;
    this.opts.onDone(value);
  }

  handleKey(k: KeyPress, env: LayerEnv): void {
    const kb = env.keys;
    if (this.opts.onKey?.(k, this.selected, this)) return;
    const n = this.filtered.length;
    const page = Math.max(1, (this.opts.maxVisible ?? 10) - 1);
    if (kb.matches(k, "tui.select.cancel") || k.id === "escape") return this.finish(undefined);
    if (kb.matches(k, "tui.select.confirm")) {
      const it = this.selected;
      if (it) this.finish(it.value);
      return;
    }
    if (kb.matches(k, "tui.select.up") || k.id === "ctrl+p") this.index = n ? (this.index - 1 + n) % n : 0;
    else if (kb.matches(k, "tui.select.down") || k.id === "ctrl+n") this.index = n ? (this.index + 1) % n : 0;
    else if (kb.matches(k, "tui.select.pageUp")) this.index = Math.max(0, this.index - page);
    else if (kb.matches(k, "tui.select.pageDown")) this.index = Math.min(Math.max(0, n - 1), this.index + page);
    else if (k.id === "home") this.index = 0;
    else if (k.id === "end") this.index = Math.max(0, n - 1);
    else if (this.opts.search && k.id === "backspace") this.setQuery(Array.from(this.query).slice(0, -1).join(""));
    else if (this.opts.search && k.id === "ctrl+u") this.setQuery("");
    else if (this.opts.search && k.text) this.setQuery(this.query + k.text);
    else if (!this.opts.search && k.text && /^[1-9]$/.test(k.text) && Number(k.text) <= n) {
      this.index = Number(k.text) - 1;
      const it = this.selected;
      if (it) this.finish(it.value);
    }
  }

  render(width: number, maxRows: number, env: LayerEnv): string[] {
    const t = env.theme;
    if (this.opts.hintAbove) return this.renderHintAbove(width, maxRows, t);
    const out: string[] = titleBlock(this.title, width, t);
    if (this.opts.search) out.push(t.fg("accent", "› ") + sanitize(this.query, false) + "\x1b[7m \x1b[27m" + (this.query ? "" : t.fg("dim", " type to search")));
    const n = this.filtered.length;
    const hint = this.hint ?? `↑↓ move · Enter select · Esc cancel${this.opts.search ? " · type to search" : ""}`;
    const position = () => (n > maxVisible ? ` (${this.index + 1}/${n})` : "");
    // A wrapped hint takes its lines from the list (the position goes first, so it is never cut).
    const hintRows = this.opts.wrapHint ? wrapText(sanitize(`(${n}/${n}) ${hint}`, false), width).length : 1;
    const maxVisible = Math.max(1, Math.min(this.opts.maxVisible ?? 10, maxRows - out.length - 1 - hintRows));
    out.push(...this.rows(width, maxVisible, t));
    const tail = countdown(this.deadline, this.opts.deadlineLabel ?? "closes");
    if (this.opts.wrapHint) for (const l of wrapText(sanitize(`${position().trim()} ${hint}${tail}`.trim(), false), width)) out.push(t.fg("dim", l));
    else out.push(t.fg("dim", truncate(hint + position() + tail, width)));
    return out;
  }

  /** The frame with the key hint above the list: title, hint, the search as "Type to search:", the rows, then "(n/m)". */
  private renderHintAbove(width: number, maxRows: number, t: Theme): string[] {
    const out: string[] = titleBlock(this.title, width, t);
    const hint = (this.hint ?? "↑↓ move · Enter select · Esc cancel") + countdown(this.deadline, this.opts.deadlineLabel ?? "closes");
    for (const l of wrapText(sanitize(hint, false), Math.max(10, width - 2))) out.push("  " + t.fg("dim", l));
    if (this.opts.search) out.push(truncate("  " + t.fg("muted", "Type to search: ") + sanitize(this.query, false) + "\x1b[7m \x1b[27m", width));
    out.push("");
    const n = this.filtered.length;
    out.push(...this.rows(width, Math.max(1, Math.min(this.opts.maxVisible ?? 10, maxRows - out.length - 1)), t));
    out.push(t.fg("muted", `  (${n ? this.index + 1 : 0}/${n})`));
    return out;
  }

  /** The window of rows that keeps the selection in view, `maxVisible` at most. */
  private rows(width: number, maxVisible: number, t: Theme): string[] {
    const out: string[] = [];
    const n = this.filtered.length;
    this.pageSize = maxVisible;
    if (this.opts.centered) this.top = Math.max(0, this.index - Math.floor(maxVisible / 2));
    if (this.index < this.top) this.top = this.index;
    if (this.index >= this.top + maxVisible) this.top = this.index - maxVisible + 1;
    if (this.top > Math.max(0, n - maxVisible)) this.top = Math.max(0, n - maxVisible);
    if (!n) out.push(t.fg("warning", "  (nothing matches)"));
    const shown = this.filtered.slice(this.top, this.top + maxVisible);
    const labelCap = shown.some((i) => i.description) ? Math.floor(width * 0.6) : width - 2;
    const labelW = Math.min(Math.max(...shown.map((i) => visibleWidth(sanitize(i.label, false))), 0), labelCap);
    for (let i = this.top; i < Math.min(n, this.top + maxVisible); i++) {
      const it = this.filtered[i]!;
      const sel = i === this.index;
      const prefix = sel ? t.fg("accent", this.opts.cursor ?? "❯ ") : "  ";
      if (it.draw) {
        const line = truncate(prefix + it.draw(width - 2, sel), width);
        out.push(sel ? t.bg("selectedBg", padToWidth(line, width)) : line);
        continue;
      }
      let label = truncate(sanitize(it.label, false), labelW);
      if (sel) label = t.bold(t.fg("accent", label));
      let line = prefix + padToWidth(label, labelW);
      if (it.description) line += "  " + t.fg("muted", sanitize(it.description, false));
      line = truncate(line, width);
      out.push(sel ? t.bg("selectedBg", padToWidth(line, width)) : line);
    }
    return out;
  }
}

export class ConfirmLayer implements Layer {
  placement: "panel" | "overlay" = "panel";
  private yes = true;
  private done = false;
  constructor(
    private title: string,
    private message: string,
    private onDone: (v: boolean) => void,
    public deadline?: number,
  ) {}

  finish(v: boolean): void {
    if (this.done) return;
    this.done = true;
    this.onDone(v);
  }

  handleKey(k: KeyPress, env: LayerEnv): void {
    if (k.id === "y" || k.id === "shift+y") return this.finish(true);
    if (k.id === "n" || k.id === "shift+n" || env.keys.matches(k, "tui.select.cancel") || k.id === "escape") return this.finish(false);
    if (env.keys.matches(k, "tui.select.confirm")) return this.finish(this.yes);
    if (["left", "right", "up", "down", "tab", "shift+tab"].includes(k.id)) this.yes = !this.yes;
  }

  render(width: number, _maxRows: number, env: LayerEnv): string[] {
    const t = env.theme;
    const out = titleBlock(this.title, width, t);
    if (this.message) out.push(...wrapText(sanitize(this.message), width));
    const btn = (label: string, on: boolean) => (on ? t.inverse(t.bold(` ${label} `)) : ` ${label} `);
    out.push(btn("Yes", this.yes) + "  " + btn("No", !this.yes));
    out.push(t.fg("dim", truncate(`y/n · ←→ choose · Enter confirm · Esc no${countdown(this.deadline, "answers no")}`, width)));
    return out;
  }
}

export class InputLayer implements Layer {
  placement: "panel" | "overlay" = "panel";
  readonly editor: Editor;
  private done = false;
  constructor(
    private title: string,
    private onDone: (v: string | undefined) => void,
    keys: Keybindings,
    private opts: { placeholder?: string; prefill?: string; multiline?: boolean; deadline?: number; message?: string } = {},
  ) {
    this.editor = new Editor(keys);
    if (opts.prefill) this.editor.setText(opts.prefill);
  }
  get deadline(): number | undefined {
    return this.opts.deadline;
  }

  finish(v: string | undefined): void {
    if (this.done) return;
    this.done = true;
    this.onDone(v);
  }

  handleKey(k: KeyPress, env: LayerEnv): void {
    if (env.keys.matches(k, "tui.select.cancel") || k.id === "escape") return this.finish(undefined);
    if (env.keys.matches(k, "tui.input.submit")) return this.finish(this.editor.getExpandedText());
    if (!this.opts.multiline && env.keys.matches(k, "tui.input.newLine")) return;
    this.editor.handleKey(k);
  }

  render(width: number, maxRows: number, env: LayerEnv): string[] {
    const t = env.theme;
    const out = titleBlock(this.title, width, t);
    if (this.opts.message) out.push(...wrapText(sanitize(this.opts.message), width));
    const rows = this.opts.multiline ? Math.max(3, Math.min(15, maxRows - out.length - 1)) : 3;
    const r = this.editor.render(width - 2, rows, true, this.opts.placeholder);
    for (const l of r.lines) out.push(t.fg("accent", "› ") + l);
    const hint = this.opts.multiline ? "Enter submit · Ctrl+J new line · Esc cancel" : "Enter submit · Esc cancel";
    out.push(t.fg("dim", truncate(hint + countdown(this.deadline, "closes"), width)));
    return out;
  }
}

/** An extension component (`render(width)`, optional `handleInput(data)`) on the focus stack. */
/**
 * A pi-tui component as a dialog: in the bottom panel (inline) or as an overlay placed by
 * pi-tui's overlay options (drawn as the component draws itself, no frame of ours). It has the
 * keyboard (pi-tui's `focused`) while it is the top layer.
 */
export class ComponentLayer implements Layer {
  placement: "panel" | "overlay";
  overlay?: Layer["overlay"];
  /** pi-tui's overlay options (anchor, width, maxHeight, margin, row/col, offsets). */
  readonly overlayOptions: OverlayOptions | undefined;
  readonly frameless = true;
  hidden = false;
  constructor(
    public component: any,
    overlay: boolean,
    overlayOptions?: Record<string, unknown>,
    private onKeyRaw?: (data: string) => void,
  ) {
    this.placement = overlay ? "overlay" : "panel";
    this.overlayOptions = overlayOptions as OverlayOptions | undefined;
    if (overlayOptions) this.overlay = { width: overlayOptions.width as any, maxHeight: overlayOptions.maxHeight as any, anchor: overlayOptions.anchor as any };
    setFocused(component, true);
  }
  handleKey(k: KeyPress): void {
    if (typeof this.component?.handleInput === "function") this.component.handleInput(k.sequence);
    else this.onKeyRaw?.(k.sequence);
  }
  render(width: number, maxRows: number): string[] {
    const lines = renderComponent(this.component, width);
    return lines.length > maxRows ? lines.slice(0, maxRows) : lines;
  }
  dispose(): void {
    setFocused(this.component, false);
    disposeComponent(this.component);
  }
}

/** Draw lines inside a rounded border (overlays). */
export function frame(lines: string[], width: number, theme: Theme, title?: string): string[] {
  const inner = Math.max(1, width - 4);
  const top = title
    ? theme.fg("borderAccent", "╭─ ") + theme.bold(truncate(sanitize(title, false), Math.max(1, inner - 2))) + theme.fg("borderAccent", " " + "─".repeat(Math.max(0, width - 5 - visibleWidth(truncate(sanitize(title, false), Math.max(1, inner - 2))))) + "╮")
    : theme.fg("borderAccent", "╭" + "─".repeat(width - 2) + "╮");
  const out = [top];
  for (const l of lines) out.push(theme.fg("borderAccent", "│") + " " + padToWidth(fitLine(l, inner), inner) + " " + theme.fg("borderAccent", "│"));
  out.push(theme.fg("borderAccent", "╰" + "─".repeat(width - 2) + "╯"));
  return out;
}
