/**
 * pi 1.6's message components, as pi-tui components an extension can build to draw messages in
 * its own UI: AssistantMessageComponent, UserMessageComponent, CustomMessageComponent and the
 * collapsible summaries (BranchSummaryMessageComponent, CompactionSummaryMessageComponent,
 * SkillInvocationMessageComponent). Constructor signatures are 1.6's (0.73.1's are their
 * prefixes); messages are pi-ai's shapes; colours come from the active theme (helpers.ts), read
 * when the component builds its content (invalidate() rebuilds it after a theme change).
 *
 * pi-tui loads on first use (see components.ts, lazyClass).
 */
import type { Box, Component, Container, MarkdownTheme, TuiMouseEvent } from "@earendil-works/pi-tui";
import { applyMarkdownTransformers, type MarkdownSurface, type MarkdownTransformContext } from "../format.js";
import { getActiveTheme, getMarkdownTheme } from "../pi-theme.js";
import { lazyClass, piTui } from "./components.js";
import { keyHint, keyText } from "./hints.js";
import type { ParsedSkillBlock } from "../format.js";

// ---- shared ------------------------------------------------------------------------------------------

/** Where a markdown transformer runs (pi's MarkdownMessageType) and what it is told: one definition, format.ts. */
export type MarkdownMessageType = MarkdownSurface;
export type { MarkdownTransformContext };
/** An extension's markdown rewrite (registerMarkdownTransformer); a throw or a non-string keeps the text. */
export type MarkdownTransformer = (markdown: string, context: MarkdownTransformContext) => string;

function markdownTransform(type: MarkdownMessageType, streaming: () => boolean, transformers: readonly MarkdownTransformer[], messageId?: string, timestamp?: string) {
  return (markdown: string, availableWidth: number): string => applyMarkdownTransformers(markdown, { messageType: type, isStreaming: streaming(), availableWidth, messageId, timestamp }, transformers);
}

/** The label of a boxed message: bold, in the custom-message label colour. */
function label(text: string): string {
  return getActiveTheme().fg("customMessageLabel", `\x1b[1m${text}\x1b[22m`);
}

/** A left click on `child` runs `toggle`. */
function clickable(child: Component, toggle: () => void): Component {
  const { MouseRegion } = piTui();
  return new MouseRegion(child, (event: TuiMouseEvent) => {
    if (event.type !== "click" || event.button !== "left") return undefined;
    toggle();
    return { handled: true };
  });
}

type TextPart = { type: "text"; text: string };
type ThinkingPart = { type: "thinking"; thinking: string };
type ToolCallPart = { type: "toolCall"; id?: string; name?: string; arguments?: unknown };
type ContentPart = TextPart | ThinkingPart | ToolCallPart | { type: string; [k: string]: unknown };

/** pi-ai's assistant message (the fields these components read). */
export interface AssistantMessageLike {
  role?: "assistant";
  content: ContentPart[];
  stopReason?: string;
  errorMessage?: string;
  [k: string]: unknown;
}

// ---- AssistantMessageComponent ------------------------------------------------------------------------

export interface AssistantMessageComponent extends Container {
  invalidate(): void;
  setHideThinkingBlock(hide: boolean): void;
  setHiddenThinkingLabel(label: string): void;
  setOutputPad(padding: number): void;
  updateContent(message: AssistantMessageLike, isStreaming?: boolean): void;
}

export const AssistantMessageComponent: new (
  message?: AssistantMessageLike,
  hideThinkingBlock?: boolean,
  markdownTheme?: MarkdownTheme,
  hiddenThinkingLabel?: string,
  outputPad?: number,
  markdownTransformers?: readonly MarkdownTransformer[],
  messageId?: string,
  timestamp?: string,
) => AssistantMessageComponent = lazyClass("AssistantMessageComponent", () => {
  const { Container: PiContainer, Markdown, Spacer, Text } = piTui();
  class AssistantMessageImpl extends PiContainer {
    private readonly body = new PiContainer();
    private last?: AssistantMessageLike;
    private streaming = false;
    /** Thinking runs the user clicked open or shut, by their index in the message. */
    private readonly toggled = new Map<number, boolean>();

    constructor(
      message: AssistantMessageLike | undefined,
      private hideThinking = false,
      private readonly mdTheme: MarkdownTheme = getMarkdownTheme(),
      private hiddenLabel = "Thinking...",
      private pad = 1,
      private readonly transformers: readonly MarkdownTransformer[] = [],
      private readonly messageId?: string,
      private readonly timestamp?: string,
    ) {
      super();
      this.addChild(this.body);
      if (message) this.updateContent(message);
    }

    override invalidate(): void {
      super.invalidate();
      if (this.last) this.updateContent(this.last);
    }
    setHideThinkingBlock(hide: boolean): void {
      this.hideThinking = hide;
      this.toggled.clear();
      if (this.last) this.updateContent(this.last);
    }
    setHiddenThinkingLabel(text: string): void {
      this.hiddenLabel = text;
      if (this.last) this.updateContent(this.last);
    }
    setOutputPad(padding: number): void {
      this.pad = padding;
      if (this.last) this.updateContent(this.last);
    }

    updateContent(message: AssistantMessageLike, isStreaming = this.streaming): void {
      const t = getActiveTheme();
      this.last = message;
      this.streaming = isStreaming;
      this.body.clear();
      const parts = Array.isArray(message.content) ? message.content : [];
      // a blank line before the first visible block and between a thinking run and what follows it
      let gap = true;
      const show = (c: Component) => {
        if (gap) this.body.addChild(new Spacer(1));
        gap = false;
        this.body.addChild(c);
      };
      const streaming = () => this.streaming;
      let run = 0;
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        if (part.type === "text") {
          const text = String((part as TextPart).text ?? "").trim();
          if (text) show(new Markdown(text, this.pad, 0, this.mdTheme, undefined, { transform: markdownTransform("assistant", streaming, this.transformers, this.messageId, this.timestamp) }));
          continue;
        }
        if (part.type !== "thinking") continue;
        // consecutive thinking blocks form one run
        const texts: string[] = [];
        while (i < parts.length && parts[i]!.type === "thinking") {
          const s = String((parts[i] as ThinkingPart).thinking ?? "").trim();
          if (s) texts.push(s);
          i++;
        }
        i--;
        if (!texts.length) continue;
        const index = run++;
        const hidden = this.toggled.get(index) ?? this.hideThinking;
        if (hidden && !this.hiddenLabel.trim()) continue;
        const block = hidden
          ? new Text(t.italic(t.fg("thinkingText", this.hiddenLabel)), this.pad, 0)
          : new Markdown(texts.join("\n\n"), this.pad, 0, this.mdTheme, { color: (s: string) => t.fg("thinkingText", s), italic: true }, { transform: markdownTransform("assistant-thinking", streaming, this.transformers, this.messageId, this.timestamp) });
        show(
          clickable(block, () => {
            this.toggled.set(index, !hidden);
            if (this.last) this.updateContent(this.last);
          }),
        );
        gap = true;
      }
      // tool calls show their own errors (ToolExecutionComponent); a cut-off reply says so here
      const hasToolCalls = parts.some((p) => p.type === "toolCall");
      let problem: string | undefined;
      if (message.stopReason === "length") problem = "Response was truncated before completion.";
      else if (!hasToolCalls && message.stopReason === "aborted") problem = message.errorMessage && message.errorMessage !== "Request was aborted" ? message.errorMessage : "Operation aborted";
      else if (!hasToolCalls && message.stopReason === "error") problem = `Error: ${message.errorMessage || "Unknown error"}`;
      if (problem) {
        this.body.addChild(new Spacer(1));
        this.body.addChild(new Text(t.fg("error", problem), this.pad, 0));
      }
    }
  }
  return AssistantMessageImpl as never;
});

// ---- UserMessageComponent -----------------------------------------------------------------------------

export interface UserMessageComponent extends Container {
  setOutputPad(padding: number): void;
}

export const UserMessageComponent: new (
  text: string,
  markdownTheme?: MarkdownTheme,
  outputPad?: number,
  markdownTransformers?: readonly MarkdownTransformer[],
  messageId?: string,
  timestamp?: string,
) => UserMessageComponent = lazyClass("UserMessageComponent", () => {
  const { Container: PiContainer, Markdown } = piTui();
  class UserMessageImpl extends PiContainer {
    constructor(
      private readonly text: string,
      private readonly mdTheme: MarkdownTheme = getMarkdownTheme(),
      private pad = 1,
      private readonly transformers: readonly MarkdownTransformer[] = [],
      private readonly messageId?: string,
      private readonly timestamp?: string,
    ) {
      super();
      this.build();
    }
    setOutputPad(padding: number): void {
      this.pad = padding;
      this.build();
    }
    override invalidate(): void {
      super.invalidate();
      this.build();
    }
    private build(): void {
      const t = getActiveTheme();
      this.clear();
      // the user's text on the user-message background, one blank padded line above and below
      this.addChild(
        new Markdown(
          String(this.text ?? ""),
          this.pad,
          1,
          this.mdTheme,
          { color: (s: string) => t.fg("userMessageText", s), bgColor: (s: string) => t.bg("userMessageBg", s) },
          { preserveOrderedListMarkers: true, preserveBackslashEscapes: true, transform: markdownTransform("user", () => false, this.transformers, this.messageId, this.timestamp) },
        ),
      );
    }
  }
  return UserMessageImpl as never;
});

// ---- collapsible summaries ----------------------------------------------------------------------------

/** The shape the three summary components share: a Box on the custom-message background. */
export interface CollapsibleMessageComponent extends Box {
  setExpanded(expanded: boolean): void;
  setOutputPad(outputPad: number): void;
  invalidate(): void;
}

interface SummarySpec {
  /** Collapsed content: one Text line. */
  collapsed(): string;
  /** Expanded: the label line, then markdown `body` under `header` (transformers see only the body). */
  expanded(): { header: string; body: string; type: MarkdownMessageType };
  /** Whether the collapsed form has its own label line ([branch], [compaction]). */
  labelAbove: boolean;
}

type SummaryArgs = [mdTheme?: MarkdownTheme, outputPad?: number, transformers?: readonly MarkdownTransformer[], messageId?: string, timestamp?: string];

function summaryClass<T>(name: string, labelText: string, spec: (data: T) => SummarySpec) {
  return lazyClass(name, () => {
    const { Box: PiBox, Container: PiContainer, Markdown, Spacer, Text } = piTui();
    class SummaryImpl extends PiBox {
      private open = false;
      private readonly mdTheme: MarkdownTheme;
      private readonly transformers: readonly MarkdownTransformer[];
      private readonly messageId?: string;
      private readonly timestamp?: string;
      constructor(
        private readonly data: T,
        ...[mdTheme, outputPad, transformers, messageId, timestamp]: SummaryArgs
      ) {
        super(outputPad ?? 1, 1, (s: string) => getActiveTheme().bg("customMessageBg", s));
        this.mdTheme = mdTheme ?? getMarkdownTheme();
        this.transformers = transformers ?? [];
        this.messageId = messageId;
        this.timestamp = timestamp;
        this.build();
      }
      setExpanded(expanded: boolean): void {
        this.open = expanded;
        this.build();
      }
      setOutputPad(outputPad: number): void {
        this.setPaddingX(outputPad);
      }
      override invalidate(): void {
        super.invalidate();
        this.build();
      }
      private build(): void {
        const t = getActiveTheme();
        const s = spec(this.data);
        this.clear();
        const content = new PiContainer();
        if (this.open) {
          const e = s.expanded();
          content.addChild(new Text(label(labelText), 0, 0));
          if (s.labelAbove) content.addChild(new Spacer(1));
          const inner = markdownTransform(e.type, () => false, this.transformers, this.messageId, this.timestamp);
          // transformers see the summary's own text, not the header
          content.addChild(new Markdown(e.body, 0, 0, this.mdTheme, { color: (x: string) => t.fg("customMessageText", x) }, { transform: (md: string, w: number) => e.header + inner(md, w) }));
        } else {
          if (s.labelAbove) {
            content.addChild(new Text(label(labelText), 0, 0));
            content.addChild(new Spacer(1));
          }
          content.addChild(new Text(s.collapsed(), 0, 0));
        }
        this.addChild(clickable(content, () => this.setExpanded(!this.open)));
      }
    }
    return SummaryImpl as never;
  });
}

/** "(ctrl+o to expand)" in the summary colours. */
function expandHint(before: string): string {
  const t = getActiveTheme();
  return t.fg("customMessageText", `${before}(`) + t.fg("dim", keyText("app.tools.expand")) + t.fg("customMessageText", " to expand)");
}

/** The branch_summary message of a session (pi-coding-agent's BranchSummaryMessage). */
export interface BranchSummaryMessageLike {
  role?: "branchSummary";
  summary: string;
  fromId?: string;
  timestamp?: number;
}
/** The compactionSummary message of a session. */
export interface CompactionSummaryMessageLike {
  role?: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp?: number;
}

export type BranchSummaryMessageComponent = CollapsibleMessageComponent;
export const BranchSummaryMessageComponent: new (message: BranchSummaryMessageLike, ...rest: SummaryArgs) => BranchSummaryMessageComponent = summaryClass<BranchSummaryMessageLike>(
  "BranchSummaryMessageComponent",
  "[branch]",
  (m) => ({
    labelAbove: true,
    collapsed: () => expandHint("Branch summary "),
    expanded: () => ({ header: "**Branch Summary**\n\n", body: String(m.summary ?? ""), type: "summary" }),
  }),
);

export type CompactionSummaryMessageComponent = CollapsibleMessageComponent;
export const CompactionSummaryMessageComponent: new (message: CompactionSummaryMessageLike, ...rest: SummaryArgs) => CompactionSummaryMessageComponent = summaryClass<CompactionSummaryMessageLike>(
  "CompactionSummaryMessageComponent",
  "[compaction]",
  (m) => {
    const tokens = Number(m.tokensBefore ?? 0).toLocaleString("en-US");
    return {
      labelAbove: true,
      collapsed: () => expandHint(`Compacted from ${tokens} tokens `),
      expanded: () => ({ header: `**Compacted from ${tokens} tokens**\n\n`, body: String(m.summary ?? ""), type: "summary" }),
    };
  },
);

export type SkillInvocationMessageComponent = CollapsibleMessageComponent;
export const SkillInvocationMessageComponent: new (skillBlock: ParsedSkillBlock, ...rest: SummaryArgs) => SkillInvocationMessageComponent = summaryClass<ParsedSkillBlock>(
  "SkillInvocationMessageComponent",
  "[skill]",
  (b) => ({
    labelAbove: false,
    collapsed: () => {
      const t = getActiveTheme();
      return label("[skill] ") + t.fg("customMessageText", b.name) + t.fg("dim", ` (${keyText("app.tools.expand")} to expand)`);
    },
    expanded: () => ({ header: `**${b.name}**\n\n`, body: String(b.content ?? ""), type: "custom" }),
  }),
);

// ---- CustomMessageComponent ---------------------------------------------------------------------------

/** A custom message an extension sent (pi.sendMessage): customType, content, details. */
export interface CustomMessageLike<T = unknown> {
  role?: "custom";
  customType: string;
  content: string | ContentPart[];
  display?: boolean;
  details?: T;
  timestamp?: number;
}
export interface MessageRenderOptions {
  expanded: boolean;
  outputPad?: number;
  keyText: typeof keyText;
  keyHint: typeof keyHint;
}
/** An extension's renderer for its message type (registerMessageRenderer); undefined falls back to the default box. */
export type MessageRenderer<T = unknown> = (message: CustomMessageLike<T>, options: MessageRenderOptions, theme: ReturnType<typeof getActiveTheme>) => Component | undefined;

export interface CustomMessageComponent extends Container {
  setExpanded(expanded: boolean): void;
  setOutputPad(outputPad: number): void;
  invalidate(): void;
}

export const CustomMessageComponent: new (
  message: CustomMessageLike,
  customRenderer?: MessageRenderer,
  markdownTheme?: MarkdownTheme,
  outputPad?: number,
  markdownTransformers?: readonly MarkdownTransformer[],
  messageId?: string,
  timestamp?: string,
) => CustomMessageComponent = lazyClass("CustomMessageComponent", () => {
  const { Box: PiBox, Container: PiContainer, Markdown, Spacer, Text } = piTui();
  class CustomMessageImpl extends PiContainer {
    private readonly box = new PiBox(1, 1, (s: string) => getActiveTheme().bg("customMessageBg", s));
    private shown?: Component;
    private open = false;
    constructor(
      private readonly message: CustomMessageLike,
      private readonly renderer?: MessageRenderer,
      private readonly mdTheme: MarkdownTheme = getMarkdownTheme(),
      private pad = 1,
      private readonly transformers: readonly MarkdownTransformer[] = [],
      private readonly messageId?: string,
      private readonly timestamp?: string,
    ) {
      super();
      this.addChild(new Spacer(1));
      this.build();
    }
    setExpanded(expanded: boolean): void {
      if (this.open === expanded) return;
      this.open = expanded;
      this.build();
    }
    setOutputPad(outputPad: number): void {
      if (this.pad === outputPad) return;
      this.pad = outputPad;
      this.build();
    }
    override invalidate(): void {
      super.invalidate();
      this.build();
    }
    private build(): void {
      const t = getActiveTheme();
      if (this.shown) this.removeChild(this.shown);
      this.shown = undefined;
      // the extension's renderer draws it when it returns a component; a throw falls back to the box
      if (this.renderer) {
        try {
          const own = this.renderer(this.message, { expanded: this.open, outputPad: this.pad, keyText, keyHint }, t);
          if (own) {
            this.shown = own;
            this.addChild(own);
            return;
          }
        } catch {
          /* default rendering below */
        }
      }
      this.box.clear();
      this.box.setPaddingX(this.pad);
      this.box.addChild(new Text(label(`[${this.message.customType}]`), 0, 0));
      this.box.addChild(new Spacer(1));
      const c = this.message.content;
      const text = typeof c === "string" ? c : Array.isArray(c) ? c.filter((p): p is TextPart => p.type === "text").map((p) => p.text).join("\n") : "";
      this.box.addChild(new Markdown(text, 0, 0, this.mdTheme, { color: (s: string) => t.fg("customMessageText", s) }, { transform: markdownTransform("custom", () => false, this.transformers, this.messageId, this.timestamp) }));
      this.shown = this.box;
      this.addChild(this.box);
    }
  }
  return CustomMessageImpl as never;
});
