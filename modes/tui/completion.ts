/**
 * Editor completion: `/commands` (built-ins, extension and plugin commands, prompt templates,
 * skills), `@files` (fuzzy over the project's files) and Tab completion of paths.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fuzzyFilter } from "../../core/stores/index.js";

export interface CompletionItem {
  /** What replaces the token. */
  value: string;
  label: string;
  description?: string;
}

export interface Completion {
  kind: "command" | "file" | "path";
  /** Replaced range of the editor text. */
  start: number;
  end: number;
  items: CompletionItem[];
  index: number;
}

const SKIP_DIRS = new Set([".git", "node_modules", ".hg", ".svn", "dist", "build", ".next", "target", "__pycache__", ".venv", "venv", ".cache"]);
const MAX_FILES = 20_000;

/** Project files for @-completion, cached for a few seconds. */
export class FileIndex {
  private files: string[] | undefined;
  private at = 0;
  constructor(private cwd: string) {}

  list(): string[] {
    if (this.files && Date.now() - this.at < 10_000) return this.files;
    const out: string[] = [];
    const walk = (dir: string, depth: number) => {
      if (out.length >= MAX_FILES || depth > 12) return;
      let entries: import("node:fs").Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const e of entries) {
        if (out.length >= MAX_FILES) return;
        const full = join(dir, e.name);
        const rel = relative(this.cwd, full).split(sep).join("/");
        if (e.isDirectory()) {
          if (SKIP_DIRS.has(e.name) || (e.name.startsWith(".") && e.name !== ".pi" && e.name !== ".github")) continue;
          out.push(rel + "/");
          walk(full, depth + 1);
        } else out.push(rel);
      }
    };
    walk(this.cwd, 0);
    this.files = out;
    this.at = Date.now();
    return out;
  }
}

/** The completion for the text before the cursor, or undefined. */
export function computeCompletion(
  text: string,
  cursor: number,
  opts: { commands: () => CompletionItem[]; files: FileIndex; cwd: string },
): Completion | undefined {
  const before = text.slice(0, cursor);
  // /command: first word of a single-line input.
  const cmd = /^\/([^\s/]*)$/.exec(before);
  if (cmd && !text.includes("\n")) {
    const q = cmd[1]!.toLowerCase();
    const all = opts.commands();
    const prefixed = all.filter((c) => c.value.slice(1).toLowerCase().startsWith(q));
    const fuzzy = q ? fuzzyFilter(all.filter((c) => !prefixed.includes(c)), q, (c) => c.value.slice(1)) : [];
    const items = [...prefixed, ...fuzzy].slice(0, 50);
    if (!items.length || (items.length === 1 && items[0]!.value === before)) return undefined;
    return { kind: "command", start: 0, end: cursor, items, index: 0 };
  }
  // @file
  const at = /(^|\s)@([^\s]*)$/.exec(before);
  if (at) {
    const q = at[2]!;
    const files = opts.files.list();
    const items = (q ? fuzzyFilter(files, q, (f) => f) : files).slice(0, 50).map((f) => ({ value: "@" + f, label: f }));
    if (!items.length) return undefined;
    return { kind: "file", start: cursor - q.length - 1, end: cursor, items, index: 0 };
  }
  return undefined;
}

/** Tab completion of a path-like word before the cursor (returns the completion or undefined). */
export function completePath(text: string, cursor: number, cwd: string): Completion | undefined {
  const before = text.slice(0, cursor);
  const m = /(?:^|\s)((?:~|\.{1,2}|\/)?[^\s]*\/[^\s]*|\.{1,2}|~)$/.exec(before);
  if (!m) return undefined;
  const word = m[1]!;
  const expanded = word.startsWith("~") ? (process.env.HOME ?? "") + word.slice(1) : word;
  const abs = resolve(cwd, expanded);
  const dir = expanded.endsWith("/") ? abs : dirname(abs);
  const prefix = expanded.endsWith("/") ? "" : basename(abs);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix) && (prefix.startsWith(".") || !n.startsWith(".")));
  } catch {
    return undefined;
  }
  if (!names.length) return undefined;
  const base = word.endsWith("/") ? word : word.slice(0, word.length - prefix.length);
  const items = names.sort().slice(0, 50).map((n) => {
    let isDir = false;
    try {
      isDir = statSync(join(dir, n)).isDirectory();
    } catch {
      /* broken link: a file */
    }
    return { value: base + n + (isDir ? "/" : ""), label: n + (isDir ? "/" : "") };
  });
  return { kind: "path", start: cursor - word.length, end: cursor, items, index: 0 };
}

/** Longest common prefix of the items' values. */
export function commonPrefix(items: CompletionItem[]): string {
  if (!items.length) return "";
  let p = items[0]!.value;
  for (const it of items) while (!it.value.startsWith(p)) p = p.slice(0, -1);
  return p;
}
