/**
 * Listing sessions without reading whole files.
 *
 * For each file only the header and a bounded window at each end are read
 * (SESSION_LIST_WINDOW_BYTES from the start, the same from the end; a file no larger than
 * both windows is read once, whole). Consequences for files larger than that:
 * - `messageCount` is an estimate: the density of message lines in the bytes read, scaled
 *   to the file size;
 * - `name` is the newest session_info found in the windows (the tail first);
 * - `allMessagesText` holds only the messages inside the windows;
 * - `firstMessage` comes from the head window (a first message line longer than the window
 *   is read up to the window's end).
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { isSessionHeader, messageText, type SessionHeader, type SessionInfo, type SessionListProgress } from "./session-entries.js";

export const SESSION_LIST_WINDOW_BYTES = 64 * 1024;

export interface ListSessionsOptions {
  onProgress?: SessionListProgress;
  /** Bytes read at each end of a file (default SESSION_LIST_WINDOW_BYTES). */
  windowBytes?: number;
  /** Called for every read with the bytes it returned (used to check that listing stays bounded). */
  onRead?: (path: string, position: number, bytes: number) => void;
  /** Files read at the same time (default 32). */
  concurrency?: number;
}

interface Sample {
  header: SessionHeader;
  headerBytes: number;
  /** Complete entry lines, head window first then tail window. */
  entries: Record<string, unknown>[];
  /** Unterminated line at the end of the head window (large files only). */
  headPartial?: string;
  /** Bytes of the complete entry lines sampled (excluding the header). */
  sampledBytes: number;
  whole: boolean;
}

function parseLines(
  text: string,
  dropFirst: boolean,
  dropLast: boolean,
): { values: Record<string, unknown>[]; bytes: number[]; partial?: string; firstBytes: number } {
  const lines = text.split("\n");
  const values: Record<string, unknown>[] = [];
  const bytes: number[] = [];
  let partial: string | undefined;
  const start = dropFirst ? 1 : 0;
  const end = lines.length - 1;
  for (let i = start; i <= end; i++) {
    const line = lines[i]!;
    if (i === end && dropLast) {
      partial = line;
      break;
    }
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v) && typeof v.type === "string") {
        values.push(v);
        bytes.push(Buffer.byteLength(line) + 1);
      }
    } catch {
      /* torn or malformed line: not counted */
    }
  }
  return { values, bytes, partial, firstBytes: Buffer.byteLength(lines[0] ?? "") + 1 };
}

async function sampleFile(path: string, window: number, onRead?: ListSessionsOptions["onRead"]): Promise<{ sample: Sample | null; size: number; mtime: Date }> {
  const fh = await open(path, "r");
  try {
    const st = await fh.stat();
    const size = st.size;
    const read = async (position: number, length: number): Promise<string> => {
      const buf = Buffer.allocUnsafe(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, position + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      onRead?.(path, position, got);
      return buf.toString("utf8", 0, got);
    };
    if (size <= 2 * window) {
      const text = await read(0, size);
      const parsed = parseLines(text, false, false);
      const header = parsed.values[0];
      if (!isSessionHeader(header)) return { sample: null, size, mtime: st.mtime };
      return {
        sample: {
          header,
          headerBytes: parsed.bytes[0] ?? 0,
          entries: parsed.values.slice(1),
          sampledBytes: parsed.bytes.slice(1).reduce((a, b) => a + b, 0),
          whole: true,
        },
        size,
        mtime: st.mtime,
      };
    }
    const headText = await read(0, window);
    const head = parseLines(headText, false, true);
    const header = head.values[0];
    if (!isSessionHeader(header)) return { sample: null, size, mtime: st.mtime };
    // One byte before the tail window tells whether the window starts on a line boundary.
    const tailStart = size - window - 1;
    const tailText = await read(tailStart, window + 1);
    const tail = parseLines(tailText, true, false);
    const sampledBytes = [...head.bytes.slice(1), ...tail.bytes].reduce((a, b) => a + b, 0);
    return {
      sample: {
        header,
        headerBytes: head.bytes[0] ?? 0,
        entries: [...head.values.slice(1), ...tail.values],
        headPartial: head.partial,
        sampledBytes,
        whole: false,
      },
      size,
      mtime: st.mtime,
    };
  } finally {
    await fh.close();
  }
}

/** Decode a JSON string literal starting at `start` (just after its opening quote), as far as the text goes. */
function decodeJsonStringPrefix(text: string, start: number): string {
  let out = "";
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') return out;
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const next = text[++i];
    if (next === undefined) break;
    switch (next) {
      case "n":
        out += "\n";
        break;
      case "t":
        out += "\t";
        break;
      case "r":
        out += "\r";
        break;
      case "b":
        out += "\b";
        break;
      case "f":
        out += "\f";
        break;
      case "u": {
        const hex = text.slice(i + 1, i + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return out;
        out += String.fromCharCode(parseInt(hex, 16));
        i += 4;
        break;
      }
      default:
        out += next;
    }
  }
  return out;
}

/** Best-effort text of a user message whose line was cut by the head window. */
function partialUserText(line: string): string {
  if (!line.startsWith('{"type":"message"')) return "";
  const role = line.indexOf('"role":"user"');
  if (role < 0) return "";
  const m = /"(?:content|text)":"/.exec(line.slice(role));
  if (!m) return "";
  return decodeJsonStringPrefix(line, role + m.index + m[0].length);
}

/** Build the listing record of one file; null when it is not a session file or cannot be read. */
export async function readSessionInfo(path: string, options: ListSessionsOptions = {}): Promise<SessionInfo | null> {
  const window = Math.max(1024, options.windowBytes ?? SESSION_LIST_WINDOW_BYTES);
  let sampled: Awaited<ReturnType<typeof sampleFile>>;
  try {
    sampled = await sampleFile(path, window, options.onRead);
  } catch {
    return null;
  }
  const { sample, size, mtime } = sampled;
  if (!sample) return null;
  const { header } = sample;

  let messages = 0;
  let firstMessage = "";
  let name: string | undefined;
  let nameFound = false;
  let lastActivity = 0;
  const texts: string[] = [];
  // The newest session_info wins; entries are in file order (head, then tail).
  for (let i = sample.entries.length - 1; i >= 0 && !nameFound; i--) {
    const e = sample.entries[i]!;
    if (e.type === "session_info") {
      nameFound = true;
      name = typeof e.name === "string" ? e.name.trim() || undefined : undefined;
    }
  }
  for (const e of sample.entries) {
    if (e.type !== "message") continue;
    messages++;
    const msg = e.message as { role?: unknown; content?: unknown; timestamp?: unknown } | undefined;
    if (!msg || typeof msg.role !== "string" || !("content" in msg)) continue;
    if (msg.role !== "user" && msg.role !== "assistant") continue;
    if (typeof msg.timestamp === "number") lastActivity = Math.max(lastActivity, msg.timestamp);
    else if (typeof e.timestamp === "string") {
      const t = new Date(e.timestamp).getTime();
      if (!Number.isNaN(t)) lastActivity = Math.max(lastActivity, t);
    }
    const text = messageText(msg);
    if (!text) continue;
    texts.push(text);
    if (!firstMessage && msg.role === "user") firstMessage = text;
  }
  if (!firstMessage && sample.headPartial) firstMessage = partialUserText(sample.headPartial);

  let messageCount = messages;
  if (!sample.whole && sample.sampledBytes > 0) {
    const body = Math.max(0, size - sample.headerBytes);
    messageCount = Math.max(messages, Math.round((messages / sample.sampledBytes) * body));
  }

  const headerTime = typeof header.timestamp === "string" ? new Date(header.timestamp).getTime() : NaN;
  const modified =
    lastActivity > 0 ? new Date(lastActivity) : !Number.isNaN(headerTime) ? new Date(headerTime) : mtime;
  return {
    path,
    id: header.id,
    cwd: typeof header.cwd === "string" ? header.cwd : "",
    name,
    parentSessionPath: typeof header.parentSession === "string" ? header.parentSession : undefined,
    created: Number.isNaN(headerTime) ? mtime : new Date(headerTime),
    modified,
    messageCount,
    firstMessage: firstMessage || "(no messages)",
    allMessagesText: texts.join(" "),
  };
}

/** List the given files (skipping those that are not sessions), newest `modified` first. */
export async function listSessionFiles(files: readonly string[], options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
  const results: (SessionInfo | null)[] = new Array(files.length).fill(null);
  const concurrency = Math.max(1, options.concurrency ?? 32);
  let next = 0;
  let loaded = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      results[i] = await readSessionInfo(files[i]!, options);
      loaded++;
      options.onProgress?.(loaded, files.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  const sessions = results.filter((r): r is SessionInfo => r !== null);
  sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  return sessions;
}

async function jsonlFilesIn(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir, { withFileTypes: true });
    return names.filter((d) => d.isFile() && d.name.endsWith(".jsonl")).map((d) => join(dir, d.name));
  } catch {
    return [];
  }
}

/** Sessions stored directly in `dir` (a missing folder lists nothing). */
export async function listSessionsInDir(dir: string, options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
  return listSessionFiles(await jsonlFilesIn(dir), options);
}

/** Sessions of every project folder under a sessions root (`<agentDir>/sessions`). */
export async function listSessionsUnderRoot(root: string, options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
  let dirs: string[];
  try {
    dirs = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(root, d.name));
  } catch {
    return [];
  }
  const files = (await Promise.all(dirs.map(jsonlFilesIn))).flat();
  return listSessionFiles(files, options);
}

/**
 * The most recently modified (mtime) `.jsonl` in `dir` whose first line is a session header,
 * or null. Reads at most 4 KB of each file.
 */
export function findMostRecentSession(dir: string): string | null {
  // Synchronous on purpose: continueRecent() is a synchronous constructor.
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  } catch {
    return null;
  }
  let best: { path: string; mtime: number } | null = null;
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = statSync(path);
      if (!st.isFile()) continue;
      if (best && st.mtimeMs <= best.mtime) continue;
      if (!hasSessionHeader(path)) continue;
      best = { path, mtime: st.mtimeMs };
    } catch {
      /* unreadable: skip */
    }
  }
  return best?.path ?? null;
}

/** The `.jsonl` file in `dir` whose session header has id `id`, or undefined. */
export function findSessionFileById(dir: string, id: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  } catch {
    return undefined;
  }
  // The file name ends with the id; check those first, then every file's header.
  names.sort((a, b) => Number(b.endsWith(`_${id}.jsonl`)) - Number(a.endsWith(`_${id}.jsonl`)));
  for (const name of names) {
    try {
      if (sessionHeaderOf(join(dir, name))?.id === id) return join(dir, name);
    } catch {
      /* unreadable: skip */
    }
  }
  return undefined;
}

function hasSessionHeader(path: string): boolean {
  return sessionHeaderOf(path) !== undefined;
}

function sessionHeaderOf(path: string): SessionHeader | undefined {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.toString("utf8", 0, n);
    // The header may follow a torn fragment left by a crash before the first newline.
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const parsed = JSON.parse(line);
        return isSessionHeader(parsed) ? parsed : undefined;
      } catch {
        continue;
      }
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}
