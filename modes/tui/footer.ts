/**
 * The default footer: cwd (git branch) • session name; tokens in/out, cache read/write, cost,
 * context use; model and thinking level; extension status texts.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Theme } from "./theme.js";
import { formatTokens } from "./format.js";
import { homePath, padToWidth, sanitize, truncate, visibleWidth } from "./text.js";

export interface FooterData {
  cwd: string;
  sessionName?: string;
  model?: { provider: string; id: string; reasoning?: boolean };
  thinkingLevel: string;
  stats?: { tokens: { input: number; output: number; cacheRead: number; cacheWrite: number }; cost: number };
  context?: { tokens: number | null; contextWindow: number; percent: number | null };
  autoCompact?: boolean;
  gitBranch?: string | null;
  statuses: ReadonlyMap<string, string>;
}

/** The git branch of `cwd` (reads .git/HEAD of the nearest repository), or null. */
export function findGitBranch(cwd: string): string | null {
  let dir = cwd;
  for (let i = 0; i < 40; i++) {
    const git = join(dir, ".git");
    try {
      // A `.git` folder without HEAD (an empty placeholder) is no repository: git looks further up too.
      if (existsSync(git) && (statSync(git).isFile() || existsSync(join(git, "HEAD")))) {
        let head = join(git, "HEAD");
        if (statSync(git).isFile()) {
          const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(git, "utf8"));
          if (m) head = join(m[1]!.startsWith("/") ? m[1]! : join(dir, m[1]!), "HEAD");
        }
        const text = readFileSync(head, "utf8").trim();
        const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(text);
        return ref ? ref[1]! : text.slice(0, 8);
      }
    } catch {
      return null;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

export function renderFooter(d: FooterData, width: number, theme: Theme): string[] {
  const t = theme;
  const lines: string[] = [];
  let loc = homePath(d.cwd);
  if (d.gitBranch) loc += ` (${d.gitBranch})`;
  if (d.sessionName) loc += ` • ${d.sessionName}`;
  lines.push(t.fg("dim", truncate(sanitize(loc, false), width)));

  const parts: string[] = [];
  if (d.stats) {
    const tk = d.stats.tokens;
    if (tk.input) parts.push(`↑${formatTokens(tk.input)}`);
    if (tk.output) parts.push(`↓${formatTokens(tk.output)}`);
    if (tk.cacheRead) parts.push(`R${formatTokens(tk.cacheRead)}`);
    if (tk.cacheWrite) parts.push(`W${formatTokens(tk.cacheWrite)}`);
    if (d.stats.cost) parts.push(`$${d.stats.cost.toFixed(3)}`);
  }
  if (d.context && d.context.contextWindow) {
    const pct = d.context.percent === null ? "?" : `${d.context.percent.toFixed(1)}%`;
    const ctx = `${pct}/${formatTokens(d.context.contextWindow)}${d.autoCompact ? " (auto)" : ""}`;
    parts.push(d.context.percent !== null && d.context.percent > 90 ? t.fg("error", ctx) : d.context.percent !== null && d.context.percent > 70 ? t.fg("warning", ctx) : ctx);
  }
  const left = t.fg("dim", parts.join(" "));
  const model = d.model ? `${d.model.provider}/${d.model.id}` : "no model";
  const right = t.fg("dim", d.model?.reasoning ? `${model} • ${d.thinkingLevel === "off" ? "thinking off" : d.thinkingLevel}` : d.model ? model : t.fg("warning", "no model (/model)"));
  const lw = visibleWidth(left);
  const rw = visibleWidth(right);
  if (lw + rw + 2 <= width) lines.push(left + " ".repeat(width - lw - rw) + right);
  else {
    lines.push(truncate(right, width));
    if (parts.length) lines.push(truncate(left, width));
  }
  if (d.statuses.size) {
    const st = [...d.statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => sanitize(v, false).replace(/\n/g, " "));
    lines.push(truncate(st.join("  "), width));
  }
  return lines.map((l) => padToWidth(l, width).replace(/ +$/, ""));
}
