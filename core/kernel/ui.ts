/**
 * The user-interface surface a mode offers to extensions and plugins (pi's `ctx.ui`).
 *
 * A mode provides its implementation as the kernel service "ui" (the TUI draws dialogs, RPC
 * sends extension_ui_request records). Without one, `createNoopUI()` applies: dialogs resolve at
 * once to their defaults, fire-and-forget calls do nothing, and the first call of each method
 * that cannot be honoured is reported once, so an author can see it.
 */
import type { Diagnostic } from "./types.js";

export interface UiDialogOptions {
  /** Milliseconds; the dialog resolves to its default when it runs out. */
  timeout?: number;
  signal?: AbortSignal;
}

export type NotifyType = "info" | "warning" | "error";

/**
 * "Run outside the sandbox?": a request of its own, not a confirm, so that nothing that answers
 * confirms automatically (an auto-confirming client, an approve-all mode) answers it. Only a mode
 * where a person answers implements `confirmEscalation`.
 */
export interface EscalationRequest {
  /** What would run unconfined: a command (bash) or a file write (write, edit). */
  kind: "command" | "write";
  title: string;
  /** Why it was blocked and what allowing it means, in words. */
  message: string;
  /** The command (kind "command"). */
  command?: string;
  /** The file (kind "write"). */
  path?: string;
  /** The tool that asks. */
  toolName: string;
}
export type WidgetPlacement = "aboveEditor" | "belowEditor";

export interface ExtensionUI {
  /** "tui" draws, "rpc" forwards to a client, "none" has no user. */
  readonly kind: "tui" | "rpc" | "none";
  select(title: string, options: string[], opts?: UiDialogOptions): Promise<string | undefined>;
  confirm(title: string, message: string, opts?: UiDialogOptions): Promise<boolean>;
  /**
   * Ask a person whether a blocked command or write may run outside the OS sandbox. Only modes
   * where a person answers have it; true only on an explicit yes.
   */
  confirmEscalation?(request: EscalationRequest, opts?: UiDialogOptions): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: UiDialogOptions): Promise<string | undefined>;
  editor(title: string, prefill?: string, opts?: UiDialogOptions): Promise<string | undefined>;
  notify(message: string, type?: NotifyType): void;
  setStatus(key: string, text: string | undefined): void;
  setWidget(key: string, content: string[] | ((...a: any[]) => unknown) | undefined, opts?: { placement?: WidgetPlacement }): void;
  setTitle(title: string): void;
  setEditorText(text: string): void;
  getEditorText(): string;
  pasteToEditor(text: string): void;
  setWorkingMessage(message?: string): void;
  setFooter(factory: ((...a: any[]) => unknown) | undefined): void;
  setHeader(factory: ((...a: any[]) => unknown) | undefined): void;
  custom<T = unknown>(factory: (...a: any[]) => unknown, opts?: Record<string, unknown>): Promise<T | undefined>;
  onTerminalInput(handler: (data: string) => unknown): () => void;
  setEditorComponent(factory: ((...a: any[]) => unknown) | undefined): void;
  getToolsExpanded(): boolean;
  setToolsExpanded(expanded: boolean): void;
  readonly theme: unknown;
  getAllThemes(): unknown[];
  getTheme(name: string): unknown;
  setTheme(theme: unknown): unknown;
  // pi 1.6 (a mode without them answers like the no-op UI)
  addAutocompleteProvider?(factory: (...a: any[]) => unknown): void;
  getEditorComponent?(): ((...a: any[]) => unknown) | undefined;
  setHiddenThinkingLabel?(label?: string): void;
  setWorkingIndicator?(options?: Record<string, unknown>): void;
  setWorkingVisible?(visible: boolean): void;
}

/** Resolves after `ms` (or never when ms is undefined) or when the signal aborts, to `fallback`. */
export function dialogDeadline<T>(opts: UiDialogOptions | undefined, fallback: T): { promise: Promise<T>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const promise = new Promise<T>((resolve) => {
    if (opts?.timeout !== undefined && opts.timeout >= 0) timer = setTimeout(() => resolve(fallback), opts.timeout);
    if (opts?.signal) {
      if (opts.signal.aborted) resolve(fallback);
      onAbort = () => resolve(fallback);
      opts.signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return {
    promise,
    cancel() {
      if (timer) clearTimeout(timer);
      if (onAbort) opts?.signal?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * The UI of a mode without a user (print, json, an SDK host that did not bind one).
 * `report` receives one diagnostic per method that cannot be honoured (pass undefined to stay silent).
 */
export function createNoopUI(report?: (d: Diagnostic) => void, source = "ui", only?: ReadonlySet<string>): ExtensionUI {
  const warned = new Set<string>();
  const unsupported = (method: string) => {
    if (!report || warned.has(method) || (only && !only.has(method))) return;
    warned.add(method);
    report({ level: "warning", source, message: `ctx.ui.${method}() has no effect in this mode (no interactive UI)` });
  };
  return {
    kind: "none",
    async select() {
      unsupported("select");
      return undefined;
    },
    async confirm() {
      unsupported("confirm");
      return false;
    },
    async input() {
      unsupported("input");
      return undefined;
    },
    async editor() {
      unsupported("editor");
      return undefined;
    },
    notify: () => {},
    setStatus: () => {},
    // Display-only calls are quiet no-ops, as in pi 1.6; only a dialog that answers its default is reported.
    setWidget: () => {},
    setTitle: () => {},
    setEditorText: () => {},
    getEditorText: () => "",
    pasteToEditor: () => {},
    setWorkingMessage: () => {},
    setFooter: () => {},
    setHeader: () => {},
    async custom() {
      unsupported("custom");
      return undefined;
    },
    onTerminalInput: () => () => {},
    setEditorComponent: () => {},
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
    theme: undefined,
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => undefined,
    addAutocompleteProvider: () => {},
    getEditorComponent: () => undefined,
    setHiddenThinkingLabel: () => {},
    setWorkingIndicator: () => {},
    setWorkingVisible: () => {},
  };
}
