/**
 * One self-contained HTML page for a session's active branch: inline CSS and a few lines of
 * inline JS, images as data: URLs, and a Content-Security-Policy that forbids every network
 * request. All session text is escaped; nothing from the session reaches the page as markup.
 */
import type { AssistantMessage, ImageContent, TextContent } from "../../core/types.js";
import type { SessionEntry, SessionHeader } from "../../core/session/session-entries.js";

export interface ExportData {
  header: SessionHeader | null;
  entries: readonly SessionEntry[];
  /** The active leaf (default: the last entry); null = before the first entry. */
  leafId?: string | null;
  /** Session name (session_info), if known. */
  name?: string;
  /** The system prompt of a live session. */
  systemPrompt?: string;
  /** Who made the page ("pi 1.2.3"). */
  generator?: string;
}

const ESC: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ESC[c]!);
}

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
function image(img: ImageContent): string {
  const data = String(img.data ?? "");
  if (!IMAGE_TYPES.has(img.mimeType) || !/^[A-Za-z0-9+/=\r\n]+$/.test(data)) return `<p class="note">[image of type ${escapeHtml(img.mimeType)} not shown]</p>`;
  return `<img alt="attached image" src="data:${img.mimeType};base64,${data.replace(/[\r\n]/g, "")}">`;
}

function blocks(content: unknown): string {
  if (typeof content === "string") return content ? `<div class="text">${escapeHtml(content)}</div>` : "";
  if (!Array.isArray(content)) return "";
  return content
    .map((b: TextContent | ImageContent) => {
      if (b?.type === "text") return b.text ? `<div class="text">${escapeHtml(b.text)}</div>` : "";
      if (b?.type === "image") return image(b);
      return "";
    })
    .join("");
}

function time(ts: unknown): string {
  const d = typeof ts === "number" || typeof ts === "string" ? new Date(ts) : undefined;
  if (!d || Number.isNaN(d.getTime())) return "";
  return `<time datetime="${escapeHtml(d.toISOString())}">${escapeHtml(d.toISOString().replace("T", " ").slice(0, 19))}</time>`;
}

function head(kind: string, title: string, ts: unknown, label?: string): string {
  return `<div class="head"><span class="role">${escapeHtml(title)}</span>${label ? ` <span class="label">${escapeHtml(label)}</span>` : ""} ${time(ts)}</div>`;
}

function formatArgs(args: unknown): string {
  try {
    return JSON.stringify(args ?? {}, null, 2);
  } catch {
    return String(args);
  }
}

interface ToolResultLike {
  toolName?: string;
  content: unknown;
  isError?: boolean;
}

function toolResultHtml(r: ToolResultLike | undefined): string {
  if (!r) return `<p class="note">no result recorded</p>`;
  const body = blocks(r.content) || `<p class="note">(no output)</p>`;
  return `<details class="result${r.isError ? " error" : ""}" open><summary>${r.isError ? "Error" : "Result"}</summary><div class="output">${body}</div></details>`;
}

function countTokens(entries: readonly SessionEntry[]): { tokens: number; cost: number; models: string[] } {
  let tokens = 0;
  let cost = 0;
  const models = new Set<string>();
  for (const e of entries) {
    if (e.type === "model_change") models.add(`${e.provider}/${e.modelId}`);
    if (e.type !== "message" || e.message.role !== "assistant") continue;
    const a = e.message as AssistantMessage;
    models.add(`${a.provider}/${a.model}`);
    const u = a.usage;
    if (u) {
      tokens += u.input + u.output + u.cacheRead + u.cacheWrite;
      cost += u.cost?.total ?? 0;
    }
  }
  return { tokens, cost, models: [...models] };
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

export function renderSessionHtml(data: ExportData): string {
  const path = activeBranch(data.entries, data.leafId);
  const labels = new Map<string, string>();
  for (const e of data.entries) {
    if (e.type !== "label") continue;
    if (e.label) labels.set(e.targetId, e.label);
    else labels.delete(e.targetId);
  }
  // Tool results by call id, so each is shown with its call.
  const results = new Map<string, ToolResultLike>();
  for (const e of path) if (e.type === "message" && e.message.role === "toolResult") results.set(e.message.toolCallId, e.message);
  const shownResults = new Set<string>();

  const firstUser = path.find((e) => e.type === "message" && e.message.role === "user");
  const firstText = firstUser && firstUser.type === "message" ? plain((firstUser.message as { content: unknown }).content) : "";
  const title = data.name || (firstText ? firstText.slice(0, 80) : `Session ${data.header?.id ?? ""}`.trim());

  const parts: string[] = [];
  for (const e of path) {
    const label = labels.get(e.id);
    const id = `e-${escapeHtml(e.id)}`;
    switch (e.type) {
      case "message": {
        const m = e.message as unknown as Record<string, unknown> & { role: string };
        if (m.role === "user") {
          parts.push(`<section class="msg user" id="${id}">${head("user", "User", m.timestamp, label)}${blocks(m.content)}</section>`);
        } else if (m.role === "assistant") {
          const a = m as unknown as AssistantMessage;
          const inner: string[] = [];
          for (const b of a.content ?? []) {
            if (b.type === "thinking" && b.thinking) inner.push(`<details class="thinking"><summary>Thinking</summary><div class="text">${escapeHtml(b.thinking)}</div></details>`);
            else if (b.type === "text" && b.text) inner.push(`<div class="text">${escapeHtml(b.text)}</div>`);
            else if (b.type === "toolCall") {
              shownResults.add(b.id);
              inner.push(
                `<div class="tool" data-tool="${escapeHtml(b.name)}"><div class="tool-head">Tool call: <b>${escapeHtml(b.name)}</b></div>` +
                  `<pre class="args">${escapeHtml(formatArgs(b.arguments))}</pre>${toolResultHtml(results.get(b.id))}</div>`,
              );
            }
          }
          if (a.stopReason === "error" || a.stopReason === "aborted") {
            inner.push(`<p class="error-note">${a.stopReason === "aborted" ? "Aborted" : "Error"}${a.errorMessage ? `: ${escapeHtml(a.errorMessage)}` : ""}</p>`);
          }
          const who = `Assistant (${a.provider}/${a.model})`;
          parts.push(`<section class="msg assistant" id="${id}">${head("assistant", who, a.timestamp, label)}${inner.join("")}</section>`);
        } else if (m.role === "toolResult") {
          if (shownResults.has(String(m.toolCallId))) break;
          parts.push(`<section class="msg tool-result" id="${id}">${head("tool", `Tool result: ${String(m.toolName ?? "")}`, m.timestamp, label)}${toolResultHtml(m as unknown as ToolResultLike)}</section>`);
        } else if (m.role === "bashExecution") {
          const exit = m.cancelled ? "cancelled" : m.exitCode !== undefined && m.exitCode !== null ? `exit ${String(m.exitCode)}` : "";
          parts.push(
            `<section class="msg bash" id="${id}">${head("bash", `Shell${m.excludeFromContext ? " (not sent to the model)" : ""}`, m.timestamp, label)}` +
              `<pre class="cmd">$ ${escapeHtml(m.command)}</pre><div class="output"><div class="text">${escapeHtml(m.output)}</div></div>${exit ? `<p class="note">${escapeHtml(exit)}</p>` : ""}</section>`,
          );
        } else if (m.role === "custom") {
          if (m.display === false) break;
          parts.push(`<section class="msg custom" id="${id}">${head("custom", `Message: ${String(m.customType ?? "")}`, m.timestamp, label)}${blocks(m.content)}</section>`);
        }
        break;
      }
      case "custom_message":
        if (!e.display) break;
        parts.push(`<section class="msg custom" id="${id}">${head("custom", `Message: ${e.customType}`, e.timestamp, label)}${blocks(e.content)}</section>`);
        break;
      case "compaction":
        parts.push(
          `<section class="msg summary compaction" id="${id}">${head("summary", `Compaction (${e.tokensBefore} tokens summarised)`, e.timestamp, label)}` +
            `<details><summary>Summary</summary><div class="text">${escapeHtml(e.summary)}</div></details></section>`,
        );
        break;
      case "branch_summary":
        parts.push(
          `<section class="msg summary branch" id="${id}">${head("summary", "Summary of another branch", e.timestamp, label)}` +
            `<details><summary>Summary</summary><div class="text">${escapeHtml(e.summary)}</div></details></section>`,
        );
        break;
      case "model_change":
        parts.push(`<p class="event" id="${id}">Model: ${escapeHtml(`${e.provider}/${e.modelId}`)}</p>`);
        break;
      case "thinking_level_change":
        parts.push(`<p class="event" id="${id}">Thinking level: ${escapeHtml(e.thinkingLevel)}</p>`);
        break;
      default:
        break;
    }
  }

  const stats = countTokens(path);
  const h = data.header;
  const meta: Array<[string, string]> = [];
  if (h?.id) meta.push(["Session", h.id]);
  if (h?.timestamp) meta.push(["Started", h.timestamp]);
  if (h?.cwd) meta.push(["Folder", h.cwd]);
  if (stats.models.length) meta.push(["Models", stats.models.join(", ")]);
  meta.push(["Entries on this branch", String(path.length)]);
  meta.push(["Tokens", stats.tokens.toLocaleString("en-US")]);
  if (stats.cost) meta.push(["Cost", `$${stats.cost.toFixed(4)}`]);

  const system = data.systemPrompt
    ? `<details class="system"><summary>System prompt</summary><div class="text">${escapeHtml(data.systemPrompt)}</div></details>`
    : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<dl>${meta.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join("")}</dl>
<p class="controls"><button type="button" id="toggle-all">Collapse all</button></p>
${system}
</header>
<main id="conversation">
${parts.join("\n") || '<p class="note">This branch has no entries.</p>'}
</main>
<footer>${escapeHtml(data.generator ?? "")}</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

function plain(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b?.type === "text").map((b) => b.text).join(" ");
}

const CSS = `
:root { color-scheme: light dark; --bg: #fbfbfa; --fg: #1d1d1f; --muted: #6b6b70; --line: #e2e2e6; --user: #eef4ff; --assistant: #ffffff; --tool: #f6f6f8; --err: #b42318; --accent: #3a5bd9; }
@media (prefers-color-scheme: dark) { :root { --bg: #151517; --fg: #e8e8ea; --muted: #9a9aa2; --line: #2c2c31; --user: #1c2333; --assistant: #1b1b1e; --tool: #202024; --err: #ff7b72; --accent: #8aa4ff; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 980px; padding: 24px 16px 64px; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.4em; margin: 0 0 8px; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 12px; color: var(--muted); font-size: 0.9em; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
.msg { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; margin: 12px 0; background: var(--assistant); }
.msg.user { background: var(--user); }
.msg.summary, .msg.bash, .msg.tool-result, .msg.custom { background: var(--tool); }
.head { font-size: 0.85em; color: var(--muted); margin-bottom: 6px; }
.head .role { font-weight: 600; color: var(--fg); }
.label { background: var(--accent); color: #fff; border-radius: 4px; padding: 0 6px; font-size: 0.85em; }
time { margin-left: 6px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
.tool { border-left: 3px solid var(--accent); padding: 4px 10px; margin: 8px 0; background: var(--tool); border-radius: 4px; }
.tool-head { font-size: 0.9em; }
.output { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; max-height: 480px; overflow: auto; }
.result.error summary, .error-note { color: var(--err); }
details > summary { cursor: pointer; color: var(--muted); font-size: 0.9em; }
.event, .note { color: var(--muted); font-size: 0.85em; margin: 6px 0; }
img { max-width: 100%; border-radius: 4px; }
button { font: inherit; font-size: 0.85em; padding: 2px 10px; }
footer { margin-top: 32px; color: var(--muted); font-size: 0.8em; }
`;

const SCRIPT = `
(function () {
  var button = document.getElementById("toggle-all");
  var open = true;
  button.addEventListener("click", function () {
    open = !open;
    document.querySelectorAll("main details").forEach(function (d) { d.open = open; });
    button.textContent = open ? "Collapse all" : "Expand all";
  });
  document.documentElement.setAttribute("data-ready", String(document.querySelectorAll("main .msg").length));
})();
`;
