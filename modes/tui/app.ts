/**
 * The interactive terminal UI: the app holds the state and the life cycle; its parts each have
 * one job and a file of their own:
 *   render.ts        Renderer        — frames (chat viewport, bottom panel, overlay), coalesced
 *   input.ts         InputRouter     — raw data and key presses; the keybinding → action table
 *   events.ts        EventProjector  — session events and transcripts → chat blocks
 *   dialogs.ts       DialogHost      — the layer stack (selectors, inputs, components)
 *   extension-ui.ts  ExtensionUiBridge — pi's ctx.ui for this mode
 *   commands.ts      built-in slash commands (registered in the kernel's command registry)
 * Blessed draws three plain boxes (chat viewport, bottom panel, overlay); everything in them is
 * our own line model (chat.ts), editor (editor.ts) and layers (layers.ts).
 */
import { spawnSync } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { type Kernel, formatDiagnostic, type ExtensionUI, type UiDialogOptions, type ImageContent } from "../../core/kernel/index.js";
import { createBox, createScreen, program, type Box, type Screen } from "./blessed-setup.js";
import { AssistantBlock, BashBlock, ChatView, NoticeBlock, ToolBlock, type Block, type ChatContext } from "./chat.js";
import { FileIndex, type Completion, type CompletionItem } from "./completion.js";
import { Editor } from "./editor.js";
import { findGitBranch } from "./footer.js";
import { Keybindings, type KeyPress } from "./keys.js";
import type { Layer, LayerEnv, SelectItem, SelectLayer } from "./layers.js";
import { findThemes, Theme } from "./theme.js";
import { sanitize } from "./text.js";
import { registerBuiltinCommands, runBuiltinCommand } from "./commands.js";
import { Renderer } from "./render.js";
import { InputRouter } from "./input.js";
import { EventProjector } from "./events.js";
import { DialogHost } from "./dialogs.js";
import { ExtensionUiBridge } from "./extension-ui.js";
import { CustomEditorSlot } from "./custom-editor.js";
import { invalidate, loadPiTui } from "./component-host.js";
import { setActiveTheme } from "./pi-theme.js";
import { ProgramStatusReporter } from "./program-status.js";
import { ScrollbackWriter } from "./scrollback.js";
import { onDiagramsReady } from "./diagrams.js";
import { TerminalModes } from "./terminal.js";
import { ChatViewport } from "./viewport.js";
import { resumeHint, transcriptText } from "./exit-output.js";
import type { AppView, Widget } from "./app-view.js";

export type { Widget };

export interface TuiOptions {
  kernel: Kernel;
  runtime: any;
  input?: Readable;
  output?: Writable;
  env?: NodeJS.ProcessEnv;
  argv?: Record<string, unknown>;
  messages?: string[];
  images?: ImageContent[];
  /** Minimum milliseconds between frames (default 33, about 30 fps). */
  frameMs?: number;
  /** Install process-wide handlers (signals, console capture). Off in tests. */
  processHooks?: boolean;
}

/**
 * The state below is shared by the parts (they live in this folder and read it directly);
 * outside modes/tui only the methods are used.
 */
export class TuiApp implements AppView {
  readonly kernel: Kernel;
  readonly runtime: any;
  screen!: Screen;
  chatBox!: Box;
  panelBox!: Box;
  overlayBox!: Box;
  readonly chat = new ChatView();
  keys: Keybindings;
  readonly editor: Editor;
  theme: Theme;
  themes: Map<string, Theme> = new Map();
  expandTools = false;
  showThinking: boolean;
  readonly frameMs: number;
  destroyed = false;
  lastCtrlC = 0;
  lastEscape = 0;
  completion: Completion | undefined;
  readonly files: FileIndex;
  unsubscribe: () => void = () => {};
  private unRebind: () => void = () => {};
  private unDiag: () => void = () => {};
  private unCommands: () => void = () => {};
  currentAssistant: AssistantBlock | undefined;
  readonly tools = new Map<string, ToolBlock>();
  liveBash: BashBlock[] = [];
  queue = { steering: [] as string[], followUp: [] as string[] };
  working = false;
  workingMessage: string | undefined;
  statusLine: string | undefined;
  private spinnerTimer: NodeJS.Timeout | undefined;
  headerBlock: Block | undefined;
  headerComponent: unknown;
  footerComponent: unknown;
  /** Session stats for the footer, recomputed after messages end rather than on every frame. */
  footerStats: { stats?: unknown; at: number } = { at: -1 };
  statsVersion = 0;
  readonly statuses = new Map<string, string>();
  readonly widgets = new Map<string, Widget>();
  readonly inputHandlers = new Set<(data: string) => unknown>();
  customTitle: string | undefined;
  gitBranch: string | null = null;
  private resolveRun: ((code: number) => void) | undefined;
  quitting = false;
  private notices: string[] = [];
  private restoreProcess: Array<() => void> = [];
  readonly renderer: Renderer;
  readonly router: InputRouter;
  readonly events: EventProjector;
  readonly dialogs: DialogHost;
  /** OSC 7501 program status (where the terminal confirms support, or PI_PROGRAM_STATUS=1). */
  readonly programStatus: ProgramStatusReporter;
  /** An extension's editor in place of ours (setEditorComponent). */
  readonly customEditor: CustomEditorSlot;
  /** Regular tuiMode: finished turns printed into the terminal's scrollback. */
  readonly scrollback: ScrollbackWriter = new ScrollbackWriter(this);
  /** Keyboard protocols, bracketed paste and mouse reports: on at start, off on every way out. */
  terminal!: TerminalModes;
  /** Fullscreen: wheel, Ctrl+Home/End, scrollbar, jump hint, selection and copy. */
  readonly viewport: ChatViewport = new ChatViewport(this);
  readonly ui: ExtensionUI;
  /** Set while something other than the agent run can be cancelled with Esc (a branch summary). */
  cancelBusy: (() => void) | undefined;

  get argv(): Record<string, unknown> | undefined {
    return this.opts.argv;
  }

  constructor(private opts: TuiOptions) {
    this.kernel = opts.kernel;
    this.runtime = opts.runtime;
    this.frameMs = opts.frameMs ?? 33;
    const settings = this.kernel.settings.get();
    this.showThinking = !settings.hideThinkingBlock;
    this.keys = Keybindings.load(join(this.kernel.agentDir, "keybindings.json"));
    this.editor = new Editor(this.keys);
    const found = findThemes(this.kernel, opts.argv);
    this.themes = found.themes;
    for (const e of found.errors) this.notices.push(`theme: ${e}`);
    const wanted = String(settings.theme ?? "dark");
    this.theme = this.themes.get(wanted) ?? this.themes.get("dark")!;
    if (!this.themes.has(wanted)) this.notices.push(`theme "${wanted}" not found; using dark (known: ${[...this.themes.keys()].join(", ")})`);
    for (const e of this.keys.errors) this.notices.push(e);
    this.files = new FileIndex(this.kernel.cwd);
    setActiveTheme(this.theme);
    this.renderer = new Renderer(this);
    this.router = new InputRouter(this);
    this.events = new EventProjector(this);
    this.dialogs = new DialogHost(this);
    this.customEditor = new CustomEditorSlot(this);
    this.programStatus = new ProgramStatusReporter(
      (seq) => this.screen && program(this.screen).output.write(seq),
      this.kernel.app.name,
      () => this.session?.sessionName,
    );
    this.ui = new ExtensionUiBridge(this).create();
  }

  /** "fullscreen" (alternate screen, the default) or "regular" (normal buffer, scrollback kept): --tui-mode, then the tuiMode setting. */
  get tuiMode(): "fullscreen" | "regular" {
    if (this.mode) return this.mode;
    const raw = this.opts.argv?.["tui-mode"] ?? this.opts.argv?.tuiMode ?? (this.kernel.settings.get() as { tuiMode?: unknown }).tuiMode;
    if (raw === undefined || raw === "fullscreen" || raw === "regular") return (this.mode = (raw as "fullscreen" | "regular" | undefined) ?? "fullscreen");
    this.notices.push(`tuiMode "${String(raw)}" is not a TUI mode (fullscreen or regular); using fullscreen`);
    return (this.mode = "fullscreen");
  }
  private mode: "fullscreen" | "regular" | undefined;

  get session(): any {
    return this.runtime.session;
  }

  get terminalRows(): number {
    return Number(this.screen?.height) || process.stdout.rows || 24;
  }

  // ---- life cycle -----------------------------------------------------------------------------

  /** Build the screen, subscribe to the session, draw the first frame. */
  start(): void {
    const { screen, notice } = createScreen({ input: this.opts.input, output: this.opts.output, env: this.opts.env, tuiMode: this.tuiMode });
    this.screen = screen;
    if (notice) this.notices.push(notice);
    this.chatBox = createBox(screen, { top: 0, left: 0, width: "100%", height: 1 });
    this.panelBox = createBox(screen, { top: 1, left: 0, width: "100%", height: 1 });
    this.overlayBox = createBox(screen, { top: 0, left: 0, width: 10, height: 3, hidden: true });
    program(screen).hideCursor?.();
    const input = program(screen).input as NodeJS.ReadableStream & { prependListener?: Function; isTTY?: boolean; isRaw?: boolean; setRawMode?: (on: boolean) => unknown };
    const out = program(screen).output as NodeJS.WritableStream & { fd?: number };
    this.terminal = new TerminalModes({
      write: (seq) => program(screen).output.write(seq),
      input,
      status: this.programStatus,
      fd: this.opts.output ? undefined : typeof out.fd === "number" ? out.fd : 1,
    });
    this.terminal.onLateInput = (data) => this.router.onInputData(data, true);
    this.terminal.onKitty = (on) => void loadPiTui().then((m) => (m as { setKittyProtocolActive?: (on: boolean) => void } | undefined)?.setKittyProtocolActive?.(on)).catch(() => undefined);
    // Keys are read here (key-parser.ts), not through blessed's key events.
    const decoder = new StringDecoder("utf8");
    const onData = (buf: Buffer | string) => this.router.onInputData(typeof buf === "string" ? buf : decoder.write(buf));
    input.prependListener?.("data", onData);
    this.restoreProcess.push(() => input.removeListener("data", onData));
    // Raw input, bracketed paste (pasted newlines must not submit), keyboard protocols, mouse (fullscreen).
    this.terminal.enter({ mouse: this.tuiMode === "fullscreen" });
    screen.on("resize", () => this.requestRender());

    this.gitBranch = findGitBranch(this.kernel.cwd);
    this.unDiag = this.kernel.diagnostics.subscribe((d) => {
      if (d.level === "info") return;
      this.addNotice(formatDiagnostic(d), d.level === "error" ? "error" : "warning");
    });
    this.unCommands = registerBuiltinCommands(this.kernel, (text) => this.runCommand(text));
    this.events.subscribe();
    this.unRebind = this.runtime.onRebind?.(() => this.events.onRebind()) ?? (() => {});
    this.rebuildChat();
    for (const n of this.notices) this.addNotice(n, "warning");
    this.notices = [];
    // Startup diagnostics were printed before the screen took over; show the serious ones again.
    const early = this.kernel.diagnostics.list().filter((d) => d.level !== "info").slice(-10);
    for (const d of early) this.addNotice(formatDiagnostic(d), d.level === "error" ? "error" : "warning");
    this.updateTitle();
    this.renderNow();
    // pi-tui measures component lines once loaded (extensions importing it load the same copy).
    void loadPiTui().then(() => this.requestRender());
    // A diagram library that loaded on first need: redraw the chat with it.
    this.restoreProcess.push(onDiagramsReady(() => (this.chat.invalidateAll(), this.requestRender())) as () => void);
  }

  /** Run until the user quits; resolves with the exit code. */
  run(): Promise<number> {
    const done = new Promise<number>((resolve) => (this.resolveRun = resolve));
    if (this.opts.processHooks) this.installProcessHooks();
    void this.startupActions();
    return done;
  }

  private async startupActions(): Promise<void> {
    try {
      await this.askProjectTrust();
      if (this.opts.argv?.resume) {
        const path = await this.pickSession();
        if (!path) {
          await this.quit(0);
          return;
        }
        await this.runtime.switchSession(path);
      }
      const msgs = this.opts.messages ?? [];
      for (let i = 0; i < msgs.length && !this.quitting; i++) {
        await this.session.prompt(msgs[i], { images: i === 0 ? this.opts.images : undefined, source: "interactive" }).catch((e: Error) => this.addNotice(e.message, "error"));
      }
    } catch (e) {
      this.addNotice((e as Error).message, "error");
    }
  }

  /** A project that carries its own code (extensions, plugins, packages) and is not trusted yet: ask. */
  private async askProjectTrust(): Promise<void> {
    const trust = this.kernel.service("project-trust");
    if (!trust || trust.isTrusted() || !trust.hasProjectCode() || trust.promptSuppressed?.()) return; // (1.6 compat: -na, trust.json, defaultProjectTrust)
    const skipped = trust.skipped();
    const what = skipped.length
      ? `It carries code that did not load:\n${skipped.slice(0, 8).map((i) => `  ${i.kind}: ${i.path}`).join("\n")}${skipped.length > 8 ? `\n  … and ${skipped.length - 8} more` : ""}`
      : "It carries its own extensions, plugins or packages.";
    const answer = await this.select<"always" | "once" | "no">(
      `Trust the project ${this.kernel.cwd}?\n${what}\nTrusted project code runs with your permissions.`,
      [
        { label: "Yes, and remember it", value: "always" },
        { label: "Yes, this time only", value: "once" },
        { label: "No", value: "no" },
      ],
      { initialIndex: 2 },
    );
    if (answer === "always" || answer === "once") {
      try {
        trust.trust(this.kernel.cwd, { persist: answer === "always" });
        this.addNotice(`Project trusted${answer === "always" ? " (saved in the global settings)" : " for this run"}`, "success");
      } catch (e) {
        this.addNotice(`Could not trust the project: ${(e as Error).message}`, "error");
      }
    } else this.addNotice("Project not trusted: its own code stays off (see --trust)", "info");
  }

  private installProcessHooks(): void {
    // SIGTERM and SIGHUP end the session cleanly with exit code 0, as pi 1.6's TUI does.
    const onSignal = (sig: NodeJS.Signals) => void this.quit(sig === "SIGINT" ? 130 : 0, { signal: true, hangup: sig === "SIGHUP" });
    for (const s of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
      process.on(s, onSignal);
      this.restoreProcess.push(() => process.off(s, onSignal));
    }
    // A crash or an exit past quit(): the terminal gets its modes, cursor and screen back.
    const onExit = () => this.terminal?.restoreSync("\x1b[?25h" + (this.tuiMode === "fullscreen" ? "\x1b[?1049l" : ""));
    process.on("exit", onExit);
    this.restoreProcess.push(() => process.off("exit", onExit));
    const onCrash = (e: unknown) => {
      this.terminal?.restoreSync("\x1b[?25h");
      this.destroy();
      process.stderr.write(`${this.kernel.app.name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    };
    process.on("uncaughtException", onCrash);
    this.restoreProcess.push(() => process.off("uncaughtException", onCrash));
    // Anything printed while the screen is up would corrupt it: show it as notices instead.
    const c = console as unknown as Record<string, (...a: unknown[]) => void>;
    for (const m of ["log", "info", "warn", "error"] as const) {
      const orig = c[m]!;
      c[m] = (...a: unknown[]) => this.addNotice(a.map((x) => (typeof x === "string" ? x : x instanceof Error ? x.message : JSON.stringify(x))).join(" "), m === "error" ? "error" : m === "warn" ? "warning" : "info");
      this.restoreProcess.push(() => (c[m] = orig));
    }
    const debug = console.debug;
    console.debug = () => {};
    this.restoreProcess.push(() => (console.debug = debug));
    const errWrite = process.stderr.write;
    (process.stderr as any).write = (chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk);
      if (text.trim()) this.addNotice(text.trim(), "warning");
      const cb = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      cb?.();
      return true;
    };
    this.restoreProcess.push(() => ((process.stderr as any).write = errWrite));
  }

  /**
   * Dispose the runtime, then leave the screen; run() resolves with `code`. The keyboard
   * protocols and the mouse go off first and the terminal's late replies are read (bounded), so
   * nothing is left on the shell's line. Fullscreen prints the conversation into the normal
   * screen; both modes then show how to resume the session (not after a signal, as pi 1.6).
   */
  async quit(code = 0, how: { signal?: boolean; hangup?: boolean } = {}): Promise<void> {
    if (this.quitting) return;
    this.quitting = true;
    // Open dialogs answer with their defaults, so a run waiting on one (a permission question) can end.
    this.dialogs.cancelDialogs();
    this.setStatusLine("Closing the session…");
    this.router.draining = true;
    const drained = this.terminal?.drain(this.opts.processHooks ? 1000 : 0);
    try {
      await this.runtime.dispose();
    } catch (e) {
      this.notices.push(`error while closing the session: ${(e as Error).message}`);
    }
    await drained;
    const width = this.screen ? Math.max(10, (this.screen as any).width as number) : 80;
    const fullscreenExit = (this.kernel.settings.get() as { fullscreenExitOutput?: unknown }).fullscreenExitOutput;
    // After a hang-up the terminal is gone: nothing more is written to it.
    const transcript = this.screen && !how.hangup && this.tuiMode === "fullscreen" && fullscreenExit !== "resume-hint" ? this.safely(() => transcriptText(this, width)) : "";
    const out = this.screen ? (program(this.screen).output as NodeJS.WritableStream & { isTTY?: boolean }) : undefined;
    this.destroy();
    if (this.screen) program(this.screen).flush?.();
    const hint = how.signal ? "" : this.safely(() => resumeHint(this, !!out?.isTTY));
    // Regular mode left the editor and the footer in place: a blank line, then the hint (pi 1.6's spacing).
    const after = transcript + (hint && this.scrollback.enabled ? "\n" : "") + hint;
    if (after && out) {
      try {
        out.write(after.replace(/\r?\n/g, "\r\n"));
      } catch {
        /* output gone */
      }
    }
    if (this.notices.length) process.stderr.write(this.notices.join("\n") + "\n");
    this.resolveRun?.(code);
  }

  private safely(f: () => string): string {
    try {
      return f();
    } catch {
      return "";
    }
  }

  /** Tear down the screen and every timer and listener (idempotent). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.renderer.cancel();
    if (this.spinnerTimer) clearInterval(this.spinnerTimer);
    if (this.flashTimer) clearTimeout(this.flashTimer);
    if (this.router.escPending) clearImmediate(this.router.escPending);
    this.unsubscribe();
    this.unRebind();
    this.unDiag();
    this.unCommands();
    this.dialogs.dispose();
    for (const r of this.restoreProcess.splice(0).reverse()) {
      try {
        r();
      } catch {
        /* keep restoring */
      }
    }
    if (!this.screen) return;
    this.viewport.dispose();
    this.programStatus.clear();
    this.terminal.leave();
    try {
      program(this.screen).showCursor?.();
    } catch {
      /* output gone */
    }
    const input = program(this.screen)?.input as any;
    const destroyScreen = () => {
      try {
        this.screen.destroy();
      } catch {
        /* already gone */
      }
    };
    // Regular mode: what was not printed turn by turn goes to the normal buffer now.
    if (this.scrollback.enabled) this.scrollback.leave(destroyScreen);
    else destroyScreen();
    try {
      if (input?.setRawMode && input.isTTY) input.setRawMode(false);
      input?.pause?.();
    } catch {
      /* not a TTY */
    }
  }

  // ---- parts' entry points used from outside them ---------------------------------------------

  /** Rebuild the chat from the session's transcript (startup, switch, compaction, tree). */
  rebuildChat(): void {
    this.events.rebuildChat();
  }
  /** Ask for a frame; frames are coalesced to one per `frameMs`. */
  requestRender(): void {
    this.renderer.requestRender();
  }
  /** Draw now (tests call this directly). */
  renderNow(): void {
    this.renderer.renderNow();
  }
  /** Frames drawn and time spent drawing them (for measurements). */
  get stats() {
    return this.renderer.stats;
  }
  /** The screen as plain text (tests). */
  screenText(): string {
    return this.renderer.screenText();
  }
  chatContext(): ChatContext {
    return this.renderer.chatContext();
  }
  layerEnv(): LayerEnv {
    return this.renderer.layerEnv();
  }
  /** Route one key press (tests may call this directly). */
  dispatch(k: KeyPress): void {
    this.router.dispatch(k);
  }
  commandItems(): CompletionItem[] {
    return this.router.commandItems();
  }
  get layers(): readonly Layer[] {
    return this.dialogs.layers;
  }
  pushLayer(l: Layer): void {
    this.dialogs.pushLayer(l);
  }
  popLayer(l: Layer): void {
    this.dialogs.popLayer(l);
  }
  dialog<T>(make: (finish: (v: T) => void, deadline: number | undefined) => Layer, fallback: T, opts?: UiDialogOptions): Promise<T> {
    return this.dialogs.dialog(make, fallback, opts);
  }
  select<T>(title: string, items: SelectItem<T>[], extra: Partial<ConstructorParameters<typeof SelectLayer<T>>[0]> = {}, opts?: UiDialogOptions): Promise<T | undefined> {
    return this.dialogs.select(title, items, extra, opts);
  }
  confirm(title: string, message: string, opts?: UiDialogOptions): Promise<boolean> {
    return this.dialogs.confirm(title, message, opts);
  }
  input(title: string, o: { placeholder?: string; prefill?: string; multiline?: boolean; message?: string } = {}, opts?: UiDialogOptions): Promise<string | undefined> {
    return this.dialogs.input(title, o, opts);
  }

  /** Show or hide thinking blocks (the hidden-thinking state). */
  setShowThinking(on: boolean): void {
    this.showThinking = on;
    this.chat.invalidateAll();
    this.requestRender();
  }
  toggleThinking(): void {
    this.setShowThinking(!this.showThinking);
  }

  // ---- notices and status ---------------------------------------------------------------------

  addNotice(text: string, level: "info" | "warning" | "error" | "success" = "info"): void {
    if (this.destroyed) {
      if (level !== "info") this.notices.push(text);
      return;
    }
    this.chat.add(new NoticeBlock(text, level));
    this.requestRender();
  }

  flashText: string | undefined;
  private flashTimer: NodeJS.Timeout | undefined;
  /** A short-lived hint above the editor (not kept in the conversation). */
  flash(text: string, ms = 2000): void {
    this.flashText = text;
    if (this.flashTimer) clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => {
      this.flashText = undefined;
      this.flashTimer = undefined;
      this.requestRender();
    }, ms);
    this.flashTimer.unref?.();
    this.requestRender();
  }

  setStatusLine(text: string | undefined): void {
    this.statusLine = text;
    this.syncSpinner();
    this.requestRender();
  }

  setWorking(on: boolean): void {
    this.working = on;
    if (!on) this.workingMessage = undefined;
    this.syncSpinner();
  }

  private syncSpinner(): void {
    const want = this.working || this.statusLine !== undefined;
    if (want && !this.spinnerTimer && !this.destroyed) {
      this.spinnerTimer = setInterval(() => this.requestRender(), 120);
      this.spinnerTimer.unref?.();
    } else if (!want && this.spinnerTimer) {
      clearInterval(this.spinnerTimer);
      this.spinnerTimer = undefined;
    }
  }

  updateTitle(): void {
    if (!this.screen) return;
    const name = this.customTitle ?? `${this.kernel.app.name} - ${this.session.sessionName ?? this.kernel.cwd.split("/").pop() ?? ""}`;
    try {
      (this.screen as any).title = sanitize(name, false);
    } catch {
      /* output gone */
    }
  }

  // ---- rendering --------------------------------------------------------------------------------

  // ---- input ------------------------------------------------------------------------------------

  // ---- actions ------------------------------------------------------------------------------------

  async onInterrupt(): Promise<void> {
    const s = this.session;
    if (this.cancelBusy) {
      this.cancelBusy();
      return;
    }
    if (s.isStreaming || s.isRetrying || s.isCompacting || this.liveBash.length) {
      const q = await s.clearQueue();
      const restored = [...q.steering, ...q.followUp];
      if (restored.length) {
        const cur = this.editor.getText();
        this.editor.setText([...restored, cur].filter((x) => x.trim()).join("\n\n"));
      }
      if (this.liveBash.length) s.abortBash();
      if (s.isRetrying) s.abortRetry();
      if (s.isCompacting && typeof s.abortCompaction === "function") s.abortCompaction();
      await s.abort();
      this.requestRender();
      return;
    }
    const now = Date.now();
    const action = this.kernel.settings.get().doubleEscapeAction;
    if (!this.editor.getText() && now - this.lastEscape < 500 && action && action !== "none") {
      this.lastEscape = 0;
      await this.runCommand(action === "fork" ? "/fork" : "/tree");
      return;
    }
    this.lastEscape = now;
  }

  async restoreQueue(): Promise<void> {
    const q = await this.session.clearQueue();
    const restored = [...q.steering, ...q.followUp];
    if (!restored.length) return;
    this.editor.setText([...restored, this.editor.getText()].filter((x) => x.trim()).join("\n\n"));
    this.requestRender();
  }

  async cycleModel(dir: "forward" | "backward"): Promise<void> {
    try {
      const r = await this.session.cycleModel(dir);
      if (r) this.addNotice(`Model: ${r.model.provider}/${r.model.id}${r.model.reasoning ? ` (thinking ${r.thinkingLevel})` : ""}`, "info");
      else this.addNotice("No other model to switch to (see /model)", "info");
    } catch (e) {
      this.addNotice((e as Error).message, "error");
    }
  }

  /** Submit the editor: bash (!), built-in commands, else a prompt (steer or follow-up while streaming). */
  async submit(kind: "steer" | "followUp"): Promise<void> {
    const text = this.editor.getExpandedText().trim();
    if (!text) return;
    this.editor.addToHistory(this.editor.getText());
    this.editor.clear();
    return this.submitText(text, kind);
  }

  /** Submit text (ours or an extension's editor): bash (!), built-in commands, else a prompt. */
  async submitText(raw: string, kind: "steer" | "followUp"): Promise<void> {
    const text = raw.trim();
    if (!text) return;
    this.completion = undefined;
    this.chat.scroll = 0;
    this.requestRender();
    if (text.startsWith("!")) return this.runBash(text);
    if (text.startsWith("/")) {
      const handled = await this.runCommand(text);
      if (handled) return;
    }
    this.sendPrompt(text, kind);
  }

  /** Send a prompt; while streaming it is queued as a steer or follow-up message. */
  sendPrompt(text: string, kind: "steer" | "followUp" = "steer", images?: ImageContent[]): void {
    const s = this.session;
    const opts: Record<string, unknown> = { images, source: "interactive" };
    if (s.isStreaming) opts.streamingBehavior = kind;
    Promise.resolve()
      .then(() => s.prompt(text, opts))
      .catch((e: Error) => {
        this.addNotice(e.message, "error");
        if (!this.editor.getText()) this.editor.setText(text);
        this.requestRender();
      });
  }

  private async runBash(text: string): Promise<void> {
    const excluded = text.startsWith("!!");
    const command = text.slice(excluded ? 2 : 1).trim();
    if (!command) return;
    const blk = this.chat.add(new BashBlock(command, excluded));
    this.liveBash.push(blk);
    this.setWorking(this.working);
    this.setStatusLine(`Running ${command}`);
    try {
      const r = await this.session.executeBash(command, { excludeFromContext: excluded, onData: (chunk: string) => { blk.append(chunk); this.requestRender(); } });
      if (!blk.bound) {
        blk.finish(r);
        blk.bound = true;
      }
    } catch (e) {
      blk.fail((e as Error).message);
      blk.bound = true;
    } finally {
      // While the agent streams the session adds the message later; keep the block live until then.
      if (!this.session.isStreaming) this.liveBash = this.liveBash.filter((x) => x !== blk);
      this.setStatusLine(undefined);
    }
  }

  /** Run a slash command: built-ins here, the rest through session.prompt. Returns true when handled here. */
  async runCommand(text: string): Promise<boolean> {
    try {
      return await runBuiltinCommand(this, text);
    } catch (e) {
      this.addNotice((e as Error).message, "error");
      return true;
    }
  }

  externalEditor(): void {
    const editorCmd = process.env.VISUAL || process.env.EDITOR;
    if (!editorCmd) {
      this.addNotice("Set $VISUAL or $EDITOR to edit in an external editor", "warning");
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), "pi-edit-"));
    const file = join(dir, "message.md");
    writeFileSync(file, this.editor.getText());
    try {
      const resume = this.releaseTerminal();
      const r = spawnSync(editorCmd, [file], { stdio: "inherit", shell: true });
      resume();
      if (r.status === 0) this.editor.setText(readFileSync(file, "utf8").replace(/\n$/, ""));
      else this.addNotice(`${editorCmd} exited with ${r.status ?? r.signal}`, "warning");
    } finally {
      rmSync(dir, { recursive: true, force: true });
      this.renderNow();
    }
  }

  /**
   * Give the terminal back as it was (modes off, normal screen, cursor shown, cooked input) for a
   * shell or an editor; the returned function takes it again (raw input, screen, protocols) and
   * marks the whole screen for redrawing. Written before blessed's pause(), which drops writes.
   */
  private releaseTerminal(): () => void {
    const prog = program(this.screen);
    const alt = this.tuiMode === "fullscreen" && prog.isAlt;
    this.terminal.leave();
    if (alt) prog.normalBuffer?.();
    prog.showCursor?.();
    prog.flush?.();
    const resume = prog.pause?.();
    return () => {
      resume?.();
      if (alt) prog.alternateBuffer?.();
      this.terminal.enter({ mouse: this.tuiMode === "fullscreen" });
      prog.hideCursor?.();
      (this.screen as any).alloc?.();
      // A resize while we were away was not seen: ask for the size again.
      if (this.opts.processHooks && process.platform !== "win32") {
        try {
          process.kill(process.pid, "SIGWINCH");
        } catch {
          /* not permitted here */
        }
      }
    };
  }

  suspend(): void {
    if (process.platform === "win32" || this.opts.input) {
      this.addNotice("Suspending is not available here", "info");
      return;
    }
    const resume = this.releaseTerminal();
    process.once("SIGCONT", () => {
      resume();
      this.renderNow();
    });
    process.kill(process.pid, "SIGTSTP");
  }

  // ---- layers -----------------------------------------------------------------------------------

  /** The session picker (for /resume and -r): resolves to a session file path. */
  async pickSession(): Promise<string | undefined> {
    const { pickSession } = await import("./sessions.js");
    return pickSession(this);
  }

  // ---- extension UI ---------------------------------------------------------------------------

  setTheme(theme: Theme): void {
    this.theme = theme;
    setActiveTheme(theme);
    this.chat.invalidateAll();
    for (const b of this.chat.blocks) if (b instanceof AssistantBlock) b.touch();
    for (const c of [this.headerComponent, this.footerComponent, this.customEditor.component, ...[...this.widgets.values()].map((w) => w.content)]) invalidate(c);
    this.requestRender();
  }


}
