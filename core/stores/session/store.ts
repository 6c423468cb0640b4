/**
 * What AgentSession needs from session persistence. SessionManager (session-manager.ts)
 * implements it; tests and SDK hosts may pass SessionManager.inMemory().
 */
import type { AgentMessage, ThinkingLevel, Usage } from "../../kernel/types.js";

export interface SessionContextSnapshot {
  messages: AgentMessage[];
  thinkingLevel?: ThinkingLevel | string;
  model?: { provider: string; modelId: string } | null;
}

export interface SessionStore {
  getSessionId(): string;
  getSessionFile(): string | undefined;
  getSessionName(): string | undefined;
  getCwd(): string;
  appendMessage(message: AgentMessage): string;
  appendModelChange(provider: string, modelId: string): string;
  appendThinkingLevelChange(level: string): string;
  appendSessionInfo(name: string): string;
  buildSessionContext(): SessionContextSnapshot;
  /** The JSON text a loaded message was parsed from, when the store kept it. */
  rawMessageJson?(message: object): Uint8Array | undefined;
  /**
   * `prefix` + the messages as a JSON array + `suffix`, as UTF-8 bytes, the loaded
   * messages copied from the file's bytes (see raw-json.ts messagesRecord).
   */
  messagesRecord?(prefix: string, messages: readonly unknown[], suffix: string): Uint8Array;
}

/**
 * The tree part of a session store, which tree navigation, compaction and export need.
 * SessionManager implements it; a store without it supports none of those operations.
 */
export interface TreeSessionStore extends SessionStore {
  isPersisted(): boolean;
  getSessionDir(): string;
  getHeader(): import("./session-entries.js").SessionHeader | null;
  getEntries(): import("./session-entries.js").SessionEntry[];
  getEntry(id: string): import("./session-entries.js").SessionEntry | undefined;
  getLeafId(): string | null;
  getBranch(fromId?: string): import("./session-entries.js").SessionEntry[];
  getLabel(id: string): string | undefined;
  branch(id: string): void;
  resetLeaf(): void;
  branchWithSummary(fromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: unknown, fromHook?: boolean, usage?: Usage): string;
  appendLabelChange(targetId: string, label: string | undefined): string;
  flushPendingWrites?(): boolean;
}

/** The store as a TreeSessionStore, or an error naming what is missing. */
export function asTreeStore(store: SessionStore, action: string): TreeSessionStore {
  const s = store as Partial<TreeSessionStore>;
  for (const m of ["getEntries", "getEntry", "getLeafId", "getBranch", "branch", "resetLeaf", "branchWithSummary", "appendCompaction", "appendLabelChange"] as const) {
    if (typeof s[m] !== "function") throw new Error(`${action} needs a session store that keeps the entry tree (SessionManager); this one has no ${m}()`);
  }
  return store as TreeSessionStore;
}
