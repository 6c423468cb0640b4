/**
 * SessionManager: a conversation as an append-only tree of entries stored in a JSONL file
 * (format version 3, the reference CLI's; see session-entries.ts).
 *
 * Persistence
 * - Lazy: nothing is written until the session holds a user or assistant message (a prompt is
 *   kept even when the process ends before its answer, as pi 1.6 does). Then the header
 *   and every buffered entry are written in one append, and from then on each new entry is
 *   appended as one whole line in one write.
 * - Crash safe: a torn last line (a write cut by a crash) is skipped on open with a
 *   diagnostic, the file is not touched, and the next append starts with "\n" so the new entry
 *   is a line of its own. Opening never rewrites a version-3 file.
 * - The one rewrite: a version 1/2 file is migrated on open and stored back atomically
 *   (temporary file + rename), as the reference also rewrites migrated files.
 * - Write failures (disk full, read-only, missing folder) never throw into the caller: they
 *   become diagnostics, the entries stay in memory and are written by the next append (or
 *   flushPendingWrites()).
 *
 * Where files go: `create(cwd, sessionDir?)` and the other constructors take `sessionDir`,
 * the folder the session files are stored in directly (what `--session-dir` names). Without it
 * the folder is `<sessions root>/--<encoded cwd>--`, where the sessions root
 * (`<agentDir>/sessions`) is the one set with SessionManager.setDefaultRoot(), else what the
 * resolver given to setDefaultRootResolver() returns (the SDK installs the app's agent dir);
 * nothing here reads the home directory or the environment.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Diagnostic, Usage } from "../../kernel/types.js";
import { buildSessionContext } from "./session-context.js";
import { branchTo, entryForest, latestSessionName, parentChainProblem } from "./session-paths.js";
import {
  CURRENT_SESSION_VERSION,
  createSessionId,
  generateEntryId,
  sessionDirForCwd,
  sessionFileName,
  type AppendableMessage,
  type BranchSummaryEntry,
  type CompactionEntry,
  type ContextEditEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type LabelEntry,
  type ModelChangeEntry,
  type NewSessionOptions,
  type SessionContext,
  type SessionEntry,
  type SessionHeader,
  type SessionInfo,
  type SessionInfoEntry,
  type SessionListProgress,
  type SessionMessageEntry,
  type SessionTreeNode,
  type ThinkingLevelChangeEntry,
  type UsageEntry,
} from "./session-entries.js";
import { describeError, readSessionFile, type ParsedSessionFile } from "./session-file.js";
import { messagesRecord, type RawMessageJson } from "./raw-json.js";
import { SessionWriter } from "./session-writer.js";
import { findMostRecentSession, findSessionFileById, listSessionsInDir, listSessionsUnderRoot } from "./session-list.js";
import { buildContextEntries, buildSessionProjection, type SessionProjection } from "./projection.js";

export * from "./session-entries.js";
export {
  buildSessionContext,
  createBranchSummaryMessage,
  createCompactionSummaryMessage,
  createCustomMessage,
  getLatestCompactionEntry,
} from "./session-context.js";
export {
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionData,
  parseSessionEntries,
  readSessionFile,
  type ParsedSessionFile,
} from "./session-file.js";
export {
  SESSION_LIST_WINDOW_BYTES,
  findMostRecentSession,
  listSessionFiles,
  listSessionsInDir,
  listSessionsUnderRoot,
  readSessionInfo,
  type ListSessionsOptions,
} from "./session-list.js";

/** Most diagnostics kept from loading one file (the rest are summarised in one more). */
const MAX_LOAD_DIAGNOSTICS = 100;

export type ReadonlySessionManager = Pick<
  SessionManager,
  | "getCwd"
  | "getSessionDir"
  | "getSessionId"
  | "getSessionFile"
  | "getLeafId"
  | "getLeafEntry"
  | "getEntry"
  | "getLabel"
  | "getBranch"
  | "getHeader"
  | "getEntries"
  | "getTree"
  | "getSessionName"
>;

function nowIso(): string {
  return new Date().toISOString();
}

export class SessionManager {
  private static defaultRoot: string | undefined;

  /**
   * Set the sessions root used when no sessionDir is given (normally `<agentDir>/sessions`).
   * `undefined` unsets it.
   */
  static setDefaultRoot(sessionsRoot: string | undefined): void {
    SessionManager.defaultRoot = sessionsRoot === undefined ? undefined : resolve(sessionsRoot);
  }

  static getDefaultRoot(): string | undefined {
    return SessionManager.defaultRoot;
  }

  private static rootResolver: (() => string | undefined) | undefined;
  /** Where the sessions root comes from when none was set (`<agentDir>/sessions` of the app). */
  static setDefaultRootResolver(resolver: (() => string | undefined) | undefined): void {
    SessionManager.rootResolver = resolver;
  }
  private static currentRoot(): string | undefined {
    if (SessionManager.defaultRoot) return SessionManager.defaultRoot;
    const r = SessionManager.rootResolver?.();
    return r ? resolve(r) : undefined;
  }

  /** The folder for `cwd`'s sessions: `sessionDir` if given, else `<default root>/--<encoded cwd>--`. */
  static resolveSessionDir(cwd: string, sessionDir?: string): string {
    if (sessionDir) return resolve(sessionDir);
    const root = SessionManager.currentRoot();
    if (!root) {
      throw new Error(
        "SessionManager: no session folder given and no sessions root configured; pass sessionDir or call SessionManager.setDefaultRoot(<agentDir>/sessions)",
      );
    }
    return sessionDirForCwd(cwd, root);
  }

  // -------------------------------------------------------------------------------------------
  // state

  private sessionId = "";
  private sessionFile: string | undefined;
  private readonly sessionDir: string;
  private cwd: string;
  private readonly persist: boolean;
  private header!: SessionHeader;
  private entries: SessionEntry[] = [];
  private byId = new Map<string, SessionEntry>();
  private labelsById = new Map<string, string>();
  private labelTimestampsById = new Map<string, string>();
  private leafId: string | null = null;
  /** A user or assistant message is in the session: from then on it is written (pi 1.6's first-write rule). */
  private hasConversation = false;
  /** The loaded file's bytes of its messages (see raw-json.ts). */
  private rawMessages: RawMessageJson | undefined;

  private readonly writer = new SessionWriter((d) => this.report(d));
  private diagnostics: Diagnostic[] = [];
  private diagnosticListeners = new Set<(d: Diagnostic) => void>();

  private constructor(cwd: string, sessionDir: string, persist: boolean) {
    this.cwd = cwd;
    this.sessionDir = sessionDir;
    this.persist = persist;
  }

  // -------------------------------------------------------------------------------------------
  // static constructors

  /** A new session for `cwd` (no file until the first user or assistant message). */
  static create(cwd: string, sessionDir?: string): SessionManager {
    const sm = new SessionManager(cwd, SessionManager.resolveSessionDir(cwd, sessionDir), true);
    sm.startNew();
    return sm;
  }

  /**
   * Open a session file. A missing file starts a new session that will be stored at `path`.
   * `sessionDir` (for later /new or branching) defaults to the file's folder; the cwd is
   * `cwdOverride`, else the header's, else process.cwd().
   * Throws when the file cannot be read or holds complete lines but no session header.
   */
  static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager {
    const file = resolve(path);
    const parsed = existsSync(file) ? SessionManager.readOrThrow(file) : undefined;
    const cwd = cwdOverride ?? parsed?.header?.cwd ?? process.cwd();
    const sm = new SessionManager(cwd, sessionDir ? resolve(sessionDir) : dirname(file), true);
    sm.load(file, parsed);
    return sm;
  }

  /** The most recent session of the folder (by mtime, with a valid header), else a new one. */
  static continueRecent(cwd: string, sessionDir?: string): SessionManager {
    const dir = SessionManager.resolveSessionDir(cwd, sessionDir);
    const recent = findMostRecentSession(dir);
    const sm = new SessionManager(cwd, dir, true);
    if (recent) sm.load(recent, SessionManager.readOrThrow(recent));
    else sm.startNew();
    return sm;
  }

  /** A session that is never written. */
  static inMemory(cwd: string = process.cwd()): SessionManager {
    const sm = new SessionManager(cwd, "", false);
    sm.startNew();
    return sm;
  }

  /**
   * Copy every entry of `sourcePath` into a new session for `targetCwd` (header parentSession
   * = the source). The new file is written at once.
   */
  static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options: { id?: string } = {}): SessionManager {
    const source = resolve(sourcePath);
    let parsed: ParsedSessionFile;
    try {
      parsed = readSessionFile(source);
    } catch (error) {
      throw new Error(`Cannot fork: cannot read session file ${source}: ${describeError(error)}`);
    }
    if (!parsed.header) throw new Error(`Cannot fork: source session file is empty or invalid: ${source}`);
    const sm = new SessionManager(targetCwd, SessionManager.resolveSessionDir(targetCwd, sessionDir), true);
    sm.startNew({ parentSession: source, id: options.id });
    sm.addDiagnostics(parsed.diagnostics);
    for (const e of parsed.entries) sm.addToIndex(e);
    sm.rawMessages = parsed.rawMessages;
    sm.writer.pending = [sm.header, ...sm.entries];
    sm.flushWrites();
    return sm;
  }

  /** Sessions stored in `cwd`'s folder, newest first (reads a bounded part of each file). */
  static async list(cwd: string, sessionDir?: string, onProgress?: SessionListProgress): Promise<SessionInfo[]> {
    return listSessionsInDir(SessionManager.resolveSessionDir(cwd, sessionDir), { onProgress });
  }

  /**
   * Sessions of all projects under a sessions root (default: the configured root), newest first.
   * Also accepts the reference's `listAll(onProgress)` form.
   */
  static async listAll(
    sessionsRoot?: string | SessionListProgress,
    onProgress?: SessionListProgress,
  ): Promise<SessionInfo[]> {
    if (typeof sessionsRoot === "function") {
      onProgress = sessionsRoot;
      sessionsRoot = undefined;
    }
    const root = sessionsRoot ? resolve(sessionsRoot) : SessionManager.currentRoot();
    if (!root) {
      throw new Error(
        "SessionManager.listAll: no sessions root given and none configured (SessionManager.setDefaultRoot)",
      );
    }
    return listSessionsUnderRoot(root, { onProgress });
  }

  private static readOrThrow(file: string): ParsedSessionFile {
    try {
      return readSessionFile(file);
    } catch (error) {
      throw new Error(`Cannot read session file ${file}: ${describeError(error)}`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // session lifecycle

  /** Switch to another session file (see open() for missing and invalid files). */
  setSessionFile(path: string): void {
    const file = resolve(path);
    this.load(file, existsSync(file) ? SessionManager.readOrThrow(file) : undefined);
  }

  private load(file: string, parsed: ParsedSessionFile | undefined): void {
    // A file with complete lines but no session header is someone else's file: never append to it.
    if (parsed && !parsed.header && (parsed.parsedLines > 0 || (parsed.completeLines ?? 0) > 0)) {
      this.addDiagnostics(parsed.diagnostics);
      throw new Error(`Not a session file (its first line is not a session header), left unchanged: ${file}`);
    }
    this.warnIfUnwritten();
    if (!parsed || !parsed.header) {
      // Missing, empty, or only a fragment torn before the header's newline: start a new
      // session stored at this path. The fragment stays; the first write begins a new line.
      this.startNew();
      this.sessionFile = file;
      if (parsed) {
        this.addDiagnostics(parsed.diagnostics);
        this.writer.needsNewline = parsed.needsNewline;
      }
      return;
    }
    this.sessionFile = file;
    this.header = parsed.header;
    this.sessionId = parsed.header.id;
    this.resetIndex();
    for (const e of parsed.entries) this.addToIndex(e);
    this.rawMessages = parsed.rawMessages;
    this.addDiagnostics(parsed.diagnostics);
    this.checkParentChain(file);
    this.writer.reset({ pending: [], fileStarted: true, needsNewline: parsed.needsNewline, needsRewrite: parsed.migratedFrom !== undefined });
    if (parsed.migratedFrom !== undefined) {
      this.report({
        level: "info",
        source: file,
        message: `session file migrated from version ${parsed.migratedFrom} to ${CURRENT_SESSION_VERSION}`,
      });
      if (this.persist) this.flushWrites();
    }
  }

  /** A broken parent chain (missing parent, loop) is reported with what was recovered. */
  private checkParentChain(file: string): void {
    const problem = parentChainProblem(this.byId, this.leafId);
    if (!problem) return;
    const branch = this.getBranch();
    const messages = branch.filter((e) => e.type === "message").length;
    this.report({
      level: "warning",
      source: file,
      message:
        `session tree damaged: ${problem}; recovered the ${branch.length} entries (${messages} messages) from the leaf back to entry ${branch[0]?.id ?? "?"}, ` +
        `of ${this.entries.length} entries in the file (the others stay in the file and in /tree)`,
    });
  }

  /**
   * Start a new, empty session (same folder and cwd). Returns the new file path (undefined in
   * memory); nothing is written until the first user or assistant message.
   */
  newSession(options?: NewSessionOptions): string | undefined {
    this.warnIfUnwritten();
    return this.startNew(options);
  }

  private startNew(options?: NewSessionOptions): string | undefined {
    this.sessionId = options?.id ?? createSessionId();
    const timestamp = nowIso();
    this.header = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      id: this.sessionId,
      timestamp,
      cwd: this.cwd,
      parentSession: options?.parentSession,
    };
    this.resetIndex();
    this.rawMessages = undefined;
    this.writer.reset({ pending: [this.header], fileStarted: false, needsNewline: false, needsRewrite: false });
    this.sessionFile = this.persist ? join(this.sessionDir, sessionFileName(timestamp, this.sessionId)) : undefined;
    return this.sessionFile;
  }

  private resetIndex(): void {
    this.entries = [];
    this.byId.clear();
    this.labelsById.clear();
    this.labelTimestampsById.clear();
    this.leafId = null;
    this.hasConversation = false;
  }

  private addToIndex(entry: SessionEntry): void {
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    this.leafId = entry.id;
    if (entry.type === "message" && (entry.message?.role === "user" || entry.message?.role === "assistant")) this.hasConversation = true;
    else if (entry.type === "label") {
      if (entry.label) {
        this.labelsById.set(entry.targetId, entry.label);
        this.labelTimestampsById.set(entry.targetId, entry.timestamp);
      } else {
        this.labelsById.delete(entry.targetId);
        this.labelTimestampsById.delete(entry.targetId);
      }
    }
  }

  private warnIfUnwritten(): void {
    if (!this.persist || !this.sessionFile) return;
    const unwritten = this.writer.pending.filter((e) => e.type !== "session").length;
    const mustWrite = this.writer.fileStarted || this.hasConversation || this.writer.needsRewrite;
    if (mustWrite && (unwritten > 0 || this.writer.needsRewrite)) {
      this.report({
        level: "error",
        source: this.sessionFile,
        message: `${this.writer.needsRewrite ? "migrated session could not be stored" : `${unwritten} entries could not be written`} and are lost on leaving the session`,
      });
    }
  }

  // -------------------------------------------------------------------------------------------
  // writing

  private appendEntry(entry: SessionEntry): void {
    this.addToIndex(entry);
    this._persist(entry);
  }

  /** Queue an (already indexed) entry for the session file, written once the session is due on disk. */
  _persist(entry: SessionEntry): void {
    if (!this.persist || !this.sessionFile) return;
    this.writer.pending.push(entry);
    if (this.writer.fileStarted || this.hasConversation || this.writer.needsRewrite) this.flushWrites();
  }

  /**
   * Write what is waiting after an earlier write failure, if the session is due to be on disk
   * (it has a user or assistant message, or its file exists). Returns false only when a write failed
   * (entries buffered by the lazy first-write rule do not count). Never throws.
   */
  flushPendingWrites(): boolean {
    if (!this.persist || !this.sessionFile) return true;
    if (!(this.writer.fileStarted || this.hasConversation || this.writer.needsRewrite)) return true;
    return this.flushWrites();
  }

  /** True when entries (or a migration) wait to be written. */
  hasPendingWrites(): boolean {
    if (!this.persist) return false;
    return this.writer.needsRewrite || this.writer.pending.length > 0;
  }

  private flushWrites(): boolean {
    const file = this.sessionFile;
    if (!this.persist || !file) return true;
    const write = () => this.writer.flush(file, () => [this.header, ...this.entries]);
    return this.rawMessages && !this.writer.needsRewrite ? this.rawMessages.ownWrite(file, write) : write();
  }

  // -------------------------------------------------------------------------------------------
  // diagnostics

  /** Problems met while reading or writing (torn/malformed lines, write failures, migrations). */
  getDiagnostics(): readonly Diagnostic[] {
    return [...this.diagnostics];
  }

  /** Be told of each new diagnostic. Returns the unsubscribe function. */
  onDiagnostic(listener: (d: Diagnostic) => void): () => void {
    this.diagnosticListeners.add(listener);
    return () => this.diagnosticListeners.delete(listener);
  }

  private addDiagnostics(list: readonly Diagnostic[]): void {
    const shown = list.slice(0, MAX_LOAD_DIAGNOSTICS);
    for (const d of shown) this.report(d);
    if (list.length > shown.length) {
      this.report({
        level: "warning",
        source: list[0]!.source,
        message: `${list.length - shown.length} more problems of this file not shown`,
      });
    }
  }

  private report(d: Diagnostic): void {
    this.diagnostics.push(d);
    for (const l of this.diagnosticListeners) {
      try {
        l(d);
      } catch {
        /* a listener's failure is not the session's */
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // appending (each returns the new entry's id; the entry becomes the leaf)

  private base(): { id: string; parentId: string | null; timestamp: string } {
    return { id: generateEntryId(this.byId), parentId: this.leafId, timestamp: nowIso() };
  }

  /**
   * Append a user, assistant, toolResult, custom or bashExecution message. Compaction and
   * branch summaries are entries of their own (appendCompaction, branchWithSummary).
   */
  appendMessage(message: AppendableMessage): string {
    const role = (message as { role?: unknown } | null | undefined)?.role;
    if (typeof role !== "string") throw new TypeError("SessionManager.appendMessage: message must be an object with a role");
    if (role === "compactionSummary" || role === "branchSummary") {
      throw new TypeError(
        `SessionManager.appendMessage: role "${role}" is stored as an entry; use appendCompaction() or branchWithSummary()`,
      );
    }
    const entry: SessionMessageEntry = { type: "message", ...this.base(), message };
    this.appendEntry(entry);
    return entry.id;
  }

  appendThinkingLevelChange(thinkingLevel: string): string {
    const entry: ThinkingLevelChangeEntry = { type: "thinking_level_change", ...this.base(), thinkingLevel };
    this.appendEntry(entry);
    return entry.id;
  }

  appendModelChange(provider: string, modelId: string): string {
    const entry: ModelChangeEntry = { type: "model_change", ...this.base(), provider, modelId };
    this.appendEntry(entry);
    return entry.id;
  }

  appendCompaction<T = unknown>(
    summary: string,
    firstKeptEntryId: string,
    tokensBefore: number,
    details?: T,
    fromHook?: boolean,
    usage?: Usage,
  ): string {
    const entry: CompactionEntry<T> = {
      type: "compaction",
      ...this.base(),
      summary,
      firstKeptEntryId,
      tokensBefore,
      details,
      fromHook,
      ...(usage ? { usage } : {}),
    };
    this.appendEntry(entry as CompactionEntry);
    return entry.id;
  }

  /** Extension state (not part of the model context). */
  appendCustomEntry(customType: string, data?: unknown): string {
    const entry: CustomEntry = { type: "custom", ...this.base(), customType, data };
    this.appendEntry(entry);
    return entry.id;
  }

  /** Extension message that is part of the model context. */
  appendCustomMessageEntry<T = unknown>(
    customType: string,
    content: CustomMessageEntry["content"],
    display: boolean,
    details?: T,
  ): string {
    const entry: CustomMessageEntry<T> = { type: "custom_message", ...this.base(), customType, content, display, details };
    this.appendEntry(entry as CustomMessageEntry);
    return entry.id;
  }

  /** Set (or with undefined/"" clear) the label of an entry. Throws when the entry does not exist. */
  appendLabelChange(targetId: string, label: string | undefined): string {
    if (!this.byId.has(targetId)) throw new Error(`Entry ${targetId} not found`);
    const entry: LabelEntry = { type: "label", ...this.base(), targetId, label };
    this.appendEntry(entry);
    return entry.id;
  }

  /** Set the display name (trimmed; "" clears it). */
  appendSessionInfo(name: string): string {
    const entry: SessionInfoEntry = { type: "session_info", ...this.base(), name: String(name ?? "").trim() };
    this.appendEntry(entry);
    return entry.id;
  }

  /**
   * pi 1.6: edit what the model sees of an earlier entry of the current branch (a user,
   * assistant or toolResult message, or a custom_message): `null` leaves it out, `{content}`
   * replaces its content. The target itself is not changed. Throws on a bad target or replacement.
   */
  appendContextEdit(targetId: string, replacement: ContextEditEntry["replacement"]): string {
    const content = (replacement as { content?: unknown } | null)?.content;
    if (replacement !== null && (typeof replacement !== "object" || (typeof content !== "string" && !Array.isArray(content)))) {
      throw new TypeError("appendContextEdit: the replacement must be null or {content: string | content blocks}");
    }
    const target = this.byId.get(targetId);
    if (!target) throw new Error(`Entry ${targetId} not found`);
    if (!this.getBranch().some((e) => e.id === targetId)) throw new Error(`Entry ${targetId} is not on the current branch`);
    const role = target.type === "message" ? target.message.role : undefined;
    if (target.type !== "custom_message" && role !== "user" && role !== "assistant" && role !== "toolResult") {
      throw new Error(`Entry ${targetId} (${role ?? target.type}) cannot be edited: only user, assistant, toolResult and custom messages`);
    }
    const entry: ContextEditEntry = { type: "context_edit", ...this.base(), targetId, replacement };
    this.appendEntry(entry);
    return entry.id;
  }

  /** pi 1.6: usage that is no message (e.g. kind "cache_warm"); counted in the session's tokens and cost. */
  appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): string {
    const entry: UsageEntry = { type: "usage", ...this.base(), kind, provider, model, usage, ...(note !== undefined ? { note } : {}) };
    this.appendEntry(entry);
    return entry.id;
  }

  // -------------------------------------------------------------------------------------------
  // branching

  /** Move the leaf to an existing entry; the next append starts a branch there. */
  branch(branchFromId: string): void {
    if (!this.byId.has(branchFromId)) throw new Error(`Entry ${branchFromId} not found`);
    this.leafId = branchFromId;
  }

  /** Move the leaf before the first entry; the next append is a new root. */
  resetLeaf(): void {
    this.leafId = null;
  }

  /**
   * Move the leaf to `branchFromId` (null: before the first entry) and append a branch_summary
   * of the abandoned path there. Returns the summary entry's id.
   */
  branchWithSummary<T = unknown>(branchFromId: string | null, summary: string, details?: T, fromHook?: boolean): string {
    if (branchFromId !== null && !this.byId.has(branchFromId)) throw new Error(`Entry ${branchFromId} not found`);
    this.leafId = branchFromId;
    const entry: BranchSummaryEntry<T> = {
      type: "branch_summary",
      ...this.base(),
      fromId: branchFromId ?? "root",
      summary,
      details,
      fromHook,
    };
    this.appendEntry(entry as BranchSummaryEntry);
    return entry.id;
  }

  /**
   * Make a new session holding only the path root → `leafId` (labels of those entries carried
   * over as fresh label entries at the end) and switch to it. Returns its file path (written
   * at once if the path holds a user or assistant message, else lazily), or undefined in memory.
   */
  createBranchedSession(leafId: string): string | undefined {
    const path = this.getBranch(leafId);
    if (path.length === 0) throw new Error(`Entry ${leafId} not found`);
    const previousFile = this.sessionFile;
    const kept = path.filter((e) => e.type !== "label");
    const ids = new Set(kept.map((e) => e.id));
    const labelEntries: LabelEntry[] = [];
    let parentId: string | null = kept[kept.length - 1]?.id ?? null;
    for (const [targetId, label] of this.labelsById) {
      if (!ids.has(targetId)) continue;
      const id = generateEntryId(ids);
      ids.add(id);
      labelEntries.push({
        type: "label",
        id,
        parentId,
        timestamp: this.labelTimestampsById.get(targetId) ?? nowIso(),
        targetId,
        label,
      });
      parentId = id;
    }
    this.warnIfUnwritten();
    const newId = createSessionId();
    const timestamp = nowIso();
    this.sessionId = newId;
    this.header = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      id: newId,
      timestamp,
      cwd: this.cwd,
      parentSession: this.persist ? previousFile : undefined,
    };
    this.resetIndex();
    for (const e of [...kept, ...labelEntries]) this.addToIndex(e);
    if (!this.persist) {
      this.writer.reset({ pending: [], fileStarted: false, needsNewline: false, needsRewrite: false });
      return undefined;
    }
    this.sessionFile = join(this.sessionDir, sessionFileName(timestamp, newId));
    this.writer.reset({ pending: [this.header, ...this.entries], fileStarted: false, needsNewline: false, needsRewrite: false });
    if (this.hasConversation) this.flushWrites();
    return this.sessionFile;
  }

  // -------------------------------------------------------------------------------------------
  // reading

  isPersisted(): boolean {
    return this.persist;
  }

  getCwd(): string {
    return this.cwd;
  }

  /** The folder new session files go to ("" in memory). */
  getSessionDir(): string {
    return this.sessionDir;
  }

  getSessionId(): string {
    return this.sessionId;
  }

  /** The session file path (it may not exist yet); undefined in memory. */
  getSessionFile(): string | undefined {
    return this.sessionFile;
  }

  /** Whether this session lives in the default folder for its cwd (no explicit sessionDir). */
  usesDefaultSessionDir(): boolean {
    const root = SessionManager.currentRoot();
    return !!root && this.sessionDir === sessionDirForCwd(this.cwd, root);
  }
  /** The file of session `id` among `cwd`'s sessions, or undefined. */
  static findById(cwd: string, id: string, sessionDir?: string): string | undefined {
    return findSessionFileById(SessionManager.resolveSessionDir(cwd, sessionDir), id);
  }
  getEntryCount(): number {
    return this.entries.length;
  }
  buildContextEntries(): SessionEntry[] {
    return buildContextEntries(this.getBranch());
  }
  buildSessionProjection(): SessionProjection {
    return buildSessionProjection(this.getBranch());
  }

  getHeader(): SessionHeader | null {
    return this.header ?? null;
  }

  /** All entries in file order (a copy of the list; the entries themselves are shared). */
  getEntries(): SessionEntry[] {
    return [...this.entries];
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }

  getLeafId(): string | null {
    return this.leafId;
  }

  getLeafEntry(): SessionEntry | undefined {
    return this.leafId ? this.byId.get(this.leafId) : undefined;
  }

  /** Direct children of an entry, in file order. */
  getChildren(parentId: string): SessionEntry[] {
    return this.entries.filter((e) => e.parentId === parentId && e.id !== parentId);
  }

  getLabel(id: string): string | undefined {
    return this.labelsById.get(id);
  }

  /** Latest session_info name in the file (trimmed; "" clears), or undefined. */
  getSessionName(): string | undefined {
    return latestSessionName(this.entries);
  }

  /** The path root → `fromId` (default: the leaf), every entry type included. */
  getBranch(fromId?: string): SessionEntry[] {
    return branchTo(this.byId, fromId ?? this.leafId);
  }

  /** The entries as a forest (see entryForest in session-paths.ts). */
  getTree(): SessionTreeNode[] {
    return entryForest(this.entries, this.labelsById, this.labelTimestampsById);
  }

  /** The JSON text a loaded message was parsed from (read again from its file), else undefined. See raw-json.ts. */
  rawMessageJson(message: object): Uint8Array | undefined {
    return this.rawMessages?.get(message);
  }

  /** The messages as one JSON array between `prefix` and `suffix`, loaded ones copied from the file. */
  messagesRecord(prefix: string, messages: readonly unknown[], suffix: string): Uint8Array {
    return this.rawMessages ? this.rawMessages.record(prefix, messages, suffix) : messagesRecord(prefix, messages, () => undefined, suffix);
  }

  /** Messages, thinking level and model for the model call, from the path root → leaf. */
  buildSessionContext(): SessionContext {
    // Start-up asks twice (the start model, then the session): built once per state of
    // the tree (entries are only appended or replaced by a new list; the leaf moves). A copy of
    // the message list each time, so no caller sees another's changes.
    const c = this.contextCache;
    if (!c || c.entries !== this.entries || c.count !== this.entries.length || c.leafId !== this.leafId) {
      this.contextCache = { entries: this.entries, count: this.entries.length, leafId: this.leafId, ctx: buildSessionContext(this.entries, this.leafId, this.byId) };
    }
    const ctx = this.contextCache!.ctx;
    return { ...ctx, messages: [...ctx.messages] };
  }
  private contextCache: { entries: SessionEntry[]; count: number; leafId: string | null; ctx: SessionContext } | undefined;
}
