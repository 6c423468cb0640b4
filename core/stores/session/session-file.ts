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
import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
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
import { RawMessageJson } from "./raw-json.js";

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
 * Parse the bytes of a session file. `source` names the file in diagnostics.
 * Version 1 and 2 entries are migrated in memory (nothing is written here).
 */
export function parseSessionData(data: Buffer | string, source: string): ParsedSessionFile {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const size = buf.length;
  const needsNewline = size > 0 && buf[size - 1] !== 0x0a;
  // Each line is decoded on its own (a newline byte is never inside a UTF-8 sequence): no string
  // of the whole file, which at several megabytes would be one more copy of it in memory while it
  // loads. A file of plain ASCII is decoded as latin1 (the same text, without UTF-8 decoding).
  const ascii = isAscii(buf);
  const encoding = ascii ? "latin1" : "utf8";
  const diagnostics: Diagnostic[] = [];
  const raw: Record<string, unknown>[] = [];
  const rawLine: number[] = []; // the line number of each raw value (for RawMessageJson)
  const rawSpan: number[] = []; // per raw value: start and end of its message's bytes, or -1, -1
  let completeLines = 0; // non-blank lines ended by a newline
  for (let i = 0, at = 0; at < size; i++) {
    const nl = buf.indexOf(0x0a, at);
    const end = nl < 0 ? size : nl;
    const line = buf.toString(encoding, at, end);
    const lineAt = at; // in bytes
    at = end + 1;
    if (!line.trim()) continue;
    const unterminated = nl < 0;
    if (!unterminated) completeLines++;
    let value: unknown;
    let span = -1;
    try {
      // A message entry as this program and pi write it is parsed in two parts, its
      // header members (read by a regular expression) and its message; a message that parses
      // alone is exactly the bytes get_messages copies, so their range is known from here on.
      const head = ascii ? MESSAGE_HEAD.exec(line) : null;
      if (head && line.charCodeAt(line.length - 1) === CLOSE_BRACE && line.charCodeAt(line.length - 2) === CLOSE_BRACE) value = splitMessageEntry(line, head, buf, lineAt);
      if (value !== undefined) span = lineAt + head![0].length;
      else value = JSON.parse(line);
    } catch {
      diagnostics.push(
        warn(
          source,
          unterminated
            ? `line ${i + 1}: incomplete last line (${Buffer.byteLength(line)} bytes, probably an interrupted write) ignored`
            : `line ${i + 1}: malformed JSON line skipped`,
        ),
      );
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== "string") {
      diagnostics.push(warn(source, `line ${i + 1}: not a session entry (no "type"), skipped`));
      continue;
    }
    raw.push(value as Record<string, unknown>);
    rawLine.push(i);
    rawSpan.push(span, span < 0 ? -1 : end - 1);
  }

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
  const rawMessages = migratedFrom === undefined ? new RawMessageJson(buf) : undefined;
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

/** Read and parse a session file (throws the fs error when it cannot be read). */
export function readSessionFile(path: string): ParsedSessionFile {
  return parseSessionData(readFileSync(path), path);
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
