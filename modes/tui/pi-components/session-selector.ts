/**
 * pi 1.6's SessionSelectorComponent as a pi-tui component, on this project's session list
 * (SessionManager.list / listAll give the SessionInfo it shows). Two loaders (the current
 * folder's sessions and all sessions; Tab switches), one row per session (name or first message,
 * message count, age; forks under their parent in the threaded order), typing searches (words,
 * "an exact phrase", re:<regex>), Ctrl+S cycles the order (threaded, recent, relevance),
 * Ctrl+N shows named sessions only, Ctrl+P shows paths, Ctrl+D deletes the selected file after a
 * confirmation, Ctrl+R renames it (when a renameSession option is given). Enter → onSelect(path).
 */
import type { Component, Container, Input } from "@earendil-works/pi-tui";
import type { SessionInfo, SessionListProgress } from "../../../core/stores/index.js";
import { DynamicBorder } from "../pi-theme.js";
import { SESSION_SORTS, deleteSessionFile, drawSessionRow, listSessions, nextSessionSort, type SessionSort } from "../session-search.js";
import { fit, keyIs, keyText, lazyClass, piTui, theme, windowOf } from "./selector-kit.js";

type SessionsLoader = (onProgress?: SessionListProgress, signal?: AbortSignal) => Promise<SessionInfo[]>;
export type SortMode = SessionSort;
export type NameFilter = "all" | "named";
type Row = { session: SessionInfo; prefix: string };

const ROWS = 10;

export interface SessionList extends Component {
  onSelect?: (sessionPath: string) => void;
  onCancel?: () => void;
  onExit: () => void;
  focused: boolean;
  getSelectedSessionPath(): string | undefined;
  setSessions(sessions: SessionInfo[], showCwd: boolean, partial?: boolean): void;
  handleInput(data: string): void;
}

class Sessions implements SessionList {
  onSelect?: (sessionPath: string) => void;
  onCancel?: () => void;
  onExit: () => void = () => {};
  onDelete?: (path: string) => void;
  onRename?: (path: string) => void;
  onError?: (message: string) => void;
  onToggle?: (what: "scope" | "sort" | "named" | "path") => void;
  focused = false;
  private all: SessionInfo[] = [];
  private rows: Row[] = [];
  private selected = 0;
  private showCwd = false;
  showPath = false;
  confirming: string | null = null;
  loading = false;
  readonly search: Input;

  constructor(
    public sort: SortMode,
    public names: NameFilter,
    private readonly currentPath?: string,
  ) {
    this.search = new (piTui().Input)();
  }

  getSelectedSessionPath(): string | undefined {
    return this.rows[this.selected]?.session.path;
  }
  setSessions(sessions: SessionInfo[], showCwd: boolean, _partial?: boolean): void {
    const keep = this.getSelectedSessionPath() ?? this.currentPath;
    this.all = sessions;
    this.showCwd = showCwd;
    this.refilter(keep);
  }
  refilter(keep?: string): void {
    this.rows = listSessions(this.all, { query: this.search.getValue(), sort: this.sort, namedOnly: this.names === "named" });
    const i = keep ? this.rows.findIndex((r) => r.session.path === keep) : -1;
    this.selected = i >= 0 ? i : Math.min(this.selected, Math.max(0, this.rows.length - 1));
  }
  invalidate(): void {}

  render(width: number): string[] {
    const t = theme();
    const out = [...this.search.render(width), ""];
    if (!this.rows.length) {
      const none = this.loading
        ? "  Loading sessions…"
        : this.names === "named"
          ? `  No named sessions${this.showCwd ? "" : " in current folder"}. Press ${keyText("app.session.toggleNamedFilter")} to show all.`
          : this.showCwd
            ? "  No sessions found"
            : "  No sessions in current folder. Press Tab to view all.";
      out.push(fit(t.fg("muted", none), width));
      return out;
    }
    const [start, end] = windowOf(this.selected, this.rows.length, ROWS);
    for (let i = start; i < end; i++) {
      const { session: s, prefix } = this.rows[i]!;
      const sel = i === this.selected;
      const text = drawSessionRow(s, { prefix, width: width - 2, selected: sel, current: s.path === this.currentPath, deleting: s.path === this.confirming, showCwd: this.showCwd, showPath: this.showPath }, t);
      const line = fit((sel ? t.fg("accent", "› ") : "  ") + text, width);
      out.push(sel ? t.bg("selectedBg", line) : line);
    }
    if (start > 0 || end < this.rows.length) out.push(fit(t.fg("muted", `  (${this.selected + 1}/${this.rows.length})`), width));
    return out;
  }

  handleInput(data: string): void {
    if (this.confirming !== null) {
      if (keyIs(data, "tui.select.confirm")) {
        const path = this.confirming;
        this.confirming = null;
        this.onDelete?.(path);
      } else if (keyIs(data, "tui.select.cancel")) this.confirming = null;
      return;
    }
    const n = this.rows.length;
    if (keyIs(data, "tui.input.tab")) this.onToggle?.("scope");
    else if (keyIs(data, "app.session.toggleSort")) this.onToggle?.("sort");
    else if (keyIs(data, "app.session.toggleNamedFilter")) this.onToggle?.("named");
    else if (keyIs(data, "app.session.togglePath")) {
      this.showPath = !this.showPath;
      this.onToggle?.("path");
    } else if (keyIs(data, "app.session.delete") || (keyIs(data, "app.session.deleteNoninvasive") && !this.search.getValue())) {
      const path = this.getSelectedSessionPath();
      if (path && path === this.currentPath) this.onError?.("Cannot delete the session that is open");
      else if (path) this.confirming = path;
    } else if (keyIs(data, "app.session.rename")) {
      const path = this.getSelectedSessionPath();
      if (path) this.onRename?.(path);
    } else if (keyIs(data, "tui.select.up")) this.selected = Math.max(0, this.selected - 1);
    else if (keyIs(data, "tui.select.down")) this.selected = Math.max(0, Math.min(n - 1, this.selected + 1));
    else if (keyIs(data, "tui.select.pageUp")) this.selected = Math.max(0, this.selected - ROWS);
    else if (keyIs(data, "tui.select.pageDown")) this.selected = Math.max(0, Math.min(n - 1, this.selected + ROWS));
    else if (keyIs(data, "tui.select.confirm")) {
      const path = this.getSelectedSessionPath();
      if (path) this.onSelect?.(path);
    } else if (keyIs(data, "tui.select.cancel")) this.onCancel?.();
    else {
      const before = this.search.getValue();
      this.search.handleInput(data);
      const query = this.search.getValue();
      if (query === before) return;
      this.refilter();
      if (query.trim()) this.selected = 0;
    }
  }
}

export interface SessionSelectorComponent extends Container {
  readonly capturesViewportInput: boolean;
  focused: boolean;
  handleInput(data: string): void;
  getSessionList(): SessionList;
}

export const SessionSelectorComponent: new (
  currentSessionsLoader: SessionsLoader,
  allSessionsLoader: SessionsLoader,
  onSelect: (sessionPath: string) => void,
  onCancel: () => void,
  onExit: () => void,
  requestRender: () => void,
  options?: { renameSession?: (sessionPath: string, currentName: string | undefined) => Promise<void>; showRenameHint?: boolean; keybindings?: unknown },
  currentSessionFilePath?: string,
) => SessionSelectorComponent = lazyClass("SessionSelectorComponent", () => {
  const { Container: PiContainer, Input: PiInput, Spacer } = piTui();
  class SessionSelector extends PiContainer {
    private readonly list: Sessions;
    private scope: "current" | "all" = "current";
    private readonly cache: Record<"current" | "all", SessionInfo[] | null> = { current: null, all: null };
    private readonly loads: Record<"current" | "all", AbortController | null> = { current: null, all: null };
    private renaming: { path: string; input: Input } | null = null;
    private status: { text: string; error: boolean } | null = null;
    private readonly canRename: boolean;
    private _focused = false;

    constructor(
      private readonly currentLoader: SessionsLoader,
      private readonly allLoader: SessionsLoader,
      onSelect: (sessionPath: string) => void,
      onCancel: () => void,
      onExit: () => void,
      private readonly requestRender: () => void,
      private readonly options: { renameSession?: (sessionPath: string, currentName: string | undefined) => Promise<void>; showRenameHint?: boolean } = {},
      currentSessionFilePath?: string,
    ) {
      super();
      if (typeof currentLoader !== "function" || typeof allLoader !== "function") throw new TypeError("SessionSelectorComponent: the two session loaders must be functions returning SessionInfo lists (e.g. () => SessionManager.list(cwd))");
      this.canRename = typeof options?.renameSession === "function";
      this.list = new Sessions("threaded", "all", currentSessionFilePath);
      this.list.onSelect = (p) => (this.stopLoads(), onSelect(p));
      this.list.onCancel = () => (this.stopLoads(), onCancel());
      this.list.onExit = () => (this.stopLoads(), onExit());
      this.list.onDelete = (p) => void this.remove(p);
      this.list.onRename = (p) => this.startRename(p);
      this.list.onToggle = (what) => this.toggle(what);
      this.list.onError = (text) => void (this.status = { text, error: true });
      this.layout();
      void this.load("current");
    }

    get focused(): boolean {
      return this._focused;
    }
    set focused(v: boolean) {
      this._focused = v;
      this.list.focused = v;
      this.list.search.focused = v && !this.renaming;
      if (this.renaming) this.renaming.input.focused = v;
    }
    get capturesViewportInput(): boolean {
      return this.renaming === null;
    }

    private header(width: number): string[] {
      const t = theme();
      const title = t.bold(this.scope === "current" ? "Resume Session (Current Folder)" : "Resume Session (All)");
      const scope = this.list.loading ? t.fg("accent", "Loading…") : this.scope === "current" ? t.fg("accent", "◉ Current Folder") + t.fg("muted", " | ○ All") : t.fg("muted", "○ Current Folder | ") + t.fg("accent", "◉ All");
      const sort = t.fg("muted", "Sort: ") + t.fg("accent", SESSION_SORTS.find((x) => x.sort === this.list.sort)!.label);
      const named = t.fg("muted", "Name: ") + t.fg("accent", this.list.names === "all" ? "All" : "Named");
      const right = fit(`${scope}  ${named}  ${sort}`, width);
      const vw = piTui().visibleWidth;
      const left = fit(title, Math.max(0, width - vw(right) - 1));
      const first = left + " ".repeat(Math.max(0, width - vw(left) - vw(right))) + right;
      if (this.list.confirming) return [first, t.fg("error", fit(`Delete session? ${keyText("tui.select.confirm")} confirm · ${keyText("tui.select.cancel")} cancel`, width)), ""];
      if (this.status) return [first, t.fg(this.status.error ? "error" : "accent", fit(this.status.text, width)), ""];
      const sep = t.fg("muted", " · ");
      const hint = (id: string, what: string) => t.fg("dim", keyText(id)) + t.fg("muted", ` ${what}`);
      const second = [hint("app.session.toggleSort", "sort"), hint("app.session.toggleNamedFilter", "named"), hint("app.session.delete", "delete"), hint("app.session.togglePath", `path ${this.list.showPath ? "(on)" : "(off)"}`)];
      if (this.options?.showRenameHint ?? this.canRename) second.push(hint("app.session.rename", "rename"));
      return [first, fit(hint("tui.input.tab", "scope") + sep + t.fg("muted", 're:<pattern> regex · "phrase" exact'), width), fit(second.join(sep), width)];
    }

    private layout(content?: Component): void {
      const t = theme();
      this.clear();
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder((s) => t.fg("accent", s)));
      this.addChild(new Spacer(1));
      if (!content) {
        this.addChild({ render: (w) => this.header(w), invalidate() {} });
        this.addChild(new Spacer(1));
      }
      this.addChild(content ?? this.list);
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder((s) => t.fg("accent", s)));
    }

    private stopLoads(): void {
      for (const k of ["current", "all"] as const) {
        this.loads[k]?.abort();
        this.loads[k] = null;
      }
    }

    private async load(scope: "current" | "all"): Promise<void> {
      if (this.loads[scope]) return;
      const ctl = new AbortController();
      this.loads[scope] = ctl;
      this.list.loading = scope === this.scope;
      this.requestRender();
      try {
        const sessions = await (scope === "current" ? this.currentLoader : this.allLoader)(undefined, ctl.signal);
        if (this.loads[scope] !== ctl) return;
        this.cache[scope] = sessions;
        if (scope === this.scope) {
          this.list.loading = false;
          this.list.setSessions(sessions, scope === "all");
        }
      } catch (e) {
        if (this.loads[scope] !== ctl) return;
        this.cache[scope] = null;
        if (scope === this.scope) {
          this.list.loading = false;
          this.status = { text: `Failed to load sessions: ${e instanceof Error ? e.message : String(e)}`, error: true };
          this.list.setSessions([], scope === "all");
        }
      } finally {
        if (this.loads[scope] === ctl) this.loads[scope] = null;
        this.requestRender();
      }
    }

    private toggle(what: "scope" | "sort" | "named" | "path"): void {
      if (what === "scope") {
        this.scope = this.scope === "current" ? "all" : "current";
        const have = this.cache[this.scope];
        this.list.loading = have === null;
        this.list.setSessions(have ?? [], this.scope === "all");
        if (have === null) void this.load(this.scope);
      } else if (what === "sort") {
        this.list.sort = nextSessionSort(this.list.sort);
        this.list.refilter();
      } else if (what === "named") {
        this.list.names = this.list.names === "all" ? "named" : "all";
        this.list.refilter();
      }
      this.requestRender();
    }

    private async remove(path: string): Promise<void> {
      try {
        const how = await deleteSessionFile(path);
        for (const k of ["current", "all"] as const) this.cache[k] = this.cache[k]?.filter((s) => s.path !== path) ?? null;
        this.list.setSessions(this.cache[this.scope] ?? [], this.scope === "all");
        this.status = { text: how === "trash" ? "Session moved to trash" : "Session deleted", error: false };
      } catch (e) {
        this.status = { text: `Failed to delete: ${e instanceof Error ? e.message : String(e)}`, error: true };
      }
      this.requestRender();
    }

    private startRename(path: string): void {
      const rename = this.options?.renameSession;
      if (!rename || this.loads[this.scope]) return;
      const current = this.cache[this.scope]?.find((s) => s.path === path)?.name;
      const input = new PiInput();
      input.setValue(current ?? "");
      input.handleInput("\x05"); // the cursor to the end
      input.focused = this._focused;
      this.renaming = { path, input };
      input.onSubmit = (value) => {
        const name = value.trim();
        if (!name) return;
        void rename(path, name)
          .then(
            () => {
              this.cache.current = this.cache.all = null;
              return this.load(this.scope);
            },
            (e: unknown) => void (this.status = { text: `Failed to rename: ${e instanceof Error ? e.message : String(e)}`, error: true }),
          )
          .finally(() => this.endRename());
      };
      const t = theme();
      const panel = new PiContainer();
      panel.addChild({ render: (w) => [fit(" " + t.bold("Rename Session"), w)], invalidate() {} });
      panel.addChild(new Spacer(1));
      panel.addChild(input);
      panel.addChild(new Spacer(1));
      panel.addChild({ render: (w) => [fit(" " + t.fg("muted", `${keyText("tui.select.confirm")} to save · ${keyText("tui.select.cancel")} to cancel`), w)], invalidate() {} });
      this.layout(panel);
      this.requestRender();
    }

    private endRename(): void {
      this.renaming = null;
      this.layout();
      this.requestRender();
    }

    handleInput(data: string): void {
      if (this.renaming) {
        if (keyIs(data, "tui.select.cancel")) return this.endRename();
        return this.renaming.input.handleInput(data);
      }
      if (this.status && !this.list.confirming) this.status = null;
      this.list.handleInput(data);
    }

    getSessionList(): SessionList {
      return this.list;
    }
  }
  return SessionSelector as never;
});
