/**
 * Text both drawings of the conversation compute — the chat's own blocks (chat.ts, footer.ts,
 * renderers.ts) and the pi-tui components extensions build (pi-components/), which the package
 * helpers re-export: token counts, a read's line range, a coloured edit diff, key text and
 * hints, text cut to a number of wrapped lines, and the parts of a `/skill:name` message.
 */
import { wrapText } from "./text.js";
import type { Theme } from "./theme.js";

/** Token counts as pi's footer writes them: 999, 1.2k, 45k, 1.5M, 12M. */
export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1_000_000) return `${Math.round(count / 1000)}k`;
  if (count < 10_000_000) return `${(count / 1_000_000).toFixed(1)}M`;
  return `${Math.round(count / 1_000_000)}M`;
}

/** ":start" or ":start-end" for a read's offset/limit ("" when neither is a positive line number). */
export function formatReadLineRange(offset: unknown, limit: unknown): string {
  const line = (v: unknown): number | undefined => {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    return Number.isInteger(n) && n >= 1 ? n : undefined;
  };
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : line(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = line(limit);
  return count === undefined ? "" : `:${start}-${start + count - 1}`;
}

/** The span where two lines differ: [common prefix length, common suffix length]. */
function changedSpan(x: string, y: string): [number, number] {
  let p = 0;
  while (p < x.length && p < y.length && x[p] === y[p]) p++;
  let s = 0;
  while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
  return [p, s];
}

/**
 * The lines of a diff in the edit tool's format (`+`/`-`/space prefixed lines) coloured: added
 * and removed lines in the diff colours, the rest in the context colour; a one-line replacement
 * (one `-` line followed by one `+` line) gets its changed characters in inverse.
 */
export function colorDiffLines(diffText: string, t: Theme): string[] {
  const src = diffText.split("\n");
  const out: string[] = [];
  for (let i = 0; i < src.length; i++) {
    const line = src[i]!;
    const next = src[i + 1];
    const single = line.startsWith("-") && next?.startsWith("+") && !src[i + 2]?.startsWith("+") && !src[i - 1]?.startsWith("-");
    if (single) {
      const [p, s] = changedSpan(line.slice(1), next!.slice(1));
      const mark = (l: string, token: string) => {
        const body = l.slice(1);
        return t.fg(token, l[0] + body.slice(0, p) + t.inverse(body.slice(p, body.length - s)) + body.slice(body.length - s));
      };
      out.push(mark(line, "toolDiffRemoved"), mark(next!, "toolDiffAdded"));
      i++;
    } else if (line.startsWith("+")) out.push(t.fg("toolDiffAdded", line));
    else if (line.startsWith("-")) out.push(t.fg("toolDiffRemoved", line));
    else out.push(t.fg("toolDiffContext", line));
  }
  return out;
}

/** A hint for a key: the key text dim, then the description muted ("ctrl+o to expand"). */
export function formatKeyHint(t: Theme, keys: string, description: string): string {
  return t.fg("dim", keys) + t.fg("muted", ` ${description}`);
}

/** An action's keys as pi writes them for extensions: each as bound ("ctrl+o"), joined by "/"; "alt" reads "option" on macOS. */
export function formatKeyText(keys: readonly string[], platform: string = process.platform): string {
  return keys.map((k) => k.split("+").map((p) => (platform === "darwin" && p.toLowerCase() === "alt" ? "option" : p)).join("+")).join("/");
}

/** The keyText/keyHint pair pi hands an extension's renderers, for the keys `keysOf` gives an action. */
export function rendererKeyHints(t: Theme, keysOf: (action: string) => readonly string[]): { keyText(action: string): string; keyHint(action: string, description: string): string } {
  const keyText = (action: string) => formatKeyText(keysOf(action));
  return { keyText, keyHint: (action, description) => formatKeyHint(t, keyText(action), description) };
}

/** At most `max` of `lines`, the first ones ("start") or the last ones ("end"), and how many were left out. */
export function cutLines<T>(lines: readonly T[], max: number, keep: "start" | "end"): { kept: T[]; skipped: number } {
  const n = Math.max(0, max);
  if (lines.length <= n) return { kept: [...lines], skipped: 0 };
  const kept = keep === "start" ? lines.slice(0, n) : lines.slice(lines.length - n);
  return { kept, skipped: lines.length - kept.length };
}

export interface VisualTruncateResult {
  visualLines: readonly string[];
  skippedCount: number;
}

/** `text` wrapped at `width` (less 2 × paddingX) and cut to `maxVisualLines`, keeping the end (default) or the start. */
export function truncateToVisualLines(text: string, maxVisualLines: number, width: number, paddingX = 0, keep: "start" | "end" = "end"): VisualTruncateResult {
  if (!text) return { visualLines: [], skippedCount: 0 };
  const { kept, skipped } = cutLines(wrapText(text, Math.max(1, width - 2 * paddingX)), maxVisualLines, keep);
  return { visualLines: kept, skippedCount: skipped };
}

export interface ParsedSkillBlock {
  name: string;
  location: string;
  content: string;
  userMessage: string | undefined;
}

/** The parts of an expanded `/skill:name` message (`<skill name=… location=…>…</skill>` + the user's text), or null. */
export function parseSkillBlock(text: string): ParsedSkillBlock | null {
  const m = /^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n<\/skill>(?:\n\n([\s\S]+))?$/.exec(text);
  if (!m) return null;
  return { name: m[1]!, location: m[2]!, content: m[3]!, userMessage: m[4]?.trim() || undefined };
}

/** Where markdown is drawn, as pi's markdown transformers name it (their `messageTypes`). */
export type MarkdownSurface = "user" | "assistant" | "assistant-thinking" | "custom" | "summary" | "changelog";
/** What a markdown transformer is told besides the text. */
export interface MarkdownTransformContext {
  messageType: MarkdownSurface;
  isStreaming: boolean;
  /** Terminal columns available to the transformed markdown. */
  availableWidth: number;
  /** The session entry's id and ISO timestamp when drawn from a persisted entry. */
  messageId?: string;
  timestamp?: string;
}
export type MarkdownTransformFn = (markdown: string, context: MarkdownTransformContext) => unknown;

const DEFAULT_SURFACES: ReadonlySet<string> = new Set(["user", "assistant", "assistant-thinking"]);

/** The surfaces a transformer registered with `options` runs on (default: user, assistant and thinking text). */
export function transformerSurfaces(options: unknown): ReadonlySet<string> {
  const types = (options as { messageTypes?: unknown } | undefined)?.messageTypes;
  return Array.isArray(types) ? new Set(types.filter((t): t is string => typeof t === "string")) : DEFAULT_SURFACES;
}

/**
 * The markdown after each transformer in turn; one that throws or returns something other than a
 * string leaves the text as it was and the next one goes on.
 */
export function applyMarkdownTransformers(markdown: string, context: MarkdownTransformContext, transformers: readonly MarkdownTransformFn[]): string {
  let text = markdown;
  for (const t of transformers) {
    try {
      const next = t(text, context);
      if (typeof next === "string") text = next;
    } catch {
      /* keeps the text so far */
    }
  }
  return text;
}
