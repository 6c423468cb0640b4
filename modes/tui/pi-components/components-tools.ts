/**
 * pi 1.6's tool and status components, as pi-tui components: ToolExecutionComponent (a tool
 * call drawn by its definition's renderCall/renderResult, or generically), BashExecutionComponent
 * (a `!command` with its streamed output) and FooterComponent (cwd, token totals, context use,
 * model, extension statuses — read from a session and a footer data provider as 1.6's is).
 * Constructor signatures are 1.6's (0.73.1's are the same or their prefixes).
 *
 * pi-tui loads on first use (see components.ts, lazyClass).
 */
import type { Box, Component, Container, Loader, Text, TUI, TuiMouseEvent } from "@earendil-works/pi-tui";
import { getActiveTheme, DynamicBorder } from "../pi-theme.js";
import { homePath, stripAnsi } from "../text.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, sanitizeOutput, truncateTail, type TruncationResult } from "../../../plugins/tools/truncate.js";
import { lazyClass, piTui } from "./components.js";
import { keyHint, keyText } from "./hints.js";
import { formatTokens, truncateToVisualLines } from "../format.js";
import { BUILT_IN_TOOLS, statusBg, toolCallLines, toolResultLines, type ToolRenderContext as RenderContext, type ToolView } from "../tool-draw.js";

type Theme = ReturnType<typeof getActiveTheme>;

// ---- ToolExecutionComponent ---------------------------------------------------------------------------

export interface ToolExecutionOptions {
  showImages?: boolean;
  imageWidthCells?: number;
  outputPad?: number;
}

/** What ToolExecutionComponent needs of a tool: how to draw it (a ToolDefinition has these). */
export interface ToolRenderers {
  renderCall?: (args: any, theme: Theme, context: ToolRenderContext) => Component;
  renderResult?: (result: { content: ToolResultContent[]; details?: unknown }, options: { expanded: boolean; isPartial: boolean }, theme: Theme, context: ToolRenderContext) => Component;
  /** "self": the renderers draw their own frame (no box, no background). */
  renderShell?: "default" | "self";
  [k: string]: unknown;
}

/** The render context pi hands a tool's renderers (the chat's tool blocks build the same). */
export type ToolRenderContext = RenderContext<Component>;

export type ToolResultContent = { type: string; text?: string; data?: string; mimeType?: string };
export interface ToolExecutionResult {
  content: ToolResultContent[];
  details?: any;
  isError: boolean;
  durationMs?: number;
}

export interface ToolExecutionComponent extends Container {
  updateArgs(args: any): void;
  markExecutionStarted(): void;
  setArgsComplete(): void;
  updateResult(result: ToolExecutionResult, isPartial?: boolean): void;
  setExpanded(expanded: boolean): void;
  setOutputPad(outputPad: number): void;
  setShowImages(show: boolean): void;
  setImageWidthCells(width: number): void;
  invalidate(): void;
}

/** Lines of a result shown before "… (N more lines, ctrl+o to expand)". */
const TOOL_PREVIEW_LINES = 10;
const COLLAPSED_ARGS_CHARS = 100;

/** The generic call header: the bold name, then `key=value` pairs (collapsed) or `key: value` lines (expanded). */
function formatCall(name: string, args: unknown, t: Theme, expanded: boolean): string {
  const head = t.fg("toolTitle", t.bold(name));
  if (args == null) return head;
  const entries: Array<[string, unknown]> = typeof args === "object" && !Array.isArray(args) ? Object.entries(args) : [["args", args]];
  if (!entries.length) return head;
  if (expanded) {
    const body = entries.map(([k, v]) => {
      const text = typeof v === "string" ? v : (JSON.stringify(v, null, 2) ?? String(v));
      return `  ${k}: ${text.replace(/\t/g, "   ").replace(/\r/g, "").split("\n").join("\n    ")}`;
    });
    return `${head}\n${t.fg("muted", body.join("\n"))}`;
  }
  const pairs = entries.map(([k, v]) => `${k}=${JSON.stringify(v) ?? String(v)}`).join(" ");
  return `${head} ${t.fg("muted", pairs.length > COLLAPSED_ARGS_CHARS ? `${pairs.slice(0, COLLAPSED_ARGS_CHARS - 3)}...` : pairs)}`;
}

export const ToolExecutionComponent: new (
  toolName: string,
  toolCallId: string,
  args: any,
  options: ToolExecutionOptions | undefined,
  toolDefinition: ToolRenderers | undefined,
  ui: TUI,
  cwd: string,
) => ToolExecutionComponent = lazyClass("ToolExecutionComponent", () => {
  const tui = piTui();
  const { Box: PiBox, Container: PiContainer, MouseRegion, Spacer, Text: PiText, Image } = tui;
  class ToolExecutionImpl extends PiContainer {
    private readonly box: Box = new PiBox(1, 1);
    private readonly selfFrame: Container = new PiContainer();
    private readonly plain: Text = new PiText("", 1, 1);
    private readonly extras: Component[] = [];
    private readonly state: Record<string, unknown> = {};
    private lastCall?: Component;
    private lastResult?: Component;
    private expanded = false;
    private showImages: boolean;
    private imageWidth: number;
    private pad: number;
    private partial = true;
    private started = false;
    private argsDone = false;
    private argsDirty = false;
    private result?: ToolExecutionResult;

    constructor(
      private readonly toolName: string,
      private readonly toolCallId: string,
      private args: any,
      options: ToolExecutionOptions | undefined,
      private readonly def: ToolRenderers | undefined,
      private readonly ui: TUI,
      private readonly cwd: string,
    ) {
      super();
      this.showImages = options?.showImages ?? true;
      this.imageWidth = options?.imageWidthCells ?? 60;
      this.pad = options?.outputPad ?? 1;
      this.addChild(new Spacer(1));
      if (!def) this.addChild(this.region(this.plain));
      else this.addChild(this.selfShell ? this.selfFrame : this.box);
      this.rebuild();
    }

    private get selfShell(): boolean {
      return this.def?.renderShell === "self";
    }
    /** A click on a finished call toggles expanded. */
    private region(c: Component): Component {
      return new MouseRegion(c, (e: TuiMouseEvent) => {
        if (!this.result || e.type !== "click" || e.button !== "left") return undefined;
        this.setExpanded(!this.expanded);
        return { handled: true };
      });
    }
    private context(last: Component | undefined): ToolRenderContext {
      return {
        args: this.args,
        toolCallId: this.toolCallId,
        invalidate: () => {
          this.invalidate();
          this.ui?.requestRender?.();
        },
        lastComponent: last,
        state: this.state,
        cwd: this.cwd,
        executionStarted: this.started,
        argsComplete: this.argsDone,
        isPartial: this.partial,
        expanded: this.expanded,
        showImages: this.showImages,
        isError: this.result?.isError ?? false,
        durationMs: this.partial ? undefined : this.result?.durationMs,
        outputPad: this.pad,
        keyText,
        keyHint,
      };
    }

    updateArgs(args: any): void {
      // applied at the next render: a stream of argument deltas redraws once per frame
      this.args = args;
      this.argsDirty = true;
      this.ui?.requestRender?.();
    }
    markExecutionStarted(): void {
      this.started = true;
      this.rebuild();
      this.ui?.requestRender?.();
    }
    setArgsComplete(): void {
      this.argsDone = true;
      this.rebuild();
      this.ui?.requestRender?.();
    }
    updateResult(result: ToolExecutionResult, isPartial = false): void {
      this.result = result;
      this.partial = isPartial;
      this.rebuild();
    }
    setExpanded(expanded: boolean): void {
      this.expanded = expanded;
      this.rebuild();
    }
    setOutputPad(outputPad: number): void {
      this.pad = outputPad;
      this.rebuild();
    }
    setShowImages(show: boolean): void {
      this.showImages = show;
      this.rebuild();
    }
    setImageWidthCells(width: number): void {
      this.imageWidth = Math.max(1, Math.floor(width));
      this.rebuild();
    }
    override invalidate(): void {
      super.invalidate();
      this.rebuild();
    }

    override render(width: number): readonly string[] {
      if (this.argsDirty) this.rebuild();
      if (this.def && this.selfShell) {
        const body = this.selfFrame.render(width);
        const extra = this.extras.flatMap((c) => [...c.render(width)]);
        if (!body.length && !extra.length) return [];
        return [...(body.length ? ["", ...body] : []), ...extra];
      }
      return super.render(width);
    }

    /** An image block the terminal draws inline: PNG data, a terminal with an image protocol, images shown. */
    private drawable(c: ToolResultContent): boolean {
      return c.type === "image" && !!c.data && c.mimeType === "image/png" && this.showImages && !!tui.getCapabilities().images;
    }

    /** Text of the result: its text blocks without terminal noise, and a line per image the terminal will not show. */
    private output(): string {
      const r = this.result;
      if (!r) return "";
      const content = Array.isArray(r.content) ? r.content : [];
      let out = content
        .filter((c) => c.type === "text")
        .map((c) => sanitizeOutput(stripAnsi(c.text ?? "")).replace(/\r/g, ""))
        .join("\n");
      // images the terminal will not draw (see drawable) are named in the text
      const images = content.filter((c) => c.type === "image" && !this.drawable(c));
      if (images.length) {
        const notes = images.map((img) => {
          const dims = img.data && img.mimeType ? (tui.getImageDimensions(img.data, img.mimeType) ?? undefined) : undefined;
          return tui.imageFallback(img.mimeType ?? "image/unknown", dims);
        });
        out = out ? `${out}\n${notes.join("\n")}` : notes.join("\n");
      }
      return out;
    }

    /** A built-in tool whose definition leaves the drawing to the host: drawn as the chat draws it. */
    private get builtIn(): boolean {
      return BUILT_IN_TOOLS.has(this.toolName) && !this.def?.renderCall;
    }
    /** The call or its output drawn by the chat's tool drawing (tool-draw.ts) at the width given. */
    private drawn(draw: typeof toolCallLines): Component {
      const r = this.result;
      const status = !r ? (this.started ? "running" : "pending") : this.partial ? "running" : r.isError ? "error" : "done";
      const view = { name: this.toolName, args: this.args && typeof this.args === "object" ? this.args : {}, status, result: r && { content: r.content, details: r.details } } as ToolView;
      const env = { theme: getActiveTheme(), cwd: this.cwd, expanded: this.expanded, expandKey: keyText("app.tools.expand") };
      return { render: (width: number) => draw(view, width, env), invalidate: () => {} };
    }

    private resultFallback(t: Theme): Component | undefined {
      const out = this.output();
      if (!out) return undefined;
      const lines = out.split("\n");
      const shown = this.expanded ? lines : lines.slice(0, TOOL_PREVIEW_LINES);
      let text = shown.map((l) => t.fg("toolOutput", l)).join("\n");
      const more = lines.length - shown.length;
      if (more > 0) text += `${t.fg("muted", `\n... (${more} more lines,`)} ${keyHint("app.tools.expand", "to expand")}${t.fg("muted", ")")}`;
      return new PiText(text, 0, 0);
    }

    private rebuild(): void {
      const t = getActiveTheme();
      this.argsDirty = false;
      const token = statusBg(this.partial ? "running" : this.result?.isError ? "error" : "done");
      const bg = (s: string) => t.bg(token, s);
      if (this.def) {
        const frame = this.selfShell ? this.selfFrame : this.box;
        if (!this.selfShell) {
          this.box.setBgFn(bg);
          this.box.setPaddingX(this.pad);
        }
        frame.clear();
        let call: Component | undefined;
        if (this.def.renderCall) {
          try {
            call = this.lastCall = this.def.renderCall(this.args, t, this.context(this.lastCall));
          } catch {
            this.lastCall = undefined;
          }
        }
        call ??= this.builtIn ? this.drawn(toolCallLines) : new PiText(formatCall(this.toolName, this.args, t, this.expanded), 0, 0);
        frame.addChild(this.region(call));
        if (this.result) {
          let res: Component | undefined;
          if (this.def.renderResult) {
            try {
              res = this.lastResult = this.def.renderResult({ content: this.result.content, details: this.result.details }, { expanded: this.expanded, isPartial: this.partial }, t, this.context(this.lastResult));
            } catch {
              this.lastResult = undefined;
            }
          }
          res ??= this.builtIn && !this.def.renderResult ? this.drawn(toolResultLines) : this.resultFallback(t);
          if (res) frame.addChild(this.region(res));
        }
      } else {
        // no definition: the name, the arguments as JSON, the output
        this.plain.setCustomBgFn(bg);
        this.plain.setPaddingX(this.pad);
        let text = t.fg("toolTitle", t.bold(this.toolName));
        const json = JSON.stringify(this.args, null, 2);
        if (json) text += `\n\n${json}`;
        const out = this.output();
        if (out) text += `\n${out}`;
        this.plain.setText(text);
      }
      // images the terminal can show, below the box
      for (const c of this.extras) this.removeChild(c);
      this.extras.length = 0;
      if (this.result) {
        for (const img of this.result.content ?? []) {
          if (!this.drawable(img)) continue;
          const spacer = new Spacer(1);
          const image = new Image(img.data!, img.mimeType!, { fallbackColor: (s: string) => t.fg("toolOutput", s) }, { maxWidthCells: this.imageWidth });
          this.extras.push(spacer, image);
          this.addChild(spacer);
          this.addChild(image);
        }
      }
    }
  }
  return ToolExecutionImpl as never;
});

// ---- BashExecutionComponent ---------------------------------------------------------------------------

export interface BashExecutionComponent extends Container {
  setExpanded(expanded: boolean): void;
  setOutputPad(outputPad: number): void;
  invalidate(): void;
  appendOutput(chunk: string): void;
  setComplete(exitCode: number | undefined, cancelled: boolean, truncationResult?: TruncationResult, fullOutputPath?: string): void;
  getOutput(): string;
  getCommand(): string;
}

/** Output lines shown while collapsed (the last ones). */
const BASH_PREVIEW_LINES = 20;

export const BashExecutionComponent: new (command: string, ui: TUI, excludeFromContext?: boolean, outputPad?: number) => BashExecutionComponent = lazyClass("BashExecutionComponent", () => {
  const { Container: PiContainer, Loader: PiLoader, Spacer, Text: PiText } = piTui();
  class BashExecutionImpl extends PiContainer {
    private readonly lines: string[] = [];
    private status: "running" | "complete" | "error" | "cancelled" = "running";
    private exitCode: number | undefined;
    private truncation?: TruncationResult;
    private fullOutputPath?: string;
    private expanded = false;
    private readonly body = new PiContainer();
    private readonly loader: Loader;
    /** `!!` commands (output kept out of the model's context) are drawn dim. */
    private readonly color: string;

    constructor(
      private readonly command: string,
      ui: TUI,
      excludeFromContext = false,
      private pad = 1,
    ) {
      super();
      this.color = excludeFromContext ? "dim" : "bashMode";
      const border = (s: string) => getActiveTheme().fg(this.color, s);
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder(border));
      this.addChild(this.body);
      this.addChild(new DynamicBorder(border));
      this.loader = new PiLoader(ui, (s: string) => getActiveTheme().fg(this.color, s), (s: string) => getActiveTheme().fg("muted", s), `Running... (${keyText("tui.select.cancel")} to cancel)`);
      this.rebuild();
    }

    setExpanded(expanded: boolean): void {
      this.expanded = expanded;
      this.rebuild();
    }
    setOutputPad(outputPad: number): void {
      this.pad = outputPad;
      this.rebuild();
    }
    override invalidate(): void {
      super.invalidate();
      this.rebuild();
    }
    appendOutput(chunk: string): void {
      const parts = stripAnsi(String(chunk)).replace(/\r\n?/g, "\n").split("\n");
      // the chunk's first piece continues the last (unfinished) line
      if (this.lines.length) this.lines[this.lines.length - 1] += parts.shift() ?? "";
      this.lines.push(...parts);
      this.rebuild();
    }
    setComplete(exitCode: number | undefined, cancelled: boolean, truncationResult?: TruncationResult, fullOutputPath?: string): void {
      this.exitCode = exitCode;
      this.status = cancelled ? "cancelled" : exitCode !== undefined && exitCode !== null && exitCode !== 0 ? "error" : "complete";
      this.truncation = truncationResult;
      this.fullOutputPath = fullOutputPath;
      this.loader.stop();
      this.rebuild();
    }
    getOutput(): string {
      return this.lines.join("\n");
    }
    getCommand(): string {
      return this.command;
    }

    private rebuild(): void {
      const t = getActiveTheme();
      // what the model would get (the bash tool's limits), of which the last lines show while collapsed
      const kept = truncateTail(this.lines.join("\n"), { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
      const available = kept.content ? kept.content.split("\n") : [];
      const preview = available.slice(-BASH_PREVIEW_LINES);
      const hiddenCount = available.length - preview.length;
      this.body.clear();
      this.body.addChild(new PiText(t.fg(this.color, t.bold(`$ ${this.command}`)), this.pad, 0));
      if (available.length) {
        if (this.expanded) this.body.addChild(new PiText(`\n${available.map((l) => t.fg("muted", l)).join("\n")}`, this.pad, 0));
        else {
          const styled = `\n${preview.map((l) => t.fg("muted", l)).join("\n")}`;
          const pad = this.pad;
          let cache: { width: number; lines: readonly string[] } | undefined;
          // long lines wrap: keep the last BASH_PREVIEW_LINES screen lines
          this.body.addChild({
            render: (width: number) => {
              if (cache?.width !== width) cache = { width, lines: truncateToVisualLines(styled, BASH_PREVIEW_LINES, width, pad).visualLines.map((l) => " ".repeat(pad) + l) };
              return cache.lines;
            },
            invalidate: () => (cache = undefined),
          });
        }
      }
      if (this.status === "running") {
        this.body.addChild(this.loader);
        return;
      }
      const notes: string[] = [];
      if (hiddenCount > 0) {
        notes.push(
          this.expanded
            ? `${t.fg("muted", "(")}${keyHint("app.tools.expand", "to collapse")}${t.fg("muted", ")")}`
            : `${t.fg("muted", `... ${hiddenCount} more lines (`)}${keyHint("app.tools.expand", "to expand")}${t.fg("muted", ")")}`,
        );
      }
      if (this.status === "cancelled") notes.push(t.fg("warning", "(cancelled)"));
      else if (this.status === "error") notes.push(t.fg("error", `(exit ${this.exitCode})`));
      if ((this.truncation?.truncated || kept.truncated) && this.fullOutputPath) notes.push(t.fg("warning", `Output truncated. Full output: ${this.fullOutputPath}`));
      if (notes.length) this.body.addChild(new PiText(`\n${notes.join("\n")}`, this.pad, 0));
    }
  }
  return BashExecutionImpl as never;
});

// ---- FooterComponent ----------------------------------------------------------------------------------

/** What the footer reads of a session: 1.6's AgentSession and ours both have it. */
export interface FooterSessionLike {
  sessionManager: {
    getEntries(): Array<Record<string, any>>;
    getCwd(): string;
    getSessionName?(): string | undefined;
    getSessionId?(): string;
    getLeafId?(): string | null | undefined;
  };
  getContextUsage(): { contextWindow?: number; percent: number | null } | undefined;
  /** 1.6: state.model / state.thinkingLevel; ours: model / thinkingLevel. */
  state?: { model?: FooterModel; thinkingLevel?: string };
  model?: FooterModel;
  thinkingLevel?: string;
  routedModel?: { model: FooterModel; thinkingLevel?: string };
  modelRuntime?: { isUsingSubscription?(provider: string): boolean };
  models?: { isUsingOAuth?(model: any): boolean };
}
type FooterModel = { id: string; provider: string; contextWindow?: number; reasoning?: boolean };

/** The footer data provider (ctx.ui.setFooter's third argument). */
export interface ReadonlyFooterDataProvider {
  getGitBranch(): string | null;
  getExtensionStatuses(): ReadonlyMap<string, string>;
  getAvailableProviderCount?(): number;
  onBranchChange?(callback: () => void): () => void;
}

type Totals = { input: number; output: number; cacheRead: number; cacheWrite: number; cost: number };

export class FooterComponent implements Component {
  private autoCompact = true;
  private stats?: { key: unknown[]; totals: Totals; hitRate?: number; usage: ReturnType<FooterSessionLike["getContextUsage"]> };

  constructor(
    private session: FooterSessionLike,
    private readonly footerData: ReadonlyFooterDataProvider,
  ) {}

  setSession(session: FooterSessionLike): void {
    this.session = session;
  }
  setAutoCompactEnabled(enabled: boolean): void {
    this.autoCompact = enabled;
  }
  /** Nothing cached that a theme change affects (the git branch is the provider's). */
  invalidate(): void {}
  dispose(): void {}

  private model(): FooterModel | undefined {
    return this.session.state?.model ?? this.session.model;
  }

  /** Usage over the whole session (all entries, not only those after a compaction), recomputed when the session moves. */
  private sessionStats() {
    const sm = this.session.sessionManager;
    const entries = sm.getEntries();
    const limits = this.session.routedModel?.model ?? this.model();
    const key = [this.session, sm.getSessionId?.(), sm.getLeafId?.(), entries.length, limits];
    if (this.stats && this.stats.key.every((k, i) => k === key[i])) return this.stats;
    const totals: Totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
    const add = (u: any) => {
      if (!u || typeof u !== "object") return;
      totals.input += Number(u.input) || 0;
      totals.output += Number(u.output) || 0;
      totals.cacheRead += Number(u.cacheRead) || 0;
      totals.cacheWrite += Number(u.cacheWrite) || 0;
      totals.cost += Number(u.cost?.total) || 0;
    };
    let hitRate: number | undefined;
    for (const e of entries) {
      if (e.type === "usage") add(e.usage);
      else if (e.type === "message" && e.message?.role === "assistant") {
        const u = e.message.usage;
        add(u);
        const prompt = (Number(u?.input) || 0) + (Number(u?.cacheRead) || 0) + (Number(u?.cacheWrite) || 0);
        hitRate = prompt > 0 ? ((Number(u?.cacheRead) || 0) / prompt) * 100 : undefined;
      } else if (e.type === "message" && e.message?.role === "toolResult") add(e.message.usage);
      else if (e.type === "branch_summary" || e.type === "compaction") add(e.usage);
    }
    this.stats = { key, totals, hitRate, usage: this.session.getContextUsage() };
    return this.stats;
  }

  render(width: number): string[] {
    const { truncateToWidth, visibleWidth } = piTui();
    const t = getActiveTheme();
    const model = this.model();
    const { totals, hitRate, usage } = this.sessionStats();
    const window = usage?.contextWindow ?? model?.contextWindow ?? 0;
    const percent = usage?.percent ?? null;

    let where = homePath(this.session.sessionManager.getCwd());
    const branch = this.footerData.getGitBranch();
    if (branch) where += ` (${branch})`;
    const name = this.session.sessionManager.getSessionName?.();
    if (name) where += ` • ${name}`;

    const parts: string[] = [];
    if (totals.input) parts.push(`↑${formatTokens(totals.input)}`);
    if (totals.output) parts.push(`↓${formatTokens(totals.output)}`);
    if (totals.cacheRead) parts.push(`R${formatTokens(totals.cacheRead)}`);
    if (totals.cacheWrite) parts.push(`W${formatTokens(totals.cacheWrite)}`);
    if ((totals.cacheRead || totals.cacheWrite) && hitRate !== undefined) parts.push(`CH${hitRate.toFixed(1)}%`);
    const subscription = model
      ? model.provider === "kimi-coding" || !!this.session.modelRuntime?.isUsingSubscription?.(model.provider) || !!this.session.models?.isUsingOAuth?.(model)
      : false;
    if (totals.cost || subscription) parts.push(`$${totals.cost.toFixed(3)}${subscription ? " (sub)" : ""}`);
    const auto = this.autoCompact ? " (auto)" : "";
    const ctx = percent === null ? `?/${formatTokens(window)}${auto}` : `${percent.toFixed(1)}%/${formatTokens(window)}${auto}`;
    const level = percent ?? 0;
    parts.push(level > 90 ? t.fg("error", ctx) : level > 70 ? t.fg("warning", ctx) : ctx);

    let left = parts.join(" ");
    if (visibleWidth(left) > width) left = truncateToWidth(left, width, "...");
    const leftWidth = visibleWidth(left);

    let right = model?.id || "no-model";
    if (model?.reasoning) {
      const lvl = this.session.state?.thinkingLevel ?? this.session.thinkingLevel ?? "off";
      right += lvl === "off" ? " • thinking off" : ` • ${lvl}`;
    }
    const routed = this.session.routedModel;
    if (routed) right += ` → ${routed.model.id}${routed.thinkingLevel ? ` • ${routed.thinkingLevel}` : ""}`;
    if ((this.footerData.getAvailableProviderCount?.() ?? 0) > 1 && model) {
      const withProvider = `(${model.provider}) ${right}`;
      if (leftWidth + 2 + visibleWidth(withProvider) <= width) right = withProvider;
    }
    let rest: string;
    if (leftWidth + 2 + visibleWidth(right) <= width) rest = " ".repeat(width - leftWidth - visibleWidth(right)) + right;
    else if (width - leftWidth - 2 > 0) {
      const cut = truncateToWidth(right, width - leftWidth - 2, "");
      rest = " ".repeat(Math.max(0, width - leftWidth - visibleWidth(cut))) + cut;
    } else rest = "";

    // dim the two halves separately: the context figure's own colour ends with a reset
    const lines = [truncateToWidth(t.fg("dim", where), width, t.fg("dim", "...")), t.fg("dim", left) + t.fg("dim", rest)];
    const statuses = this.footerData.getExtensionStatuses();
    if (statuses.size) {
      const line = [...statuses.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([, text]) => String(text).replace(/[\r\n\t]/g, " ").replace(/ +/g, " ").trim())
        .join(" ");
      lines.push(truncateToWidth(line, width, t.fg("dim", "...")));
    }
    return lines;
  }
}
