/**
 * The in-process folder walk behind grep and find when ripgrep/fd are not installed.
 *
 * Like those tools it includes hidden files, skips `.git` folders, honours `.gitignore` and
 * `.ignore` files (in the tree, in the folders above the search root up to the repository
 * root, and `.git/info/exclude`), and does not follow symbolic links, so a symlink loop cannot
 * trap it; a folder reached twice (a bind mount) is entered once. It yields to the event loop
 * every few milliseconds so an abort is noticed and the agent stays responsive.
 */
import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from "node:fs";
import { dirname, join, sep } from "node:path";
import { matchIgnore, parseIgnoreRules, type IgnoreScope } from "./glob.js";

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
  /** Absolute path. */
  abs: string;
  /** Path relative to the walk root, "/"-separated. */
  rel: string;
  name: string;
  kind: EntryKind;
}

/** What a visitor returns: nothing (go on), "skip" (do not enter this folder) or "stop". */
export type VisitResult = void | undefined | "skip" | "stop";

export interface WalkOptions {
  /** Absolute path of an existing folder. */
  root: string;
  signal?: AbortSignal;
  /** Honour ignore files (default true). */
  respectIgnoreFiles?: boolean;
  /** Folder names never entered nor reported (default [".git"]). */
  excludeNames?: readonly string[];
  visit(entry: WalkEntry): VisitResult;
}

export interface WalkResult {
  stopped: boolean;
  /** Folders that could not be listed (permissions, vanished). */
  unreadableDirs: number;
}

const IGNORE_FILE_NAMES = [".gitignore", ".ignore"];
const YIELD_EVERY_MS = 12;

function readRules(file: string): ReturnType<typeof parseIgnoreRules> | undefined {
  try {
    const rules = parseIgnoreRules(readFileSync(file, "utf8"));
    return rules.length ? rules : undefined;
  } catch {
    return undefined;
  }
}

function isDirSafe(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A repository's `.git` folder (one without HEAD, such as the sandbox's empty placeholder, is none: git looks further up too). */
function isGitDir(p: string): boolean {
  return isDirSafe(p) && existsSync(join(p, "HEAD"));
}

/** Scopes from the folders above `root` (outermost first), up to the repository root. */
function ancestorScopes(root: string): IgnoreScope[] {
  const chain: string[] = [];
  let dir = root;
  // The root itself is handled by the walk; look at its parents.
  if (isGitDir(join(dir, ".git"))) return exclude(dir);
  for (;;) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
    chain.push(dir);
    if (isGitDir(join(dir, ".git"))) break;
  }
  const scopes: IgnoreScope[] = [];
  for (let i = chain.length - 1; i >= 0; i--) {
    const d = chain[i]!;
    scopes.push(...exclude(d));
    for (const name of IGNORE_FILE_NAMES) {
      const rules = readRules(join(d, name));
      if (rules) scopes.push({ dir: d, rules });
    }
  }
  return scopes;

  function exclude(d: string): IgnoreScope[] {
    const rules = isDirSafe(join(d, ".git")) ? readRules(join(d, ".git", "info", "exclude")) : undefined;
    return rules ? [{ dir: d, rules }] : [];
  }
}

interface Frame {
  abs: string;
  rel: string;
  entries: Dirent[];
  index: number;
  scopeCount: number;
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function kindOf(d: Dirent): EntryKind {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "dir";
  if (d.isSymbolicLink()) return "symlink";
  return "other";
}

export async function walkTree(opts: WalkOptions): Promise<WalkResult> {
  const respect = opts.respectIgnoreFiles !== false;
  const exclude = new Set(opts.excludeNames ?? [".git"]);
  const scopes: IgnoreScope[] = respect ? ancestorScopes(opts.root) : [];
  const visited = new Set<string>();
  const stack: Frame[] = [];
  let unreadableDirs = 0;
  let lastYield = Date.now();
  let counter = 0;

  const enter = (abs: string, rel: string): boolean => {
    let entries: Dirent[];
    try {
      const st = statSync(abs);
      const id = `${st.dev}:${st.ino}`;
      if (visited.has(id)) return false;
      visited.add(id);
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      unreadableDirs++;
      return false;
    }
    entries.sort(byName);
    const scopeCount = scopes.length;
    if (respect) {
      for (const e of entries) {
        if (IGNORE_FILE_NAMES.includes(e.name) && !e.isDirectory()) {
          const rules = readRules(join(abs, e.name));
          if (rules) scopes.push({ dir: abs, rules });
        }
      }
    }
    stack.push({ abs, rel, entries, index: 0, scopeCount });
    return true;
  };

  const aborted = () => new Error("Operation aborted");
  if (opts.signal?.aborted) throw aborted();
  enter(opts.root, "");

  while (stack.length) {
    const frame = stack[stack.length - 1]!;
    if (frame.index >= frame.entries.length) {
      stack.pop();
      scopes.length = frame.scopeCount;
      continue;
    }
    const d = frame.entries[frame.index++]!;
    if ((++counter & 127) === 0 && Date.now() - lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((r) => setImmediate(r));
      lastYield = Date.now();
      if (opts.signal?.aborted) throw aborted();
    }
    const kind = kindOf(d);
    if (kind === "dir" && exclude.has(d.name)) continue;
    const abs = frame.abs + (frame.abs.endsWith(sep) ? "" : sep) + d.name;
    if (respect && scopes.length && matchIgnore(scopes, abs, kind === "dir", sep) === true) continue;
    const rel = frame.rel ? `${frame.rel}/${d.name}` : d.name;
    const r = opts.visit({ abs, rel, name: d.name, kind });
    if (r === "stop") return { stopped: true, unreadableDirs };
    if (kind === "dir" && r !== "skip") enter(abs, rel);
  }
  return { stopped: false, unreadableDirs };
}
