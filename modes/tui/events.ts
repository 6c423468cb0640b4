/**
 * The event projector: session events and the session's transcript become chat blocks
 * (chat.ts). Events only add blocks or mark them dirty; the renderer draws them on its next frame.
 */
import { startupResourceLines } from "./startup-resources.js";
import { messageText } from "../../core/engine/index.js";
import type { AgentMessage, AgentSessionEvent } from "../../core/kernel/index.js";
import type { AppView } from "./app-view.js";
import { AssistantBlock, BashBlock, ComponentBlock, CustomMessageBlock, LinesBlock, SkillBlock, SummaryBlock, ToolBlock, UserBlock, type Block, type EntrySource } from "./chat.js";
import { parseSkillBlock } from "./format.js";
import { findGitBranch } from "./footer.js";
import { truncate, wrapText } from "./text.js";
import { CustomEntryBlock, EntryTracker, type CustomEntry } from "./renderers.js";

export class EventProjector {
  /** Custom session entries (pi.appendEntry) drawn by extensions' entry renderers. */
  readonly entries: EntryTracker;
  constructor(private readonly app: AppView) {
    this.entries = new EntryTracker(app);
  }

  subscribe(): void {
    this.app.unsubscribe();
    this.app.unsubscribe = this.app.session.subscribe((e: AgentSessionEvent) => this.onEvent(e));
  }

  onRebind(): void {
    this.app.statsVersion++;
    this.subscribe();
    this.app.working = false;
    this.app.queue = { steering: [], followUp: [] };
    this.rebuildChat();
    this.app.updateTitle();
    this.app.gitBranch = findGitBranch(this.app.kernel.cwd);
    this.app.requestRender();
  }

  onEvent(e: AgentSessionEvent): void {
    this.app.programStatus.onEvent(e);
    if (e.type === "message_end" || e.type === "agent_settled" || e.type === "model_select" || e.type === "compaction_end") this.app.statsVersion++;
    switch (e.type) {
      case "agent_start":
        this.app.setWorking(true);
        break;
      case "agent_end":
      case "agent_settled":
        this.app.setWorking(false);
        this.app.currentAssistant = undefined;
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
          this.app.currentAssistant = undefined;
        } else if ((e.message as { role: string }).role === "toolResult") {
          const m = e.message as { toolCallId: string; toolName: string; content: any; details?: unknown; isError?: boolean };
          const tb = this.app.tools.get(m.toolCallId);
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
        this.app.queue = { steering: [...e.steering], followUp: [...e.followUp] };
        break;
      case "compaction_start":
        this.app.setStatusLine(e.reason === "manual" ? "Compacting the context…" : `Compacting the context (${e.reason})…`);
        break;
      case "compaction_end":
        this.app.setStatusLine(undefined);
        // The compactor's message already says what failed ("Compaction failed: …").
        if (e.errorMessage) this.app.addNotice(e.errorMessage, "error");
        else if (e.aborted) this.app.addNotice(e.reason === "manual" ? "Compaction cancelled" : "Automatic compaction cancelled", "warning");
        else if (e.result) this.showCompacted(e.result);
        break;
      case "auto_retry_start":
        this.app.setStatusLine(`Retrying (${e.attempt}/${e.maxAttempts}) in ${Math.round(e.delayMs / 100) / 10}s: ${e.errorMessage}`);
        break;
      case "auto_retry_end":
        this.app.setStatusLine(undefined);
        if (!e.success && e.finalError) this.app.addNotice(`Giving up after ${e.attempt} attempts: ${e.finalError}`, "error");
        break;
      case "model_select":
        break;
      default: {
        const entry = (e as { type: string; entry?: CustomEntry }).type === "entry_appended" ? (e as { entry?: CustomEntry }).entry : undefined;
        if (entry?.type === "custom") this.entries.add(entry);
      }
    }
    this.app.requestRender();
    // Regular tuiMode: a finished run goes into the terminal's scrollback.
    if (e.type === "agent_settled" || e.type === "agent_end") this.app.scrollback.commit();
  }

  onMessageStart(m: AgentMessage, source?: EntrySource): void {
    const role = (m as { role: string }).role;
    if (role === "assistant") {
      this.app.currentAssistant = this.app.chat.add(new AssistantBlock(m as any, this.app.theme, this.mdOptions(), true));
      this.syncToolCalls(m, false);
    } else if (role === "user") {
      const text = userText(m);
      // a /skill:name message: the skill collapsed, then what the user wrote with it
      const skill = parseSkillBlock(text);
      if (!skill) this.app.chat.add(new UserBlock(text, source));
      else {
        this.app.chat.add(new SkillBlock(skill));
        if (skill.userMessage) this.app.chat.add(new UserBlock(skill.userMessage, source));
      }
    } else if (role === "custom") {
      if ((m as { display?: boolean }).display !== false) this.app.chat.add(new CustomMessageBlock(m as any));
    } else if (role === "bashExecution") {
      const b = m as { command: string; output: string; exitCode?: number; cancelled: boolean; truncated: boolean; fullOutputPath?: string; excludeFromContext?: boolean };
      const live = this.app.liveBash.find((x) => !x.bound && x.command === b.command);
      if (live) {
        live.bound = true;
        this.app.liveBash = this.app.liveBash.filter((x) => x !== live);
        live.finish(b);
      } else {
        const blk = new BashBlock(b.command, !!b.excludeFromContext);
        blk.finish(b);
        this.app.chat.add(blk);
      }
    } else if (role === "compactionSummary") {
      const c = m as { summary: string; tokensBefore?: number };
      this.app.chat.add(new SummaryBlock("compaction", c.summary, c.tokensBefore));
    } else if (role === "branchSummary") {
      this.app.chat.add(new SummaryBlock("branch", (m as { summary: string }).summary));
    }
  }

  onAssistantUpdate(m: AgentMessage, streaming: boolean): void {
    if (!this.app.currentAssistant) this.app.currentAssistant = this.app.chat.add(new AssistantBlock(m as any, this.app.theme, this.mdOptions(), streaming));
    else this.app.currentAssistant.setMessage(m as any, streaming);
    this.syncToolCalls(m, !streaming);
  }

  syncToolCalls(m: AgentMessage, complete: boolean): void {
    for (const c of ((m as { content?: any[] }).content ?? []) as any[]) {
      if (c?.type !== "toolCall" || !c.id) continue;
      const tb = this.toolBlock(c.id, c.name);
      if (tb.status === "pending") tb.setArgs(c.arguments, complete);
    }
  }

  toolBlock(id: string, name: string): ToolBlock {
    let tb = this.app.tools.get(id);
    if (!tb) {
      tb = this.app.chat.add(new ToolBlock(id, name));
      this.app.tools.set(id, tb);
    } else if (name && tb.name !== name) {
      tb.name = name;
    }
    return tb;
  }

  /**
   * After a compaction: the chat rebuilt from the compacted context, with the summary moved from
   * the top (where the context holds it) to the bottom, where it happened and where the eye is,
   * followed by a one-line result.
   */
  private showCompacted(result: { tokensBefore?: number; estimatedTokensAfter?: number }): void {
    this.rebuildChat();
    const chat = this.app.chat;
    const top = chat.blocks.find((b): b is SummaryBlock => b instanceof SummaryBlock && b.kind === "compaction");
    this.app.scrollback.markAllPrinted();
    if (top) {
      chat.remove(top);
      chat.add(new SummaryBlock("compaction", top.summary, top.tokensBefore));
    }
    const fmt = (n: number) => n.toLocaleString("en-US");
    const before = result.tokensBefore;
    const after = result.estimatedTokensAfter;
    const sizes = before ? ` (${fmt(before)} tokens${after !== undefined ? ` → about ${fmt(after)}` : ""})` : "";
    this.app.addNotice(`Context compacted${sizes}`, "success");
  }

  /** Rebuild the chat from the session's transcript (startup, switch, compaction, tree). */
  rebuildChat(): void {
    this.app.statsVersion++;
    this.app.chat.clear();
    this.app.tools.clear();
    this.app.liveBash = [];
    this.app.currentAssistant = undefined;
    this.app.headerBlock = this.app.chat.add(this.makeHeader());
    const customs = this.entries.branchCustoms();
    const shown: string[] = [];
    const addCustoms = (after: unknown) => {
      for (const c of customs.get(after) ?? []) {
        this.app.chat.add(new CustomEntryBlock(c));
        shown.push(c.id);
      }
      customs.delete(after);
    };
    addCustoms(undefined);
    // Entries after messages the context no longer holds (compacted away) come first, as they are older.
    const inContext = new Set<unknown>(this.app.session.messages as AgentMessage[]);
    for (const key of [...customs.keys()]) if (!inContext.has(key)) addCustoms(key);
    // The session entry of each message (its id and time, which markdown transformers are told).
    const sources = new Map<unknown, EntrySource>();
    const branch = (this.app.session.sessionManager as { getBranch?(): Array<{ type: string; id: string; timestamp: string; message?: unknown }> } | undefined)?.getBranch?.() ?? [];
    for (const e of branch) if (e.type === "message") sources.set(e.message, { messageId: e.id, timestamp: e.timestamp });
    for (const m of this.app.session.messages as AgentMessage[]) {
      const role = (m as { role: string }).role;
      if (role === "assistant") {
        this.app.chat.add(new AssistantBlock(m as any, this.app.theme, this.mdOptions(), false, sources.get(m)));
        this.syncToolCalls(m, true);
      } else if (role === "toolResult") {
        const r = m as { toolCallId: string; toolName: string; content: any; details?: unknown; isError?: boolean };
        this.toolBlock(r.toolCallId, r.toolName).finish({ content: r.content, details: r.details }, !!r.isError);
      } else this.onMessageStart(m, sources.get(m));
      addCustoms(m);
    }
    this.entries.reset(shown);
    this.app.currentAssistant = undefined;
    const history = (this.app.session.messages as AgentMessage[]).filter((m) => (m as { role: string }).role === "user").map((m) => userText(m));
    this.app.editor.setHistory(history);
    this.app.requestRender();
  }

  makeHeader(): Block {
    if (this.app.headerComponent) return new ComponentBlock(this.app.headerComponent);
    const k = this.app.keys;
    const app = this.app.kernel.app;
    const quiet = this.app.kernel.settings.get().quietStartup === true; // 1.6's "header" keeps the header
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
      const loaded = startupResourceLines(this.app.kernel, { heading: (x) => t.fg("mdHeading", x), item: (x) => t.fg("dim", x) }, ctx.expandTools);
      if (loaded.length) lines.push("", ...loaded.map((l) => truncate(l, width)));
      return lines;
    });
  }

  mdOptions() {
    const md = this.app.kernel.settings.get().markdown as { codeBlockIndent?: string; mermaid?: string } | undefined;
    return { codeIndent: md?.codeBlockIndent ?? "  ", mermaid: md?.mermaid };
  }
}

export function userText(m: AgentMessage): string {
  const c = (m as { content?: unknown }).content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return messageText(m);
  return c.map((b: any) => (b?.type === "text" ? b.text : b?.type === "image" ? "[image]" : "")).join("");
}
