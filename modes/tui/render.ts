/**
 * The renderer: one frame = the chat viewport (chat.ts), the bottom panel (working line, queue,
 * widgets, the editor or a dialog, the footer) and the overlay box, written into blessed's three
 * boxes. Frames are coalesced: requestRender() schedules at most one per `frameMs`.
 */
import type { AppView } from "./app-view.js";
import { program, screenText } from "./blessed-setup.js";
import { componentLines, type ChatContext } from "./chat.js";
import { renderFooter } from "./footer.js";
import { ComponentLayer, frame, type Layer, type LayerEnv } from "./layers.js";
import { overlayLayout, overlayWidth } from "./component-host.js";
import { TranscriptSearch } from "./search.js";
import { entryRenderer, markdownTransformer, resolveToolRenderers } from "./renderers.js";
import { CURSOR_MARK, padToWidth, sanitize, truncate, visibleWidth } from "./text.js";

/** DEC mode 2026: the terminal shows what comes between these as one update. */
const SYNC_BEGIN = "\x1b[?2026h";
const SYNC_END = "\x1b[?2026l";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Renderer {
  private renderTimer: NodeJS.Timeout | undefined;
  private lastRender = 0;
  /** Frames drawn and time spent drawing them (for measurements). */
  readonly stats = { frames: 0, renderMs: 0, lastFrameMs: 0 };

  constructor(private readonly app: AppView) {}

  /** Stop the pending frame (teardown). */
  cancel(): void {
    if (this.renderTimer) clearTimeout(this.renderTimer);
    this.renderTimer = undefined;
  }

  /** Ask for a frame; frames are coalesced to one per `frameMs`. */
  requestRender(): void {
    if (this.renderTimer || this.app.destroyed || !this.app.screen) return;
    const wait = Math.max(0, this.app.frameMs - (Date.now() - this.lastRender));
    this.renderTimer = setTimeout(() => {
      this.renderTimer = undefined;
      this.renderNow();
    }, wait);
  }

  chatContext(): ChatContext {
    return {
      theme: this.app.theme,
      keys: this.app.keys,
      expandTools: this.app.expandTools,
      showThinking: this.app.showThinking,
      cwd: this.app.kernel.cwd,
      markdown: this.app.events.mdOptions(),
      tool: (name) => resolveToolRenderers(this.app, name),
      entryRenderer: (type) => entryRenderer(this.app, type),
      messageRenderer: (type) => {
        const r = this.app.kernel.messageRenderers.get(type);
        return r ? (r.render as (...a: any[]) => unknown) : undefined;
      },
      transformMarkdown: markdownTransformer(this.app.kernel.markdownTransformers.list().map((e) => e.value)),
      requestRender: () => this.requestRender(),
      report: (message, error) => this.app.kernel.diagnostics.report({ level: "warning", source: "tui", message, error }),
    };
  }

  layerEnv(): LayerEnv {
    return { theme: this.app.theme, keys: this.app.keys, requestRender: () => this.requestRender() };
  }

  /** Draw now (tests call this directly). */
  renderNow(): void {
    if (this.app.destroyed || !this.app.screen) return;
    if (this.renderTimer) {
      clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
    }
    const t0 = performance.now();
    this.app.events.entries.sync();
    const W = Math.max(10, (this.app.screen as any).width as number);
    const H = Math.max(4, (this.app.screen as any).height as number);
    const panel = this.panelLines(W, H);
    const panelH = Math.min(panel.length, H - 1);
    const chatH = H - panelH;
    const search = this.app.layers.find((l): l is TranscriptSearch => l instanceof TranscriptSearch);
    let chatLines = search ? this.searchedChat(search, W, chatH) : this.app.chat.visible(W, chatH, this.chatContext());
    if (this.app.tuiMode === "fullscreen") chatLines = this.app.viewport.decorate(chatLines, W, chatH);
    this.app.chatBox.top = 0;
    this.app.chatBox.height = chatH;
    this.app.chatBox.setContent(chatLines.join("\n").replaceAll(CURSOR_MARK, ""));
    this.app.panelBox.top = chatH;
    this.app.panelBox.height = Math.max(1, panelH);
    const panelShown = panel.slice(panel.length - panelH);
    let cursor = takeCursor(panelShown, chatH, 0);
    this.app.panelBox.setContent(panelShown.join("\n"));
    cursor = this.drawOverlay(W, H) ?? cursor;
    // One frame is one synchronized update (DEC mode 2026, as pi 1.6 draws): a terminal that
    // knows it shows the frame whole, never half drawn; others ignore the mode. blessed buffers
    // its output until the next tick, so both marks go out in the frame's single write.
    const out = program(this.app.screen) as { _write?(text: string): unknown };
    out._write?.(SYNC_BEGIN);
    try {
      this.app.screen.render();
      this.placeCursor(cursor);
    } finally {
      out._write?.(SYNC_END);
    }
    this.lastRender = Date.now();
    const ms = performance.now() - t0;
    this.stats.frames++;
    this.stats.renderMs += ms;
    this.stats.lastFrameMs = ms;
  }

  /** The chat rows while transcript search is open: matches marked, the selected one in view. */
  private searchedChat(search: TranscriptSearch, W: number, chatH: number): string[] {
    const chat = this.app.chat;
    const all = chat.allLines(W, this.chatContext());
    const s = search.update(all, chatH, chat.scroll);
    chat.scroll = Math.min(s ?? chat.scroll, Math.max(0, all.length - chatH));
    const end = all.length - chat.scroll;
    const top = Math.max(0, end - chatH);
    chat.atTop = top === 0;
    return search.mark(all.slice(top, end), top);
  }

  topLayer(placement: "panel" | "overlay"): Layer | undefined {
    for (let i = this.app.layers.length - 1; i >= 0; i--) if (this.app.layers[i]!.placement === placement) return this.app.layers[i];
    return undefined;
  }

  /**
   * The terminal's own cursor goes where the focused input draws its cursor (our editor, dialogs,
   * pi-tui components with CURSOR_MARKER), so an input method's candidate window opens there. It
   * stays hidden (the input draws its own) unless `showHardwareCursor` or PI_HARDWARE_CURSOR=1.
   */
  private placeCursor(at: { row: number; col: number } | undefined): void {
    const prog = (this.app.screen as unknown as { program: { cup(r: number, c: number): void; showCursor(): void; hideCursor(): void; cursorHidden: boolean } }).program;
    try {
      if (!at) {
        if (!prog.cursorHidden) prog.hideCursor();
        return;
      }
      prog.cup(at.row, at.col);
      const show = process.env.PI_HARDWARE_CURSOR === "1" || (this.app.kernel.settings.get() as { showHardwareCursor?: unknown }).showHardwareCursor === true;
      if (show && prog.cursorHidden) prog.showCursor();
      else if (!show && !prog.cursorHidden) prog.hideCursor();
    } catch {
      /* output gone */
    }
  }

  /** Draw the top overlay; returns the screen position of its input cursor, if it shows one. */
  drawOverlay(W: number, H: number): { row: number; col: number } | undefined {
    const layer = this.topLayer("overlay");
    if (!layer || (layer instanceof ComponentLayer && (layer.hidden || layer.overlayOptions?.visible?.(W, H) === false))) {
      if (!this.app.overlayBox.hidden) this.app.overlayBox.hide();
      return undefined;
    }
    let box: { row: number; col: number; width: number; lines: string[] };
    if (layer instanceof ComponentLayer || layer instanceof TranscriptSearch) {
      // A pi-tui overlay: placed by its options, drawn as the component draws itself.
      const w = overlayWidth(layer.overlayOptions, W);
      let lines: string[];
      try {
        lines = layer.render(w, H, this.layerEnv());
      } catch (e) {
        lines = [this.app.theme.fg("error", `[component failed: ${(e as Error).message}]`)];
      }
      const at = overlayLayout(layer.overlayOptions, Math.max(1, lines.length), W, H);
      box = { row: at.row, col: at.col, width: at.width, lines: lines.slice(0, at.height).map((l) => padToWidth(l, at.width)) };
    } else {
      const o = layer.overlay ?? {};
      const size = (v: number | string | undefined, total: number, dflt: number) =>
        typeof v === "number" ? v : typeof v === "string" && v.endsWith("%") ? Math.floor((total * parseFloat(v)) / 100) : dflt;
      const w = Math.max(10, Math.min(W, size(o.width, W, Math.min(W - 4, 80))));
      const maxH = Math.max(3, Math.min(H, size(o.maxHeight, H, H - 2)));
      let lines: string[];
      try {
        lines = layer.render(w - 4, maxH - 2, this.layerEnv());
      } catch (e) {
        lines = [this.app.theme.fg("error", `[component failed: ${(e as Error).message}]`)];
      }
      const framed = frame(lines.slice(0, maxH - 2), w, this.app.theme);
      box = { row: Math.max(0, Math.floor((H - framed.length) / 2)), col: Math.max(0, Math.floor((W - w) / 2)), width: w, lines: framed };
    }
    const ob = this.app.overlayBox;
    const cursor = takeCursor(box.lines, box.row, box.col);
    ob.width = box.width;
    ob.height = Math.max(1, box.lines.length);
    ob.left = box.col;
    ob.top = box.row;
    ob.setContent(box.lines.join("\n"));
    if (ob.hidden) ob.show();
    ob.setFront();
    return cursor;
  }

  panelLines(W: number, H: number): string[] {
    const t = this.app.theme;
    const out: string[] = [];
    // Working line.
    if (this.app.working || this.app.statusLine) {
      const spin = t.fg("accent", SPINNER[Math.floor(Date.now() / 100) % SPINNER.length]!);
      const msg = this.app.statusLine ?? this.app.workingMessage ?? "Working…";
      const hint = this.app.working ? t.fg("dim", ` (${this.app.keys.hint("app.interrupt")} to interrupt)`) : "";
      out.push(truncate(`${spin} ${t.fg("muted", sanitize(msg, false))}${hint}`, W));
    }
    if (this.app.flashText) out.push(truncate(t.fg("warning", sanitize(this.app.flashText, false)), W));
    // Queued messages.
    const q = [...this.app.queue.steering.map((s) => ["steer", s] as const), ...this.app.queue.followUp.map((s) => ["follow-up", s] as const)];
    for (const [kind, text] of q.slice(-5)) out.push(truncate(t.fg("muted", `↳ ${kind}: `) + sanitize(text.replace(/\s+/g, " "), false), W));
    if (q.length) out.push(t.fg("dim", truncate(`${q.length} queued · ${this.app.keys.hint("app.message.dequeue")} or ${this.app.keys.hint("app.interrupt")} puts them back in the editor`, W)));
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

  editorLines(W: number, H: number): string[] {
    if (this.app.customEditor.component) {
      try {
        return this.app.customEditor.render(W, !this.app.layers.length);
      } catch (e) {
        return [this.app.theme.fg("error", `[editor failed: ${(e as Error).message}]`)];
      }
    }
    const t = this.app.theme;
    const text = this.app.editor.getText();
    const token = text.startsWith("!") ? "bashMode" : t.thinkingBorder(this.app.session.model?.reasoning ? this.app.session.thinkingLevel : "off");
    const rule = t.fg(token, "─".repeat(W));
    const maxRows = Math.max(1, Math.min(12, Math.floor(H / 3)));
    const focused = !this.app.layers.length;
    const r = this.app.editor.render(W, maxRows, focused, this.app.session.isStreaming ? "steer the agent (Enter) or queue a follow-up (Alt+Enter)" : undefined);
    const out = [rule, ...r.lines, rule];
    const c = this.app.completion;
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

  widgetLines(placement: "aboveEditor" | "belowEditor", W: number): string[] {
    const out: string[] = [];
    for (const [, w] of this.app.widgets) {
      if (w.placement !== placement) continue;
      try {
        out.push(...componentLines(w.content, W));
      } catch (e) {
        out.push(this.app.theme.fg("error", `[widget failed: ${(e as Error).message}]`));
      }
    }
    return out;
  }

  footerLines(W: number): string[] {
    if (this.app.footerComponent) {
      try {
        return componentLines(this.app.footerComponent, W);
      } catch (e) {
        return [this.app.theme.fg("error", `[footer failed: ${(e as Error).message}]`)];
      }
    }
    const s = this.app.session;
    let stats, context;
    try {
      if (this.app.footerStats.at !== this.app.statsVersion) this.app.footerStats = { stats: s.getSessionStats(), at: this.app.statsVersion };
      stats = this.app.footerStats.stats as any;
      context = s.getContextUsage();
      // Nothing sent yet: nothing used (after a compaction the use stays unknown until the next answer).
      if (context && context.tokens === null && !s.messages?.length) context = { ...context, tokens: 0, percent: 0 };
    } catch {
      /* session disposed mid-switch */
    }
    return renderFooter(
      {
        cwd: this.app.kernel.cwd,
        sessionName: s.sessionName,
        model: s.model,
        thinkingLevel: s.thinkingLevel,
        stats,
        context,
        autoCompact: s.autoCompactionEnabled,
        gitBranch: this.app.gitBranch,
        statuses: this.app.statuses,
      },
      W,
      this.app.theme,
    );
  }

  /** The screen as plain text (tests). */
  screenText(): string {
    return screenText(this.app.screen);
  }
}

/** Find and remove the cursor mark in `lines` (in place): its screen row and column, offset by (row0, col0). */
function takeCursor(lines: string[], row0: number, col0: number): { row: number; col: number } | undefined {
  let found: { row: number; col: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const at = l.indexOf(CURSOR_MARK);
    if (at === -1) continue;
    if (!found) found = { row: row0 + i, col: col0 + visibleWidth(l.slice(0, at)) };
    lines[i] = l.replaceAll(CURSOR_MARK, "");
  }
  return found;
}
