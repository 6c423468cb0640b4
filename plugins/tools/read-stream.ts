/**
 * Reading a window of lines from a big file without holding the file (security
 * hardening): the file is scanned in 1 MiB chunks with one buffer, counting lines and keeping only
 * the bytes that can be shown (DEFAULT_MAX_BYTES + 1 at most). Memory does not depend on the
 * file's size, and files over 2 GiB (the largest Buffer Node reads at once) work with any
 * offset and limit.
 */
import { open } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncateHead, type TruncationResult } from "./truncate.js";

const CHUNK = 1024 * 1024;

export interface StreamSelection {
  total: number;
  start: number;
  limitedEnd?: number;
  truncation: TruncationResult;
  firstLineBytes: number;
  /** The shown window is not valid UTF-8. */
  notUtf8: boolean;
}

/** The first `n` bytes of a file. */
export async function readHead(path: string, n: number): Promise<Buffer> {
  const fh = await open(path, "r");
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Same selection as the in-memory reader, from a file streamed once. `offsetError` builds the past-the-end error. */
export async function selectFromFile(
  path: string,
  offset: number | undefined,
  limit: number | undefined,
  offsetError: (offset: number | undefined, total: number) => Error,
  signal?: AbortSignal,
): Promise<StreamSelection> {
  const start = offset !== undefined ? Math.max(0, offset - 1) : 0;
  const want = limit !== undefined ? start + limit : -1;
  const fh = await open(path, "r");
  try {
    const buf = Buffer.alloc(CHUNK);
    // Skip a UTF-8 BOM.
    const head = await fh.read(buf, 0, 3, 0);
    let pos = head.bytesRead === 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
    const base = pos;
    let total = 1;
    let startByte = start === 0 ? base : -1;
    let secondLine = -1;
    let endByte = -1;
    let windowLinesEnd = -1;
    const cap = DEFAULT_MAX_BYTES + 1;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let fileEnd = base;
    for (;;) {
      if (signal?.aborted) throw new Error("Operation aborted");
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      // Keep window bytes (from startByte, at most `cap`) before scanning, using this chunk's offsets.
      const scanFrom = pos;
      for (let p = chunk.indexOf(10); p >= 0; p = chunk.indexOf(10, p + 1)) {
        const lineStart = scanFrom + p + 1;
        if (total === start) startByte = lineStart;
        if (total === start + 1) secondLine = lineStart;
        if (total === want) endByte = lineStart;
        if (total === start + DEFAULT_MAX_LINES + 1) windowLinesEnd = lineStart;
        total++;
      }
      if (startByte >= 0 && keptBytes < cap) {
        const from = Math.max(startByte, scanFrom) - scanFrom;
        if (from < bytesRead) {
          const piece = chunk.subarray(from, Math.min(bytesRead, from + (cap - keptBytes)));
          kept.push(Buffer.from(piece));
          keptBytes += piece.length;
        }
      }
      pos += bytesRead;
      fileEnd = pos;
    }
    if (start >= total) throw offsetError(offset, total);
    const limitedEnd = limit !== undefined ? Math.min(start + limit, total) : undefined;
    const selEnd = endByte >= 0 ? endByte - 1 : fileEnd;
    let windowEnd = Math.min(selEnd, startByte + cap);
    if (windowLinesEnd >= 0) windowEnd = Math.min(windowEnd, windowLinesEnd - 1);
    const windowBytes = Buffer.concat(kept).subarray(0, Math.max(0, windowEnd - startByte));
    const truncation = windowTruncation(windowBytes.toString("utf8"), (limitedEnd ?? total) - start, Math.max(0, selEnd - startByte));
    const firstLineBytes = (secondLine >= 0 ? secondLine - 1 : fileEnd) - startByte;
    // A window cut inside a character is not a sign of a non-UTF-8 file: check whole lines only.
    const lastNl = windowBytes.lastIndexOf(10);
    const whole = windowEnd >= selEnd ? windowBytes : windowBytes.subarray(0, lastNl >= 0 ? lastNl : 0);
    return { total, start, limitedEnd, truncation, firstLineBytes, notUtf8: !isUtf8(whole) };
  } finally {
    await fh.close();
  }
}

/**
 * The truncation of a selection (`selLines` lines, `selBytes` bytes) from the text window cut out
 * of it: what truncateHead keeps of the window, counted against the whole selection. Shared by
 * the in-memory and the streaming read paths.
 */
export function windowTruncation(window: string, selLines: number, selBytes: number): TruncationResult {
  const t = truncateHead(window);
  const truncated = t.truncated || selLines > t.outputLines;
  return {
    ...t,
    truncated,
    truncatedBy: truncated ? (t.truncatedBy ?? (selBytes > DEFAULT_MAX_BYTES ? "bytes" : "lines")) : null,
    totalLines: selLines,
    totalBytes: selBytes,
  };
}
