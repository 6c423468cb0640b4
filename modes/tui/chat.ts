/**
 * The conversation as a list of blocks, each rendering itself to SGR lines for a width. Lines
 * are cached per (width, block version, UI version), so a frame re-renders only what changed;
 * `ChatView.visible()` walks from the bottom and touches only the blocks on screen, so a
 * 10,000-line conversation costs no more per frame than a short one.
 */
import { renderComponent } from "./component-host.js";
import type { AgentToolResult } from "../../core/kernel/index.js";
import { rendererKeyHints, type MarkdownSurface, type MarkdownTransformContext, type ParsedSkillBlock } from "./format.js";
import { limitLines, statusBg, statusIcon, toolCallLines, toolResultLines, type ToolRenderContext, type ToolRenderers, type ToolStatus } from "./tool-draw.js";
import type { Keybindings } from "./keys.js";
import { MarkdownView, renderMarkdownLines, type MarkdownOptions } from "./markdown.js";
import type { Theme } from "./theme.js";
import { padToWidth, sanitize, stripAnsi, truncate, visibleWidth, wrapLine, wrapText } from "./text.js";

export interface ChatContext {
  theme: Theme;
  keys: Keybindings;
  expandTools: boolean;
  /** false: thinking blocks collapse to one line. */
  showThinking: boolean;
  cwd: string;
  markdown: MarkdownOptions;
  /** Look up a tool definition (for extension renderCall/renderResult). */
  tool?(name: string): ToolRenderers | undefined;
  /** Look up an entry renderer for a custom session entry type (registerEntryRenderer). */
  entryRenderer?(customType: string): ((...a: any[]) => unknown) | undefined;
  /** Look up a message renderer for a custom message type. */
  messageRenderer?(customType: string): ((...a: any[]) => unknown) | undefined;
  /**
   * The extensions' markdown transformers for a surface, run on the text before it is drawn
   * (display only); undefined when none is registered.
   */
  transformMarkdown?(markdown: string, context: MarkdownTransformContext): string;
  /** Ask for a new frame (a component changed). */
  requestRender(): void;
  /** Report a renderer failure (once per block). */
  report?(message: string, error: unknown): void;
}

/** Lines of something an extension returned: a string, lines, or a component with render(width). */
export function componentLines(c: unknown, width: number): string[] {
  if (c === undefined || c === null || c === false) return [];
  if (typeof c === "string") return wrapText(sanitize(c), width);
  if (Array.isArray(c)) return c.flatMap((x) => (typeof x === "string" ? wrapText(sanitize(x), width) : componentLines(x, width)));
  return renderComponent(c, width);
}

/** The key text and hints pi hands an extension's renderers, from the user's key bindings. */
export function rendererHints(ctx: ChatContext): ReturnType<typeof rendererKeyHints> {
  return rendererKeyHints(ctx.theme, (action) => ctx.keys.getKeys(action));
}

/** Lines inside a background box: one column of padding each side, padded to the width. */
export function boxLines(lines: string[], width: number, theme: Theme, bgToken: string | undefined): string[] {
  const inner = Math.max(1, width - 2);
  if (!bgToken || theme.colors[bgToken as keyof typeof theme.colors] === undefined) return lines.map((l) => " " + l);
  const bg = theme.getBgAnsi(bgToken);
  return lines.map((l) => {
    const body = padToWidth(l, inner).replace(/\x1b\[0?m/g, (m) => m + bg).replace(/\x1b\[49m/g, bg);
    return `${bg} ${body} \x1b[49m`;
  });
}

export abstract class Block {
  version = 0;
  /** Re-render on every frame (components that change on their own). */
  volatile = false;
  private cw = -1;
  private cv = -1;
  private cu = -1;
  private cache: string[] = [];
  protected failed = false;

  touch(): void {
    this.version++;
  }

  lines(width: number, ctx: ChatContext, uiVersion: number): string[] {
    if (!this.volatile && this.cw === width && this.cv === this.version && this.cu === uiVersion) return this.cache;
    let out: string[];
    try {
      out = this.render(width, ctx);
    } catch (error) {
      if (!this.failed) ctx.report?.(`a ${this.constructor.name} failed to render`, error);
      this.failed = true;
      out = [ctx.theme.fg("error", `[render error: ${error instanceof Error ? error.message : String(error)}]`)];
    }
    this.cache = out;
    this.cw = width;
    this.cv = this.version;
    this.cu = uiVersion;
    return out;
  }

  abstract render(width: number, ctx: ChatContext): string[];
}

// ---- blocks -----------------------------------------------------------------------------------

export class LinesBlock extends Block {
  constructor(private fn: (width: number, ctx: ChatContext) => string[]) {
    super();
  }
  render(width: number, ctx: ChatContext): string[] {
    return this.fn(width, ctx);
  }
}

/** Something an extension supplied (header component, rendered message) drawn on every frame. */
export class ComponentBlock extends Block {
  constructor(public component: unknown) {
    super();
    this.volatile = true;
  }
  render(width: number): string[] {
    return componentLines(this.component, width);
  }
}

export class NoticeBlock extends Block {
  constructor(
    readonly text: string,
    readonly level: "info" | "warning" | "error" | "success" = "info",
  ) {
    super();
  }
  render(width: number, ctx: ChatContext): string[] {
    const t = ctx.theme;
    const icon = this.level === "error" ? "✗ " : this.level === "warning" ? "! " : this.level === "success" ? "✓ " : "• ";
    const token = this.level === "error" ? "error" : this.level === "warning" ? "warning" : this.level === "success" ? "success" : "muted";
    return wrapText(sanitize(icon + this.text), width).map((l) => t.fg(token, l));
  }
}

/** Where a block's message is stored: the session entry's id and time (undefined for a live message). */
export interface EntrySource {
  messageId?: string;
  timestamp?: string;
}

/** `markdown` after the extensions' transformers for `surface` (itself when there are none). */
function shown(markdown: string, ctx: ChatContext, messageType: MarkdownSurface, availableWidth: number, isStreaming = false, source?: EntrySource): string {
  return ctx.transformMarkdown ? ctx.transformMarkdown(markdown, { messageType, isStreaming, availableWidth, messageId: source?.messageId, timestamp: source?.timestamp }) : markdown;
}

export class UserBlock extends Block {
  constructor(
    readonly text: string,
    readonly source?: EntrySource,
  ) {
    super();
  }
  render(width: number, ctx: ChatContext): string[] {
    const inner = Math.max(1, width - 2);
    const body = wrapText(sanitize(stripAnsi(shown(this.text, ctx, "user", inner, false, this.source))), inner);
    return boxLines(body.map((l) => ctx.theme.fg("userMessageText", l)), width, ctx.theme, "userMessageBg");
  }
}

interface AssistantLike {
  role: "assistant";
  content: Array<{ type: string; text?: string; thinking?: string; redacted?: boolean }>;
  stopReason?: string;
  errorMessage?: string;
}

export class AssistantBlock extends Block {
  private views: MarkdownView[] = [];
  private streaming = true;
  constructor(
    public message: AssistantLike,
    private theme: Theme,
    private mdOptions: MarkdownOptions,
    streaming = true,
    readonly source?: EntrySource,
  ) {
    super();
    this.setMessage(message, streaming);
  }

  setMessage(message: AssistantLike, streaming: boolean): void {
    this.message = message;
    this.streaming = streaming;
    message.content.forEach((c, i) => {
      if (c.type !== "text") return;
      let v = this.views[i];
      if (!v) v = this.views[i] = new MarkdownView(this.theme, this.mdOptions);
      v.setText(c.text ?? "", !streaming);
    });
    this.touch();
  }

  /** Wrapped thinking lines; finished source lines are cached (thinking can be long and streams). */
  private thinkCache = new Map<number, { key: string; lines: Map<string, string[]> }>();
  private thinkingLines(index: number, text: string, width: number, t: Theme): string[] {
    const key = `${width}\0${t.name}`;
    let c = this.thinkCache.get(index);
    if (!c || c.key !== key) this.thinkCache.set(index, (c = { key, lines: new Map() }));
    const src = text.split("\n");
    const out: string[] = [];
    src.forEach((l, i) => {
      const last = i === src.length - 1 && this.streaming;
      let lines = last ? undefined : c!.lines.get(l);
      if (!lines) {
        lines = wrapLine(l, width).map((x) => t.fg("thinkingText", x));
        if (!last) c!.lines.set(l, lines);
      }
      out.push(...lines);
    });
    return out;
  }

  /** Drawn one column in from each side, as pi 1.6 draws an answer. */
  render(outer: number, ctx: ChatContext): string[] {
    const width = Math.max(1, outer - 2);
    const t = ctx.theme;
    if (t !== this.theme) {
      this.theme = t;
      for (const v of this.views) v?.setTheme(t);
    }
    const parts: string[][] = [];
    this.message.content.forEach((c, i) => {
      if (c.type === "text") {
        const view = this.views[i];
        if (view && ctx.transformMarkdown) view.setText(shown(c.text ?? "", ctx, "assistant", width, this.streaming, this.source), !this.streaming);
        else if (view && view.getText() !== (c.text ?? "")) view.setText(c.text ?? "", !this.streaming); // transformers gone
        const lines = view ? view.render(width) : [];
        if (lines.length) parts.push(lines);
      } else if (c.type === "thinking") {
        const text = shown((c.thinking ?? "").trim(), ctx, "assistant-thinking", width, this.streaming, this.source);
        if (!text && !c.redacted) return;
        if (!ctx.showThinking || !text) {
          const n = text ? text.split("\n").length : 0;
          const hint = text ? ` (${n} line${n === 1 ? "" : "s"}, ${ctx.keys.hint("app.thinking.toggle")} to show)` : "";
          parts.push([t.fg("thinkingText", truncate(`∴ Thinking…${hint}`, width))]);
        } else {
          parts.push(this.thinkingLines(i, sanitize(text), width, t));
        }
      }
    });
    const m = this.message;
    if (m.stopReason === "error") parts.push(wrapText(sanitize(`Error: ${m.errorMessage ?? "the request failed"}`), width).map((l) => t.fg("error", l)));
    else if (m.stopReason === "aborted") parts.push([t.fg("warning", m.errorMessage && m.errorMessage !== "aborted" && !/abort/i.test(m.errorMessage) ? `Aborted: ${m.errorMessage}` : "Aborted")]);
    else if (m.stopReason === "length") parts.push([t.fg("warning", "(the answer was cut off at the model's output limit)")]);
    const out: string[] = [];
    for (const p of parts) {
      if (out.length) out.push("");
      for (const line of p) out.push(line ? ` ${line}` : line);
    }
    return out;
  }
}

export class ToolBlock extends Block {
  status: ToolStatus = "pending";
  args: Record<string, unknown> = {};
  partial: AgentToolResult | undefined;
  result: AgentToolResult | undefined;
  private state: Record<string, unknown> = {};
  private lastCall: unknown;
  private lastResult: unknown;
  private executionStarted = false;
  private startedAt: number | undefined;
  private endedAt: number | undefined;
  argsComplete = false;

  constructor(
    readonly toolCallId: string,
    public name: string,
  ) {
    super();
  }

  setArgs(args: unknown, complete: boolean): void {
    this.args = args && typeof args === "object" ? (args as Record<string, unknown>) : {};
    this.argsComplete = complete;
    this.touch();
  }
  start(args: unknown): void {
    if (args && typeof args === "object") this.args = args as Record<string, unknown>;
    this.startedAt ??= Date.now();
    this.status = "running";
    this.executionStarted = true;
    this.argsComplete = true;
    this.touch();
  }
  update(partial: AgentToolResult): void {
    this.partial = partial;
    this.touch();
  }
  finish(result: AgentToolResult, isError: boolean): void {
    this.endedAt = Date.now();
    this.result = result;
    this.status = isError ? "error" : "done";
    this.executionStarted = true;
    this.argsComplete = true;
    this.touch();
  }

  render(width: number, ctx: ChatContext): string[] {
    const t = ctx.theme;
    const def = ctx.tool?.(this.name);
    // renderShell "self": the tool draws its own frame over the whole width.
    const self = def?.renderShell === "self";
    const inner = self ? width : Math.max(4, width - 2);
    const isPartial = this.status !== "done" && this.status !== "error";
    const rctx: Omit<ToolRenderContext, "lastComponent"> = {
      args: this.args,
      state: this.state,
      toolCallId: this.toolCallId,
      cwd: ctx.cwd,
      executionStarted: this.executionStarted,
      argsComplete: this.argsComplete,
      isPartial,
      expanded: ctx.expandTools,
      showImages: false,
      isError: this.status === "error",
      durationMs: isPartial || this.startedAt === undefined ? undefined : this.endedAt! - this.startedAt,
      outputPad: 1,
      ...rendererHints(ctx),
      invalidate: () => {
        this.touch();
        ctx.requestRender();
      },
    };
    const res = this.result ?? this.partial;
    let head: string[] | undefined;
    if (def?.renderCall) {
      try {
        const c = def.renderCall(this.args, t, { ...rctx, lastComponent: this.lastCall });
        this.lastCall = c;
        head = componentLines(c, inner);
      } catch (e) {
        if (!this.failed) ctx.report?.(`renderCall of tool "${this.name}" failed`, e);
        this.failed = true;
      }
    }
    const view = { name: this.name, args: this.args, status: this.status, result: res };
    const env = { theme: t, cwd: ctx.cwd, expanded: ctx.expandTools, expandKey: ctx.keys.hint("app.tools.expand") };
    head ??= toolCallLines(view, inner, env);
    let body: string[] | undefined;
    if (def?.renderResult && res) {
      try {
        const c = def.renderResult(res, { expanded: ctx.expandTools, isPartial }, t, { ...rctx, lastComponent: this.lastResult });
        this.lastResult = c;
        body = componentLines(c, inner);
      } catch (e) {
        if (!this.failed) ctx.report?.(`renderResult of tool "${this.name}" failed`, e);
        this.failed = true;
      }
    }
    body ??= toolResultLines(view, inner, env);
    if (self) return [...head, ...body];
    return boxLines([...head, ...body], width, t, statusBg(this.status));
  }

}


/** A user `!cmd` / `!!cmd` run, live while it runs. */
export class BashBlock extends Block {
  output = "";
  exitCode: number | undefined;
  done = false;
  cancelled = false;
  truncated = false;
  fullOutputPath: string | undefined;
  bound = false;
  constructor(
    readonly command: string,
    readonly excluded: boolean,
  ) {
    super();
  }
  append(chunk: string): void {
    this.output += chunk;
    if (this.output.length > 200_000) this.output = this.output.slice(-100_000);
    this.touch();
  }
  error: string | undefined;
  /** The command could not run at all. */
  fail(message: string): void {
    this.error = message;
    this.done = true;
    this.touch();
  }
  finish(r: { output: string; exitCode?: number; cancelled: boolean; truncated: boolean; fullOutputPath?: string }): void {
    this.output = r.output;
    this.exitCode = r.exitCode;
    this.cancelled = r.cancelled;
    this.truncated = r.truncated;
    this.fullOutputPath = r.fullOutputPath;
    this.done = true;
    this.touch();
  }
  render(width: number, ctx: ChatContext): string[] {
    const t = ctx.theme;
    const inner = Math.max(4, width - 2);
    const failed = !!this.error || this.cancelled || (this.exitCode ?? 0) !== 0;
    const status: ToolStatus = !this.done ? "running" : failed ? "error" : "done";
    const icon = statusIcon(status, t);
    const head = truncate(`${icon} ${t.fg("bashMode", (this.excluded ? "!! " : "! ") + sanitize(this.command, false))}${this.excluded ? t.fg("dim", "  (not sent to the model)") : ""}`, inner);
    const text = sanitize(this.output).replace(/\n+$/, "");
    const hint = t.fg("dim", `(${ctx.keys.hint("app.tools.expand")} to expand)`);
    const body = text ? limitLines(wrapText(text, inner).map((l) => t.fg("toolOutput", l)), ctx.expandTools ? 500 : 8, "tail", t, hint, inner) : [];
    const tail: string[] = [];
    if (this.error) tail.push(...wrapText(sanitize(this.error), inner).map((l) => t.fg("error", l)));
    else if (this.done) {
      if (this.cancelled) tail.push(t.fg("warning", "(cancelled)"));
      else if ((this.exitCode ?? 0) !== 0) tail.push(t.fg("error", `exit code ${this.exitCode ?? "?"}`));
      if (this.truncated && this.fullOutputPath) tail.push(t.fg("dim", truncate(`output truncated; full output: ${this.fullOutputPath}`, inner)));
    }
    return boxLines([head, ...body, ...tail], width, t, statusBg(status));
  }
}

export class CustomMessageBlock extends Block {
  private lastComponent: unknown;
  constructor(readonly message: { customType: string; content: unknown; details?: unknown; display?: boolean }) {
    super();
  }
  render(width: number, ctx: ChatContext): string[] {
    const t = ctx.theme;
    const renderer = ctx.messageRenderer?.(this.message.customType);
    if (renderer) {
      try {
        const c = renderer(this.message, { expanded: ctx.expandTools, outputPad: 1, ...rendererHints(ctx) }, t);
        if (c !== undefined && c !== null) {
          this.lastComponent = c;
          this.volatile = typeof (c as { render?: unknown }).render === "function";
          return componentLines(c, width);
        }
      } catch (e) {
        if (!this.failed) ctx.report?.(`message renderer for "${this.message.customType}" failed`, e);
        this.failed = true;
      }
    }
    void this.lastComponent;
    const content = this.message.content;
    const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((c: any) => (c?.type === "text" ? c.text : c?.type === "image" ? "[image]" : "")).join("\n") : "";
    const label = t.bold(t.fg("customMessageLabel", `[${this.message.customType}]`));
    const inner = Math.max(4, width - 2);
    const body = renderMarkdownLines(sanitize(shown(text, ctx, "custom", inner)), inner, t, ctx.markdown).map((l) => t.fg("customMessageText", l));
    return boxLines([label, ...body], width, t, "customMessageBg");
  }
}

export class SummaryBlock extends Block {
  constructor(
    readonly kind: "compaction" | "branch",
    readonly summary: string,
    readonly tokensBefore?: number,
  ) {
    super();
  }
  render(width: number, ctx: ChatContext): string[] {
    const title =
      this.kind === "compaction"
        ? `⟲ Context compacted${this.tokensBefore ? ` (from ${this.tokensBefore.toLocaleString("en-US")} tokens)` : ""}`
        : "⎇ Summary of the branch left behind";
    return collapsibleBox(title, this.summary, width, ctx, "summary");
  }
}

/** A `/skill:name` message: the skill's name, and its text while tool output is expanded. */
export class SkillBlock extends Block {
  constructor(readonly skill: ParsedSkillBlock) {
    super();
  }
  render(width: number, ctx: ChatContext): string[] {
    return collapsibleBox(`[skill] ${this.skill.name}`, this.skill.content, width, ctx, "custom");
  }
}

/** A titled box on the custom-message background: the title and a hint while collapsed, the markdown body under it when expanded. */
function collapsibleBox(title: string, markdown: string, width: number, ctx: ChatContext, surface: MarkdownSurface): string[] {
  const t = ctx.theme;
  const head = t.bold(t.fg("customMessageLabel", title));
  if (!ctx.expandTools) return boxLines([truncate(`${head} ${t.fg("dim", `(${ctx.keys.hint("app.tools.expand")} to show)`)}`, width - 2)], width, t, "customMessageBg");
  const inner = Math.max(4, width - 2);
  const body = renderMarkdownLines(sanitize(shown(markdown, ctx, surface, inner)), inner, t, ctx.markdown);
  return boxLines([head, ...body], width, t, "customMessageBg");
}

// ---- the view -----------------------------------------------------------------------------------

export class ChatView {
  blocks: Block[] = [];
  /** Rows scrolled up from the bottom (0 = follow the end). */
  scroll = 0;
  /** Bumped when something every block depends on changes (theme, expand, thinking). */
  uiVersion = 0;
  /** Whether the top of the conversation is on screen (set by visible()). */
  atTop = false;

  add<B extends Block>(b: B): B {
    this.blocks.push(b);
    return b;
  }
  insertBefore<B extends Block>(b: B, before: Block): B {
    const i = this.blocks.indexOf(before);
    if (i === -1) this.blocks.push(b);
    else this.blocks.splice(i, 0, b);
    return b;
  }
  remove(b: Block): void {
    const i = this.blocks.indexOf(b);
    if (i !== -1) this.blocks.splice(i, 1);
  }
  clear(): void {
    this.blocks = [];
    this.scroll = 0;
  }
  invalidateAll(): void {
    this.uiVersion++;
  }

  /**
   * The `height` rows on screen: blocks separated by a blank line, the last rows unless
   * scrolled. Only the blocks that reach the screen are rendered.
   */
  visible(width: number, height: number, ctx: ChatContext): string[] {
    const need = this.scroll + height;
    const segments: string[][] = [];
    let count = 0;
    let i = this.blocks.length - 1;
    for (; i >= 0 && count < need; i--) {
      const l = this.blocks[i]!.lines(width, ctx, this.uiVersion);
      if (!l.length) continue;
      segments.push(l);
      count += l.length + 1;
    }
    // Any block left above with lines means we are not at the top.
    let more = false;
    for (let j = i; j >= 0 && !more; j--) if (this.blocks[j]!.lines(width, ctx, this.uiVersion).length) more = true;
    const all: string[] = [];
    for (let s = segments.length - 1; s >= 0; s--) {
      for (const l of segments[s]!) all.push(l);
      all.push("");
    }
    if (!more && this.scroll > Math.max(0, all.length - height)) this.scroll = Math.max(0, all.length - height);
    const end = all.length - this.scroll;
    const start = Math.max(0, end - height);
    this.atTop = !more && start === 0;
    return all.slice(start, end);
  }

  /** Every row of the conversation (as visible() lays them out), for transcript search. */
  allLines(width: number, ctx: ChatContext): string[] {
    const out: string[] = [];
    for (const b of this.blocks) {
      const l = b.lines(width, ctx, this.uiVersion);
      if (!l.length) continue;
      for (const x of l) out.push(x);
      out.push("");
    }
    return out;
  }

  scrollBy(rows: number): void {
    this.scroll = Math.max(0, this.scroll + rows);
  }
}

export { visibleWidth };
