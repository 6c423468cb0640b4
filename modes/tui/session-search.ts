/**
 * The session picker's search and orders. A search is words (each matched on its own), "a
 * phrase" in quotes (matched as written, spaces and case aside) or `re:<pattern>` (a regular
 * expression). A word matches when its text is in the session's name, id, messages or folder, or
 * when its letters appear in order, scattered, in the name or the folder. Matches are ranked in
 * tiers: text in the name first, then text anywhere else, then scattered letters.
 *
 * The orders (Ctrl+S cycles them): "threaded" lists forks under the session they came from, each
 * level by its latest activity; "recent" lists newest first and a search keeps that order;
 * "relevance" (shown as Fuzzy) lists newest first and a search ranks the matches. A search in
 * the threaded order ranks too (a flat list). `listSessions` is the list both pickers show (the
 * TUI's /resume and the exported SessionSelectorComponent), `drawSessionRow` the text of one row
 * (pi 1.6's: the name or first message on the left, the message count and age on the right),
 * and they share the deletion.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { fuzzyMatch, type SessionInfo } from "../../core/stores/index.js";
import { homePath, truncate, visibleWidth } from "./text.js";
import type { Painter } from "./tree-model.js";

export type SessionSort = "threaded" | "recent" | "relevance";

/** The orders in the sequence Ctrl+S steps through, each with the word the title shows. */
export const SESSION_SORTS: Array<{ sort: SessionSort; label: string }> = [
  { sort: "threaded", label: "Threaded" },
  { sort: "recent", label: "Recent" },
  { sort: "relevance", label: "Fuzzy" },
];

/** The order after `sort` (Ctrl+S). */
export const nextSessionSort = (sort: SessionSort) => SESSION_SORTS[(SESSION_SORTS.findIndex((x) => x.sort === sort) + 1) % SESSION_SORTS.length]!.sort;

const TIER = 1_000_000;
type Term = { phrase: boolean; text: string };
type Query = { regex: RegExp | null; terms: Term[]; invalid: boolean };

const squash = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/** Words and "quoted phrases" (an unclosed quote: every word on its own), or `re:<pattern>`. */
export function parseSessionQuery(query: string): Query {
  const q = query.trim();
  if (q.startsWith("re:")) {
    const pattern = q.slice(3).trim();
    try {
      return pattern ? { regex: new RegExp(pattern, "i"), terms: [], invalid: false } : { regex: null, terms: [], invalid: true };
    } catch {
      return { regex: null, terms: [], invalid: true };
    }
  }
  if ((q.match(/"/g) ?? []).length % 2) return { regex: null, terms: q.replace(/"/g, " ").split(/\s+/).filter(Boolean).map((text) => ({ phrase: false, text })), invalid: false };
  const terms = [...q.matchAll(/"([^"]*)"|([^\s"]+)/g)]
    .map((m) => (m[1] !== undefined ? { phrase: true, text: squash(m[1]) } : { phrase: false, text: m[2] ?? "" }))
    .filter((t) => t.text);
  return { regex: null, terms, invalid: false };
}

/** A session's score for the query (lower is better), or undefined when it does not match. */
export function sessionScore(s: SessionInfo, q: Query): number | undefined {
  if (q.invalid) return undefined;
  if (q.regex) {
    if (s.name && q.regex.test(s.name)) return 0;
    return q.regex.test(s.id) || q.regex.test(s.allMessagesText) || q.regex.test(s.cwd) ? TIER : undefined;
  }
  let total = 0;
  for (const term of q.terms) {
    const score = termScore(s, term);
    if (score === undefined) return undefined;
    total += score;
  }
  return total;
}

function termScore(s: SessionInfo, term: Term): number | undefined {
  const norm = term.phrase ? squash : (x: string) => x.toLowerCase();
  const text = term.phrase ? term.text : term.text.toLowerCase();
  const name = norm(s.name ?? "");
  if (name.includes(text)) return fuzzyMatch(text, name).score;
  if ([s.id, s.allMessagesText, s.cwd].some((f) => norm(f).includes(text))) return TIER;
  if (term.phrase) return undefined;
  let best: number | undefined;
  for (const field of [s.name ?? "", s.cwd]) {
    const m = fuzzyMatch(text, field);
    if (m.matches && (best === undefined || m.score < best)) best = m.score;
  }
  return best === undefined ? undefined : 2 * TIER + best;
}

/** The sessions a search leaves, in the order `sort` gives them (`list` comes newest first). */
export function searchSessions(list: readonly SessionInfo[], query: string, sort: SessionSort): SessionInfo[] {
  if (!query.trim()) return [...list];
  const q = parseSessionQuery(query);
  const scored = list.map((s) => ({ s, score: sessionScore(s, q) })).filter((x): x is { s: SessionInfo; score: number } => x.score !== undefined);
  if (sort !== "recent") scored.sort((a, b) => a.score - b.score || b.s.modified.getTime() - a.s.modified.getTime());
  return scored.map((x) => x.s);
}

/**
 * The threaded order: a fork under the session it was forked from (when that one is listed),
 * each level by the latest activity anywhere below it, newest first; `prefix` draws the branch.
 */
export function threadSessions(list: readonly SessionInfo[]): Array<{ session: SessionInfo; prefix: string }> {
  type Node = { session: SessionInfo; children: Node[]; latest: number };
  const byPath = new Map<string, Node>(list.map((s) => [s.path, { session: s, children: [], latest: s.modified.getTime() }]));
  const roots: Node[] = [];
  for (const node of byPath.values()) {
    const parent = node.session.parentSessionPath ? byPath.get(node.session.parentSessionPath) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  const latest = (n: Node, seen: Set<Node>): number => {
    if (seen.has(n)) return n.latest;
    seen.add(n);
    for (const c of n.children) n.latest = Math.max(n.latest, latest(c, seen));
    return n.latest;
  };
  const seen = new Set<Node>();
  for (const r of roots) latest(r, seen);
  const out: Array<{ session: SessionInfo; prefix: string }> = [];
  const walk = (nodes: Node[], depth: number, rails: string) => {
    nodes.sort((a, b) => b.latest - a.latest);
    nodes.forEach((n, i) => {
      const last = i === nodes.length - 1;
      out.push({ session: n.session, prefix: depth === 0 ? "" : rails + (last ? "└─ " : "├─ ") });
      listed.add(n);
      walk(n.children, depth + 1, depth === 0 ? "   " : rails + (last ? "   " : "│  "));
    });
  };
  const listed = new Set<Node>();
  walk(roots, 0, "");
  // Sessions whose forks point at each other in a circle reach no root: listed on their own.
  for (const n of byPath.values()) if (!listed.has(n)) out.push({ session: n.session, prefix: "" });
  return out;
}

/** A session with a name that is more than blanks (what "named only" keeps). */
export const hasSessionName = (s: SessionInfo) => Boolean(s.name?.trim());

/**
 * The rows a session picker shows: the named sessions only when `namedOnly`, forks drawn under
 * their parent (threaded, no search), else the flat list the search and order leave.
 */
export function listSessions(list: readonly SessionInfo[], opts: { query: string; sort: SessionSort; namedOnly: boolean }): Array<{ session: SessionInfo; prefix: string }> {
  const pool = opts.namedOnly ? list.filter(hasSessionName) : list;
  if (opts.sort === "threaded" && !opts.query.trim()) return threadSessions(pool);
  return searchSessions(pool, opts.query, opts.sort).map((session) => ({ session, prefix: "" }));
}

/** Delete a session file: the `trash` command when there is one, else removed for good. */
export async function deleteSessionFile(path: string): Promise<"trash" | "deleted"> {
  const trashed = spawnSync("trash", path.startsWith("-") ? ["--", path] : [path], { stdio: "ignore" });
  if (trashed.status === 0 || !existsSync(path)) return "trash";
  await unlink(path);
  return "deleted";
}

/** How long ago a session changed, in one short word: now, 5m, 3h, 2d, 1w, 4mo, 1y. */
export function sessionAge(d: Date, now = Date.now()): string {
  const mins = Math.floor((now - d.getTime()) / 60_000);
  if (mins < 1) return "now";
  if (mins < 60) return `${mins}m`;
  const hours = Math.floor(mins / 60);
  if (hours < 24) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 7) return `${days}d`;
  if (days < 30) return `${Math.floor(days / 7)}w`;
  if (days < 365) return `${Math.floor(days / 30)}mo`;
  return `${Math.floor(days / 365)}y`;
}

export interface SessionRowOptions {
  /** The branch drawing in front (threaded order). */
  prefix: string;
  /** Columns for the row, the cursor left out. */
  width: number;
  selected?: boolean;
  /** The session that is open (its text accented). */
  current?: boolean;
  /** Waiting for the delete to be confirmed (in the error colour). */
  deleting?: boolean;
  /** The session's folder before the count (the list of every folder). */
  showCwd?: boolean;
  /** The session file's path before the count. */
  showPath?: boolean;
  now?: number;
}

/**
 * One session row without the cursor: the branch drawing, the name (or else the first message)
 * on one line, cut to leave room for the right side — [file path] [folder] message count, age —
 * which stands at the right edge. A named session's text is in the warning colour, the open
 * one's accented, one being deleted in the error colour; the selected row's text is bold.
 */
export function drawSessionRow(s: SessionInfo, o: SessionRowOptions, t: Painter): string {
  let right = `${s.messageCount} ${sessionAge(s.modified, o.now)}`;
  if (o.showCwd && s.cwd) right = `${homePath(s.cwd)} ${right}`;
  if (o.showPath) right = `${homePath(s.path)} ${right}`;
  const text = (s.name ?? s.firstMessage ?? "").replace(/[\x00-\x1f\x7f]/g, " ").trim();
  const room = Math.max(10, o.width - visibleWidth(o.prefix) - visibleWidth(right) - 2);
  const cut = truncate(text, room);
  const color = o.deleting ? "error" : o.current ? "accent" : s.name ? "warning" : undefined;
  let msg = color ? t.fg(color, cut) : cut;
  if (o.selected) msg = t.bold(msg);
  const left = t.fg("dim", o.prefix) + msg;
  const gap = Math.max(1, o.width - visibleWidth(left) - visibleWidth(right));
  return left + " ".repeat(gap) + t.fg(o.deleting ? "error" : "dim", right);
}
