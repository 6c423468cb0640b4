/**
 * Names the pi 1.6 package exports (its dist/index.d.ts) that map onto functions this project
 * already has with the same signature, plus the few small helpers 1.6 added around them.
 * Components (DynamicBorder, BorderedLoader, CustomEditor, …) come with the TUI's pi-tui work.
 */
import type { AgentMessage } from "../../core/kernel/types.js";
import type { SessionEntry } from "../../core/stores/session/session-entries.js";

export { CURRENT_SESSION_VERSION } from "../../core/stores/session/session-entries.js";
export { buildSessionContext, getLatestCompactionEntry } from "../../core/stores/session/session-context.js";
export { parseSessionEntries, migrateSessionEntries } from "../../core/stores/session/session-file.js";
export { collectEntriesForBranchSummary } from "../../core/engine/tree.js";
export { estimateTokens, findCutPoint, prepareBranchEntries, DEFAULT_COMPACTION_SETTINGS } from "../../plugins/compaction/prepare.js";
export { serializeConversation } from "../../plugins/compaction/summarize.js";
export { parseFrontmatter, stripFrontmatter } from "../../plugins/resources/frontmatter.js";
export { formatSkillsForPrompt } from "../../plugins/resources/skills.js";
export { generateDiffString } from "../../plugins/tools/edit-diff.js";
export { getShellConfig } from "../../plugins/tools/bash.js";

/** The project config folder name of pi (`.pi`). */
export const CONFIG_DIR_NAME = ".pi";

interface UsageLike {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  totalTokens?: number;
}

/** The context size a response's usage implies: its total, or the sum of its parts. */
export function calculateContextTokens(usage: UsageLike): number {
  return usage.totalTokens || (usage.input ?? 0) + (usage.output ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
}

/** The usage of the last assistant message of `entries` that completed (not aborted, not an error). */
export function getLastAssistantUsage(entries: readonly SessionEntry[]): UsageLike | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as { type: string; message?: AgentMessage };
    const m = e.type === "message" ? (e.message as { role?: string; stopReason?: string; usage?: UsageLike } | undefined) : undefined;
    if (m?.role === "assistant" && m.usage && m.stopReason !== "aborted" && m.stopReason !== "error") return m.usage;
  }
  return undefined;
}

/** Whether a context of `contextTokens` should be compacted in a window of `contextWindow`. */
export function shouldCompact(contextTokens: number, contextWindow: number, settings: { enabled: boolean; reserveTokens: number }): boolean {
  return settings.enabled && contextTokens > contextWindow - settings.reserveTokens;
}

export interface EventBusController {
  emit(channel: string, data: unknown): void;
  on(channel: string, handler: (data: unknown) => void): () => void;
  clear(): void;
}

/** A standalone event bus like `pi.events` (a throwing handler is logged and skipped). */
export function createEventBus(): EventBusController {
  const channels = new Map<string, Set<(data: unknown) => void>>();
  return {
    emit(channel, data) {
      for (const h of [...(channels.get(channel) ?? [])]) {
        try {
          const r = h(data) as unknown;
          if (r && typeof (r as Promise<unknown>).then === "function") (r as Promise<unknown>).then(undefined, (e) => console.error(`event bus: handler of "${channel}" failed:`, e));
        } catch (e) {
          console.error(`event bus: handler of "${channel}" failed:`, e);
        }
      }
    },
    on(channel, handler) {
      let set = channels.get(channel);
      if (!set) channels.set(channel, (set = new Set()));
      set.add(handler);
      return () => void set!.delete(handler);
    },
    clear() {
      channels.clear();
    },
  };
}
