/**
 * Session file format, version 3 (compatible with the reference CLI in both directions).
 *
 * A session file is JSONL. Line 1 is the header; every further line is an entry. Entries form a
 * tree through `parentId`; the newest entry of the current branch is the "leaf".
 *
 *   {"type":"session","version":3,"id":"<uuid v7>","timestamp":"<ISO>","cwd":"/p","parentSession"?:"/x.jsonl"}
 *   {"type":"message","id":"1a2b3c4d","parentId":null,"timestamp":"<ISO>","message":{...}}
 *
 * This module holds the types plus the small pure helpers (ids, file names, folder encoding).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type {
  AgentMessage,
  AssistantMessage,
  BashExecutionMessage,
  CustomMessage,
  Diagnostic,
  ImageContent,
  Message,
  SystemMessage,
  TextContent,
  Usage,
} from "../../kernel/types.js";

export const CURRENT_SESSION_VERSION = 3;

export interface SessionHeader {
  type: "session";
  /** Missing in version-1 files. */
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

export interface NewSessionOptions {
  id?: string;
  parentSession?: string;
}

export interface SessionEntryBase {
  type: string;
  /** 8 hex characters, unique within the file. */
  id: string;
  parentId: string | null;
  /** ISO 8601. */
  timestamp: string;
}

export interface SessionMessageEntry extends SessionEntryBase {
  type: "message";
  message: AgentMessage;
}

export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

export interface ModelChangeEntry extends SessionEntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  /** True when an extension produced the summary. */
  fromHook?: boolean;
  /** pi 1.6: usage of the summary request (counted in the session's tokens and cost). */
  usage?: Usage;
  /** pi 1.6: the prompt sections and tools at the boundary; leads the compacted context. */
  systemMessage?: SystemMessage;
}

export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: "branch_summary";
  /** The entry the abandoned branch was left from ("root" when the branch starts before the first entry). */
  fromId: string;
  summary: string;
  details?: T;
  fromHook?: boolean;
  /** pi 1.6: usage of the summary request. */
  usage?: Usage;
}

/** Extension state; not part of the model context. */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
  type: "custom";
  customType: string;
  data?: T;
}

/** Extension message that is part of the model context (as a `custom` role message). */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  details?: T;
  display: boolean;
}

/** Sets (label) or clears (label absent) the label of `targetId`. */
export interface LabelEntry extends SessionEntryBase {
  type: "label";
  targetId: string;
  label: string | undefined;
}

/** Display name of the session; an empty name clears it. */
export interface SessionInfoEntry extends SessionEntryBase {
  type: "session_info";
  name?: string;
}

/**
 * pi 1.6: model-attributed usage that is no message (e.g. cache warming, kind "cache_warm").
 * Counted in the session's tokens and cost; not part of the context or the conversation tree view.
 */
export interface UsageEntry extends SessionEntryBase {
  type: "usage";
  kind: string;
  provider: string;
  model: string;
  usage: Usage;
  note?: string;
}

/** Content a context edit may put in place of a message's content. */
export type ContextEditableContent = string | (TextContent | ImageContent)[] | AssistantMessage["content"];

/**
 * pi 1.6: an edit of what the model sees of an earlier entry of the branch (user, assistant,
 * toolResult message or custom_message). `replacement: null` leaves the target out of the
 * context; `{content}` replaces its content. The target stays unchanged in the file, the tree
 * and the statistics; the latest edit of a target on the branch wins.
 */
export interface ContextEditEntry extends SessionEntryBase {
  type: "context_edit";
  targetId: string;
  replacement: { content: ContextEditableContent } | null;
}

export type SessionEntry =
  | SessionMessageEntry
  | UsageEntry
  | ContextEditEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry;

export type SessionEntryType = SessionEntry["type"];

/** A line of the file: the header or an entry. */
export type FileEntry = SessionHeader | SessionEntry;

/** Messages appendMessage() accepts; summaries are entries of their own (compaction, branch_summary). */
export type AppendableMessage = Message | SystemMessage | CustomMessage | BashExecutionMessage;

export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  /** Current label of the entry, if any. */
  label?: string;
  /** Timestamp of the label change that set `label`. */
  labelTimestamp?: string;
}

export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

export interface SessionInfo {
  path: string;
  id: string;
  /** Working directory of the session ("" for old files without one). */
  cwd: string;
  name?: string;
  parentSessionPath?: string;
  created: Date;
  /** Time of the last user/assistant message, else the header time, else the file mtime. */
  modified: Date;
  /**
   * Number of `message` entries. Exact when the whole file fits the listing window
   * (SESSION_LIST_WINDOW_BYTES at each end); for larger files an estimate scaled from the
   * density of message lines in the bytes read.
   */
  messageCount: number;
  /** Text of the first user message, or "(no messages)". */
  firstMessage: string;
  /** Text of the user/assistant messages read (for large files only those in the windows read). */
  allMessagesText: string;
}

export type SessionDiagnostic = Diagnostic;
export type SessionListProgress = (loaded: number, total: number) => void;

// ---------------------------------------------------------------------------------------------
// ids and names

/**
 * Random bytes for ids, from the operating system's generator: read from /dev/urandom in blocks
 * where there is one, else node:crypto. Loading node:crypto costs 6–11 ms of start-up (Node 20
 * and 22, measured), and every start makes a session id; /dev/urandom is the source it reads too.
 */
let pool: Buffer | undefined;
let poolAt = 0;
let noUrandom = false;
function randomBytes(n: number): Buffer {
  if (!noUrandom && (!pool || poolAt + n > pool.length)) {
    try {
      pool = readUrandom(4096);
      poolAt = 0;
    } catch {
      noUrandom = true;
    }
  }
  if (noUrandom || !pool) return (createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto")).randomBytes(n);
  const out = Buffer.from(pool.subarray(poolAt, poolAt + n));
  pool.fill(0, poolAt, poolAt + n); // handed out once
  poolAt += n;
  return out;
}

function readUrandom(size: number): Buffer {
  const fd = openSync("/dev/urandom", "r");
  try {
    const bytes = Buffer.allocUnsafe(size);
    if (readSync(fd, bytes, 0, size, null) !== size) throw new Error("short read from /dev/urandom");
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** An 8-hex-character entry id not yet in `taken` (falls back to a full uuid after 100 collisions). */
export function generateEntryId(taken: { has(id: string): boolean }): string {
  for (let i = 0; i < 100; i++) {
    const id = randomBytes(4).toString("hex");
    if (!taken.has(id)) return id;
  }
  return createSessionId();
}

/** A time-ordered UUID (version 7), as the reference uses for session ids. */
export function createSessionId(now: number = Date.now()): string {
  const b = randomBytes(16);
  let ts = BigInt(now);
  for (let i = 5; i >= 0; i--) {
    b[i] = Number(ts & 0xffn);
    ts >>= 8n;
  }
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Folder name for a cwd: `--` + cwd without its leading separator, with / \ : turned into - + `--`. */
export function encodeCwdForSessionDir(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** `<sessionsRoot>/--<encoded cwd>--` (pure: creates nothing). */
export function sessionDirForCwd(cwd: string, sessionsRoot: string): string {
  return join(sessionsRoot, encodeCwdForSessionDir(cwd));
}

/**
 * The reference's helper: `<agentDir>/sessions/--<encoded cwd>--`. Unlike the reference the
 * agent dir is required and nothing is created.
 */
export function getDefaultSessionDir(cwd: string, agentDir: string): string {
  return sessionDirForCwd(cwd, join(agentDir, "sessions"));
}

/** `<ISO timestamp with : and . as ->_<id>.jsonl`. */
export function sessionFileName(isoTimestamp: string, sessionId: string): string {
  return `${isoTimestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

export function isSessionHeader(value: unknown): value is SessionHeader {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "session" &&
    typeof (value as { id?: unknown }).id === "string"
  );
}

/** Text of a user/assistant/custom message: the string content, or its text blocks joined by spaces. */
export function messageText(message: { content?: unknown }): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (block && typeof block === "object" && (block as { type?: unknown }).type === "text") {
      const text = (block as { text?: unknown }).text;
      if (typeof text === "string") parts.push(text);
    }
  }
  return parts.join(" ");
}
