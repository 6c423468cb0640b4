/**
 * Strict JSONL framing (protocol.md §1), shared by the JSON and RPC modes and their clients.
 *
 * - One record = `JSON.stringify(value) + "\n"`. U+2028 / U+2029 are written as they are:
 *   they are legal inside JSON strings and are not record separators.
 * - Input is split on LF (`\n`) only. One trailing `\r` per line is stripped (CRLF input).
 *   Never use `node:readline` for this: it also splits on U+2028, U+2029 and lone `\r`.
 * - A last line without a terminating LF is still delivered when the input ends.
 *
 * Node built-ins only.
 */
import { StringDecoder } from "node:string_decoder";

/**
 * Serialise one record: `JSON.stringify(v) + "\n"`.
 *
 * @throws TypeError when `v` has no JSON form (`undefined`, a function, a symbol); JSON.stringify's
 *   own errors (a cycle, a BigInt) propagate unchanged.
 */
export function serializeRecord(v: unknown): string {
  const json = JSON.stringify(v);
  if (json === undefined) {
    throw new TypeError(`serializeRecord: a ${typeof v} value has no JSON form and cannot be written as a record`);
  }
  return json + "\n";
}

/** Result of {@link parseJsonLine}. */
export type ParseJsonLineResult =
  | { ok: true; value: unknown }
  | {
      ok: false;
      /** e.g. `Invalid JSON at position 7: Unexpected non-whitespace character after JSON`. */
      error: string;
      /** 0-based UTF-16 offset in the line where parsing failed (the line length when it ended early). */
      position: number;
    };

/**
 * Parse one JSONL line. Never throws.
 *
 * The error message always names the position (0-based offset in the line), which V8's own
 * messages omit for some errors (`Unexpected token …`, `Unexpected end of JSON input`).
 */
export function parseJsonLine(line: string): ParseJsonLineResult {
  try {
    return { ok: true, value: JSON.parse(line) as unknown };
  } catch (err) {
    const raw = err instanceof Error ? err.message : String(err);
    const m = /\bat position (\d+)/.exec(raw);
    const position = m ? Number(m[1]) : findJsonErrorOffset(line);
    const reason = raw.replace(/\s*(?:in JSON )?at position \d+(?: \(line \d+ column \d+\))?/, "");
    return { ok: false, error: `Invalid JSON at position ${position}: ${reason}`, position };
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Offset of the first character that makes `s` invalid JSON, or `s.length` when the text ends
 * too early. Only called after JSON.parse failed, to locate errors V8 reports without a position.
 * Iterative (no recursion), so deeply nested input cannot overflow the stack.
 */
function findJsonErrorOffset(s: string): number {
  const n = s.length;
  let i = 0;
  // Stack of open containers: "{" or "[".
  const stack: string[] = [];
  const ws = () => {
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  /** Scans a string starting at the opening quote; returns false on error (i is the error offset). */
  const str = (): boolean => {
    i++; // opening quote
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = s[i + 1];
        if (e === undefined) {
          i = n;
          return false;
        }
        if (e === "u") {
          for (let k = 2; k < 6; k++) {
            if (i + k >= n) {
              i = n;
              return false;
            }
            if (!/[0-9a-fA-F]/.test(s[i + k]!)) {
              i += k;
              return false;
            }
          }
          i += 6;
        } else if ('"\\/bfnrt'.includes(e)) {
          i += 2;
        } else {
          i++;
          return false;
        }
      } else {
        i++;
      }
    }
    return false;
  };
  const num = (): boolean => {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(s);
    if (!m) {
      i++; // past "-": the character after it is the culprit
      return false;
    }
    i += m[0].length;
    const next = s[i];
    if (next === "." || next === "e" || next === "E") {
      // A fraction or exponent without digits ("1.", "1.x", "1e+"): the error is after the marker.
      i++;
      if (next !== "." && (s[i] === "+" || s[i] === "-")) i++;
      return false;
    }
    return true;
  };
  const literal = (): boolean => {
    for (const word of ["true", "false", "null"]) {
      if (s[i] !== word[0]) continue;
      for (let k = 1; k < word.length; k++) {
        if (i + k >= n) {
          i = n;
          return false;
        }
        if (s[i + k] !== word[k]) {
          i += k;
          return false;
        }
      }
      i += word.length;
      return true;
    }
    return false;
  };
  /** `"key"` then `:`; leaves `i` on the value. */
  const keyColon = (): boolean => {
    ws();
    if (s[i] !== '"' || !str()) return false;
    ws();
    if (s[i] !== ":") return false;
    i++;
    return true;
  };

  let expectValue = true;
  for (;;) {
    ws();
    if (i >= n) return n; // valid so far, cut short (or, for valid input, the end)
    const c = s[i]!;
    if (expectValue) {
      if (c === "{" || c === "[") {
        const close = c === "{" ? "}" : "]";
        i++;
        ws();
        if (s[i] === close) {
          i++;
          expectValue = false;
        } else {
          stack.push(c);
          if (c === "{" && !keyColon()) return Math.min(i, n);
        }
        continue;
      }
      const ok = c === '"' ? str() : c === "-" || (c >= "0" && c <= "9") ? num() : literal();
      if (!ok) return Math.min(i, n);
      expectValue = false;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top === undefined) return i; // non-whitespace after a complete value
    if (c === ",") {
      i++;
      if (top === "{" && !keyColon()) return Math.min(i, n);
      expectValue = true;
    } else if ((top === "{" && c === "}") || (top === "[" && c === "]")) {
      i++;
      stack.pop();
    } else {
      return i;
    }
  }
}

/**
 * Incremental LF-only line splitter for byte or string chunks.
 *
 * - Bytes are decoded as UTF-8 with a `StringDecoder`, so a multi-byte character split across
 *   chunks is reassembled; invalid bytes become U+FFFD.
 * - Lines are split on `\n` only; one trailing `\r` is stripped from each line; U+2028 / U+2029
 *   stay inside the line.
 * - **Empty lines are skipped** (also a line that was only `\r`): `onLine` never receives `""`.
 *   Whitespace-only lines are delivered (and will fail to parse, which the caller reports).
 * - A line spread over many chunks is kept as a list of pieces and joined once when its LF
 *   arrives, so a multi-megabyte line costs linear time.
 * - `end()` delivers a final line that had no LF. After `end()`, `push()` throws.
 *
 * `onLine` runs synchronously inside `push()`/`end()`. If it throws, the exception propagates out
 * of that call and the remaining lines of that chunk are dropped; keep `onLine` non-throwing
 * (handle errors inside it, e.g. `void handle(line).catch(report)`).
 */
export class JsonlLineReader {
  private readonly decoder = new StringDecoder("utf8");
  /** Pieces of the current (unterminated) line, oldest first. */
  private pending: string[] = [];
  private ended = false;
  // ---- line size limit (security hardening) ----
  /** Characters in `pending`. */
  private pendingLength = 0;
  /** Inside an oversized line: drop everything up to its LF. */
  private discarding = false;
  private discardedLength = 0;

  /**
   * `maxLineLength` (characters; default unlimited): a longer line is dropped as it arrives —
   * memory stays bounded — and `onOversized(length)` is called once its LF (or the end) comes.
   */
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly limits: { maxLineLength?: number; onOversized?: (length: number) => void } = {},
  ) {}

  /** Feeds one chunk. Strings are taken as already decoded text. */
  push(chunk: Buffer | Uint8Array | string): void {
    if (this.ended) throw new Error("JsonlLineReader: push() after end()");
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk as Buffer);
    if (text.length > 0) this.split(text);
  }

  /** Ends the input: flushes the decoder and delivers a last line that had no LF. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const rest = this.decoder.end();
    if (rest.length > 0) this.split(rest);
    if (this.discarding) {
      this.discarding = false;
      this.limits.onOversized?.(this.discardedLength);
      return;
    }
    if (this.pending.length > 0) {
      const line = this.pending.length === 1 ? this.pending[0]! : this.pending.join("");
      this.pending = [];
      this.pendingLength = 0;
      this.emit(line);
    }
  }

  /** Whether a partial line (no LF yet) is buffered. */
  get hasPartialLine(): boolean {
    return this.pending.length > 0;
  }

  private split(text: string): void {
    const max = this.limits.maxLineLength ?? Infinity;
    let start = 0;
    let nl = text.indexOf("\n");
    while (nl !== -1) {
      if (this.discarding) {
        this.discardedLength += nl - start;
        this.discarding = false;
        start = nl + 1;
        this.limits.onOversized?.(this.discardedLength);
        nl = text.indexOf("\n", start);
        continue;
      }
      if (this.pendingLength + (nl - start) > max) {
        const length = this.pendingLength + (nl - start);
        this.pending = [];
        this.pendingLength = 0;
        start = nl + 1;
        this.limits.onOversized?.(length);
        nl = text.indexOf("\n", start);
        continue;
      }
      let line: string;
      if (this.pending.length === 0) {
        line = text.slice(start, nl);
      } else {
        this.pending.push(text.slice(start, nl));
        line = this.pending.join("");
        this.pending = [];
        this.pendingLength = 0;
      }
      start = nl + 1;
      this.emit(line);
      nl = text.indexOf("\n", start);
    }
    if (start < text.length) {
      const rest = text.length - start;
      if (this.discarding) this.discardedLength += rest;
      else if (this.pendingLength + rest > max) {
        this.discarding = true;
        this.discardedLength = this.pendingLength + rest;
        this.pending = [];
        this.pendingLength = 0;
      } else {
        this.pending.push(start === 0 ? text : text.slice(start));
        this.pendingLength += rest;
      }
    }
  }

  private emit(line: string): void {
    if (line.length > 0 && line.charCodeAt(line.length - 1) === 0x0d) line = line.slice(0, -1);
    if (line.length === 0) return;
    this.onLine(line);
  }
}


/**
 * Reads LF-delimited lines from a readable byte stream (typically `process.stdin`) with
 * {@link JsonlLineReader} semantics (LF only, one `\r` stripped, empty lines skipped, a final
 * unterminated line delivered at end of input).
 *
 * `onEnd` is called once when the input is over: on `end`, on `close` without `end`, or on
 * `error` (then with the error; a partial last line is dropped in that case, since it may be
 * truncated). Returns a detach function that removes the listeners without calling `onEnd`;
 * detaching does not pause or destroy the stream.
 */
export function attachJsonlReader(
  stream: NodeJS.ReadableStream,
  onLine: (line: string) => void,
  onEnd?: (error?: Error) => void,
  limits?: { maxLineLength?: number; onOversized?: (length: number) => void },
): () => void {
  const reader = new JsonlLineReader(onLine, limits);
  let done = false;
  const onData = (chunk: Buffer | string) => reader.push(chunk);
  const finish = (error?: Error) => {
    if (done) return;
    done = true;
    detach();
    if (!error) reader.end();
    onEnd?.(error);
  };
  const onStreamEnd = () => finish();
  const onClose = () => finish();
  const onError = (err: Error) => finish(err);
  const detach = () => {
    stream.off("data", onData);
    stream.off("end", onStreamEnd);
    stream.off("close", onClose);
    stream.off("error", onError);
  };
  stream.on("data", onData);
  stream.on("end", onStreamEnd);
  stream.on("close", onClose);
  stream.on("error", onError);
  return () => {
    done = true;
    detach();
  };
}
