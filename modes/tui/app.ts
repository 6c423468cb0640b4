/**
 * The interactive terminal UI. Blessed draws three plain boxes (chat viewport, bottom panel,
 * overlay); everything in them is our own line model (chat.ts), editor (editor.ts) and layers
 * (layers.ts). One keypress listener routes keys (Esc/Alt+Enter told apart by a one-tick
 * delay), renders are coalesced to at most ~30 frames per second by one timer, and session
 * events only mark blocks dirty.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Kernel } from "../../core/kernel.js";
import { formatDiagnostic } from "../../core/kernel.js";
import { messageText } from "../../core/agent/messages.js";
import { dialogDeadline, type ExtensionUI, type UiDialogOptions } from "../../core/ui.js";
import type { AgentMessage, AgentSessionEvent, ImageContent } from "../../core/types.js";
import { createBox, createScreen, program, screenText, type Box, type Screen } from "./blessed-setup.js";
import {
  AssistantBlock,
  BashBlock,
  ChatView,
  ComponentBlock,
  CustomMessageBlock,
  LinesBlock,
  NoticeBlock,
  SummaryBlock,
  ToolBlock,
  UserBlock,
  componentLines,
  type Block,
  type ChatContext,
} from "./chat.js";
import { commonPrefix, completePath, computeCompletion, FileIndex, type Completion, type CompletionItem } from "./completion.js";
import { Editor } from "./editor.js";
import { findGitBranch, renderFooter } from "./footer.js";
import { canonicalKey, fromBlessed, keyFromData, Keybindings, parseExtendedKey, type KeyPress } from "./keys.js";
import { ComponentLayer, ConfirmLayer, frame, InputLayer, SelectLayer, type Layer, type LayerEnv, type SelectItem } from "./layers.js";
import { findThemes, Theme } from "./theme.js";
import { padToWidth, sanitize, truncate, visibleWidth, wrapText } from "./text.js";
import { BUILTIN_COMMANDS, runBuiltinCommand } from "./commands.js";

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

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

interface Widget {
  placement: "aboveEditor" | "belowEditor";
  content: string[] | unknown;
}

export class TuiApp {
  readonly kernel: Kernel;
  readonly runtime: any;
  screen!: Screen;
  private chatBox!: Box;
  private panelBox!: Box;
  private overlayBox!: Box;
  readonly chat = new ChatView();
  keys: Keybindings;
  readonly editor: Editor;
  theme: Theme;
  themes: Map<string, Theme> = new Map();
  readonly layers: Layer[] = [];
  expandTools = false;
  showThinking: boolean;
  private frameMs: number;
  private renderTimer: NodeJS.Timeout | undefined;
  private lastRender = 0;
  private destroyed = false;
  private escPending: NodeJS.Immediate | undefined;
  private suppressKeys = false;
  private inPaste = false;
  private pasteBuf = "";
  private lastCtrlC = 0;
  private lastEscape = 0;
  private completion: Completion | undefined;
  private files: FileIndex;
  private unsubscribe: () => void = () => {};
  private unRebind: () => void = () => {};
  private unDiag: () => void = () => {};
  private currentAssistant: AssistantBlock | undefined;
  private tools = new Map<string, ToolBlock>();
  private liveBash: BashBlock[] = [];
  private queue = { steering: [] as string[], followUp: [] as string[] };
  private working = false;
  private workingMessage: string | undefined;
  private statusLine: string | undefined;
  private spinnerTimer: NodeJS.Timeout | undefined;
  private countdownTimer: NodeJS.Timeout | undefined;
  private headerBlock: Block | undefined;
  private headerComponent: unknown;
  private footerComponent: unknown;
  /** Session stats for the footer, recomputed after messages end rather than on every frame. */
  private footerStats: { stats?: unknown; at: number } = { at: -1 };
  private statsVersion = 0;
  readonly statuses = new Map<string, string>();
  private widgets = new Map<string, Widget>();
  private inputHandlers = new Set<(data: string) => unknown>();
  private customTitle: string | undefined;
  private gitBranch: string | null = null;
  private resolveRun: ((code: number) => void) | undefined;
  private quitting = false;
  private notices: string[] = [];
  private warnedUnsupported = new Set<string>();
  private restoreProcess: Array<() => void> = [];
  readonly ui: ExtensionUI;
  /** Set while something other than the agent run can be cancelled with Esc (a branch summary). */
  cancelBusy: (() => void) | undefined;
  /** Frames drawn and time spent drawing them (for measurements). */
  readonly stats = { frames: 0, renderMs: 0, lastFrameMs: 0 };

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
    this.ui = this.createUi();
  }

  get session(): any {
    return this.runtime.session;
  }

  // ---- life cycle -----------------------------------------------------------------------------

  /** Build the screen, subscribe to the session, draw the first frame. */
  start(): void {
    const { screen, notice } = createScreen({ input: this.opts.input, output: this.opts.output, env: this.opts.env });
    this.screen = screen;
    if (notice) this.notices.push(notice);
    this.chatBox = createBox(screen, { top: 0, left: 0, width: "100%", height: 1 });
    this.panelBox = createBox(screen, { top: 1, left: 0, width: "100%", height: 1 });
    this.overlayBox = createBox(screen, { top: 0, left: 0, width: 10, height: 3, hidden: true });
    program(screen).hideCursor?.();
    // Bracketed paste: pasted newlines must not submit.
    try {
      program(screen).output.write("\x1b[?2004h");
    } catch {
      /* output gone */
    }
    const input = program(screen).input as NodeJS.ReadableStream & { prependListener?: Function };
    const onData = (buf: Buffer | string) => this.onInputData(typeof buf === "string" ? buf : buf.toString("utf8"));
    input.prependListener?.("data", onData);
    const afterData = () => {
      this.suppressKeys = false;
    };
    input.on("data", afterData);
    this.restoreProcess.push(() => {
      input.removeListener("data", onData);
      input.removeListener("data", afterData);
    });
    screen.on("keypress", (ch: string | undefined, key: any) => this.onKeypress(ch, key));
    screen.on("resize", () => this.requestRender());

    this.gitBranch = findGitBranch(this.kernel.cwd);
    this.unDiag = this.kernel.diagnostics.subscribe((d) => {
      if (d.level === "info") return;
      this.addNotice(formatDiagnostic(d), d.level === "error" ? "error" : "warning");
    });
    this.subscribe();
    this.unRebind = this.runtime.onRebind?.(() => this.onRebind()) ?? (() => {});
    this.rebuildChat();
    for (const n of this.notices) this.addNotice(n, "warning");
    this.notices = [];
    // Startup diagnostics were printed before the screen took over; show the serious ones again.
    const early = this.kernel.diagnostics.list().filter((d) => d.level !== "info").slice(-10);
    for (const d of early) this.addNotice(formatDiagnostic(d), d.level === "error" ? "error" : "warning");
    this.updateTitle();
    this.renderNow();
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
    if (!trust || trust.isTrusted() || !trust.hasProjectCode()) return;
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
    const onSignal = (sig: NodeJS.Signals) => void this.quit(sig === "SIGHUP" ? 129 : sig === "SIGINT" ? 130 : 143);
    for (const s of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
      process.on(s, onSignal);
      this.restoreProcess.push(() => process.off(s, onSignal));
    }
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

  /** Dispose the runtime, then leave the screen; run() resolves with `code`. */
  async quit(code = 0): Promise<void> {
    if (this.quitting) return;
    this.quitting = true;
    // Open dialogs answer with their defaults, so a run waiting on one (a permission question) can end.
    this.cancelDialogs();
    this.setStatusLine("Closing the session…");
    try {
      await this.runtime.dispose();
    } catch (e) {
      this.notices.push(`error while closing the session: ${(e as Error).message}`);
    }
    this.destroy();
    if (this.notices.length) process.stderr.write(this.notices.join("\n") + "\n");
    this.resolveRun?.(code);
  }

  /** Tear down the screen and every timer and listener (idempotent). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.renderTimer) clearTimeout(this.renderTimer);
    if (this.spinnerTimer) clearInterval(this.spinnerTimer);
    if (this.countdownTimer) clearInterval(this.countdownTimer);
    if (this.flashTimer) clearTimeout(this.flashTimer);
    if (this.escPending) clearImmediate(this.escPending);
    this.unsubscribe();
    this.unRebind();
    this.unDiag();
    this.cancelDialogs();
    for (const l of this.layers.splice(0)) l.dispose?.();
    for (const r of this.restoreProcess.splice(0).reverse()) {
      try {
        r();
      } catch {
        /* keep restoring */
      }
    }
    if (!this.screen) return;
    try {
      program(this.screen).output.write("\x1b[?2004l");
      program(this.screen).showCursor?.();
    } catch {
      /* output gone */
    }
    const input = program(this.screen)?.input as any;
    try {
      this.screen.destroy();
    } catch {
      /* already gone */
    }
    try {
      if (input?.setRawMode && input.isTTY) input.setRawMode(false);
      input?.pause?.();
    } catch {
      /* not a TTY */
    }
  }

  // ---- session events -------------------------------------------------------------------------

  private subscribe(): void {
    this.unsubscribe();
    this.unsubscribe = this.session.subscribe((e: AgentSessionEvent) => this.onEvent(e));
  }

  private onRebind(): void {
    this.statsVersion++;
    this.subscribe();
    this.working = false;
    this.queue = { steering: [], followUp: [] };
    this.rebuildChat();
    this.updateTitle();
    this.gitBranch = findGitBranch(this.kernel.cwd);
    this.requestRender();
  }

  private onEvent(e: AgentSessionEvent): void {
    if (e.type === "message_end" || e.type === "agent_settled" || e.type === "model_select" || e.type === "compaction_end") this.statsVersion++;
    switch (e.type) {
      case "agent_start":
        this.setWorking(true);
        break;
      case "agent_end":
      case "agent_settled":
        this.setWorking(false);
        this.currentAssistant = undefined;
        break;
      case "message_start":
        this.onMessageStart(e.message);
        break;
      case "message_update":
        if ((e.message as { role: string }).role === "assistant") this.onAssistantUpdate(e.message, true);
        break;
      case "message_end":
        if ((e.message as { role: string }).role === "assistant") {
          this.onAssistantUpdate(e.message, false);
          this.currentAssistant = undefined;
        } else if ((e.message as { role: string }).role === "toolResult") {
          const m = e.message as { toolCallId: string; toolName: string; content: any; details?: unknown; isError?: boolean };
          const tb = this.tools.get(m.toolCallId);
          if (tb && tb.status !== "done" && tb.status !== "error") tb.finish({ content: m.content, details: m.details }, !!m.isError);
        }
        break;
      case "tool_execution_start": {
        const tb = this.toolBlock(e.toolCallId, e.toolName);
        tb.start(e.args);
        break;
      }
      case "tool_execution_update":
        this.toolBlock(e.toolCallId, e.toolName).update(e.partialResult);
        break;
      case "tool_execution_end":
        this.toolBlock(e.toolCallId, e.toolName).finish(e.result, e.isError);
        break;
      case "queue_update":
        this.queue = { steering: [...e.steering], followUp: [...e.followUp] };
        break;
      case "compaction_start":
        this.setStatusLine(e.reason === "manual" ? "Compacting the context…" : `Compacting the context (${e.reason})…`);
        break;
      case "compaction_end":
        this.setStatusLine(undefined);
        if (e.errorMessage) this.addNotice(`Compaction failed: ${e.errorMessage}`, "error");
        else if (e.aborted) this.addNotice("Compaction cancelled", "warning");
        else if (e.result) this.rebuildChat();
        break;
      case "auto_retry_start":
        this.setStatusLine(`Retrying (${e.attempt}/${e.maxAttempts}) in ${Math.round(e.delayMs / 100) / 10}s: ${e.errorMessage}`);
        break;
      case "auto_retry_end":
        this.setStatusLine(undefined);
        if (!e.success && e.finalError) this.addNotice(`Giving up after ${e.attempt} attempts: ${e.finalError}`, "error");
        break;
      case "model_select":
        break;
    }
    this.requestRender();
  }

  private onMessageStart(m: AgentMessage): void {
    const role = (m as { role: string }).role;
    if (role === "assistant") {
      this.currentAssistant = this.chat.add(new AssistantBlock(m as any, this.theme, this.mdOptions(), true));
      this.syncToolCalls(m, false);
    } else if (role === "user") {
      this.chat.add(new UserBlock(userText(m)));
    } else if (role === "custom") {
      if ((m as { display?: boolean }).display !== false) this.chat.add(new CustomMessageBlock(m as any));
    } else if (role === "bashExecution") {
      const b = m as { command: string; output: string; exitCode?: number; cancelled: boolean; truncated: boolean; fullOutputPath?: string; excludeFromContext?: boolean };
      const live = this.liveBash.find((x) => !x.bound && x.command === b.command);
      if (live) {
        live.bound = true;
        this.liveBash = this.liveBash.filter((x) => x !== live);
        live.finish(b);
      } else {
        const blk = new BashBlock(b.command, !!b.excludeFromContext);
        blk.finish(b);
        this.chat.add(blk);
      }
    } else if (role === "compactionSummary") {
      const c = m as { summary: string; tokensBefore?: number };
      this.chat.add(new SummaryBlock("compaction", c.summary, c.tokensBefore));
    } else if (role === "branchSummary") {
      this.chat.add(new SummaryBlock("branch", (m as { summary: string }).summary));
    }
  }

  private onAssistantUpdate(m: AgentMessage, streaming: boolean): void {
    if (!this.currentAssistant) this.currentAssistant = this.chat.add(new AssistantBlock(m as any, this.theme, this.mdOptions(), streaming));
    else this.currentAssistant.setMessage(m as any, streaming);
    this.syncToolCalls(m, !streaming);
  }

  private syncToolCalls(m: AgentMessage, complete: boolean): void {
    for (const c of ((m as { content?: any[] }).content ?? []) as any[]) {
      if (c?.type !== "toolCall" || !c.id) continue;
      const tb = this.toolBlock(c.id, c.name);
      if (tb.status === "pending") tb.setArgs(c.arguments, complete);
    }
  }

  private toolBlock(id: string, name: string): ToolBlock {
    let tb = this.tools.get(id);
    if (!tb) {
      tb = this.chat.add(new ToolBlock(id, name));
      this.tools.set(id, tb);
    } else if (name && tb.name !== name) {
      tb.name = name;
    }
    return tb;
  }

  /** Rebuild the chat from the session's transcript (startup, switch, compaction, tree). */
  rebuildChat(): void {
    this.statsVersion++;
    this.chat.clear();
    this.tools.clear();
    this.liveBash = [];
    this.currentAssistant = undefined;
    this.headerBlock = this.chat.add(this.makeHeader());
    for (const m of this.session.messages as AgentMessage[]) {
      const role = (m as { role: string }).role;
      if (role === "assistant") {
        this.chat.add(new AssistantBlock(m as any, this.theme, this.mdOptions(), false));
        this.syncToolCalls(m, true);
      } else if (role === "toolResult") {
        const r = m as { toolCallId: string; toolName: string; content: any; details?: unknown; isError?: boolean };
        this.toolBlock(r.toolCallId, r.toolName).finish({ content: r.content, details: r.details }, !!r.isError);
      } else this.onMessageStart(m);
    }
    this.currentAssistant = undefined;
    const history = (this.session.messages as AgentMessage[]).filter((m) => (m as { role: string }).role === "user").map((m) => userText(m));
    this.editor.setHistory(history);
    this.requestRender();
  }

  private makeHeader(): Block {
    if (this.headerComponent) return new ComponentBlock(this.headerComponent);
    const k = this.keys;
    const app = this.kernel.app;
    const quiet = !!this.kernel.settings.get().quietStartup;
    return new LinesBlock((width, ctx) => {
      const t = ctx.theme;
      const lines = [t.bold(t.fg("accent", app.name)) + t.fg("dim", ` v${app.version}`)];
      if (!quiet) {
        const hints = [
          `${k.hint("app.interrupt")} interrupt`,
          `${k.hint("app.clear")} clear`,
          `${k.hint("app.exit")} quit`,
          `/ commands`,
          `! bash`,
          `@ files`,
          `${k.hint("app.tools.expand")} tools`,
          `${k.hint("app.thinking.toggle")} thinking`,
          `${k.hint("app.message.followUp")} follow-up`,
          `${k.hint("app.model.select")} model`,
        ];
        lines.push(...wrapText(t.fg("dim", hints.join(" · ")), width));
      }
      return lines;
    });
  }

  private mdOptions() {
    const md = this.kernel.settings.get().markdown as { codeBlockIndent?: string } | undefined;
    return { codeIndent: md?.codeBlockIndent ?? "  " };
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

  private flashText: string | undefined;
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

  private setWorking(on: boolean): void {
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

  /** Ask for a frame; frames are coalesced to one per `frameMs`. */
  requestRender(): void {
    if (this.renderTimer || this.destroyed || !this.screen) return;
    const wait = Math.max(0, this.frameMs - (Date.now() - this.lastRender));
    this.renderTimer = setTimeout(() => {
      this.renderTimer = undefined;
      this.renderNow();
    }, wait);
  }

  chatContext(): ChatContext {
    return {
      theme: this.theme,
      keys: this.keys,
      expandTools: this.expandTools,
      showThinking: this.showThinking,
      cwd: this.kernel.cwd,
      markdown: this.mdOptions(),
      tool: (name) => this.kernel.tools.get(name) as any,
      messageRenderer: (type) => {
        const r = this.kernel.messageRenderers.get(type);
        return r ? (r.render as (...a: any[]) => unknown) : undefined;
      },
      requestRender: () => this.requestRender(),
      report: (message, error) => this.kernel.diagnostics.report({ level: "warning", source: "tui", message, error }),
    };
  }

  private layerEnv(): LayerEnv {
    return { theme: this.theme, keys: this.keys, requestRender: () => this.requestRender() };
  }

  /** Draw now (tests call this directly). */
  renderNow(): void {
    if (this.destroyed || !this.screen) return;
    if (this.renderTimer) {
      clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
    }
    const t0 = performance.now();
    const W = Math.max(10, (this.screen as any).width as number);
    const H = Math.max(4, (this.screen as any).height as number);
    const panel = this.panelLines(W, H);
    const panelH = Math.min(panel.length, H - 1);
    const chatH = H - panelH;
    const chatLines = this.chat.visible(W, chatH, this.chatContext());
    this.chatBox.top = 0;
    this.chatBox.height = chatH;
    this.chatBox.setContent(chatLines.join("\n"));
    this.panelBox.top = chatH;
    this.panelBox.height = Math.max(1, panelH);
    this.panelBox.setContent(panel.slice(panel.length - panelH).join("\n"));
    this.drawOverlay(W, H);
    this.screen.render();
    this.lastRender = Date.now();
    const ms = performance.now() - t0;
    this.stats.frames++;
    this.stats.renderMs += ms;
    this.stats.lastFrameMs = ms;
  }

  private topLayer(placement: "panel" | "overlay"): Layer | undefined {
    for (let i = this.layers.length - 1; i >= 0; i--) if (this.layers[i]!.placement === placement) return this.layers[i];
    return undefined;
  }

  private drawOverlay(W: number, H: number): void {
    const layer = this.topLayer("overlay");
    if (!layer) {
      if (!this.overlayBox.hidden) this.overlayBox.hide();
      return;
    }
    const o = layer.overlay ?? {};
    const size = (v: number | string | undefined, total: number, dflt: number) =>
      typeof v === "number" ? v : typeof v === "string" && v.endsWith("%") ? Math.floor((total * parseFloat(v)) / 100) : dflt;
    const w = Math.max(10, Math.min(W, size(o.width, W, Math.min(W - 4, 80))));
    const maxH = Math.max(3, Math.min(H, size(o.maxHeight, H, H - 2)));
    let lines: string[];
    try {
      lines = layer.render(w - 4, maxH - 2, this.layerEnv());
    } catch (e) {
      lines = [this.theme.fg("error", `[component failed: ${(e as Error).message}]`)];
    }
    const framed = frame(lines.slice(0, maxH - 2), w, this.theme);
    this.overlayBox.width = w;
    this.overlayBox.height = framed.length;
    this.overlayBox.left = Math.max(0, Math.floor((W - w) / 2));
    this.overlayBox.top = Math.max(0, Math.floor((H - framed.length) / 2));
    this.overlayBox.setContent(framed.join("\n"));
    if (this.overlayBox.hidden) this.overlayBox.show();
    this.overlayBox.setFront();
  }

  private panelLines(W: number, H: number): string[] {
    const t = this.theme;
    const out: string[] = [];
    // Working line.
    if (this.working || this.statusLine) {
      const spin = t.fg("accent", SPINNER[Math.floor(Date.now() / 100) % SPINNER.length]!);
      const msg = this.statusLine ?? this.workingMessage ?? "Working…";
      const hint = this.working ? t.fg("dim", ` (${this.keys.hint("app.interrupt")} to interrupt)`) : "";
      out.push(truncate(`${spin} ${t.fg("muted", sanitize(msg, false))}${hint}`, W));
    }
    if (this.flashText) out.push(truncate(t.fg("warning", sanitize(this.flashText, false)), W));
    // Queued messages.
    const q = [...this.queue.steering.map((s) => ["steer", s] as const), ...this.queue.followUp.map((s) => ["follow-up", s] as const)];
    for (const [kind, text] of q.slice(-5)) out.push(truncate(t.fg("muted", `↳ ${kind}: `) + sanitize(text.replace(/\s+/g, " "), false), W));
    if (q.length) out.push(t.fg("dim", truncate(`${q.length} queued · ${this.keys.hint("app.message.dequeue")} or ${this.keys.hint("app.interrupt")} puts them back in the editor`, W)));
    out.push(...this.widgetLines("aboveEditor", W));
    const panelLayer = this.topLayer("panel");
    if (panelLayer) {
      try {
        out.push(...panelLayer.render(W, Math.max(3, H - out.length - 4), this.layerEnv()).map((l) => truncate(l, W)));
      } catch (e) {
        out.push(t.fg("error", `[dialog failed: ${(e as Error).message}]`));
      }
    } else out.push(...this.editorLines(W, H));
    out.push(...this.widgetLines("belowEditor", W));
    out.push(...this.footerLines(W));
    return out;
  }

  private editorLines(W: number, H: number): string[] {
    const t = this.theme;
    const text = this.editor.getText();
    const token = text.startsWith("!") ? "bashMode" : t.thinkingBorder(this.session.model?.reasoning ? this.session.thinkingLevel : "off");
    const rule = t.fg(token, "─".repeat(W));
    const maxRows = Math.max(1, Math.min(12, Math.floor(H / 3)));
    const focused = !this.layers.length;
    const r = this.editor.render(W, maxRows, focused, this.session.isStreaming ? "steer the agent (Enter) or queue a follow-up (Alt+Enter)" : undefined);
    const out = [rule, ...r.lines, rule];
    const c = this.completion;
    if (c && focused) {
      const max = 8;
      const top = Math.max(0, Math.min(c.index - max + 1, c.items.length - max));
      const start = Math.max(0, Math.min(top, c.index));
      const labelW = Math.min(40, Math.max(...c.items.slice(start, start + max).map((i) => visibleWidth(i.label))));
      for (let i = start; i < Math.min(c.items.length, start + max); i++) {
        const it = c.items[i]!;
        const sel = i === c.index;
        let line = (sel ? t.fg("accent", "❯ ") : "  ") + padToWidth(sel ? t.fg("accent", it.label) : it.label, labelW);
        if (it.description) line += "  " + t.fg("dim", sanitize(it.description, false));
        line = truncate(line, W);
        out.push(sel ? t.bg("selectedBg", padToWidth(line, W)) : line);
      }
      if (c.items.length > max) out.push(t.fg("dim", `  ${c.index + 1}/${c.items.length} · Tab complete`));
    }
    return out;
  }

  private widgetLines(placement: "aboveEditor" | "belowEditor", W: number): string[] {
    const out: string[] = [];
    for (const [, w] of this.widgets) {
      if (w.placement !== placement) continue;
      try {
        out.push(...componentLines(w.content, W));
      } catch (e) {
        out.push(this.theme.fg("error", `[widget failed: ${(e as Error).message}]`));
      }
    }
    return out;
  }

  private footerLines(W: number): string[] {
    if (this.footerComponent) {
      try {
        return componentLines(this.footerComponent, W);
      } catch (e) {
        return [this.theme.fg("error", `[footer failed: ${(e as Error).message}]`)];
      }
    }
    const s = this.session;
    let stats, context;
    try {
      if (this.footerStats.at !== this.statsVersion) this.footerStats = { stats: s.getSessionStats(), at: this.statsVersion };
      stats = this.footerStats.stats as any;
      context = s.getContextUsage();
    } catch {
      /* session disposed mid-switch */
    }
    return renderFooter(
      {
        cwd: this.kernel.cwd,
        sessionName: s.sessionName,
        model: s.model,
        thinkingLevel: s.thinkingLevel,
        stats,
        context,
        autoCompact: s.autoCompactionEnabled,
        gitBranch: this.gitBranch,
        statuses: this.statuses,
      },
      W,
      this.theme,
    );
  }

  /** The screen as plain text (tests). */
  screenText(): string {
    return screenText(this.screen);
  }

  // ---- input ------------------------------------------------------------------------------------

  private onInputData(s: string): void {
    if (this.destroyed) return;
    if (this.inPaste || s.includes("\x1b[200~")) {
      this.suppressKeys = true;
      this.handlePasteData(s);
      return;
    }
    const ext = parseExtendedKey(s);
    if (ext) {
      this.suppressKeys = true;
      this.dispatch(ext);
      return;
    }
    // A terminal without bracketed paste: several lines arriving at once are a paste.
    const body = s.replace(/[\r\n]+$/, "");
    if (body.length > 2 && !s.includes("\x1b") && /[\r\n]/.test(body)) {
      this.suppressKeys = true;
      this.deliverPaste(s.replace(/\r\n?/g, "\n").replace(/\n+$/, ""));
    }
  }

  private handlePasteData(s: string): void {
    let rest = s;
    while (rest) {
      if (!this.inPaste) {
        const i = rest.indexOf("\x1b[200~");
        if (i === -1) {
          const typed = rest.replace(/\x1b\[[0-9;]*[~A-Za-z]|[\x00-\x1f\x7f]/g, "");
          if (typed) this.deliverPaste(typed);
          return;
        }
        const typed = rest.slice(0, i).replace(/\x1b\[[0-9;]*[~A-Za-z]|[\x00-\x1f\x7f]/g, "");
        if (typed) this.deliverPaste(typed);
        this.inPaste = true;
        this.pasteBuf = "";
        rest = rest.slice(i + 6);
      } else {
        const j = rest.indexOf("\x1b[201~");
        if (j === -1) {
          this.pasteBuf += rest;
          return;
        }
        this.pasteBuf += rest.slice(0, j);
        this.inPaste = false;
        const text = this.pasteBuf;
        this.pasteBuf = "";
        this.deliverPaste(text);
        rest = rest.slice(j + 6);
      }
    }
  }

  private deliverPaste(text: string): void {
    const top = this.layers[this.layers.length - 1];
    if (top instanceof InputLayer) top.editor.paste(text);
    else if (top instanceof ComponentLayer) top.component?.handleInput?.(text);
    else if (top) {
      /* selectors take no paste */
    } else {
      this.editor.paste(text);
      this.updateCompletion();
    }
    this.requestRender();
  }

  private onKeypress(ch: string | undefined, key: any): void {
    if (this.suppressKeys || this.destroyed) return;
    const k = fromBlessed(ch, key);
    if (!k) return;
    if (k.id === "escape") {
      if (this.escPending) {
        clearImmediate(this.escPending);
        this.dispatch(k);
      }
      this.escPending = setImmediate(() => {
        this.escPending = undefined;
        this.dispatch(k);
      });
      return;
    }
    if (this.escPending) {
      clearImmediate(this.escPending);
      this.escPending = undefined;
      if (k.id === "enter") return this.dispatch({ id: "alt+enter", sequence: "\x1b\r" });
      this.dispatch({ id: "escape", sequence: "\x1b" });
    }
    this.dispatch(k);
  }

  /** Route one key press (tests may call this directly). */
  dispatch(k: KeyPress): void {
    if (this.destroyed) return;
    for (const h of this.inputHandlers) {
      try {
        const r = h(k.sequence) as { consume?: boolean } | undefined;
        if (r?.consume) return;
      } catch (e) {
        this.kernel.diagnostics.report({ level: "warning", source: "tui", message: "terminal input handler failed", error: e });
      }
    }
    try {
      this.handleKey(k);
    } catch (e) {
      this.addNotice(`key handling failed: ${(e as Error).message}`, "error");
    }
    this.requestRender();
  }

  private handleKey(k: KeyPress): void {
    const kb = this.keys;
    const top = this.layers[this.layers.length - 1];
    if (top) {
      top.handleKey(k, this.layerEnv());
      return;
    }
    const m = (id: string) => kb.matches(k, id);
    // Completion list.
    const c = this.completion;
    if (c) {
      if (m("tui.select.up") || m("tui.select.down")) {
        const n = c.items.length;
        c.index = (c.index + (m("tui.select.up") ? -1 : 1) + n) % n;
        return;
      }
      if (m("tui.input.tab")) {
        this.applyCompletion(c.items[c.index]!);
        return;
      }
      if (m("app.interrupt")) {
        this.completion = undefined;
        return;
      }
      if (m("tui.input.submit")) {
        const it = c.items[c.index]!;
        const current = this.editor.getText().slice(c.start, c.end);
        if (it.value !== current) {
          this.applyCompletion(it);
          if (c.kind !== "command") return;
        }
        this.completion = undefined;
      }
    }
    if (m("app.interrupt")) return void this.onInterrupt();
    if (m("app.clear")) {
      const now = Date.now();
      if (this.editor.getText()) {
        this.editor.clear();
        this.completion = undefined;
        this.lastCtrlC = now;
      } else if (now - this.lastCtrlC < 1500) void this.quit(0);
      else {
        this.lastCtrlC = now;
        this.flash(`Press ${kb.hint("app.clear")} again to quit`, 1500);
      }
      return;
    }
    if (m("app.exit") && !this.editor.getText()) return void this.quit(0);
    if (m("app.message.followUp")) return void this.submit("followUp");
    if (m("tui.input.submit")) return void this.submit("steer");
    if (m("app.message.dequeue")) return void this.restoreQueue();
    if (m("app.model.select")) return void this.runCommand("/model");
    if (m("app.model.cycleForward") || m("app.model.cycleBackward")) return void this.cycleModel(m("app.model.cycleBackward") ? "backward" : "forward");
    if (m("app.thinking.cycle")) {
      const lvl = this.session.cycleThinkingLevel();
      this.flash(lvl ? `Thinking level: ${lvl}` : "This model has no thinking levels");
      return;
    }
    if (m("app.thinking.toggle")) {
      this.showThinking = !this.showThinking;
      this.chat.invalidateAll();
      return;
    }
    if (m("app.tools.expand")) {
      this.expandTools = !this.expandTools;
      this.chat.invalidateAll();
      return;
    }
    if (m("app.chat.scrollUp")) return this.chat.scrollBy(Math.max(1, ((this.chatBox.height as number) || 10) - 2));
    if (m("app.chat.scrollDown")) return this.chat.scrollBy(-Math.max(1, ((this.chatBox.height as number) || 10) - 2));
    if (m("app.editor.external")) return this.externalEditor();
    if (m("app.suspend")) return this.suspend();
    if (m("app.session.new")) return void this.runCommand("/new");
    if (m("app.session.tree")) return void this.runCommand("/tree");
    if (m("app.session.fork")) return void this.runCommand("/fork");
    if (m("app.session.resume")) return void this.runCommand("/resume");
    for (const e of this.kernel.shortcuts.list()) {
      if (canonicalKey(e.value.key) === k.id) {
        Promise.resolve()
          .then(() => e.value.handler(this.session.contextFactory?.() ?? {}))
          .catch((err: unknown) => this.kernel.diagnostics.report({ level: "error", source: e.source, hook: `shortcut ${e.value.key}`, message: "shortcut failed", error: err }));
        return;
      }
    }
    if (m("tui.input.tab")) {
      this.tabComplete();
      return;
    }
    if (this.editor.handleKey(k)) {
      this.chat.scroll = 0;
      this.updateCompletion();
    }
  }

  private updateCompletion(): void {
    this.completion = computeCompletion(this.editor.getText(), this.editor.cursor, {
      commands: () => this.commandItems(),
      files: this.files,
      cwd: this.kernel.cwd,
    });
  }

  private tabComplete(): void {
    const text = this.editor.getText();
    const c = computeCompletion(text, this.editor.cursor, { commands: () => this.commandItems(), files: this.files, cwd: this.kernel.cwd }) ?? completePath(text, this.editor.cursor, this.kernel.cwd);
    if (!c) return;
    if (c.items.length === 1) return this.applyCompletion(c.items[0]!, c);
    const prefix = commonPrefix(c.items);
    if (prefix.length > c.end - c.start) {
      this.editor.text = text.slice(0, c.start) + prefix + text.slice(c.end);
      this.editor.cursor = c.start + prefix.length;
    }
    this.completion = { ...c, end: c.start + Math.max(prefix.length, c.end - c.start) };
  }

  private applyCompletion(it: CompletionItem, c = this.completion): void {
    if (!c) return;
    const text = this.editor.getText();
    const addSpace = !it.value.endsWith("/");
    const value = it.value + (addSpace && text[c.end] !== " " ? " " : "");
    this.editor.text = text.slice(0, c.start) + value + text.slice(c.end);
    this.editor.cursor = c.start + value.length;
    this.completion = undefined;
    if (!addSpace) this.updateCompletion();
  }

  commandItems(): CompletionItem[] {
    const items: CompletionItem[] = BUILTIN_COMMANDS.map((c) => ({ value: "/" + c.name, label: "/" + c.name, description: c.description }));
    const seen = new Set(BUILTIN_COMMANDS.map((c) => c.name));
    for (const e of this.kernel.commands.list()) {
      if (seen.has(e.name)) continue;
      seen.add(e.name);
      items.push({ value: "/" + e.name, label: "/" + e.name, description: e.value.description ?? e.value.source ?? e.source });
    }
    return items;
  }

  // ---- actions ------------------------------------------------------------------------------------

  private async onInterrupt(): Promise<void> {
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

  private async restoreQueue(): Promise<void> {
    const q = await this.session.clearQueue();
    const restored = [...q.steering, ...q.followUp];
    if (!restored.length) return;
    this.editor.setText([...restored, this.editor.getText()].filter((x) => x.trim()).join("\n\n"));
    this.requestRender();
  }

  private async cycleModel(dir: "forward" | "backward"): Promise<void> {
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
    const raw = this.editor.getExpandedText();
    const text = raw.trim();
    if (!text) return;
    this.editor.addToHistory(this.editor.getText());
    this.editor.clear();
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

  private externalEditor(): void {
    const editorCmd = process.env.VISUAL || process.env.EDITOR;
    if (!editorCmd) {
      this.addNotice("Set $VISUAL or $EDITOR to edit in an external editor", "warning");
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), "pi-edit-"));
    const file = join(dir, "message.md");
    writeFileSync(file, this.editor.getText());
    const prog = program(this.screen);
    try {
      prog.output.write("\x1b[?2004l");
      const resume = prog.pause?.();
      const r = spawnSync(editorCmd, [file], { stdio: "inherit", shell: true });
      resume?.();
      prog.output.write("\x1b[?2004h");
      prog.hideCursor?.();
      (this.screen as any).alloc?.();
      if (r.status === 0) this.editor.setText(readFileSync(file, "utf8").replace(/\n$/, ""));
      else this.addNotice(`${editorCmd} exited with ${r.status ?? r.signal}`, "warning");
    } finally {
      rmSync(dir, { recursive: true, force: true });
      this.renderNow();
    }
  }

  private suspend(): void {
    if (process.platform === "win32" || this.opts.input) {
      this.addNotice("Suspending is not available here", "info");
      return;
    }
    const prog = program(this.screen);
    prog.output.write("\x1b[?2004l");
    const resume = prog.pause?.();
    process.once("SIGCONT", () => {
      resume?.();
      prog.output.write("\x1b[?2004h");
      prog.hideCursor?.();
      (this.screen as any).alloc?.();
      this.renderNow();
    });
    process.kill(process.pid, "SIGTSTP");
  }

  // ---- layers -----------------------------------------------------------------------------------

  pushLayer(l: Layer): void {
    this.layers.push(l);
    this.completion = undefined;
    this.syncCountdown();
    this.requestRender();
  }

  popLayer(l: Layer): void {
    const i = this.layers.indexOf(l);
    if (i !== -1) this.layers.splice(i, 1);
    l.dispose?.();
    this.syncCountdown();
    this.requestRender();
  }

  private syncCountdown(): void {
    const want = this.layers.some((l) => l.deadline !== undefined);
    if (want && !this.countdownTimer && !this.destroyed) {
      this.countdownTimer = setInterval(() => this.requestRender(), 250);
      this.countdownTimer.unref?.();
    } else if (!want && this.countdownTimer) {
      clearInterval(this.countdownTimer);
      this.countdownTimer = undefined;
    }
  }

  private openDialogs = new Set<() => void>();

  /** Answer every open dialog with its default (quitting). */
  private cancelDialogs(): void {
    for (const cancel of [...this.openDialogs]) cancel();
  }

  /** Show a dialog layer until it answers, the timeout runs out or the signal aborts. */
  dialog<T>(make: (finish: (v: T) => void, deadline: number | undefined) => Layer, fallback: T, opts?: UiDialogOptions): Promise<T> {
    if (this.destroyed || this.quitting) return Promise.resolve(fallback);
    return new Promise<T>((resolve) => {
      let done = false;
      const dl = dialogDeadline(opts, fallback);
      const deadline = opts?.timeout !== undefined && opts.timeout >= 0 ? Date.now() + opts.timeout : undefined;
      let layer: Layer | undefined;
      const cancel = () => finish(fallback);
      const finish = (v: T) => {
        if (done) return;
        done = true;
        this.openDialogs.delete(cancel);
        dl.cancel();
        if (layer) this.popLayer(layer);
        resolve(v);
      };
      this.openDialogs.add(cancel);
      layer = make(finish, deadline);
      void dl.promise.then((v) => finish(v));
      if (!done) this.pushLayer(layer);
    });
  }

  select<T>(title: string, items: SelectItem<T>[], extra: Partial<ConstructorParameters<typeof SelectLayer<T>>[0]> = {}, opts?: UiDialogOptions): Promise<T | undefined> {
    return this.dialog<T | undefined>(
      (finish, deadline) => new SelectLayer<T>({ title, items, onDone: finish, deadline, deadlineLabel: "closes", ...extra }),
      undefined,
      opts,
    );
  }

  confirm(title: string, message: string, opts?: UiDialogOptions): Promise<boolean> {
    return this.dialog<boolean>((finish, deadline) => new ConfirmLayer(title, message, finish, deadline), false, opts);
  }

  input(title: string, o: { placeholder?: string; prefill?: string; multiline?: boolean; message?: string } = {}, opts?: UiDialogOptions): Promise<string | undefined> {
    return this.dialog<string | undefined>((finish, deadline) => new InputLayer(title, finish, this.keys, { ...o, deadline }), undefined, opts);
  }

  /** The session picker (for /resume and -r): resolves to a session file path. */
  async pickSession(): Promise<string | undefined> {
    const { pickSession } = await import("./sessions.js");
    return pickSession(this);
  }

  // ---- extension UI ---------------------------------------------------------------------------

  private tuiHandle() {
    const app = this;
    return {
      requestRender: () => app.requestRender(),
      get terminal() {
        return { columns: (app.screen as any)?.width ?? 80, rows: (app.screen as any)?.height ?? 24 };
      },
      get width() {
        return (app.screen as any)?.width ?? 80;
      },
      get height() {
        return (app.screen as any)?.height ?? 24;
      },
    };
  }

  private keysHandle() {
    const app = this;
    return {
      matches: (data: string, id: string) => {
        const k = keyFromData(data);
        return k !== undefined && app.keys.matches(k, id);
      },
      getKeys: (id: string) => app.keys.getKeys(id),
    };
  }

  private unsupported(method: string): void {
    if (this.warnedUnsupported.has(method)) return;
    this.warnedUnsupported.add(method);
    this.kernel.diagnostics.report({ level: "warning", source: "tui", message: `ctx.ui.${method}() is not supported by this terminal UI yet` });
  }

  setTheme(theme: Theme): void {
    this.theme = theme;
    this.chat.invalidateAll();
    for (const b of this.chat.blocks) if (b instanceof AssistantBlock) b.touch();
    this.requestRender();
  }

  private createUi(): ExtensionUI {
    const app = this;
    return {
      kind: "tui",
      select: (title, options, opts) =>
        app.select<string>(
          title,
          (options ?? []).map((o) => ({ label: String(o), value: String(o) })),
          { search: (options ?? []).length > 8, deadlineLabel: "cancels" },
          opts,
        ),
      confirm: (title, message, opts) => app.confirm(title, message, opts),
      input: (title, placeholder, opts) => app.input(title, { placeholder }, opts),
      editor: (title, prefill, opts) => app.input(title, { prefill, multiline: true }, opts),
      notify: (message, type) => app.addNotice(String(message), type === "error" ? "error" : type === "warning" ? "warning" : "info"),
      setStatus: (key, text) => {
        if (text === undefined || text === "") app.statuses.delete(key);
        else app.statuses.set(key, String(text));
        app.requestRender();
      },
      setWidget: (key, content, opts) => {
        const old = app.widgets.get(key);
        (old?.content as { dispose?: () => void } | undefined)?.dispose?.();
        if (content === undefined) app.widgets.delete(key);
        else {
          const value = typeof content === "function" ? content(app.tuiHandle(), app.theme) : content;
          app.widgets.set(key, { placement: opts?.placement ?? "aboveEditor", content: value });
        }
        app.requestRender();
      },
      setTitle: (title) => {
        app.customTitle = title;
        app.updateTitle();
      },
      setEditorText: (text) => {
        app.editor.setText(String(text ?? ""));
        app.requestRender();
      },
      getEditorText: () => app.editor.getText(),
      pasteToEditor: (text) => {
        app.editor.paste(String(text ?? ""));
        app.requestRender();
      },
      setWorkingMessage: (message) => {
        app.workingMessage = message;
        app.requestRender();
      },
      setFooter: (factory) => {
        (app.footerComponent as { dispose?: () => void } | undefined)?.dispose?.();
        app.footerComponent = factory
          ? factory(app.tuiHandle(), app.theme, {
              getGitBranch: () => app.gitBranch,
              getExtensionStatuses: () => app.statuses,
              onBranchChange: () => () => {},
            })
          : undefined;
        app.requestRender();
      },
      setHeader: (factory) => {
        (app.headerComponent as { dispose?: () => void } | undefined)?.dispose?.();
        app.headerComponent = factory ? factory(app.tuiHandle(), app.theme) : undefined;
        const fresh = app.makeHeader();
        if (app.headerBlock) {
          app.chat.insertBefore(fresh, app.headerBlock);
          app.chat.remove(app.headerBlock);
        } else app.chat.blocks.unshift(fresh);
        app.headerBlock = fresh;
        app.requestRender();
      },
      custom: <T>(factory: (...a: any[]) => unknown, opts?: Record<string, unknown>) =>
        new Promise<T | undefined>((resolve) => {
          let layer: ComponentLayer | undefined;
          let finished = false;
          const done = (v?: T) => {
            if (finished) return;
            finished = true;
            app.openDialogs.delete(cancel);
            if (layer) app.popLayer(layer);
            resolve(v);
          };
          const cancel = () => done(undefined);
          if (app.quitting || app.destroyed) return done(undefined);
          app.openDialogs.add(cancel);
          Promise.resolve()
            .then(() => factory(app.tuiHandle(), app.theme, app.keysHandle(), done))
            .then((component) => {
              if (finished) return;
              layer = new ComponentLayer(component, !!opts?.overlay, opts?.overlayOptions as Record<string, unknown> | undefined);
              app.pushLayer(layer);
              const onHandle = opts?.onHandle as ((h: unknown) => void) | undefined;
              onHandle?.({ hide: () => done(undefined), setHidden: () => app.requestRender(), close: () => done(undefined), requestRender: () => app.requestRender() });
            })
            .catch((e: unknown) => {
              app.kernel.diagnostics.report({ level: "error", source: "tui", message: "ctx.ui.custom() component failed", error: e });
              done(undefined);
            });
        }),
      onTerminalInput: (handler) => {
        app.inputHandlers.add(handler);
        return () => app.inputHandlers.delete(handler);
      },
      setEditorComponent: (factory) => {
        if (factory) app.unsupported("setEditorComponent");
      },
      getToolsExpanded: () => app.expandTools,
      setToolsExpanded: (expanded) => {
        app.expandTools = !!expanded;
        app.chat.invalidateAll();
        app.requestRender();
      },
      get theme() {
        return app.theme;
      },
      getAllThemes: () => [...app.themes.values()].map((t) => ({ name: t.name, path: t.path })),
      getTheme: (name) => app.themes.get(name),
      setTheme: (theme) => {
        const t = typeof theme === "string" ? app.themes.get(theme) : theme instanceof Theme ? theme : undefined;
        if (!t) return { success: false, error: `unknown theme ${typeof theme === "string" ? `"${theme}"` : ""}`.trim() };
        app.setTheme(t);
        return { success: true };
      },
    };
  }
}

function userText(m: AgentMessage): string {
  const c = (m as { content?: unknown }).content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return messageText(m);
  return c.map((b: any) => (b?.type === "text" ? b.text : b?.type === "image" ? "[image]" : "")).join("");
}

