/**
 * The app as its parts see it (render, input, events, dialogs, the extension UI bridge, the
 * custom editor slot, the scrollback writer, the chat viewport, search, the exit output): the
 * shared state and the methods they call. TuiApp implements it; the parts take an AppView, so
 * none of them imports app.ts, and app.ts can build them all.
 *
 * The parts that the app owns are seen here only through what other parts use of them.
 */
import type { Kernel, RuntimeHandle, SessionHandle, UiDialogOptions } from "../../core/kernel/index.js";
import type { Box, Screen } from "./blessed-setup.js";
import type { AssistantBlock, BashBlock, Block, ChatContext, ChatView, ToolBlock } from "./chat.js";
import type { Completion, FileIndex } from "./completion.js";
import type { Editor } from "./editor.js";
import type { KeyPress, Keybindings } from "./keys.js";
import type { MouseEvent } from "./key-parser.js";
import type { Layer, LayerEnv, SelectItem, SelectLayer } from "./layers.js";
import type { ProgramStatusReporter } from "./program-status.js";
import type { TerminalModes } from "./terminal.js";
import type { Theme } from "./theme.js";
import type { NoticeLevel } from "./host.js";

/** An extension's widget above or below the editor (ctx.ui.setWidget). */
export interface Widget {
  placement: "aboveEditor" | "belowEditor";
  content: string[] | unknown;
}

/** A pi-tui editor component an extension puts in place of the editor (ctx.ui.setEditorComponent). */
export interface EditorComponentLike {
  render(width: number): readonly string[];
  getText(): string;
  setText(text: string): void;
  handleInput(data: string): void;
  onSubmit?: (text: string) => void;
  onChange?: (text: string) => void;
  addToHistory?(text: string): void;
  getExpandedText?(): string;
  invalidate?(): void;
  dispose?(): void;
  focused?: boolean;
  actionHandlers?: Map<string, () => void>;
  onEscape?: () => void;
  onCtrlD?: () => void;
}

/** An extension's editor factory: called with the TUI handle, the editor theme and the keybindings. */
export type EditorFactory = (...a: any[]) => unknown;

/** The custom editor slot (custom-editor.ts). */
export interface CustomEditorView {
  readonly component: EditorComponentLike | undefined;
  readonly factory: EditorFactory | undefined;
  set(factory: EditorFactory | undefined, make: () => unknown[]): void;
  handleKey(k: KeyPress): boolean;
  paste(text: string): void;
  render(width: number, focused: boolean): string[];
}

/** The session event projector (events.ts). */
export interface EventsView {
  readonly entries: { sync(): void };
  makeHeader(): Block;
  mdOptions(): { codeIndent: string; mermaid: string | undefined };
}

/** The chat viewport (viewport.ts). */
export interface ViewportView {
  decorate(lines: string[], width: number, height: number): string[];
  handleMouse(ev: MouseEvent): void;
  inChat(y: number): boolean;
  scrollBy(rows: number): void;
  toBottom(): void;
  toTop(): void;
}

export interface AppView {
  readonly kernel: Kernel;
  readonly runtime: RuntimeHandle;
  readonly session: SessionHandle;
  readonly screen: Screen;
  readonly chatBox: Box;
  readonly panelBox: Box;
  readonly overlayBox: Box;
  readonly chat: ChatView;
  readonly editor: Editor;
  readonly files: FileIndex;
  readonly terminal: TerminalModes;
  readonly programStatus: ProgramStatusReporter;
  readonly frameMs: number;
  readonly tuiMode: "fullscreen" | "regular";
  keys: Keybindings;
  theme: Theme;
  themes: Map<string, Theme>;
  completion: Completion | undefined;
  expandTools: boolean;
  showThinking: boolean;
  destroyed: boolean;
  quitting: boolean;
  lastCtrlC: number;

  // the conversation as it streams
  currentAssistant: AssistantBlock | undefined;
  readonly tools: Map<string, ToolBlock>;
  liveBash: BashBlock[];
  queue: { steering: string[]; followUp: string[] };
  working: boolean;
  workingMessage: string | undefined;
  statusLine: string | undefined;
  flashText: string | undefined;
  statsVersion: number;
  footerStats: { stats?: unknown; at: number };
  unsubscribe: () => void;

  // what extensions put on the screen
  headerBlock: Block | undefined;
  headerComponent: unknown;
  footerComponent: unknown;
  customTitle: string | undefined;
  gitBranch: string | null;
  readonly statuses: Map<string, string>;
  readonly widgets: Map<string, Widget>;
  readonly inputHandlers: Set<(data: string) => unknown>;

  // the parts, as the other parts use them
  readonly customEditor: CustomEditorView;
  readonly events: EventsView;
  readonly dialogs: { readonly open: Set<() => void> };
  readonly renderer: { footerLines(width: number): string[] };
  readonly scrollback: { commit(): void; markAllPrinted(): void };
  readonly viewport: ViewportView;

  // layers and dialogs
  readonly layers: readonly Layer[];
  pushLayer(l: Layer): void;
  popLayer(l: Layer): void;
  layerEnv(): LayerEnv;
  select<T>(title: string, items: SelectItem<T>[], extra?: Partial<ConstructorParameters<typeof SelectLayer<T>>[0]>, opts?: UiDialogOptions): Promise<T | undefined>;
  confirm(title: string, message: string, opts?: UiDialogOptions): Promise<boolean>;
  input(title: string, o?: { placeholder?: string; prefill?: string; multiline?: boolean; message?: string }, opts?: UiDialogOptions): Promise<string | undefined>;

  // actions
  requestRender(): void;
  renderNow(): void;
  chatContext(): ChatContext;
  addNotice(text: string, level?: NoticeLevel): void;
  flash(text: string, ms?: number): void;
  setStatusLine(text: string | undefined): void;
  setWorking(on: boolean): void;
  setTheme(theme: Theme): void;
  updateTitle(): void;
  toggleThinking(): void;
  cycleModel(dir: "forward" | "backward"): Promise<void>;
  externalEditor(): void;
  suspend(): void;
  submit(kind: "steer" | "followUp"): Promise<void>;
  submitText(raw: string, kind: "steer" | "followUp"): Promise<void>;
  runCommand(text: string): Promise<boolean>;
  restoreQueue(): Promise<void>;
  onInterrupt(): Promise<void>;
  quit(code?: number, how?: { signal?: boolean; hangup?: boolean }): Promise<void>;
}
