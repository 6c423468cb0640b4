/**
 * Session statistics as pure functions of the transcript and the stored entries: message
 * counts, tokens and cost, context use. AgentSession's getSessionStats(), getContextUsage() and
 * getLastAssistantText() are these with the session's own data.
 */
import type { AgentMessage, AnyModel, AssistantMessage, Usage } from "../kernel/types.js";
import { messageText } from "./agent/messages.js";
import { estimateContextTokens, usableUsage } from "./context-tokens.js";
import type { SessionStore, TreeSessionStore } from "../stores/session/store.js";

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

export interface SessionStats {
  sessionFile: string | undefined;
  sessionId: string;
  userMessages: number;
  assistantMessages: number;
  toolCalls: number;
  toolResults: number;
  totalMessages: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  cost: number;
  contextUsage: ContextUsage;
}

const roleOf = (m: AgentMessage) => (m as { role: string }).role;

/** The text of the last assistant answer, or null. */
export function lastAssistantText(transcript: readonly AgentMessage[]): string | null {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (roleOf(m) === "assistant") return messageText(m) || null;
  }
  return null;
}

/**
 * Context use as pi 1.6 counts it: the last answer's reported usage plus an estimate of what came
 * after it (all of it estimated before the first answer). After a compaction only an answer that
 * came after it is trusted: until then the tokens are unknown (null).
 */
export function contextUsage(transcript: readonly AgentMessage[], model: AnyModel | undefined): ContextUsage {
  const window = model?.contextWindow ?? 0;
  let compaction = -1;
  for (let i = transcript.length - 1; i >= 0 && compaction < 0; i--) if (roleOf(transcript[i]!) === "compactionSummary") compaction = i;
  if (compaction >= 0 && !transcript.slice(compaction + 1).some((m) => usableUsage(m))) return { tokens: null, contextWindow: window, percent: null };
  const { tokens } = estimateContextTokens(transcript);
  return { tokens, contextWindow: window, percent: window ? (tokens / window) * 100 : null };
}

/**
 * Message counts of the current context; tokens and cost of every answer in the session (all
 * branches, also those compacted away: what the session has used), of its usage entries and of
 * its compaction and branch summaries' own requests (pi 1.6).
 */
export function sessionStats(transcript: readonly AgentMessage[], store: SessionStore, model: AnyModel | undefined): SessionStats {
  let userMessages = 0, assistantMessages = 0, toolCalls = 0, toolResults = 0;
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  for (const m of transcript) {
    const role = roleOf(m);
    if (role === "user") userMessages++;
    else if (role === "toolResult") toolResults++;
    else if (role === "assistant") {
      assistantMessages++;
      toolCalls += (m as AssistantMessage).content.filter((b) => b.type === "toolCall").length;
    }
  }
  const tree = store as Partial<TreeSessionStore>;
  // Every usage the session paid for: answers, and (pi 1.6) usage entries and summary requests.
  const usages: (Usage | undefined)[] =
    typeof tree.getEntries === "function"
      ? tree.getEntries().flatMap((e) => {
          if (e.type === "message") return e.message.role === "assistant" ? [(e.message as AssistantMessage).usage] : [];
          if (e.type === "usage" || e.type === "compaction" || e.type === "branch_summary") return [e.usage];
          return [];
        })
      : (transcript.filter((m) => roleOf(m) === "assistant") as AssistantMessage[]).map((a) => a.usage);
  for (const u of usages) {
    if (!u || typeof u !== "object") continue;
    tokens.input += u.input ?? 0;
    tokens.output += u.output ?? 0;
    tokens.cacheRead += u.cacheRead ?? 0;
    tokens.cacheWrite += u.cacheWrite ?? 0;
    cost += u.cost?.total ?? 0;
  }
  tokens.total = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;
  return {
    sessionFile: store.getSessionFile(),
    sessionId: store.getSessionId(),
    userMessages,
    assistantMessages,
    toolCalls,
    toolResults,
    totalMessages: transcript.length,
    tokens,
    cost,
    contextUsage: contextUsage(transcript, model),
  };
}
