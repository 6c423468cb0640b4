/**
 * The two search back-ends of the grep tool: ripgrep (when on PATH) and an in-process searcher.
 *
 * The in-process searcher is built for throughput: files are read into one reused buffer, a
 * literal the pattern cannot match without (or the whole pattern, for literal searches) is
 * looked for in the raw bytes first, so most files are never decoded; binary files (a NUL
 * byte) are skipped; the regular expression runs once over the whole decoded text and match
 * offsets are mapped to line numbers, one match per line.
 */
import { spawn } from "node:child_process";
import { availableParallelism, cpus } from "node:os";
import { Worker } from "node:worker_threads";
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { createInterface } from "node:readline";
import { helpText } from "./external-tools.js";
import { PathGlob } from "./glob.js";
import { GREP_MAX_LINE_LENGTH } from "./truncate.js";
import { walkTree } from "./walk.js";

export interface GrepSearchRequest {
  pattern: string;
  /** Absolute path of the folder or file to search. */
  searchPath: string;
  isDirectory: boolean;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  /** Stop after this many matching lines. */
  limit: number;
  signal?: AbortSignal;
}

export interface GrepMatch {
  /** Absolute path. */
  filePath: string;
  /** 1-based. */
  lineNumber: number;
  /** The line without its end; may already be cut to a little over GREP_MAX_LINE_LENGTH. */
  lineText: string;
}

export interface GrepSearchResult {
  matches: GrepMatch[];
  limitReached: boolean;
  /** Things the model should know (unreadable files, …). */
  notes: string[];
}

/** Lines are kept a little longer than printed, so the printer knows they were cut. */
const KEEP_CHARS = GREP_MAX_LINE_LENGTH + 16;
const SCRATCH_BYTES = 4 * 1024 * 1024;
const WHOLE_FILE_LIMIT = 64 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024 * 1024;

// ---- pattern compilation: grep-pattern.ts ----------------------------------------------------

export { compilePattern, requiredLiteral, type CompiledPattern } from "./grep-pattern.js";
import { compilePattern } from "./grep-pattern.js";

// ---- searching text -------------------------------------------------------------------------
//
// The functions from here to `searchFileSync` also run inside worker threads: their source text
// is sent to the worker (see getWorkerSource), so they use only each other, their arguments
// and globals (Buffer); file access and limits come in through `FileSearchState`.

function lineOut(text: string, start: number, end: number, keepChars: number): string {
  let e = end;
  if (e > start && text.charCodeAt(e - 1) === 13) e--;
  return e - start > keepChars ? text.slice(start, start + keepChars) : text.slice(start, e);
}

/**
 * Report each line of `text` that `regex` (global, multiline) matches, once per line.
 * `firstLine` is the number of the first line of `text`. Returns false when `emit` asked to stop.
 */
export function searchText(
  text: string,
  regex: RegExp,
  lineRegex: RegExp,
  firstLine: number,
  emit: (lineNumber: number, lineText: string) => boolean,
  keepChars: number = KEEP_CHARS,
): boolean {
  const len = text.length;
  if (len === 0) return true;
  // A final line end does not open another (empty) line.
  const end = text.charCodeAt(len - 1) === 10 ? len - 1 : len;
  regex.lastIndex = 0;
  let lineNo = firstLine;
  let countedTo = 0; // the newlines before this offset are counted in lineNo
  for (;;) {
    const m = regex.exec(text);
    if (!m) return true;
    const at = m.index;
    if (at > end) return true;
    const lineStart = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
    let lineEnd = text.indexOf("\n", at);
    if (lineEnd < 0) lineEnd = len;
    if (at + m[0].length > lineEnd && !lineRegex.test(text.slice(lineStart, lineEnd))) {
      // The match ran past the end of the line and the line alone does not match.
      if (lineEnd >= len) return true;
      regex.lastIndex = lineEnd + 1;
      continue;
    }
    for (let p = text.indexOf("\n", countedTo); p >= 0 && p < lineStart; p = text.indexOf("\n", p + 1)) lineNo++;
    countedTo = lineStart;
    if (!emit(lineNo, lineOut(text, lineStart, lineEnd, keepChars))) return false;
    if (lineEnd >= len) return true;
    regex.lastIndex = lineEnd + 1;
  }
}

function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let p = buf.indexOf(10); p >= 0; p = buf.indexOf(10, p + 1)) n++;
  return n;
}

/** Read up to `length` bytes at file `position` into `buf` from `offset`; stops at the end of the file. */
function readInto(fs: SearchFs, fd: number, buf: Buffer, length: number, position: number, offset: number): number {
  let got = 0;
  while (got < length) {
    const want = length - got;
    const n = fs.readSync(fd, buf, offset + got, want, position + got);
    got += n;
    // A short read of a regular file means its end: saves the extra read() that would return 0.
    if (n < want) break;
  }
  return got;
}

interface SearchFs {
  openSync: typeof openSync;
  readSync: typeof readSync;
  closeSync: typeof closeSync;
  fstatSync: typeof fstatSync;
}

interface FileSearchState {
  fs: SearchFs;
  keepChars: number;
  wholeFileLimit: number;
  chunkBytes: number;
  scratch: Buffer;
  regex: RegExp;
  lineRegex: RegExp;
  needle: Buffer | undefined;
  unreadable: number;
  signal?: AbortSignal;
}

function hasBom(data: Buffer): boolean {
  return data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf;
}

/**
 * Search one file. `explicit`: named by the user, so searched even when binary (otherwise a
 * NUL byte skips the file, as ripgrep does). Returns false when `emit` asked to stop.
 */
function searchFileSync(
  state: FileSearchState,
  filePath: string,
  explicit: boolean,
  emit: (lineNumber: number, lineText: string) => boolean,
): boolean {
  const fs = state.fs;
  let fd: number;
  try {
    fd = fs.openSync(filePath, "r");
  } catch {
    state.unreadable++;
    return true;
  }
  try {
    // Most files fit the scratch buffer: one read, no stat.
    const scratch = state.scratch;
    const got = readInto(fs, fd, scratch, scratch.length, 0, 0);
    let data: Buffer | undefined;
    if (got < scratch.length) data = scratch.subarray(0, got);
    else {
      const size = fs.fstatSync(fd).size;
      if (size <= state.wholeFileLimit) {
        const buf = Buffer.allocUnsafe(Math.max(size, got) + 1);
        scratch.copy(buf, 0, 0, got);
        data = buf.subarray(0, got + readInto(fs, fd, buf, buf.length - got, got, got));
      }
    }
    if (data) {
      if (state.needle && data.indexOf(state.needle) < 0) return true;
      if (!explicit && data.indexOf(0) >= 0) return true;
      return searchText(data.toString("utf8", hasBom(data) ? 3 : 0), state.regex, state.lineRegex, 1, emit, state.keepChars);
    }
    // A big file: search it in chunks cut at line ends.
    let position = 0;
    let lineBase = 1;
    let carry = Buffer.alloc(0);
    const chunkBytes = state.chunkBytes;
    const chunk = Buffer.allocUnsafe(chunkBytes);
    for (;;) {
      if (state.signal && state.signal.aborted) return false;
      const n = readInto(fs, fd, chunk, chunkBytes, position, 0);
      position += n;
      const eof = n === 0;
      const joined = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      if (!explicit && joined.indexOf(0) >= 0) return true;
      let cut = eof ? joined.length : joined.lastIndexOf(10) + 1;
      if (cut === 0) cut = joined.length; // one enormous line: search what there is
      const piece = joined.subarray(0, cut);
      carry = Buffer.from(joined.subarray(cut));
      if (piece.length) {
        if (!state.needle || piece.indexOf(state.needle) >= 0) {
          const text = piece.toString("utf8", position === n && hasBom(piece) ? 3 : 0);
          if (!searchText(text, state.regex, state.lineRegex, lineBase, emit, state.keepChars)) return false;
        }
        lineBase += countNewlines(piece);
      }
      if (eof) return true;
    }
  } catch (e) {
    // File-system errors (they carry a code) make the file unreadable; anything else is a bug.
    if (!(e && typeof e === "object" && "code" in e)) throw e;
    state.unreadable++;
    return true;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      /* already closed */
    }
  }
}

// ---- worker threads -----------------------------------------------------------------------------

/** Tuning of the in-process searcher (tests and benchmarks change it). */
export interface InProcessSearchTuning {
  /** Worker threads for big trees (default: CPU count, at most 4; 0 = never). */
  workers?: number;
  /** Files searched on the main thread before workers start; small trees never start one (default 1500). */
  inlineFiles?: number;
  /** Files per message to a worker (default 128). */
  batchFiles?: number;
}
const tuning: Required<Omit<InProcessSearchTuning, "workers">> & { workers?: number } = { inlineFiles: 1500, batchFiles: 128 };
/** Batches answered by worker threads since start (for tests). */
let workerBatchesAnswered = 0;

export function configureInProcessSearch(t: InProcessSearchTuning): void {
  if ("workers" in t) tuning.workers = t.workers;
  if (t.inlineFiles !== undefined) tuning.inlineFiles = t.inlineFiles;
  if (t.batchFiles !== undefined) tuning.batchFiles = Math.max(1, t.batchFiles);
}
export function inProcessSearchStats(): { workerBatchesAnswered: number } {
  return { workerBatchesAnswered };
}

interface WorkerInit {
  keepChars: number;
  wholeFileLimit: number;
  chunkBytes: number;
  scratchBytes: number;
  source: string;
  flags: string;
  lineFlags: string;
  needle: Uint8Array | null;
  limit: number;
}
interface WorkerBatch {
  id: number;
  files: string[];
}
interface WorkerReply {
  id: number;
  /** Set when the worker itself failed (not a file): the batch is redone on the main thread. */
  error?: string;
  /** [index in batch, line number, line text] */
  matches: Array<[number, number, string]>;
  unreadable: number;
}

/** The body of a worker: receives the pattern once, then batches of files. */
function workerMain(): void {
  const { parentPort } = require("node:worker_threads");
  const nodeFs = require("node:fs");
  let state: FileSearchState | undefined;
  let limit = Infinity;
  parentPort.on("message", (msg: WorkerInit | WorkerBatch) => {
    if ("source" in msg) {
      state = {
        fs: { openSync: nodeFs.openSync, readSync: nodeFs.readSync, closeSync: nodeFs.closeSync, fstatSync: nodeFs.fstatSync },
        keepChars: msg.keepChars,
        wholeFileLimit: msg.wholeFileLimit,
        chunkBytes: msg.chunkBytes,
        scratch: Buffer.allocUnsafe(msg.scratchBytes),
        regex: new RegExp(msg.source, msg.flags),
        lineRegex: new RegExp(msg.source, msg.lineFlags),
        needle: msg.needle ? Buffer.from(msg.needle) : undefined,
        unreadable: 0,
      };
      limit = msg.limit;
      return;
    }
    const matches: Array<[number, number, string]> = [];
    try {
      const st = state!;
      st.unreadable = 0;
      for (let i = 0; i < msg.files.length && matches.length < limit; i++) {
        searchFileSync(st, msg.files[i]!, false, (line, text) => {
          matches.push([i, line, text]);
          return matches.length < limit;
        });
      }
      parentPort.postMessage({ id: msg.id, matches, unreadable: st.unreadable } satisfies WorkerReply);
    } catch (e) {
      parentPort.postMessage({ id: msg.id, matches: [], unreadable: 0, error: String(e) } satisfies WorkerReply);
    }
  });
}

let workerSource: string | undefined;
function getWorkerSource(): string {
  workerSource ??= [
    `"use strict";`,
    `const KEEP_CHARS = ${KEEP_CHARS};`,
    lineOut.toString(),
    searchText.toString(),
    countNewlines.toString(),
    readInto.toString(),
    hasBom.toString(),
    searchFileSync.toString(),
    workerMain.toString(),
    `workerMain();`,
  ].join("\n");
  return workerSource;
}

function workerCount(): number {
  if (tuning.workers !== undefined) return Math.max(0, tuning.workers);
  const n = typeof availableParallelism === "function" ? availableParallelism() : cpus().length;
  return Math.max(0, Math.min(4, n));
}

/**
 * Runs batches of files on worker threads and hands results back in submission order.
 * Falls back to the main thread when a worker cannot start or fails.
 */
class SearchPool {
  private workers: Worker[] = [];
  private idle: Worker[] = [];
  private queue: WorkerBatch[] = [];
  private inFlight = new Map<Worker, WorkerBatch>();
  private broken = false;
  private closed = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly init: WorkerInit,
    private readonly onReply: (reply: WorkerReply) => void,
    private readonly runInline: (batch: WorkerBatch) => WorkerReply,
  ) {}

  start(n: number): void {
    try {
      const src = getWorkerSource();
      for (let i = 0; i < n; i++) {
        const w = new Worker(src, { eval: true });
        w.on("message", (reply: WorkerReply) => {
          const batch = this.inFlight.get(w);
          this.inFlight.delete(w);
          if (reply.error !== undefined) {
            // The worker cannot search (its code did not survive transpiling, …): stop using workers.
            this.broken = true;
            if (batch) this.queue.unshift(batch);
          } else {
            workerBatchesAnswered++;
            this.idle.push(w);
            this.onReply(reply);
          }
          this.pump();
        });
        w.on("error", () => this.fail(w));
        w.on("exit", () => this.fail(w));
        w.postMessage(this.init);
        this.workers.push(w);
        this.idle.push(w);
      }
    } catch {
      this.broken = true;
    }
    this.pump();
  }

  submit(batch: WorkerBatch): void {
    this.queue.push(batch);
    this.pump();
  }

  private fail(w: Worker): void {
    if (this.closed) return;
    this.broken = true;
    const lost = this.inFlight.get(w);
    this.inFlight.delete(w);
    this.idle = this.idle.filter((x) => x !== w);
    if (lost) this.queue.unshift(lost);
    this.pump();
  }

  private pump(): void {
    if (this.closed) return;
    if (this.broken || this.workers.length === 0) {
      // Nothing to run them on: do them here, in order.
      while (this.queue.length && !this.closed) this.onReply(this.runInline(this.queue.shift()!));
    } else {
      while (this.queue.length && this.idle.length) {
        const w = this.idle.pop()!;
        const b = this.queue.shift()!;
        this.inFlight.set(w, b);
        w.postMessage(b);
      }
    }
    if (this.queue.length === 0 && this.inFlight.size === 0) {
      const ws = this.waiters;
      this.waiters = [];
      for (const f of ws) f();
    }
  }

  /** Resolves when every submitted batch has been answered (or the pool is closed). */
  drain(): Promise<void> {
    if (this.closed || (this.queue.length === 0 && this.inFlight.size === 0)) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    for (const w of this.workers) void w.terminate();
    this.workers = [];
    const ws = this.waiters;
    this.waiters = [];
    for (const f of ws) f();
  }
}

// ---- the in-process back-end --------------------------------------------------------------------

/**
 * The grep `glob` filter: which files are searched. A glob without "/" matches file names at any
 * depth, one with "/" the path relative to the searched folder; "!" in front excludes instead.
 * Unlike ripgrep's --glob it does not override .gitignore: ignored files stay ignored.
 */
export class FileFilter {
  private readonly glob: PathGlob;
  readonly negated: boolean;
  /** The glob as written, without "!". */
  readonly pattern: string;
  constructor(glob: string) {
    this.negated = glob.startsWith("!");
    this.pattern = this.negated ? glob.slice(1) : glob;
    this.glob = new PathGlob(this.pattern, { braces: true, anchored: true });
  }
  /** Whether the pattern names files only (no "/"), so ripgrep's --type can apply it. */
  get byName(): boolean {
    return this.glob.matchBasename;
  }
  accepts(relPath: string, name: string): boolean {
    return this.glob.test(relPath, name) !== this.negated;
  }
}

export async function searchInProcess(req: GrepSearchRequest): Promise<GrepSearchResult> {
  const pattern = compilePattern(req.pattern, { ignoreCase: req.ignoreCase, literal: req.literal });
  const limit = Math.max(1, req.limit);
  const state: FileSearchState = {
    fs: { openSync, readSync, closeSync, fstatSync },
    keepChars: KEEP_CHARS,
    wholeFileLimit: WHOLE_FILE_LIMIT,
    chunkBytes: CHUNK_BYTES,
    scratch: Buffer.allocUnsafe(SCRATCH_BYTES),
    regex: pattern.regex,
    lineRegex: pattern.lineRegex,
    needle: pattern.needle,
    unreadable: 0,
    signal: req.signal,
  };
  const notes: string[] = [];

  if (!req.isDirectory) {
    // Opening a FIFO would block this thread; a device like /dev/zero never ends.
    if (!statSync(req.searchPath).isFile()) throw new Error(`${req.searchPath} is not a regular file`);
    const matches: GrepMatch[] = [];
    let limitReached = false;
    searchFileSync(state, req.searchPath, true, (lineNumber, lineText) => {
      matches.push({ filePath: req.searchPath, lineNumber, lineText });
      if (matches.length >= limit) limitReached = true;
      return !limitReached;
    });
    if (state.unreadable) throw new Error(`Cannot read ${req.searchPath}`);
    return { matches, limitReached, notes };
  }

  // Batches are numbered in walk order; results are appended strictly in that order.
  const matches: GrepMatch[] = [];
  const files = new Map<number, string[]>();
  const replies = new Map<number, WorkerReply>();
  let nextId = 0;
  let nextToAppend = 0;
  let unreadable = 0;
  let done = false;

  const runInline = (b: WorkerBatch): WorkerReply => {
    state.unreadable = 0;
    const found: Array<[number, number, string]> = [];
    for (let i = 0; i < b.files.length && found.length < limit; i++) {
      if (!searchFileSync(state, b.files[i]!, false, (line, text) => {
        found.push([i, line, text]);
        return found.length < limit;
      }))
        break;
    }
    return { id: b.id, matches: found, unreadable: state.unreadable };
  };
  const onReply = (r: WorkerReply) => {
    replies.set(r.id, r);
    while (!done && replies.has(nextToAppend)) {
      const rep = replies.get(nextToAppend)!;
      const names = files.get(nextToAppend)!;
      replies.delete(nextToAppend);
      files.delete(nextToAppend);
      nextToAppend++;
      unreadable += rep.unreadable;
      for (const [i, lineNumber, lineText] of rep.matches) {
        matches.push({ filePath: names[i]!, lineNumber, lineText });
        if (matches.length >= limit) {
          done = true;
          break;
        }
      }
    }
  };

  let pool: SearchPool | undefined;
  const wantWorkers = workerCount();
  let batch: string[] = [];
  let seen = 0;
  const flush = () => {
    if (!batch.length) return;
    const b: WorkerBatch = { id: nextId++, files: batch };
    files.set(b.id, batch);
    batch = [];
    if (pool) pool.submit(b);
    else onReply(runInline(b));
  };

  const filter = req.glob ? new FileFilter(req.glob) : undefined;
  const onAbort = () => pool?.close();
  req.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const walk = await walkTree({
      root: req.searchPath,
      signal: req.signal,
      visit(e) {
        if (done) return "stop";
        if (e.kind !== "file") return;
        if (filter && !filter.accepts(e.rel, e.name)) return;
        batch.push(e.abs);
        seen++;
        if (batch.length >= tuning.batchFiles) {
          flush();
          if (!pool && seen >= tuning.inlineFiles && wantWorkers > 0 && !done) {
            pool = new SearchPool(
              {
                keepChars: KEEP_CHARS,
                wholeFileLimit: WHOLE_FILE_LIMIT,
                chunkBytes: CHUNK_BYTES,
                scratchBytes: SCRATCH_BYTES,
                source: pattern.regex.source,
                flags: pattern.regex.flags,
                lineFlags: pattern.lineRegex.flags,
                needle: pattern.needle ?? null,
                limit,
              },
              onReply,
              runInline,
            );
            pool.start(wantWorkers);
          }
        }
        return done ? "stop" : undefined;
      },
    });
    flush();
    if (pool) {
      await pool.drain();
      pool.close();
    }
    if (req.signal?.aborted) throw new Error("Operation aborted");
    unreadable += walk.unreadableDirs;
  } finally {
    pool?.close();
    req.signal?.removeEventListener("abort", onAbort);
  }
  if (unreadable) notes.push(`${unreadable} file(s) or folder(s) could not be read`);
  return { matches, limitReached: done, notes };
}

// ---- the ripgrep back-end -------------------------------------------------------------------

function rgText(v: { text?: string; bytes?: string } | undefined): string | undefined {
  if (!v) return undefined;
  if (typeof v.text === "string") return v.text;
  if (typeof v.bytes === "string") return Buffer.from(v.bytes, "base64").toString("utf8");
  return undefined;
}

/** Thrown when ripgrep rejects a pattern JavaScript may accept (look-around, back-references). */
export class RipgrepPatternError extends Error {}

export function searchWithRipgrep(rgPath: string, req: GrepSearchRequest): Promise<GrepSearchResult> {
  return new Promise((resolve, reject) => {
    if (req.signal?.aborted) return reject(new Error("Operation aborted"));
    const args = ["--json", "--line-number", "--color=never", "--hidden", "--no-config", "--glob", "!.git"];
    if (helpText(rgPath).includes("--no-require-git")) args.push("--no-require-git");
    if (req.ignoreCase) args.push("--ignore-case");
    if (req.literal) args.push("--fixed-strings");
    // --glob would override .gitignore; a file type does not. Path globs are applied below.
    const filter = req.glob ? new FileFilter(req.glob) : undefined;
    if (filter?.byName) args.push("--type-add", `piglob:${filter.pattern}`, filter.negated ? "--type-not" : "--type", "piglob");
    // Run inside the searched folder so globs are relative to it, like the in-process search.
    const cwd = req.isDirectory ? req.searchPath : dirname(req.searchPath);
    const target = req.isDirectory ? "." : basename(req.searchPath);
    args.push("--", req.pattern, target);
    const child = spawn(rgPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const rl = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    const matches: GrepMatch[] = [];
    let limitReached = false;
    let stderr = "";
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      req.signal?.removeEventListener("abort", onAbort);
      rl.close();
      fn();
    };
    const onAbort = () => {
      child.kill();
      finish(() => reject(new Error("Operation aborted")));
    };
    req.signal?.addEventListener("abort", onAbort, { once: true });
    child.stderr!.on("data", (d: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += d.toString("utf8");
    });
    rl.on("line", (line) => {
      if (limitReached || !line.startsWith('{"type":"match"')) return;
      let ev: any;
      try {
        ev = JSON.parse(line);
      } catch {
        return;
      }
      const p = rgText(ev.data?.path);
      const n = ev.data?.line_number;
      if (!p || typeof n !== "number") return;
      let text = rgText(ev.data?.lines) ?? "";
      text = text.replace(/\r?\n$/, "");
      if (text.endsWith("\r")) text = text.slice(0, -1);
      if (text.length > KEEP_CHARS) text = text.slice(0, KEEP_CHARS);
      if (filter && !filter.byName && req.isDirectory) {
        const rel = (p.startsWith("./") ? p.slice(2) : p).split(sep).join("/");
        if (!filter.accepts(rel, rel.slice(rel.lastIndexOf("/") + 1))) return;
      }
      const abs = req.isDirectory ? join(req.searchPath, p) : req.searchPath;
      matches.push({ filePath: abs, lineNumber: n, lineText: text });
      if (matches.length >= req.limit) {
        limitReached = true;
        child.kill();
      }
    });
    child.on("error", (error) => finish(() => reject(new Error(`Failed to run ripgrep (${rgPath}): ${error.message}`))));
    child.on("close", (code) => {
      const err = stderr.trim();
      if (limitReached || code === 0 || code === 1) {
        const notes = err && code !== 0 && code !== 1 ? [`ripgrep: ${err.split("\n")[0]}`] : [];
        return finish(() => resolve({ matches, limitReached, notes }));
      }
      if (matches.length) {
        return finish(() => resolve({ matches, limitReached, notes: [`Some files could not be searched: ${err.split("\n")[0]}`] }));
      }
      if (/regex parse error|error parsing regex|unrecognized escape|look-?around|backreferences/i.test(err)) {
        return finish(() => reject(new RipgrepPatternError(err)));
      }
      finish(() => reject(new Error(err || `ripgrep exited with code ${code}`)));
    });
  });
}
