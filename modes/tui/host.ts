/**
 * The narrow views of the app that the slash commands, the session picker and the tree
 * navigator use (they take these, not the whole TuiApp, so each can be read and tested alone).
 */
import type { UiDialogOptions, Kernel } from "../../core/kernel/index.js";
import type { ChatView } from "./chat.js";
import type { Editor } from "./editor.js";
import type { Keybindings } from "./keys.js";
import type { Layer, SelectItem, SelectLayer } from "./layers.js";
import type { Theme } from "./theme.js";

export type NoticeLevel = "info" | "warning" | "error" | "success";

/** Dialogs: a layer until it answers, and the ready-made selector, confirmation and input. */
export interface DialogApi {
  dialog<T>(make: (finish: (v: T) => void, deadline: number | undefined) => Layer, fallback: T, opts?: UiDialogOptions): Promise<T>;
  select<T>(title: string, items: SelectItem<T>[], extra?: Partial<ConstructorParameters<typeof SelectLayer<T>>[0]>, opts?: UiDialogOptions): Promise<T | undefined>;
  confirm(title: string, message: string, opts?: UiDialogOptions): Promise<boolean>;
  input(title: string, o?: { placeholder?: string; prefill?: string; multiline?: boolean; message?: string }, opts?: UiDialogOptions): Promise<string | undefined>;
}

/** What the session picker needs. */
export interface SessionsHost {
  readonly kernel: Kernel;
  readonly theme: Theme;
  readonly runtime: any;
  readonly session: any;
  readonly keys: Keybindings;
  requestRender(): void;
  dialog: DialogApi["dialog"];
  input: DialogApi["input"];
}

/** What the tree navigator needs. */
export interface TreeHost extends SessionsHost, DialogApi {
  readonly theme: Theme;
  readonly keys: Keybindings;
  readonly editor: Editor;
  /** The terminal's height in rows (the tree's list shows half of it). */
  readonly terminalRows: number;
  cancelBusy: (() => void) | undefined;
  addNotice(text: string, level?: NoticeLevel): void;
  setStatusLine(text: string | undefined): void;
  rebuildChat(): void;
}

/** What the built-in slash commands need. */
export interface CommandHost extends TreeHost {
  readonly argv: Record<string, unknown> | undefined;
  /** The conversation view (for blocks a command adds, such as /changelog's). */
  readonly chat: ChatView;
  keys: Keybindings;
  themes: Map<string, Theme>;
  readonly showThinking: boolean;
  setShowThinking(on: boolean): void;
  setTheme(theme: Theme): void;
  updateTitle(): void;
  pickSession(): Promise<string | undefined>;
  quit(code?: number): Promise<void>;
}
