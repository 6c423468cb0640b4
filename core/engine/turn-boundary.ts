/**
 * pi 1.6's turn boundary on turn_end: handlers see the drafts so far, whether one more request
 * is asked, a context preview, the outcome and the session entry ids of the turn's messages;
 * they may return `entries` (custom entries, custom messages; appended after the turn) and
 * `continue: true` (one more provider request, picked up by the loop through takeContinue()).
 * Nothing of this is built when no one taps turn_end.
 */
import { convertToLlm, createCustomMessage } from "./agent/messages.js";
import { openTurnBoundary, type TurnBoundary } from "../kernel/turn-boundary-state.js";
import type { AgentMessage, AgentSessionEvent, CustomMessage } from "../kernel/types.js";
import type { SessionHandle } from "../kernel/contracts.js";
import { buildSessionProjection } from "../stores/session/projection.js";
import type { SessionEntry } from "../stores/session/session-entries.js";

type TurnEnd = Extract<AgentSessionEvent, { type: "turn_end" }>;

export interface BoundaryIo {
  addMessage(m: AgentMessage): Promise<void>;
  /** Messages queued for the next turns (steering, follow-up). */
  pending(): AgentMessage[];
}

type Loose = Record<string, any>;

export class TurnBoundaries {
  private continueAsked = false;
  constructor(
    private readonly session: SessionHandle,
    private readonly io: BoundaryIo,
  ) {}

  takeContinue(): boolean {
    const c = this.continueAsked;
    this.continueAsked = false;
    return c;
  }

  async emit(e: TurnEnd): Promise<void> {
    const s = this.session;
    if (!s.kernel.hooks.turn_end.taps.length) {
      await s.emit(e);
      return;
    }
    const message = e.message as Loose;
    const outcome: TurnBoundary["outcome"] = message.stopReason === "aborted" ? "aborted" : message.stopReason === "error" ? "error" : "completed";
    const ids = this.entryIds([e.message, ...e.toolResults]);
    let preview: Record<string, unknown> | undefined;
    const b: TurnBoundary = {
      entries: [],
      continue: false,
      outcome,
      messageEntryId: ids[0],
      toolResultEntryIds: ids.slice(1).filter((x): x is string => !!x),
      context: () => (preview ??= this.preview(outcome)),
    };
    openTurnBoundary(e, b);
    await s.emit(e);
    for (const d of b.entries) {
      if (d.type === "custom" && typeof d.customType === "string") {
        (s.sessionManager as unknown as { appendCustomEntry(t: string, data?: unknown): string }).appendCustomEntry(d.customType, d.data);
      } else if (d.type === "custom_message" && typeof d.customType === "string") {
        await this.io.addMessage(createCustomMessage(d.customType, d.content as CustomMessage["content"], d.display !== false, d.details));
      } else {
        s.kernel.diagnostics.report({ level: "warning", source: "session", hook: "turn_end", message: `entries of type "${d.type}" cannot be appended at a turn's end here` });
      }
    }
    // an error or an abort ends the run whatever a handler asks (as in pi 1.6)
    if (b.continue && outcome === "completed") this.continueAsked = true;
  }

  /** The session entry ids of these messages (matched on the branch's newest entries), in order. */
  private entryIds(messages: AgentMessage[]): Array<string | undefined> {
    let branch: SessionEntry[] = [];
    try {
      branch = (this.session.sessionManager as unknown as { getBranch(): SessionEntry[] }).getBranch();
    } catch {
      return messages.map(() => undefined);
    }
    const tail = branch.slice(-Math.max(32, messages.length * 4));
    return messages.map((m) => {
      const mm = m as Loose;
      for (let i = tail.length - 1; i >= 0; i--) {
        const x = tail[i] as Loose;
        if (x.type !== "message") continue;
        const em = x.message as Loose;
        if (em.role === mm.role && em.timestamp === mm.timestamp && (mm.role !== "toolResult" || em.toolCallId === mm.toolCallId)) return x.id as string;
      }
      return undefined;
    });
  }

  private preview(outcome: TurnBoundary["outcome"]): Record<string, unknown> {
    const s = this.session;
    let contextEntries: unknown[] = [];
    try {
      contextEntries = buildSessionProjection((s.sessionManager as unknown as { getBranch(): SessionEntry[] }).getBranch()).entries;
    } catch {
      contextEntries = [];
    }
    const contextMessages = [...s.transcript];
    return {
      contextEntries,
      contextMessages,
      llmMessages: convertToLlm(contextMessages),
      pendingMessages: this.io.pending(),
      canContinue: outcome === "completed",
    };
  }
}
