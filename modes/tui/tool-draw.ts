/**
 * How a built-in tool call looks when its definition draws nothing itself: the title line per
 * tool (bash's `$ command`, a read's path and line range, grep's pattern…) and the output shaped
 * per tool (bash's last lines, an edit's coloured diff, highlighted file text), cut to a few lines
 * with a hint to expand. The chat's tool blocks and the pi-tui ToolExecutionComponent both draw
 * through it.
 */
import type { AgentToolResult } from "../../core/kernel/index.js";
import { colorDiffLines, cutLines, formatReadLineRange } from "./format.js";
import { highlightCode, languageFromPath } from "./highlight.js";
import type { Theme } from "./theme.js";
import { homePath, sanitize, truncate, wrapText } from "./text.js";

/** The tools drawn by name below (any other tool's call shows its arguments as JSON). */
export const BUILT_IN_TOOLS: ReadonlySet<string> = new Set(["bash", "read", "edit", "write", "grep", "find", "ls"]);

export type ToolStatus = "pending" | "running" | "done" | "error";

/** What the drawing reads of a tool call: the result is the final one, else the latest partial one. */
export interface ToolView {
  name: string;
  args: Record<string, unknown>;
  status: ToolStatus;
  result: AgentToolResult | undefined;
}

/** How a tool draws itself (a tool definition's, or an extension's registered renderers). */
export interface ToolRenderers {
  /** "self": the renderers draw their own frame (no box, no background). */
  renderShell?: "default" | "self";
  renderCall?: (...a: any[]) => unknown;
  renderResult?: (...a: any[]) => unknown;
}

/** What pi hands a tool's renderCall/renderResult besides the arguments (or result) and the theme. */
export interface ToolRenderContext<C = unknown> {
  args: unknown;
  toolCallId: string;
  invalidate(): void;
  /** What the same renderer returned last time (to update rather than rebuild). */
  lastComponent: C | undefined;
  state: Record<string, unknown>;
  cwd: string;
  executionStarted: boolean;
  argsComplete: boolean;
  isPartial: boolean;
  expanded: boolean;
  showImages: boolean;
  isError: boolean;
  /** How long the call ran, once it has finished. */
  durationMs: number | undefined;
  outputPad: number;
  keyText(action: string): string;
  keyHint(action: string, description: string): string;
}

export interface ToolDrawEnv {
  theme: Theme;
  cwd: string;
  /** Tool output shown in full (the expand toggle). */
  expanded: boolean;
  /** The key that toggles it, as the hint writes it. */
  expandKey: string;
}

function resultText(r: AgentToolResult | undefined): string {
  if (!r) return "";
  return (r.content ?? [])
    .map((c) => (c.type === "text" ? c.text : c.type === "image" ? `[image: ${(c as { mimeType?: string }).mimeType ?? "image"}]` : ""))
    .filter(Boolean)
    .join("\n");
}

/** A tool's path argument relative to the working folder when inside it, else from `~` when under home. */
function shortPath(p: unknown, cwd: string): string {
  const s = typeof p === "string" ? p : "";
  if (cwd && s.startsWith(cwd + "/")) return s.slice(cwd.length + 1);
  return homePath(s);
}

const MARKS: Record<ToolStatus, [token: string, mark: string, bg: string]> = {
  pending: ["muted", "○", "toolPendingBg"],
  running: ["warning", "●", "toolPendingBg"],
  done: ["success", "✓", "toolSuccessBg"],
  error: ["error", "✗", "toolErrorBg"],
};

/** The mark of a tool call's (or a `!command`'s) status: ○ pending, ● running, ✓ done, ✗ failed. */
export function statusIcon(status: ToolStatus, t: Theme): string {
  return t.fg(MARKS[status][0], MARKS[status][1]);
}

/** The background token of a tool call's box for its status. */
export function statusBg(status: ToolStatus): string {
  return MARKS[status][2];
}

/** The title line of a tool call: status mark, tool name, and per built-in tool its command, path, line range or pattern (the arguments as JSON for others). */
export function toolCallLines(tool: ToolView, width: number, env: ToolDrawEnv): string[] {
  const t = env.theme;
  const a = tool.args;
  const title = t.bold(t.fg("toolTitle", tool.name));
  let detail = "";
  switch (tool.name) {
    case "bash":
      detail = t.fg("bashMode", "$ ") + sanitize(String(a.command ?? ""), false);
      break;
    case "read": {
      detail = t.fg("accent", shortPath(a.path, env.cwd));
      const range = formatReadLineRange(a.offset, a.limit);
      if (range) detail += t.fg("muted", range);
      break;
    }
    case "edit":
    case "write": {
      detail = t.fg("accent", shortPath(a.path, env.cwd));
      if (tool.name === "write" && typeof a.content === "string") detail += t.fg("muted", ` (${lineCount(a.content)} lines)`);
      break;
    }
    case "grep":
      detail = t.fg("accent", `/${String(a.pattern ?? "")}/`) + (a.path ? t.fg("muted", ` in ${shortPath(a.path, env.cwd)}`) : "") + (a.glob ? t.fg("muted", ` (${String(a.glob)})`) : "");
      break;
    case "find":
      detail = t.fg("accent", String(a.pattern ?? "")) + (a.path ? t.fg("muted", ` in ${shortPath(a.path, env.cwd)}`) : "");
      break;
    case "ls":
      detail = t.fg("accent", shortPath(a.path ?? ".", env.cwd) || ".");
      break;
    default: {
      const json = Object.keys(a).length ? JSON.stringify(a) : "";
      detail = t.fg("muted", json);
    }
  }
  const line = `${statusIcon(tool.status, t)} ${title} ${detail}`;
  if (env.expanded && tool.name === "bash") return wrapText(line, width);
  return [truncate(line, width)];
}

/** The output of a tool call shaped per built-in tool: bash's last lines, an edit's coloured diff, highlighted file text, errors in red; cut with a hint to expand. */
export function toolResultLines(tool: ToolView, width: number, env: ToolDrawEnv): string[] {
  const t = env.theme;
  const res = tool.result;
  const expand = env.expanded;
  const hint = t.fg("dim", `(${env.expandKey} to expand)`);
  if (tool.status === "error") {
    const text = sanitize(resultText(res) || "failed");
    return limitLines(wrapText(text, width).map((l) => t.fg("error", l)), expand ? 200 : 10, "head", t, hint, width);
  }
  if (!res) {
    if (tool.name === "edit" && Array.isArray(tool.args.edits) && tool.status === "pending") return [t.fg("muted", `${tool.args.edits.length} replacement(s)…`)];
    return [];
  }
  const details = (res.details ?? {}) as Record<string, unknown>;
  const text = sanitize(resultText(res)).replace(/\n+$/, "");
  switch (tool.name) {
    case "bash": {
      if (!text) return tool.status === "done" ? [t.fg("dim", "(no output)")] : [];
      const lines = wrapText(text, width).map((l) => t.fg("toolOutput", l));
      const out = limitLines(lines, expand ? 500 : 5, "tail", t, hint, width); // pi 1.6's last five
      if (details.fullOutputPath && tool.status === "done") out.push(t.fg("dim", truncate(`full output: ${String(details.fullOutputPath)}`, width)));
      return out;
    }
    case "edit": {
      const diff = typeof details.diff === "string" ? details.diff : "";
      if (!diff) return text ? wrapText(text, width).map((l) => t.fg("toolOutput", l)) : [];
      const lines = colorDiffLines(sanitize(diff), t).flatMap((l) => wrapText(l, width));
      return limitLines(lines, expand ? 1000 : 24, "head", t, hint, width);
    }
    case "read": {
      // As pi 1.6: a file that was read is not shown until the output is expanded.
      if (!expand) return [];
      const lang = languageFromPath(String(tool.args.path ?? ""));
      const hl = lang ? highlightCode(text, lang, t) : text.split("\n").map((l) => t.fg("toolOutput", l));
      const lines = hl.flatMap((l) => wrapText(l, width));
      return limitLines(lines, expand ? 1000 : 10, "head", t, hint, width);
    }
    case "write": {
      const content = typeof tool.args.content === "string" ? sanitize(tool.args.content).replace(/\n$/, "") : ""; // a final newline ends the last line
      const lang = languageFromPath(String(tool.args.path ?? ""));
      const hl = content ? (lang ? highlightCode(content, lang, t) : content.split("\n")) : [];
      const lines = hl.flatMap((l) => wrapText(l, width));
      const out = limitLines(lines, expand ? 1000 : 10, "head", t, hint, width);
      if (tool.status === "done" && text && !/^Successfully|^Wrote/i.test(text)) out.push(t.fg("muted", truncate(text, width)));
      return out;
    }
    default: {
      if (!text) return [];
      const lines = wrapText(text, width).map((l) => t.fg("toolOutput", l));
      return limitLines(lines, expand ? 1000 : 10, "head", t, hint, width);
    }
  }
}

/** The lines of a text: a final newline ends the last line, it does not start another. */
function lineCount(text: string): number {
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}

/** Keep `max` lines from the head or the tail, with a note of what was left out (cut to `width`). */
export function limitLines(lines: string[], max: number, keep: "head" | "tail", t: Theme, hint: string, width: number): string[] {
  const { kept, skipped } = cutLines(lines, max, keep === "head" ? "start" : "end");
  if (!skipped) return kept;
  const note = truncate(t.fg("dim", `… ${skipped} more line${skipped === 1 ? "" : "s"} ${keep === "tail" ? "above" : "below"} `) + hint, width);
  return keep === "tail" ? [note, ...kept] : [...kept, note];
}
