/**
 * The contract between the session (AgentSession) and the compaction plugin (kernel service "compactor").
 * The session decides *when* (manual call, after each turn, on a context overflow); the
 * plugin decides *whether* the threshold is crossed and *how* to summarise, and emits
 * compaction_start / compaction_end through session.emit.
 */
import type { SessionHandle } from "../kernel/contracts.js";
import type { AssistantMessage, Usage } from "../kernel/types.js";

export type CompactionReason = "manual" | "threshold" | "overflow";

export interface CompactionResult<T = unknown> {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  /** pi 1.6: estimated context tokens once compacted. */
  estimatedTokensAfter?: number;
  /** pi 1.6: usage of the summary request(s). */
  usage?: Usage;
}

export interface Compactor {
  /**
   * Compact the session's current branch now: compaction_start, session_before_compact (may
   * cancel or supply the result), the summary, the compaction entry, the reloaded context,
   * session_compact, compaction_end. Throws when it could not (nothing to compact, cancelled,
   * the summary request failed); compaction_end has been emitted then too.
   */
  compact(
    session: SessionHandle,
    opts: { reason: CompactionReason; customInstructions?: string; willRetry?: boolean; signal: AbortSignal },
  ): Promise<CompactionResult>;
  /** Whether the context after `message` is over the threshold (contextWindow - reserveTokens). */
  needsCompaction(session: SessionHandle, message: AssistantMessage): boolean;
}
