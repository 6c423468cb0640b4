/**
 * Reading, migrating and appending session files.
 *
 * Crash-safety rules this module implements:
 * - Every entry is appended as one whole line (`JSON + "\n"`) in one write to an O_APPEND fd.
 * - On load, a last line without its newline that does not parse is a torn write: it is
 *   skipped with a diagnostic and the file is left as it is; the next append starts with "\n"
 *   so the new entry is a whole line of its own. A malformed line elsewhere is skipped with a
 *   diagnostic. Loading never writes.
 * - The one rewrite is the migration of version 1/2 files (see writeFileAtomic).
 */
import { isAscii } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { writeFileAtomic as writeFileAtomicIn } from "../../kernel/fs-utils.js";
import type { Diagnostic } from "../../kernel/types.js";
import {
  CURRENT_SESSION_VERSION,
  generateEntryId,
  isSessionHeader,
  type CompactionEntry,
  type FileEntry,
  type SessionEntry,
  type SessionHeader,
} from "./session-entries.js";
import { MemoryBytes, RawMessageJson, SessionFileBytes, type MessageBytesSource } from "./raw-json.js";

export interface ParsedSessionFile {
  /** The header, or null when the file has none (empty, torn before its first newline, or not a session). */
  header: SessionHeader | null;
  /** Entries after migration, in file order. */
  entries: SessionEntry[];
  diagnostics: Diagnostic[];
  /** Size in bytes of what was parsed. */
  size: number;
  /** The data is non-empty and does not end with "\n": the next append must begin with "\n". */
  needsNewline: boolean;
  /** Version found in the header when it was older than CURRENT_SESSION_VERSION (the entries are migrated). */
  migratedFrom?: number;
  /** Number of complete lines that held JSON objects (including the header). */
  parsedLines: number;
  /** Number of non-blank lines ended by a newline (whatever they hold): >0 without a header means "not a session". */
  completeLines?: number;
  /** The file's bytes and where each message entry's line is (current-version files only). */
  rawMessages?: RawMessageJson;
}

function warn(source: string, message: string): Diagnostic {
  return { level: "warning", source, message };
}

/**
 * The lines of a session file as they are read: each one parsed as it comes (a chunk of the file
 * at a time, or the whole of it), with what parseSessionData needs afterwards.
 */
class SessionLines {
  readonly diagnostics: Diagnostic[] = [];
  readonly raw: Record<string, unknown>[] = [];
  /** The line number of each raw value (for RawMessageJson). */
  readonly rawLine: number[] = [];
  /** Per raw value: start and end of its message's bytes in the file, or -1, -1. */
  readonly rawSpan: number[] = [];
  /** Non-blank lines ended by a newline. */
  completeLines = 0;
  private lineNo = 0;

  constructor(private readonly source: string) {}

  /**
   * Parse the lines of `buf[from, to)`, whose first byte is at `fileAt` in the file. Every line in
   * it ends with a newline except, at the file's end only, the last one. Each line is decoded on
   * its own (a newline byte is never inside a UTF-8 sequence): no string of the whole file is
   * made. ASCII data (`ascii`) is decoded as latin1 (the same text, without UTF-8 decoding).
   */
  scan(buf: Buffer, from: number, to: number, fileAt: number, ascii: boolean): void {
    const encoding = ascii ? "latin1" : "utf8";
    for (let at = from; at < to; this.lineNo++) {
      const i = this.lineNo;
      const nl = buf.indexOf(0x0a, at);
      const end = nl < 0 || nl >= to ? to : nl;
      const line = buf.toString(encoding, at, end);
      const lineAt = at; // in buf
      at = end + 1;
      if (!line.trim()) continue;
      const unterminated = end === to;
      if (!unterminated) this.completeLines++;
      let value: unknown;
      let span = -1;
      try {
        // A message entry as this program and pi write it is parsed in two parts, its
        // header members (read by a regular expression) and its message; a message that parses
        // alone is exactly the bytes get_messages copies, so their range is known from here on.
        const head = ascii ? MESSAGE_HEAD.exec(line) : null;
        if (head && line.charCodeAt(line.length - 1) === CLOSE_BRACE && line.charCodeAt(line.length - 2) === CLOSE_BRACE) value = splitMessageEntry(line, head, buf, lineAt);
        if (value !== undefined) span = fileAt + (lineAt - from) + head![0].length;
        else value = JSON.parse(line);
      } catch {
        this.diagnostics.push(
          warn(
            this.source,
            unterminated
              ? `line ${i + 1}: incomplete last line (${Buffer.byteLength(line)} bytes, probably an interrupted write) ignored`
              : `line ${i + 1}: malformed JSON line skipped`,
          ),
        );
        continue;
      }
      if (typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== "string") {
        this.diagnostics.push(warn(this.source, `line ${i + 1}: not a session entry (no "type"), skipped`));
        continue;
      }
      this.raw.push(value as Record<string, unknown>);
      this.rawLine.push(i);
      this.rawSpan.push(span, span < 0 ? -1 : fileAt + (end - from) - 1);
    }
  }
}

/**
 * Parse the bytes of a session file. `source` names the file in diagnostics.
 * Version 1 and 2 entries are migrated in memory (nothing is written here).
 */
export function parseSessionData(data: Buffer | string, source: string): ParsedSessionFile {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const lines = new SessionLines(source);
  lines.scan(buf, 0, buf.length, 0, isAscii(buf));
  const size = buf.length;
  return sessionOf(lines, source, size, size > 0 && buf[size - 1] !== 0x0a, new MemoryBytes(buf));
}

/** The parsed file from its lines; `bytes`: where get_messages finds the messages' bytes again (none: serialised). */
function sessionOf(lines: SessionLines, source: string, size: number, needsNewline: boolean, bytes: MessageBytesSource | undefined): ParsedSessionFile {
  const { diagnostics, raw, rawLine, rawSpan, completeLines } = lines;
  const parsedLines = raw.length;
  const first = raw[0];
  if (!first || !isSessionHeader(first)) {
    if (first) diagnostics.push(warn(source, `first entry is not a session header (type "${String(first.type)}")`));
    return { header: null, entries: [], diagnostics, size, needsNewline, parsedLines, completeLines };
  }
  const header = first as unknown as SessionHeader;
  const version = typeof header.version === "number" ? header.version : 1;
  let migratedFrom: number | undefined;
  if (version < CURRENT_SESSION_VERSION) {
    migratedFrom = version;
    migrateRawEntries(raw, version);
  }

  // Migrated entries no longer match their text: only a current file keeps its bytes.
  const rawMessages = migratedFrom === undefined && bytes ? new RawMessageJson(bytes) : undefined;
  const entries: SessionEntry[] = [];
  const ids = new Set<string>();
  for (let i = 1; i < raw.length; i++) {
    const e = raw[i]!;
    if (e.type === "session") {
      diagnostics.push(warn(source, `extra session header (entry ${i + 1}) ignored`));
      continue;
    }
    if (typeof e.id !== "string" || !e.id) {
      diagnostics.push(warn(source, `entry ${i + 1} (type "${String(e.type)}") has no id, skipped`));
      continue;
    }
    if (e.parentId === undefined) e.parentId = null;
    if (ids.has(e.id)) diagnostics.push(warn(source, `duplicate entry id ${e.id}; the later entry wins`));
    ids.add(e.id);
    entries.push(e as unknown as SessionEntry);
    const message = e.message;
    if (rawMessages && e.type === "message" && message !== null && typeof message === "object") {
      const start = rawSpan[2 * i]!;
      if (start >= 0) rawMessages.addSpan(message, start, rawSpan[2 * i + 1]!);
      else rawMessages.add(message, rawLine[i]!);
    }
  }
  return { header, entries, diagnostics, size, needsNewline, migratedFrom, parsedLines, rawMessages };
}

/**
 * The members before the message of a message entry line, in the order this program and pi write
 * them; strings without escapes or control characters only (their text is then their value).
 * The message must follow as an object.
 */
const MESSAGE_HEAD = /^\{"type":"message","id":"([^"\\\x00-\x1f]*)","parentId":(?:null|"([^"\\\x00-\x1f]*)"),"timestamp":"([^"\\\x00-\x1f]*)","message":(?=\{)/;
const CLOSE_BRACE = 0x7d;

const ID_AT = '{"type":"message","id":"'.length;
const PARENT_AFTER_ID = '","parentId":"'.length;
const MESSAGE_KEY = '","message":'.length;

/**
 * The entry of a line whose head MESSAGE_HEAD matched and which ends with "}}": the same object
 * JSON.parse(line) gives, when the text between the head and the last brace parses as one object
 * (so the message is the line's last member); undefined otherwise (the caller parses the line).
 * The head's strings are copied out of the file's bytes (`buf`, ASCII; the line starts at `at`):
 * a regular expression's captures of 13 characters or more are slices of the text they were
 * found in, and the entries' timestamps would keep the whole file's text alive with the session.
 */
function splitMessageEntry(line: string, head: RegExpExecArray, buf: Buffer, at: number): Record<string, unknown> | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line.slice(head[0].length, -1));
  } catch {
    return undefined;
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) return undefined;
  const id = head[1]!;
  const parent = head[2];
  const tsEnd = at + head[0].length - MESSAGE_KEY;
  const parentAt = at + ID_AT + id.length + PARENT_AFTER_ID;
  return {
    type: "message",
    id: buf.toString("latin1", at + ID_AT, at + ID_AT + id.length),
    parentId: parent === undefined ? null : buf.toString("latin1", parentAt, parentAt + parent.length),
    timestamp: buf.toString("latin1", tsEnd - head[3]!.length, tsEnd),
    message,
  };
}

/** Bytes read at a time; a longer line grows the buffer. */
const READ_CHUNK = 1 << 20;

/**
 * Read and parse a session file (throws the fs error when it cannot be read). It is read a chunk
 * at a time, so the whole file is never in memory at once, and its bytes are not kept: get_messages
 * reads them again while the file is unchanged (raw-json.ts's SessionFileBytes).
 */
export function readSessionFile(path: string): ParsedSessionFile {
  const fd = openSync(path, "r");
  try {
    const st = fstatSync(fd, { bigint: true });
    const lines = new SessionLines(path);
    let buf = Buffer.allocUnsafe(READ_CHUNK);
    let fileAt = 0; // the file offset of buf[0]
    let len = 0; // bytes in buf: the start of a line not yet ended, then what was just read
    for (;;) {
      if (len === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const n = readSync(fd, buf, len, buf.length - len, null); // in order (a pipe cannot seek)
      if (n === 0) break;
      const lastNl = buf.lastIndexOf(0x0a, len + n - 1);
      len += n;
      if (lastNl < 0) continue;
      const whole = lastNl + 1;
      lines.scan(buf, 0, whole, fileAt, isAscii(buf.subarray(0, whole)));
      buf.copyWithin(0, whole, len);
      fileAt += whole;
      len -= whole;
    }
    if (len > 0) lines.scan(buf, 0, len, fileAt, isAscii(buf.subarray(0, len)));
    const size = fileAt + len;
    // A file that changed while it was read gets no byte ranges (its messages are serialised).
    const bytes = BigInt(size) === st.size ? new SessionFileBytes(path, size, st) : undefined;
    return sessionOf(lines, path, size, len > 0, bytes);
  } finally {
    closeSync(fd);
  }
}

/**
 * Migrate parsed lines (header first) in place to the current version.
 * v1 → v2: give every entry an id and chain parentId to the previous entry; a compaction's
 * `firstKeptEntryIndex` (an index into the parsed lines, header = 0) becomes `firstKeptEntryId`.
 * v2 → v3: message role "hookMessage" becomes "custom".
 */
export function migrateRawEntries(lines: Record<string, unknown>[], fromVersion: number): void {
  if (fromVersion < 2) {
    const ids = new Set<string>();
    let prev: string | null = null;
    for (const e of lines) {
      if (e.type === "session") continue;
      const id = generateEntryId(ids);
      ids.add(id);
      e.id = id;
      e.parentId = prev;
      prev = id;
    }
    for (const e of lines) {
      if (e.type !== "compaction" || typeof e.firstKeptEntryIndex !== "number") continue;
      const target = lines[e.firstKeptEntryIndex];
      if (target && target.type !== "session") (e as unknown as CompactionEntry).firstKeptEntryId = target.id as string;
      delete e.firstKeptEntryIndex;
    }
  }
  if (fromVersion < 3) {
    for (const e of lines) {
      if (e.type !== "message") continue;
      const msg = e.message as { role?: unknown } | undefined;
      if (msg && msg.role === "hookMessage") msg.role = "custom";
    }
  }
  const header = lines[0];
  if (header && header.type === "session") header.version = CURRENT_SESSION_VERSION;
}

export interface AppendResult {
  bytesWritten: number;
  error?: unknown;
}

/**
 * Append `data` with one write to a file opened with O_APPEND (created if missing). A short
 * write is continued; on an error the bytes already written are reported with it.
 */
export function appendToFile(path: string, data: Buffer): AppendResult {
  let fd: number | undefined;
  let written = 0;
  try {
    fd = openSync(path, "a", 0o600); // transcripts may hold secrets: owner only when created
    while (written < data.length) {
      written += writeSync(fd, data, written, data.length - written);
    }
    return { bytesWritten: written };
  } catch (error) {
    return { bytesWritten: written, error };
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        /* nothing to do */
      }
    }
  }
}

/**
 * Replace a file's content atomically, keeping its permissions (core/kernel/fs-utils.ts's
 * writeFileAtomic: a temporary file beside it, then a rename). Used only to store a migrated
 * version-1/2 session (the reference rewrites such files too); a crash leaves either the old or
 * the new file, never a mix.
 */
export function writeFileAtomic(path: string, content: string): void {
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    mode = undefined;
  }
  writeFileAtomicIn(path, content, mode === undefined ? {} : { mode });
}

export function serializeLine(entry: SessionHeader | SessionEntry): string {
  return `${JSON.stringify(entry)}\n`;
}

export function describeError(error: unknown): string {
  if (error && typeof error === "object") {
    const e = error as { code?: unknown; message?: unknown };
    if (typeof e.message === "string") return e.message;
    if (typeof e.code === "string") return e.code;
  }
  return String(error);
}

// ---------------------------------------------------------------------------------------------
// Reference-compatible helpers (same names as the reference exports)

/** Parse JSONL text into header + entries, skipping malformed lines (no migration, no diagnostics). */
export function parseSessionEntries(content: string): FileEntry[] {
  const out: FileEntry[] = [];
  for (const line of content.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v as FileEntry);
    } catch {
      /* skipped */
    }
  }
  return out;
}

/** Migrate header + entries (in place) to the current version. */
export function migrateSessionEntries(entries: FileEntry[]): void {
  const header = entries.find((e) => e.type === "session") as SessionHeader | undefined;
  const version = typeof header?.version === "number" ? header.version : 1;
  if (version < CURRENT_SESSION_VERSION) migrateRawEntries(entries as unknown as Record<string, unknown>[], version);
}

/** Header + entries of a file, migrated in memory; [] when missing, unreadable or without a header. */
export function loadEntriesFromFile(path: string): FileEntry[] {
  let parsed: ParsedSessionFile;
  try {
    parsed = readSessionFile(path);
  } catch {
    return [];
  }
  return parsed.header ? [parsed.header, ...parsed.entries] : [];
}
