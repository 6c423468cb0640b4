/**
 * Output limits shared by the tools.
 *
 * Two independent limits apply, a line count and a byte count; the first one reached wins.
 * `truncateHead` keeps the start (file reads, listings), `truncateTail` keeps the end
 * (command output, where the last lines carry the errors). Neither returns a partial line,
 * except `truncateTail` when the very last line alone is over the byte limit.
 */

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
/** Longest line grep prints, in characters. */
export const GREP_MAX_LINE_LENGTH = 500;

export interface TruncationOptions {
  maxLines?: number;
  maxBytes?: number;
}

export interface TruncationResult {
  content: string;
  truncated: boolean;
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** truncateTail only: the one line kept is the end of a longer line. */
  lastLinePartial: boolean;
  /** truncateHead only: the first line alone is over the byte limit, nothing is returned. */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

/** "512B", "1.5KB", "10.0MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

function untouched(content: string, totalLines: number, totalBytes: number, maxLines: number, maxBytes: number): TruncationResult {
  return {
    content,
    truncated: false,
    truncatedBy: null,
    totalLines,
    totalBytes,
    outputLines: totalLines,
    outputBytes: totalBytes,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** Keep the first lines that fit both limits. */
export function truncateHead(content: string, options: TruncationOptions = {}): TruncationResult {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = utf8Length(content);
  const lines = content.split("\n");
  const totalLines = lines.length;
  if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(content, totalLines, totalBytes, maxLines, maxBytes);

  let used = 0;
  let kept = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  for (; kept < lines.length && kept < maxLines; kept++) {
    const cost = utf8Length(lines[kept]!) + (kept > 0 ? 1 : 0);
    if (used + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    used += cost;
  }
  if (kept === 0) {
    return {
      content: "",
      truncated: true,
      truncatedBy: "bytes",
      totalLines,
      totalBytes,
      outputLines: 0,
      outputBytes: 0,
      lastLinePartial: false,
      firstLineExceedsLimit: true,
      maxLines,
      maxBytes,
    };
  }
  const out = lines.slice(0, kept).join("\n");
  return {
    content: out,
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines: kept,
    outputBytes: used,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** The last `maxBytes` bytes of `s`, starting on a character boundary. */
export function tailBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= maxBytes) return s;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf8");
}

/** Keep the last lines that fit both limits. */
export function truncateTail(content: string, options: TruncationOptions = {}): TruncationResult {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = utf8Length(content);
  const lines = content.split("\n");
  const totalLines = lines.length;
  if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(content, totalLines, totalBytes, maxLines, maxBytes);

  let used = 0;
  let first = lines.length; // index of the first kept line
  let truncatedBy: "lines" | "bytes" = "lines";
  let partial: string | undefined;
  while (first > 0 && lines.length - first < maxLines) {
    const line = lines[first - 1]!;
    const cost = utf8Length(line) + (first < lines.length ? 1 : 0);
    if (used + cost > maxBytes) {
      truncatedBy = "bytes";
      if (first === lines.length) {
        partial = tailBytes(line, maxBytes);
        used = utf8Length(partial);
      }
      break;
    }
    used += cost;
    first--;
  }
  if (partial !== undefined) {
    return {
      content: partial,
      truncated: true,
      truncatedBy: "bytes",
      totalLines,
      totalBytes,
      outputLines: 1,
      outputBytes: used,
      lastLinePartial: true,
      firstLineExceedsLimit: false,
      maxLines,
      maxBytes,
    };
  }
  const out = lines.slice(first).join("\n");
  return {
    content: out,
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines: lines.length - first,
    outputBytes: used,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** Cut one line to `maxChars` characters, marking the cut. */
export function truncateLine(line: string, maxChars: number = GREP_MAX_LINE_LENGTH): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

// eslint-disable-next-line no-control-regex
const TERMINAL_NOISE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Drop terminal colour codes and control characters (tab, newline and carriage return stay). */
export function sanitizeOutput(text: string): string {
  return text.replace(TERMINAL_NOISE, "");
}
