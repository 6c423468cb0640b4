/**
 * One self-contained HTML page for a session: every entry of the session tree, the active branch
 * shown and the others one click away in the tree sidebar (with search and 1.6's filters),
 * assistant text as rendered markdown, code highlighted, tool calls drawn per tool (bash
 * commands, file reads and writes, edits as diffs), toggles for thinking, tool output and hidden
 * messages, and the session as JSONL to download. Inline CSS and JS, images as data: URLs, and a
 * Content-Security-Policy that forbids every network request. All session text is escaped.
 */
import type { AssistantMessage, ImageContent, TextContent } from "../../core/kernel/index.js";
import type { SessionEntry, SessionHeader } from "../../core/stores/index.js";
import { languageFromPath } from "../../modes/tui/highlight.js";
import { diffHtml, esc, highlightHtml, markdownToHtml } from "./markdown-html.js";
import { PAGE_CSS, PAGE_SCRIPT } from "./page-assets.js";

export interface ExportData {
  header: SessionHeader | null;
  entries: readonly SessionEntry[];
  /** The active leaf (default: the last entry); null = before the first entry. */
  leafId?: string | null;
  /** Session name (session_info), if known. */
  name?: string;
  /** The system prompt of a live session. */
  systemPrompt?: string;
  /** The live session's active tools (name, description, parameters). */
  tools?: Array<{ name: string; description?: string; parameters?: unknown }>;
  /** Who made the page ("pi 1.2.3"). */
  generator?: string;
}

export const escapeHtml = esc;

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
function image(img: ImageContent): string {
  const data = String(img.data ?? "");
  if (!IMAGE_TYPES.has(img.mimeType) || !/^[A-Za-z0-9+/=\r\n]+$/.test(data)) return `<p class="note">[image of type ${esc(img.mimeType)} not shown]</p>`;
  return `<img alt="attached image" src="data:${img.mimeType};base64,${data.replace(/[\r\n]/g, "")}">`;
}

/** Text and image blocks; text as plain (escaped, line breaks kept) or as markdown. */
function blocks(content: unknown, markdown = false): string {
  const text = (t: string) => (markdown ? `<div class="md">${markdownToHtml(t)}</div>` : `<div class="text">${esc(t)}</div>`);
  if (typeof content === "string") return content ? text(content) : "";
  if (!Array.isArray(content)) return "";
  return content
    .map((b: TextContent | ImageContent) => {
      if (b?.type === "text") return b.text ? text(b.text) : "";
      if (b?.type === "image") return image(b);
      return "";
    })
    .join("");
}

function plain(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b?.type === "text").map((b) => b.text).join(" ");
}

function time(ts: unknown): string {
  const d = typeof ts === "number" || typeof ts === "string" ? new Date(ts) : undefined;
  if (!d || Number.isNaN(d.getTime())) return "";
  return `<time datetime="${esc(d.toISOString())}">${esc(d.toISOString().replace("T", " ").slice(0, 19))}</time>`;
}

function head(title: string, ts: unknown, label?: string): string {
  return `<div class="head"><span class="role">${esc(title)}</span>${label ? ` <span class="label">${esc(label)}</span>` : ""} ${time(ts)}</div>`;
}

interface ToolResultLike {
  toolName?: string;
  content: unknown;
  isError?: boolean;
  details?: unknown;
}

function output(r: ToolResultLike | undefined, lang?: string): string {
  if (!r) return `<p class="note">no result recorded</p>`;
  const text = plain(r.content);
  const images = Array.isArray(r.content) ? r.content.filter((b: ImageContent) => b?.type === "image").map(image).join("") : "";
  const body = text ? `<pre class="output">${lang && !r.isError ? highlightHtml(text, lang) : esc(text)}</pre>` : images ? "" : `<p class="note">(no output)</p>`;
  return `<div class="result${r.isError ? " error" : ""}">${body}${images}</div>`;
}

const str = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** One tool call and its result, drawn the way the tool's output reads best. */
function toolCall(name: string, args: Record<string, unknown>, r: ToolResultLike | undefined): string {
  const path = str(args.path ?? args.file_path);
  const wrap = (title: string, body: string) =>
    `<div class="tool tool-${esc(name.replace(/[^\w-]/g, "_"))}${r?.isError ? " failed" : ""}" data-tool="${esc(name)}"><div class="tool-head"><span class="tool-name">${esc(name)}</span> ${title}</div>${body}</div>`;
  if (name === "bash") {
    return wrap("", `<pre class="cmd">$ ${highlightHtml(str(args.command), "sh")}</pre>${output(r)}`);
  }
  if (name === "read") {
    const range = args.offset !== undefined || args.limit !== undefined ? `:${str(args.offset ?? 1)}${args.limit !== undefined ? `-${Number(args.offset ?? 1) + Number(args.limit) - 1}` : ""}` : "";
    return wrap(`<span class="path">${esc(path + range)}</span>`, output(r, languageFromPath(path)));
  }
  if (name === "write") {
    const content = str(args.content);
    return wrap(
      `<span class="path">${esc(path)}</span>`,
      `<pre class="output written">${highlightHtml(content, languageFromPath(path))}</pre>${r?.isError ? output(r) : ""}`,
    );
  }
  if (name === "edit") {
    const details = (r?.details ?? {}) as { diff?: unknown };
    let diff = typeof details.diff === "string" ? details.diff : "";
    if (!diff) {
      const edits = Array.isArray(args.edits) ? (args.edits as Array<Record<string, unknown>>) : [{ oldText: args.oldText ?? args.old_string, newText: args.newText ?? args.new_string }];
      diff = edits
        .map((e) => [...str(e.oldText).split("\n").map((l) => `-${l}`), ...str(e.newText).split("\n").map((l) => `+${l}`)].join("\n"))
        .join("\n@@\n");
    }
    return wrap(`<span class="path">${esc(path)}</span>`, `<pre class="diff">${diffHtml(diff)}</pre>${r?.isError ? output(r) : ""}`);
  }
  let json: string;
  try {
    json = JSON.stringify(args ?? {}, null, 2);
  } catch {
    json = String(args);
  }
  return wrap("", `<pre class="args">${highlightHtml(json, "json")}</pre>${output(r)}`);
}

function countTokens(entries: readonly SessionEntry[]): { tokens: number; cost: number; models: string[]; toolCalls: number; user: number; assistant: number } {
  let tokens = 0;
  let cost = 0;
  let toolCalls = 0;
  let user = 0;
  let assistant = 0;
  const models = new Set<string>();
  for (const e of entries) {
    if (e.type === "model_change") models.add(`${e.provider}/${e.modelId}`);
    if (e.type !== "message") continue;
    if (e.message.role === "user") user++;
    if (e.message.role !== "assistant") continue;
    assistant++;
    const a = e.message as AssistantMessage;
    models.add(`${a.provider}/${a.model}`);
    toolCalls += (a.content ?? []).filter((b) => b.type === "toolCall").length;
    const u = a.usage;
    if (u) {
      tokens += u.input + u.output + u.cacheRead + u.cacheWrite;
      cost += u.cost?.total ?? 0;
    }
  }
  return { tokens, cost, models: [...models], toolCalls, user, assistant };
}

/** The entries root → leaf. */
export function activeBranch(entries: readonly SessionEntry[], leafId?: string | null): SessionEntry[] {
  if (leafId === null) return [];
  const byId = new Map(entries.map((e) => [e.id, e]));
  let cur = leafId ? byId.get(leafId) : entries[entries.length - 1];
  const out: SessionEntry[] = [];
  const seen = new Set<string>();
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    out.push(cur);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
  }
  return out.reverse();
}

/** Kind (for the filters), a short line for the tree, and the section for one entry. */
interface Rendered {
  kind: "user" | "assistant" | "tools" | "tool" | "summary" | "event" | "custom" | "hidden";
  line: string;
  html: string;
}

function renderEntry(e: SessionEntry, results: Map<string, ToolResultLike>, label: string | undefined): Rendered | undefined {
  const shortText = (s: string) => s.replace(/\s+/g, " ").trim().slice(0, 120);
  switch (e.type) {
    case "message": {
      const m = e.message as unknown as Record<string, unknown> & { role: string };
      if (m.role === "user") return { kind: "user", line: `user: ${shortText(plain(m.content))}`, html: `${head("User", m.timestamp, label)}${blocks(m.content)}` };
      if (m.role === "assistant") {
        const a = m as unknown as AssistantMessage;
        const inner: string[] = [];
        let text = "";
        const calls: string[] = [];
        for (const b of a.content ?? []) {
          if (b.type === "thinking" && b.thinking) inner.push(`<details class="thinking" open><summary>Thinking</summary><div class="md">${markdownToHtml(b.thinking)}</div></details>`);
          else if (b.type === "text" && b.text) {
            inner.push(`<div class="md">${markdownToHtml(b.text)}</div>`);
            text += `${b.text} `;
          } else if (b.type === "toolCall") {
            calls.push(`${b.name}${b.arguments && (b.arguments as Record<string, unknown>).path ? `: ${str((b.arguments as Record<string, unknown>).path)}` : b.name === "bash" ? `: ${str((b.arguments as Record<string, unknown>).command)}` : ""}`);
            inner.push(toolCall(b.name, (b.arguments ?? {}) as Record<string, unknown>, results.get(b.id)));
          }
        }
        if (a.stopReason === "error" || a.stopReason === "aborted") {
          inner.push(`<p class="error-note">${a.stopReason === "aborted" ? "Aborted" : "Error"}${a.errorMessage ? `: ${esc(a.errorMessage)}` : ""}</p>`);
        }
        const line = text.trim() ? `assistant: ${shortText(text)}` : calls.length ? `[${shortText(calls.join(", "))}]` : "assistant";
        return { kind: text.trim() ? "assistant" : "tools", line, html: `${head(`Assistant (${a.provider}/${a.model})`, a.timestamp, label)}${inner.join("")}` };
      }
      if (m.role === "toolResult") {
        // Drawn with its call; listed in the tree only.
        return { kind: "tool", line: `[${str(m.toolName)} result${m.isError ? ": error" : ""}]`, html: "" };
      }
      if (m.role === "bashExecution") {
        const exit = m.cancelled ? "cancelled" : m.exitCode !== undefined && m.exitCode !== null ? `exit ${String(m.exitCode)}` : "";
        return {
          kind: "user",
          line: `! ${shortText(str(m.command))}`,
          html:
            `${head(`Shell${m.excludeFromContext ? " (not sent to the model)" : ""}`, m.timestamp, label)}` +
            `<pre class="cmd">$ ${highlightHtml(str(m.command), "sh")}</pre><pre class="output">${esc(m.output)}</pre>${exit ? `<p class="note">${esc(exit)}</p>` : ""}`,
        };
      }
      if (m.role === "system") {
        // Shown collapsed, as a note: it is what the model was told, not part of the conversation.
        return { kind: "event", line: "[system prompt]", html: `<details class="system"><summary>System prompt</summary><div class="text">${esc(plain(m.content))}</div></details>` };
      }
      if (m.role === "custom") {
        return { kind: m.display === false ? "hidden" : "custom", line: `[${str(m.customType)}]`, html: `${head(`Message: ${str(m.customType)}`, m.timestamp, label)}${blocks(m.content, true)}` };
      }
      return undefined;
    }
    case "custom_message":
      return { kind: e.display ? "custom" : "hidden", line: `[${e.customType}]`, html: `${head(`Message: ${e.customType}`, e.timestamp, label)}${blocks(e.content, true)}` };
    case "compaction":
      return {
        kind: "summary",
        line: `[compaction: ${e.tokensBefore} tokens]`,
        html: `${head(`Compaction (${e.tokensBefore} tokens summarised)`, e.timestamp, label)}<details><summary>Summary</summary><div class="md">${markdownToHtml(e.summary)}</div></details>`,
      };
    case "branch_summary":
      return {
        kind: "summary",
        line: "[branch summary]",
        html: `${head("Summary of another branch", e.timestamp, label)}<details><summary>Summary</summary><div class="md">${markdownToHtml(e.summary)}</div></details>`,
      };
    case "model_change":
      return { kind: "event", line: `[model: ${e.provider}/${e.modelId}]`, html: `<p class="event-text">Model: ${esc(`${e.provider}/${e.modelId}`)}</p>` };
    case "thinking_level_change":
      return { kind: "event", line: `[thinking: ${e.thinkingLevel}]`, html: `<p class="event-text">Thinking level: ${esc(e.thinkingLevel)}</p>` };
    default:
      return undefined;
  }
}

/** base64 of UTF-8 text. */
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export function renderSessionHtml(data: ExportData): string {
  const path = activeBranch(data.entries, data.leafId);
  const onPath = new Set(path.map((e) => e.id));
  const labels = new Map<string, string>();
  for (const e of data.entries) {
    if (e.type !== "label") continue;
    if (e.label) labels.set(e.targetId, e.label);
    else labels.delete(e.targetId);
  }
  const results = new Map<string, ToolResultLike>();
  for (const e of data.entries) if (e.type === "message" && e.message.role === "toolResult") results.set(e.message.toolCallId, e.message as unknown as ToolResultLike);

  const firstUser = path.find((e) => e.type === "message" && e.message.role === "user");
  const firstText = firstUser && firstUser.type === "message" ? plain((firstUser.message as { content: unknown }).content) : "";
  const title = data.name || (firstText ? firstText.slice(0, 80) : `Session ${data.header?.id ?? ""}`.trim());

  // Entries shown in the tree: the ones that render; their parent is the nearest shown ancestor.
  const byId = new Map(data.entries.map((e) => [e.id, e]));
  const rendered = new Map<string, Rendered>();
  for (const e of data.entries) {
    const r = renderEntry(e, results, labels.get(e.id));
    if (r) rendered.set(e.id, r);
  }
  const shownParent = (e: SessionEntry): string | null => {
    let p = e.parentId ? byId.get(e.parentId) : undefined;
    const seen = new Set<string>();
    while (p && !rendered.has(p.id) && !seen.has(p.id)) {
      seen.add(p.id);
      p = p.parentId ? byId.get(p.parentId) : undefined;
    }
    return p && rendered.has(p.id) ? p.id : null;
  };
  const children = new Map<string | null, string[]>();
  const parentOf = new Map<string, string | null>();
  for (const e of data.entries) {
    if (!rendered.has(e.id)) continue;
    const p = shownParent(e);
    parentOf.set(e.id, p);
    children.set(p, [...(children.get(p) ?? []), e.id]);
  }
  const leaf = [...path].reverse().find((e) => rendered.has(e.id))?.id;

  const sections: string[] = [];
  const nodes: string[] = [];
  const walk = (id: string, depth: number) => {
    const r = rendered.get(id)!;
    const attrs = `data-id="${esc(id)}" data-parent="${esc(parentOf.get(id) ?? "")}" data-kind="${r.kind}"${labels.has(id) ? ` data-labeled="1"` : ""}`;
    if (r.html) sections.push(`<section class="msg ${r.kind}" id="e-${esc(id)}" ${attrs}${onPath.has(id) ? "" : " hidden"}>${r.html}</section>`);
    const label = labels.get(id);
    nodes.push(
      `<div class="node k-${r.kind}${onPath.has(id) ? " on-path" : ""}${id === leaf ? " leaf" : ""}" ${attrs} style="--depth:${depth}" tabindex="0">` +
        `${label ? `<span class="label">${esc(label)}</span> ` : ""}${esc(r.line)}</div>`,
    );
    const kids = children.get(id) ?? [];
    for (const k of kids) walk(k, kids.length > 1 ? depth + 1 : depth);
  };
  const roots = children.get(null) ?? [];
  for (const r of roots) walk(r, roots.length > 1 ? 1 : 0);

  const stats = countTokens(path);
  const h = data.header;
  const meta: Array<[string, string]> = [];
  if (h?.id) meta.push(["Session", h.id]);
  if (h?.timestamp) meta.push(["Started", h.timestamp]);
  if (h?.cwd) meta.push(["Folder", h.cwd]);
  if (stats.models.length) meta.push(["Models", stats.models.join(", ")]);
  meta.push(["Messages", `${stats.user} user, ${stats.assistant} assistant`]);
  meta.push(["Tool calls", String(stats.toolCalls)]);
  meta.push(["Entries on this branch", String(path.length)]);
  meta.push(["Tokens", stats.tokens.toLocaleString("en-US")]);
  if (stats.cost) meta.push(["Cost", `$${stats.cost.toFixed(4)}`]);

  const system = data.systemPrompt ? `<details class="system"><summary>System prompt</summary><div class="text">${esc(data.systemPrompt)}</div></details>` : "";
  const tools = data.tools?.length
    ? `<details class="tools-list"><summary>Available tools (${data.tools.length})</summary>${data.tools
        .map(
          (t) =>
            `<div class="tool-def"><b>${esc(t.name)}</b> — ${esc(t.description ?? "")}${t.parameters ? `<details><summary>parameters</summary><pre>${highlightHtml(JSON.stringify(t.parameters, null, 2), "json")}</pre></details>` : ""}</div>`,
        )
        .join("")}</details>`
    : "";
  const jsonl = [h, ...data.entries].filter(Boolean).map((x) => JSON.stringify(x)).join("\n") + "\n";
  const fileName = `${(h?.id ?? "session").replace(/[^\w.-]/g, "_")}.jsonl`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<aside id="sidebar">
<input id="search" type="search" placeholder="Search…" aria-label="Search the session" autocomplete="off">
<div class="filters" role="group" aria-label="Tree filter">
<button type="button" data-filter="default" class="active">Default</button><button type="button" data-filter="no-tools">No-tools</button><button type="button" data-filter="user">User</button><button type="button" data-filter="labeled">Labeled</button><button type="button" data-filter="all">All</button>
</div>
<nav id="tree" aria-label="Session tree">
${nodes.join("\n")}
</nav>
<div id="tree-count"></div>
</aside>
<div id="page">
<header>
<h1>${esc(title)}</h1>
<p class="controls"><button type="button" id="toggle-thinking" title="T">Toggle thinking</button> <button type="button" id="toggle-tools" title="O">Toggle tools</button> <button type="button" id="toggle-hidden" title="H">Show hidden messages</button> <a id="download" download="${esc(fileName)}" href="data:application/x-ndjson;base64,${b64(jsonl)}">↓ JSONL</a></p>
<p class="keys">T toggle thinking · O toggle tools · H toggle hidden messages · click an entry in the tree to show its branch</p>
<dl>${meta.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>
${system}
${tools}
</header>
<main id="conversation">
${sections.join("\n") || '<p class="note">This session has no entries.</p>'}
</main>
<footer>${esc(data.generator ?? "")}</footer>
</div>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
