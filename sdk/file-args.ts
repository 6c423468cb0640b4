/**
 * `@file` arguments and piped stdin.
 * Text files become `<file name="…">…</file>` blocks in front of the first message; images
 * (by magic bytes) are attached; a missing or unreadable file is an error naming it.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { ImageContent } from "../core/kernel/types.js";
import { expandHome } from "../core/kernel/config.js";

export function detectImageMime(buf: Buffer): string | undefined {
  if (buf.length >= 8 && buf[0] === 0x89 && buf[1] === 0x50 && buf[2] === 0x4e && buf[3] === 0x47) return "image/png";
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return "image/jpeg";
  if (buf.length >= 6 && buf.subarray(0, 6).toString("ascii").startsWith("GIF8")) return "image/gif";
  if (buf.length >= 12 && buf.subarray(0, 4).toString("ascii") === "RIFF" && buf.subarray(8, 12).toString("ascii") === "WEBP") return "image/webp";
  return undefined;
}

function fileArgError(message: string): Error {
  const e = new Error(message) as Error & { code: string };
  e.code = "PI_FILE_ARG";
  return e;
}

/**
 * `check` (the permission gate's path rules) returns why a file may not be read;
 * such an argument is an error naming the file and the reason.
 */
export async function processFileArgs(
  args: string[],
  cwd: string,
  check?: (path: string) => string | undefined,
  /** images.autoResize: fits an image for the model (null: it cannot be sent); its note goes in the `<file>` tag. */
  fitImage?: (image: { data: string; mimeType: string }) => Promise<{ data: string; mimeType: string; note?: string } | null>,
): Promise<{ messages: string[]; images: ImageContent[]; prefix: string }> {
  const messages: string[] = [];
  const images: ImageContent[] = [];
  let prefix = "";
  for (const a of args) {
    if (!a.startsWith("@") || a.length < 2) {
      messages.push(a);
      continue;
    }
    const path = resolve(cwd, expandHome(a.slice(1)));
    const refused = check?.(path);
    if (refused) throw fileArgError(`@file argument ${a}: ${refused}`);
    let buf: Buffer;
    try {
      if (statSync(path).isDirectory()) throw fileArgError(`@file argument ${a}: ${path} is a directory`);
      buf = readFileSync(path);
    } catch (e) {
      if ((e as { code?: string }).code === "PI_FILE_ARG") throw e;
      const code = (e as { code?: string }).code;
      throw fileArgError(`@file argument ${a}: ${code === "ENOENT" ? "file not found" : "cannot read"} (${path})`);
    }
    if (buf.length === 0) continue;
    const mime = detectImageMime(buf);
    if (mime) {
      const image = { data: buf.toString("base64"), mimeType: mime };
      const fitted = fitImage ? await fitImage(image) : image;
      if (!fitted) {
        prefix += `<file name="${path}">[image omitted: it could not be made small enough for the model]</file>\n`;
        continue;
      }
      images.push({ type: "image", data: fitted.data, mimeType: fitted.mimeType });
      prefix += `<file name="${path}">${"note" in fitted && fitted.note ? fitted.note : ""}</file>\n`;
    } else {
      prefix += `<file name="${path}">\n${buf.toString("utf8")}\n</file>\n`;
    }
  }
  return { messages, images, prefix };
}

/** Read all of a piped stdin (trimmed); "" when there is nothing. */
export function readPipedStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    stdin.on("data", (c: Buffer | string) => chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c)));
    stdin.on("end", () => resolvePromise(Buffer.concat(chunks).toString("utf8").trim()));
    stdin.on("error", () => resolvePromise(Buffer.concat(chunks).toString("utf8").trim()));
  });
}

/** A flag value that may name a file (--system-prompt file.md): the file's text, else the value. */
export function readTextOrFile(value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  const p = resolve(cwd, expandHome(value));
  try {
    if (value.length < 4096 && existsSync(p) && statSync(p).isFile()) return readFileSync(p, "utf8");
  } catch {
    /* not a file */
  }
  return value;
}
