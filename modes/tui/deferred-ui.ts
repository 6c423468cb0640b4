/**
 * The "ui" service from the moment the interactive mode is chosen until the screen exists.
 *
 * The session (and `session_start`, where extensions set their status, widgets, header and
 * footer) is built before the mode runs. Calls that draw something are kept and replayed on
 * the real UI once it is attached; dialogs asked before that cannot be shown (the screen is not
 * up, and waiting would stall start-up), so they resolve to their defaults with a diagnostic.
 * After the mode ends the object behaves like a UI with no user.
 */
import type { Kernel, EscalationRequest, ExtensionUI, UiDialogOptions } from "../../core/kernel/index.js";
import { builtinTheme, findThemes, type Theme } from "./theme.js";

export class DeferredUi implements ExtensionUI {
  readonly kind = "tui" as const;
  private target: ExtensionUI | undefined;
  private closed = false;
  private queue: Array<(ui: ExtensionUI) => void> = [];
  private warned = new Set<string>();
  private editorText = "";
  private readonly earlyTheme: Theme;
  private earlyThemes: Map<string, Theme> | undefined;

  constructor(private readonly kernel: Kernel) {
    this.earlyTheme = builtinTheme(String(kernel.settings.get().theme) === "light" ? "light" : "dark");
  }

  /** Route everything to `ui` and replay what was kept. */
  attach(ui: ExtensionUI): void {
    this.target = ui;
    const pending = this.queue.splice(0);
    for (const f of pending) {
      try {
        f(ui);
      } catch (error) {
        this.kernel.diagnostics.report({ level: "warning", source: "tui", message: "a UI call made during start-up failed when replayed", error });
      }
    }
  }

  /** The mode ended: nothing is drawn any more. */
  detach(): void {
    this.target = undefined;
    this.closed = true;
    this.queue = [];
  }

  private keep(f: (ui: ExtensionUI) => void): void {
    if (this.target) f(this.target);
    else if (!this.closed) this.queue.push(f);
  }

  private early<T>(method: string, fallback: T): Promise<T> {
    if (!this.warned.has(method)) {
      this.warned.add(method);
      this.kernel.diagnostics.report({
        level: "warning",
        source: "tui",
        message: this.closed
          ? `ctx.ui.${method}() after the interactive UI closed returned its default`
          : `ctx.ui.${method}() was called before the interactive UI started (during session start-up); it returned its default`,
      });
    }
    return Promise.resolve(fallback);
  }

  select(title: string, options: string[], opts?: UiDialogOptions) {
    return this.target ? this.target.select(title, options, opts) : this.early<string | undefined>("select", undefined);
  }
  confirm(title: string, message: string, opts?: UiDialogOptions) {
    return this.target ? this.target.confirm(title, message, opts) : this.early("confirm", false);
  }
  confirmEscalation(request: EscalationRequest, opts?: UiDialogOptions) {
    const t = this.target;
    if (!t) return this.early("confirmEscalation", false);
    return t.confirmEscalation ? t.confirmEscalation(request, opts) : Promise.resolve(false);
  }
  input(title: string, placeholder?: string, opts?: UiDialogOptions) {
    return this.target ? this.target.input(title, placeholder, opts) : this.early<string | undefined>("input", undefined);
  }
  editor(title: string, prefill?: string, opts?: UiDialogOptions) {
    return this.target ? this.target.editor(title, prefill, opts) : this.early<string | undefined>("editor", undefined);
  }
  custom<T = unknown>(factory: (...a: any[]) => unknown, opts?: Record<string, unknown>): Promise<T | undefined> {
    return this.target ? this.target.custom<T>(factory, opts) : this.early<T | undefined>("custom", undefined);
  }
  notify(message: string, type?: "info" | "warning" | "error"): void {
    this.keep((ui) => ui.notify(message, type));
  }
  setStatus(key: string, text: string | undefined): void {
    this.keep((ui) => ui.setStatus(key, text));
  }
  setWidget(key: string, content: Parameters<ExtensionUI["setWidget"]>[1], opts?: Parameters<ExtensionUI["setWidget"]>[2]): void {
    this.keep((ui) => ui.setWidget(key, content, opts));
  }
  setTitle(title: string): void {
    this.keep((ui) => ui.setTitle(title));
  }
  setEditorText(text: string): void {
    this.editorText = text;
    this.keep((ui) => ui.setEditorText(text));
  }
  getEditorText(): string {
    return this.target ? this.target.getEditorText() : this.editorText;
  }
  pasteToEditor(text: string): void {
    this.keep((ui) => ui.pasteToEditor(text));
  }
  setWorkingMessage(message?: string): void {
    this.keep((ui) => ui.setWorkingMessage(message));
  }
  setFooter(factory: ((...a: any[]) => unknown) | undefined): void {
    this.keep((ui) => ui.setFooter(factory));
  }
  setHeader(factory: ((...a: any[]) => unknown) | undefined): void {
    this.keep((ui) => ui.setHeader(factory));
  }
  onTerminalInput(handler: (data: string) => unknown): () => void {
    let off: (() => void) | undefined;
    let cancelled = false;
    this.keep((ui) => {
      if (!cancelled) off = ui.onTerminalInput(handler);
    });
    return () => {
      cancelled = true;
      off?.();
    };
  }
  setEditorComponent(factory: ((...a: any[]) => unknown) | undefined): void {
    this.keep((ui) => ui.setEditorComponent(factory));
  }
  private toolsExpanded = false;
  getToolsExpanded(): boolean {
    return this.target ? this.target.getToolsExpanded() : this.toolsExpanded;
  }
  setToolsExpanded(expanded: boolean): void {
    this.toolsExpanded = expanded;
    this.keep((ui) => ui.setToolsExpanded(expanded));
  }
  get theme(): unknown {
    return this.target ? this.target.theme : this.earlyTheme;
  }
  /** Before the screen exists: the themes the TUI will offer (built-ins, the usual folders, packages and extensions), found once. */
  private startupThemes(): Map<string, Theme> {
    if (!this.earlyThemes) {
      const argv = (this.kernel.service("argv") as { flags?: Record<string, unknown> } | undefined)?.flags;
      try {
        this.earlyThemes = findThemes(this.kernel, argv).themes;
      } catch {
        this.earlyThemes = new Map([["dark", builtinTheme("dark")], ["light", builtinTheme("light")]]);
      }
    }
    return this.earlyThemes;
  }
  getAllThemes(): unknown[] {
    return this.target ? this.target.getAllThemes() : [...this.startupThemes().values()].map((t) => ({ name: t.name, path: t.path }));
  }
  getTheme(name: string): unknown {
    return this.target ? this.target.getTheme(name) : this.startupThemes().get(name);
  }
  setTheme(theme: unknown): unknown {
    if (this.target) return this.target.setTheme(theme);
    this.keep((ui) => ui.setTheme(theme));
    return { success: true };
  }
}
