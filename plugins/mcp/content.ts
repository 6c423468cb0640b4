/**
 * MCP tool results → tool result content.
 *
 *   text                      → text
 *   image                     → image (base64 data + mimeType)
 *   audio                     → a text note (models here take no audio)
 *   resource (embedded)       → text "[resource <uri>]\n<text>"; an image blob → image; other blobs → a note
 *   resource_link             → a text line naming the uri
 *   structuredContent only    → its JSON as text
 * `isError: true` throws an Error with the text, so the model sees a failed tool call.
 * Text beyond `maxChars` in total is cut with a note saying how much was left out.
 */
import type { AgentToolResult, ImageContent, TextContent } from "../../core/kernel/index.js";

/** The parts of an MCP CallToolResult used here (typed loosely: servers send what they send). */
export interface McpCallResult {
  content?: Array<Record<string, any>>;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: unknown;
  /** Very old servers answer {toolResult}. */
  toolResult?: unknown;
}

export interface McpResultDetails {
  server: string;
  tool: string;
  structuredContent?: unknown;
  truncated?: boolean;
}

export const DEFAULT_MAX_RESULT_CHARS = 50_000;

function describeBytes(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4);
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`;
}

export function convertContent(result: McpCallResult): (TextContent | ImageContent)[] {
  const out: (TextContent | ImageContent)[] = [];
  for (const block of result.content ?? []) {
    if (!block || typeof block !== "object") continue;
    switch (block.type) {
      case "text":
        out.push({ type: "text", text: String(block.text ?? "") });
        break;
      case "image":
        if (typeof block.data === "string") out.push({ type: "image", data: block.data, mimeType: String(block.mimeType ?? "image/png") });
        break;
      case "audio":
        out.push({ type: "text", text: `[audio ${block.mimeType ?? ""}, ${describeBytes(String(block.data ?? ""))}: not shown]` });
        break;
      case "resource": {
        const r = (block.resource ?? {}) as Record<string, unknown>;
        const uri = String(r.uri ?? "");
        const mime = typeof r.mimeType === "string" ? r.mimeType : undefined;
        if (typeof r.text === "string") out.push({ type: "text", text: `[resource ${uri}${mime ? ` (${mime})` : ""}]\n${r.text}` });
        else if (typeof r.blob === "string" && mime?.startsWith("image/")) out.push({ type: "image", data: r.blob, mimeType: mime });
        else if (typeof r.blob === "string") out.push({ type: "text", text: `[resource ${uri} (${mime ?? "binary"}, ${describeBytes(r.blob)}): binary content not shown]` });
        else out.push({ type: "text", text: `[resource ${uri}]` });
        break;
      }
      case "resource_link": {
        const name = block.name && block.name !== block.uri ? ` ${block.name}` : "";
        const desc = block.description ? ` — ${block.description}` : "";
        out.push({ type: "text", text: `[resource link${name}: ${block.uri}${desc}]` });
        break;
      }
      default:
        out.push({ type: "text", text: JSON.stringify(block) });
    }
  }
  if (!out.length && result.structuredContent !== undefined) out.push({ type: "text", text: JSON.stringify(result.structuredContent, null, 2) });
  if (!out.length && result.toolResult !== undefined) out.push({ type: "text", text: typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult) });
  return out;
}

/** Cut text blocks so their total stays within `maxChars`. */
export function limitText(content: (TextContent | ImageContent)[], maxChars: number): { content: (TextContent | ImageContent)[]; truncated: boolean } {
  let left = maxChars;
  let dropped = 0;
  const out: (TextContent | ImageContent)[] = [];
  for (const c of content) {
    if (c.type !== "text") {
      out.push(c);
      continue;
    }
    if (left <= 0) {
      dropped += c.text.length;
      continue;
    }
    if (c.text.length > left) {
      dropped += c.text.length - left;
      out.push({ type: "text", text: c.text.slice(0, left) });
      left = 0;
    } else {
      out.push(c);
      left -= c.text.length;
    }
  }
  if (!dropped) return { content, truncated: false };
  out.push({ type: "text", text: `\n[output truncated: ${dropped} more characters not shown (mcp.maxResultChars = ${maxChars})]` });
  return { content: out, truncated: true };
}

/** Turn an MCP result into a tool result; throws for `isError` results. */
export function toToolResult(server: string, tool: string, result: McpCallResult, maxChars = DEFAULT_MAX_RESULT_CHARS): AgentToolResult<McpResultDetails> {
  const converted = convertContent(result);
  if (result.isError) {
    const text = converted.filter((c): c is TextContent => c.type === "text").map((c) => c.text).join("\n").trim();
    const msg = text.length > maxChars ? text.slice(0, maxChars) + " …" : text;
    throw new Error(msg || `MCP tool "${tool}" on server "${server}" reported an error without a message`);
  }
  const { content, truncated } = limitText(converted.length ? converted : [{ type: "text", text: "(no output)" }], maxChars);
  const details: McpResultDetails = { server, tool };
  if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
  if (truncated) details.truncated = true;
  return { content, details };
}
