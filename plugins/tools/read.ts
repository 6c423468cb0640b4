/**
 * read: a text file (a window of lines, head-truncated) or an image (PNG, JPEG, GIF, WebP,
 * recognised by their first bytes) as image content.
 */
import { constants, statSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { Type, type Static } from "typebox";
import type { ImageContent, TextContent, ToolDefinition } from "../../core/kernel/index.js";
import { assertLocalAccess, describeFsError, readLocalFile, resolveReadPath } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateHead, type TruncationResult } from "./truncate.js";
import { readHead, selectFromFile, windowTruncation } from "./read-stream.js";

const readSchema = Type.Object({
  path: Type.String({ description: "File to read, absolute or relative to the working directory" }),
  offset: Type.Optional(Type.Number({ description: "First line to return, counting from 1" })),
  limit: Type.Optional(Type.Number({ description: "How many lines to return at most" })),
});

export type ReadToolInput = Static<typeof readSchema>;

export interface ReadToolDetails {
  truncation?: TruncationResult;
}

/** File access for the read tool; replace it to read from another machine (ssh, a container). */
export interface ReadOperations {
  readFile(absolutePath: string): Promise<Buffer>;
  /** Resolves when the file exists and is readable, rejects (with an errno code) otherwise. */
  access(absolutePath: string): Promise<void>;
  /** "image/png" etc. for a supported image, null/undefined otherwise. Without it (the default) the bytes read are sniffed. */
  detectImageMimeType?(absolutePath: string): Promise<string | null | undefined>;
}

export interface ReadToolOptions {
  /** Shrink big images before sending them (default true). Needs `resizeImage`; without it big images are omitted with a note. */
  autoResizeImages?: boolean;
  /**
   * Called for every image when autoResizeImages is on: the image to send (the same one when it
   * already fits), with an optional note for the model (e.g. how coordinates map back); null
   * when it cannot be made to fit.
   */
  resizeImage?: (image: { data: string; mimeType: string }) => Promise<{ data: string; mimeType: string; note?: string } | null>;
  operations?: ReadOperations;
}

/** Base64 payload above which an image is not sent inline (providers cap images near 5 MB). */
export const MAX_INLINE_IMAGE_BASE64 = 4.5 * 1024 * 1024;

/** The image type of `head` (the first bytes of a file), by magic number. */
export function sniffImageMimeType(head: Uint8Array): string | undefined {
  const b = head;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a)
    return "image/png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 && (b[4] === 0x37 || b[4] === 0x39) && b[5] === 0x61)
    return "image/gif";
  if (b.length >= 12 && b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50)
    return "image/webp";
  return undefined;
}

export function createLocalReadOperations(): ReadOperations {
  return {
    readFile: (p) => readLocalFile(p),
    access: (p) => assertLocalAccess(p, constants.R_OK),
  };
}

/** A NUL byte in the first 8 KB: the file is not text. */
function looksBinary(buf: Buffer): boolean {
  const head = buf.length > 8192 ? buf.subarray(0, 8192) : buf;
  return head.indexOf(0) >= 0;
}

const NOT_UTF8_NOTE =
  "[File is not valid UTF-8: undecodable bytes are shown as \uFFFD. Editing it with edit would replace them; use bash (e.g. iconv) to convert it first]";

/** Decode a text file: UTF-8 (BOM dropped), UTF-16 with a BOM; a note when bytes were not valid UTF-8. */
function decodeText(buf: Buffer): { text: string; note?: string } {
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) return { text: buf.subarray(2).toString("utf16le"), note: "[File is UTF-16 (little-endian); shown decoded]" };
  if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) {
    const body = buf.subarray(2, buf.length - (buf.length % 2));
    const swapped = Buffer.from(body).swap16();
    return { text: swapped.toString("utf16le"), note: "[File is UTF-16 (big-endian); shown decoded]" };
  }
  const start = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  const body = buf.subarray(start);
  if (isUtf8(body)) return { text: body.toString("utf8") };
  return { text: body.toString("utf8"), note: NOT_UTF8_NOTE };
}

interface Selection {
  /** Lines in the file (a final line end opens an empty last line, as split("\n") counts). */
  total: number;
  /** 0-based first line returned. */
  start: number;
  /** End (exclusive) when `limit` stopped the selection. */
  limitedEnd?: number;
  truncation: TruncationResult;
  /** Size of the first selected line. */
  firstLineBytes: number;
}

/** Files above this size are windowed: only the part that can be shown is decoded. */
const WINDOW_FROM_BYTES = 16 * 1024 * 1024;

function offsetError(offset: number | undefined, total: number): Error {
  return new Error(`Offset ${offset} is beyond end of file (${total} lines total)`);
}

/** Pick the lines to show from a decoded text. */
function selectFromText(text: string, offset: number | undefined, limit: number | undefined): Selection {
  const lines = text.split("\n");
  const total = lines.length;
  const start = offset !== undefined ? Math.max(0, offset - 1) : 0;
  if (start >= total) throw offsetError(offset, total);
  let selected: string;
  let limitedEnd: number | undefined;
  if (limit !== undefined) {
    limitedEnd = Math.min(start + limit, total);
    selected = lines.slice(start, limitedEnd).join("\n");
  } else {
    selected = start === 0 ? text : lines.slice(start).join("\n");
  }
  return { total, start, limitedEnd, truncation: truncateHead(selected), firstLineBytes: Buffer.byteLength(lines[start]!, "utf8") };
}

/**
 * The same from the bytes of a big UTF-8 file, decoding only what can be shown (at most
 * DEFAULT_MAX_LINES + 1 lines and DEFAULT_MAX_BYTES + 1 bytes).
 */
function selectFromBytes(body: Buffer, offset: number | undefined, limit: number | undefined): Selection {
  const start = offset !== undefined ? Math.max(0, offset - 1) : 0;
  // Byte offset where each interesting line starts; found in one scan for line ends.
  let total = 1;
  let startByte = start === 0 ? 0 : -1;
  const want = limit !== undefined ? start + limit : -1;
  let endByte = -1; // start of line `want`
  let windowLinesEnd = -1; // start of line start + DEFAULT_MAX_LINES + 1
  let secondLine = -1; // start of line start + 1
  for (let p = body.indexOf(10); p >= 0; p = body.indexOf(10, p + 1)) {
    const lineStart = p + 1;
    if (total === start) startByte = lineStart;
    if (total === start + 1) secondLine = lineStart;
    if (total === want) endByte = lineStart;
    if (total === start + DEFAULT_MAX_LINES + 1) windowLinesEnd = lineStart;
    total++;
  }
  if (start >= total) throw offsetError(offset, total);
  const limitedEnd = limit !== undefined ? Math.min(start + limit, total) : undefined;
  const selEnd = endByte >= 0 ? endByte - 1 : body.length; // exclusive, without the final line end
  // A window longer than the byte limit never shows its (possibly cut) last line, so cutting
  // one byte past the limit is safe.
  let windowEnd = Math.min(selEnd, startByte + DEFAULT_MAX_BYTES + 1);
  if (windowLinesEnd >= 0) windowEnd = Math.min(windowEnd, windowLinesEnd - 1);
  const window = body.toString("utf8", startByte, Math.max(startByte, windowEnd));
  const truncation = windowTruncation(window, (limitedEnd ?? total) - start, Math.max(0, selEnd - startByte));
  const firstLineBytes = (secondLine >= 0 ? secondLine - 1 : body.length) - startByte;
  return { total, start, limitedEnd, truncation, firstLineBytes };
}

/** Decode and select: UTF-16 (with a BOM) and small files are decoded whole; big UTF-8 files are windowed. */
function selectLines(buf: Buffer, offset: number | undefined, limit: number | undefined): { selection: Selection; note?: string } {
  const utf16 = buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff));
  if (utf16 || buf.length <= WINDOW_FROM_BYTES) {
    const { text, note } = decodeText(buf);
    return { selection: selectFromText(text, offset, limit), note };
  }
  const body = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? buf.subarray(3) : buf;
  const note = isUtf8(body) ? undefined : NOT_UTF8_NOTE;
  return { selection: selectFromBytes(body, offset, limit), note };
}

function aborted(): Error {
  return new Error("Operation aborted");
}

function positiveInt(name: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${name} must be a number, got ${JSON.stringify(v)}`);
  return Math.floor(v);
}

export function createReadToolDefinition(cwd: string, options: ReadToolOptions = {}): ToolDefinition<ReadToolInput, ReadToolDetails | undefined> {
  const ops = options.operations ?? createLocalReadOperations();
  const autoResize = options.autoResizeImages ?? true;
  return {
    name: "read",
    label: "read",
    description:
      `Read a file. Text comes back as lines (at most ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB per call, whichever comes first; ` +
      `page through long files with offset and limit). PNG, JPEG, GIF and WebP images come back as images.`,
    promptSnippet: "Read a text file or an image",
    promptGuidelines: ["Read files with the read tool rather than cat, head or sed in bash."],
    parameters: readSchema,
    async execute(_id, params, signal, _onUpdate, ctx) {
      const { path } = params ?? ({} as ReadToolInput);
      if (typeof path !== "string" || path.trim() === "") throw new Error("read needs a path (a non-empty string)");
      const offset = positiveInt("offset", params.offset);
      const limit = positiveInt("limit", params.limit);
      if (limit !== undefined && limit < 1) throw new Error(`limit must be at least 1, got ${params.limit}`);
      if (signal?.aborted) throw aborted();
      const abs = resolveReadPath(path, cwd);

      try {
        await ops.access(abs);
      } catch (e) {
        throw new Error(describeFsError(e, path));
      }
      if (signal?.aborted) throw aborted();

      let mimeType: string | null | undefined;
      if (ops.detectImageMimeType) {
        try {
          mimeType = await ops.detectImageMimeType(abs);
        } catch (e) {
          throw new Error(describeFsError(e, path));
        }
      }
      // ---- big local files are streamed: memory independent of the size, > 2 GiB readable ----
      if (!options.operations) {
        let size = 0;
        try {
          size = statSync(abs).size;
        } catch (e) {
          throw new Error(describeFsError(e, path));
        }
        if (size > WINDOW_FROM_BYTES) {
          const head = await readHead(abs, 8192);
          const utf16 = head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff));
          const image = mimeType ?? sniffImageMimeType(head.subarray(0, 16));
          if (image && !(autoResize && options.resizeImage)) {
            return {
              content: [{ type: "text", text: `Read image file [${image}]\n[Image omitted: ${formatSize(size)} is over the ${formatSize(MAX_INLINE_IMAGE_BASE64 * 0.75)} inline image limit]` }],
              details: undefined,
            };
          }
          if (!image && !utf16) {
            if (looksBinary(head)) {
              throw new Error(
                `${path} is a binary file (${formatSize(size)}), not text or a supported image (PNG, JPEG, GIF, WebP). ` +
                  `Inspect it with bash instead (e.g. file, xxd | head, strings).`,
              );
            }
            const sel = await selectFromFile(abs, offset, limit, offsetError, signal);
            return renderSelection(path, sel, sel.notUtf8 ? NOT_UTF8_NOTE : undefined);
          }
        }
      }
      // ---- end streaming ----
      let buffer: Buffer;
      try {
        buffer = await ops.readFile(abs);
      } catch (e) {
        throw new Error(describeFsError(e, path));
      }
      if (signal?.aborted) throw aborted();
      if (!ops.detectImageMimeType) mimeType = sniffImageMimeType(buffer.subarray(0, 16));

      const model = ctx?.model as { input?: string[] } | undefined;
      const noVision =
        model && Array.isArray(model.input) && !model.input.includes("image")
          ? "[The current model does not accept images; the image will not be sent to it.]"
          : undefined;

      if (mimeType) {
        const notes = [`Read image file [${mimeType}]`];
        const encodedSize = Math.ceil(buffer.length / 3) * 4;
        if (encodedSize >= MAX_INLINE_IMAGE_BASE64 && !(autoResize && options.resizeImage)) {
          if (noVision) notes.push(noVision);
          notes.push(`[Image omitted: ${formatSize(buffer.length)} is over the ${formatSize(MAX_INLINE_IMAGE_BASE64 * 0.75)} inline image limit]`);
          return { content: [{ type: "text", text: notes.join("\n") }], details: undefined };
        }
        let image = { data: buffer.toString("base64"), mimeType };
        if (autoResize && options.resizeImage) {
          const fitted = await options.resizeImage(image);
          if (fitted) {
            const changed = fitted.data !== image.data;
            image = { data: fitted.data, mimeType: fitted.mimeType };
            if (fitted.note) notes.push(fitted.note);
            else if (changed) notes.push(`[Image was resized to fit the inline limit]`);
          }
        }
        if (noVision) notes.push(noVision);
        if (image.data.length >= MAX_INLINE_IMAGE_BASE64) {
          notes.push(`[Image omitted: ${formatSize(buffer.length)} is over the ${formatSize(MAX_INLINE_IMAGE_BASE64 * 0.75)} inline image limit]`);
          return { content: [{ type: "text", text: notes.join("\n") }], details: undefined };
        }
        const content: (TextContent | ImageContent)[] = [
          { type: "text", text: notes.join("\n") },
          { type: "image", data: image.data, mimeType: image.mimeType },
        ];
        return { content, details: undefined };
      }

      if (looksBinary(buffer) && !(buffer[0] === 0xff && buffer[1] === 0xfe) && !(buffer[0] === 0xfe && buffer[1] === 0xff)) {
        throw new Error(
          `${path} is a binary file (${formatSize(buffer.length)}), not text or a supported image (PNG, JPEG, GIF, WebP). ` +
            `Inspect it with bash instead (e.g. file, xxd | head, strings).`,
        );
      }

      const { note, selection: sel } = selectLines(buffer, offset, limit);
      return renderSelection(path, sel, note);
    },
  };
}

/** The tool result for a selection of lines. */
function renderSelection(path: string, sel: Selection, note: string | undefined): { content: TextContent[]; details: ReadToolDetails | undefined } {
  const { total, start, limitedEnd, truncation } = sel;
  const first = start + 1;
  let out: string;
  let details: ReadToolDetails | undefined;
  if (truncation.firstLineExceedsLimit) {
    const size = formatSize(sel.firstLineBytes);
    const shellPath = /^[\w@%+=:,./~-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
    out = `[Line ${first} is ${size}, over the ${formatSize(DEFAULT_MAX_BYTES)} limit. Read part of it with bash: sed -n '${first}p' ${shellPath} | head -c ${DEFAULT_MAX_BYTES}]`;
    details = { truncation };
  } else if (truncation.truncated) {
    const last = first + truncation.outputLines - 1;
    const why = truncation.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
    out = `${truncation.content}\n\n[Showing lines ${first}-${last} of ${total}${why}. Use offset=${last + 1} to continue.]`;
    details = { truncation };
  } else if (limitedEnd !== undefined && limitedEnd < total) {
    out = `${truncation.content}\n\n[${total - limitedEnd} more lines in file. Use offset=${limitedEnd + 1} to continue.]`;
  } else {
    out = truncation.content;
    if (out === "" && total === 1) out = "(empty file)";
  }
  if (note) out = `${note}\n${out}`;
  return { content: [{ type: "text", text: out }], details };
}

/** The read tool (same object shape as createReadToolDefinition; kept for pi compatibility). */
export function createReadTool(cwd: string, options?: ReadToolOptions): ToolDefinition<ReadToolInput, ReadToolDetails | undefined> {
  return createReadToolDefinition(cwd, options);
}
