/**
 * The JSON text each loaded message already has in its session file (so that session load and
 * get_messages must not build the same structures twice).
 *
 * A session file is JSONL: every `message` entry is `{…,"message":{…}}` on a line of its own. The
 * objects parsed from it are what the session holds; serialising them again for RPC
 * `get_messages` (JSON.stringify of the whole transcript, then UTF-8 encoding of that string)
 * cost more than parsing them did. Instead the file's bytes are kept, and for each loaded
 * message the byte range of its line; `get_messages` copies each message's own bytes out of the
 * file into the record. Messages added later (or built at load: custom, summaries, edited ones)
 * have no range and are serialised as before.
 *
 * Correctness: the range is used only after checking (once, on first use, by scanning the line's
 * bytes) that it is the value of the line's top-level key spelt exactly `"message"` and that this
 * key is the line's last one — JSON.parse keeps the last of duplicate keys, so the bytes are the
 * text the message object was parsed from. A line that fails the check (a nested or escaped key,
 * trailing whitespace, CRLF) falls back to JSON.stringify. The text parses to the same value;
 * it is byte-identical to JSON.stringify's output whenever the file was written by JSON.stringify
 * (this program, pi), and in any case one line (JSONL lines hold no raw newline).
 * Loaded message objects are not changed in place anywhere (hook handlers get copies), so the
 * bytes stay the message's; a version 1/2 file, whose entries are migrated in memory, gets no
 * ranges at all.
 *
 * Memory: a few numbers per message; nothing is decoded or copied until get_messages. The bytes
 * come from a MessageBytesSource: for a file read from disk (SessionFileBytes) they are read again
 * when asked — the process does not keep a second copy of the transcript — and only while the
 * file is provably the one that was loaded (same file, same size and modification time, apart
 * from the appends this process made itself); otherwise every message is serialised again. The
 * message objects are not marked: they are found by identity.
 */
import { closeSync, fstatSync, openSync, readSync, statSync, type BigIntStats } from "node:fs";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const KEY = Buffer.from('"message"', "latin1");

/** Index just after the string whose opening quote is at `i`, or -1. */
function skipString(b: Uint8Array, i: number, end: number): number {
  for (i++; i < end; i++) {
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
  }
  return -1;
}

/** Index just after the JSON value starting at `i` (an object, array, string or scalar), or -1. */
function skipValue(b: Uint8Array, i: number, end: number): number {
  const first = b[i];
  if (first === QUOTE) return skipString(b, i, end);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // a number, true, false or null: up to the next delimiter
    while (i < end) {
      const c = b[i]!;
      if (c === 0x2c || c === CLOSE_BRACE || c === CLOSE_BRACKET || c <= 0x20) return i;
      i++;
    }
    return -1;
  }
  let depth = 0;
  while (i < end) {
    const c = b[i];
    if (c === QUOTE) {
      i = skipString(b, i, end);
      if (i < 0) return -1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/**
 * The byte range [start, end) of the top-level `"message"` value of the JSON object that fills
 * `b[lineStart, lineEnd)` — only when that key is spelt literally, its value is an object, and
 * it is the last member (the value is followed by the closing brace and the line's end).
 * The line is known to parse as an object; undefined when the shape is anything else.
 */
export function messageValueRange(b: Uint8Array, lineStart: number, lineEnd: number): [number, number] | undefined {
  let i = lineStart;
  if (b[i] !== OPEN_BRACE) return undefined;
  i++;
  while (i < lineEnd) {
    while (isSpace(b[i]) || b[i] === 0x2c) i++;
    if (b[i] !== QUOTE) return undefined;
    const keyStart = i;
    i = skipString(b, i, lineEnd);
    if (i < 0) return undefined;
    let isMessage = i - keyStart === KEY.length;
    for (let k = 0; isMessage && k < KEY.length; k++) if (b[keyStart + k] !== KEY[k]) isMessage = false;
    while (isSpace(b[i])) i++;
    if (b[i] !== COLON) return undefined;
    i++;
    while (isSpace(b[i])) i++;
    const valueStart = i;
    i = skipValue(b, i, lineEnd);
    if (i < 0) return undefined;
    // The last member (the object's closing brace ends the line): JSON.parse keeps the last of
    // duplicate keys, so an earlier "message" is not the value and the scan goes on.
    if (isMessage && b[i] === CLOSE_BRACE && i + 1 === lineEnd) return b[valueStart] === OPEN_BRACE ? [valueStart, i] : undefined;
  }
  return undefined;
}


/** Where the bytes the messages were parsed from can be had again. */
export interface MessageBytesSource {
  /** The bytes (at least up to the last message's end), or undefined when they can no longer be trusted. */
  bytes(): Buffer | undefined;
}

/** Bytes held in memory (data that was never a file, or a caller's buffer). */
export class MemoryBytes implements MessageBytesSource {
  constructor(private readonly data: Buffer) {}
  bytes(): Buffer {
    return this.data;
  }
}

/** What identifies a file's state: its inode, size and modification time (nanoseconds). */
interface FileState {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}
const stateOf = (st: BigIntStats): FileState => ({ dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs });
const sameState = (a: FileState, b: FileState) => a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;

/**
 * The first `length` bytes of a session file, read again on each bytes() call, while the file is
 * in the state it was loaded in — or a state this process made by appending to it (the session
 * manager calls beforeAppend/afterAppend around its own writes). Any other change (another
 * process appending, a rewrite, a replaced or deleted file) makes it untrusted for good.
 */
export class SessionFileBytes implements MessageBytesSource {
  private expected: FileState | undefined;

  /** `st`: fstat of the descriptor the file was loaded through (`{ bigint: true }`), taken before reading. */
  constructor(
    readonly path: string,
    private readonly length: number,
    st: BigIntStats,
  ) {
    this.expected = stateOf(st);
  }

  private current(): FileState | undefined {
    try {
      return stateOf(statSync(this.path, { bigint: true }));
    } catch {
      return undefined;
    }
  }

  /** Before this process appends to the file: still as expected, or no longer trusted. */
  beforeAppend(): void {
    const now = this.expected && this.current();
    if (!now || !sameState(now, this.expected!)) this.expected = undefined;
  }

  /** After this process appended to the file: its new state is the expected one. */
  afterAppend(): void {
    if (this.expected) this.expected = this.current();
  }

  bytes(): Buffer | undefined {
    if (!this.expected) return undefined;
    let fd: number | undefined;
    try {
      fd = openSync(this.path, "r");
      if (!sameState(stateOf(fstatSync(fd, { bigint: true })), this.expected)) {
        this.expected = undefined;
        return undefined;
      }
      const data = Buffer.allocUnsafeSlow(this.length);
      let got = 0;
      while (got < this.length) {
        const n = readSync(fd, data, got, this.length - got, got);
        if (n === 0) break;
        got += n;
      }
      return got === this.length ? data : undefined;
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

/** The loaded message objects of one session file and which of its lines each was parsed from. */
export class RawMessageJson {
  private readonly messages: object[] = [];
  /** Per message: its line number, then (after the first check) value start and end in bytes; -1 = unusable. */
  private readonly ranges: number[] = [];
  /** Byte offset of each line's start (found on first use: newline bytes are newline characters). */
  private lineStarts: number[] | undefined;

  constructor(readonly source: MessageBytesSource) {}

  /**
   * Run `write`, this process appending to its session file `file`: when the bytes are read again
   * from that file, it stays trusted across the append (and only if nobody else changed it before).
   */
  ownWrite<T>(file: string, write: () => T): T {
    const own = this.source instanceof SessionFileBytes && this.source.path === file ? this.source : undefined;
    own?.beforeAppend();
    try {
      return write();
    } finally {
      own?.afterAppend();
    }
  }

  /** Record that `message` was parsed from line number `line` (0-based) of the file. */
  add(message: object, line: number): void {
    this.messages.push(message);
    this.ranges.push(line, 0, 0);
  }

  /**
   * Record that `message` was parsed from exactly the bytes [start, end) of the file (known at
   * load: see parseSessionData's split parse), so get() needs no scan.
   */
  addSpan(message: object, start: number, end: number): void {
    this.messages.push(message);
    this.ranges.push(-1, start, end);
  }

  /**
   * get() is usually asked for the loaded messages in order (the session's messages are the
   * loaded ones, root to leaf): the one after the last found is tried first. Any other lookup
   * goes through a map of the very objects, built on the first miss. (Marking each object at
   * load, with a hidden property, cost ~1 µs a message: 9 ms of a 10,000-entry load.)
   */
  private next = 0;
  private index: Map<object, number> | undefined;

  /** The JSON text `message` was parsed from, as bytes (read from the source each call: record() is the bulk path), or undefined. */
  get(message: object): Buffer | undefined {
    const data = this.source.bytes();
    const k = data ? this.locate(message, data) : -1;
    return k < 0 ? undefined : data!.subarray(this.ranges[k + 1]!, this.ranges[k + 2]!);
  }

  /** Where `message`'s bytes are in `data`: the index of its entry in `ranges` (start at +1, end at +2), or -1. */
  private locate(message: object, data: Buffer): number {
    let n: number | undefined = this.next;
    if (this.messages[n] !== message) {
      if (!this.index) {
        this.index = new Map();
        for (let i = 0; i < this.messages.length; i++) this.index.set(this.messages[i]!, i);
      }
      n = this.index.get(message);
      if (n === undefined) return -1;
    }
    this.next = n + 1;
    const r = this.ranges;
    const k = 3 * n;
    if (r[k + 1] === 0 && r[k + 2] === 0) {
      const starts = (this.lineStarts ??= newlineStarts(data));
      const line = r[k]!;
      const span = line + 1 < starts.length ? messageValueRange(data, starts[line]!, starts[line + 1]! - 1) : undefined;
      r[k + 1] = span ? span[0] : -1;
      r[k + 2] = span ? span[1] : -1;
    }
    return r[k + 1]! < 0 ? -1 : k;
  }

  /**
   * messagesRecord(prefix, messages, m => this.get(m), suffix), built with fewer steps per
   * message: one output buffer, each message's bytes copied into place from the file's with
   * Buffer#copy (no view, no part list). Measured on a 10,000-message session (Node 22, first
   * call in a fresh process): ~11 ms against ~30 ms for views joined with Buffer.concat. Without
   * trusted bytes (the file changed), every message is serialised.
   */
  record(prefix: string, messages: readonly unknown[], suffix: string): Buffer {
    const data = this.source.bytes();
    if (!data) return messagesRecord(prefix, messages, () => undefined, suffix);
    const head = Buffer.from(prefix, "utf8");
    const tail = Buffer.from(suffix, "utf8");
    const n = messages.length;
    // Per message: its bytes' start and end in the file, or RUN (the first of a run of messages
    // without bytes, serialised together) or IN_RUN (the others of that run).
    const starts = new Int32Array(n);
    const ends = new Int32Array(n);
    const runs: Buffer[] = [];
    let total = head.length + tail.length + Math.max(0, n - 1);
    let runFrom = -1;
    const endRun = (to: number) => {
      if (runFrom < 0) return;
      const json = JSON.stringify(messages.slice(runFrom, to));
      const bytes = Buffer.from(json.slice(1, -1), "utf8");
      runs.push(bytes);
      total += bytes.length;
      runFrom = -1;
    };
    const r = this.ranges;
    for (let i = 0; i < n; i++) {
      const m = messages[i];
      const k = m !== null && typeof m === "object" ? this.locate(m, data) : -1;
      if (k >= 0) {
        endRun(i);
        starts[i] = r[k + 1]!;
        ends[i] = r[k + 2]!;
        total += ends[i]! - starts[i]!;
      } else if (runFrom < 0) {
        runFrom = i;
        starts[i] = RUN;
      } else {
        starts[i] = IN_RUN;
        total--; // its comma is inside the run's text
      }
    }
    endRun(n);
    const all = Buffer.allocUnsafeSlow(total);
    let at = 0;
    all.set(head, at);
    at += head.length;
    let run = 0;
    for (let i = 0; i < n; i++) {
      const s = starts[i]!;
      if (s === IN_RUN) continue;
      if (i > 0) all[at++] = 0x2c;
      if (s === RUN) {
        const bytes = runs[run++]!;
        all.set(bytes, at);
        at += bytes.length;
      } else {
        data.copy(all, at, s, ends[i]!);
        at += ends[i]! - s;
      }
    }
    all.set(tail, at);
    return all;
  }
}

const RUN = -1;
const IN_RUN = -2;

/** Where each line starts, plus one entry past the end (a last line without newline ends at the data's end). */
function newlineStarts(data: Buffer): number[] {
  const starts = [0];
  for (let i = data.indexOf(0x0a); i >= 0; i = data.indexOf(0x0a, i + 1)) starts.push(i + 1);
  if (starts[starts.length - 1] !== data.length) starts.push(data.length + 1);
  return starts;
}

/**
 * One JSONL record: `prefix` + the messages as a JSON array + `suffix`, as UTF-8 bytes. Each
 * message is its file bytes when `raw` has them, else JSON.stringify (null for a value without
 * a JSON form, as in an array).
 */
export function messagesRecord(prefix: string, messages: readonly unknown[], raw: (message: object) => Uint8Array | undefined, suffix: string): Buffer {
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (p: Uint8Array) => {
    parts.push(p);
    total += p.length;
  };
  const comma = Buffer.from(",");
  push(Buffer.from(prefix, "utf8"));
  // Runs of messages without bytes are serialised together (one string, one encoding).
  let pending: unknown[] = [];
  const flush = () => {
    if (!pending.length) return;
    const json = JSON.stringify(pending);
    push(Buffer.from(json.slice(1, -1), "utf8"));
    pending = [];
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const bytes = m !== null && typeof m === "object" ? raw(m) : undefined;
    if (bytes) {
      flush();
      if (i > 0) push(comma);
      push(bytes);
    } else {
      if (i > 0 && !pending.length) push(comma);
      pending.push(m);
    }
  }
  flush();
  push(Buffer.from(suffix, "utf8"));
  return Buffer.concat(parts, total);
}
