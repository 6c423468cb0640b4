/**
 * Patterns in a package manifest ("pi": {"skills": ["skills/*", "!skills/old"]}) and in the
 * object form of a settings `packages` entry ({"source": …, "skills": ["-skills/foo/SKILL.md"]}):
 *
 *   "glob"     keep matching files (no include pattern at all = keep everything)
 *   "!glob"    drop matching files
 *   "+path"    force an exact path back in
 *   "-path"    force an exact path out (beats "+")
 *
 * Globs: `*` and `?` stay in one path segment, `**` spans folders. A pattern is tried against
 * the path relative to the package root, the file name and the absolute path; for a SKILL.md
 * also against its folder.
 */
import { readdirSync, statSync } from "node:fs";
import picomatch from "picomatch";
import { basename, dirname, join, relative, resolve, sep } from "node:path";

const toPosix = (p: string) => p.split(sep).join("/");
const cache = new Map<string, RegExp>();

/** A glob as a RegExp (picomatch: `*` and `?` stay in one segment, `**` spans folders, dotfiles match). */
export function globToRegExp(glob: string): RegExp {
  let re = cache.get(glob);
  if (!re) cache.set(glob, (re = picomatch.makeRe(glob, { dot: true })));
  return re;
}

export const hasGlob = (s: string) => s.includes("*") || s.includes("?");
export const isOverride = (s: string) => s.startsWith("!") || s.startsWith("+") || s.startsWith("-");
const norm = (p: string) => toPosix(p).replace(/^\.\//, "").replace(/\/$/, "");

function names(file: string, root: string, withBase: boolean): string[] {
  const out = [toPosix(relative(root, file)), toPosix(file)];
  if (withBase) out.push(basename(file));
  if (basename(file) === "SKILL.md") {
    const d = dirname(file);
    out.push(toPosix(relative(root, d)), toPosix(d));
    if (withBase) out.push(basename(d));
  }
  return out;
}

export function matchesGlob(file: string, patterns: string[], root: string): boolean {
  const n = names(file, root, true);
  return patterns.some((p) => n.some((x) => globToRegExp(norm(p)).test(x)));
}

export function matchesExact(file: string, patterns: string[], root: string): boolean {
  const n = names(file, root, false);
  return patterns.some((p) => n.includes(norm(p)));
}

export function applyPatterns(all: string[], patterns: string[], root: string): Set<string> {
  const inc = patterns.filter((p) => !isOverride(p));
  const exc = patterns.filter((p) => p.startsWith("!")).map((p) => p.slice(1));
  const plus = patterns.filter((p) => p.startsWith("+")).map((p) => p.slice(1));
  const minus = patterns.filter((p) => p.startsWith("-")).map((p) => p.slice(1));
  let kept = inc.length ? all.filter((f) => matchesGlob(f, inc, root)) : [...all];
  if (exc.length) kept = kept.filter((f) => !matchesGlob(f, exc, root));
  for (const f of all) if (plus.length && !kept.includes(f) && matchesExact(f, plus, root)) kept.push(f);
  if (minus.length) kept = kept.filter((f) => !matchesExact(f, minus, root));
  return new Set(kept);
}

/** Files and folders under `root` matching a glob (relative to root), without dot entries. */
export function expandGlob(root: string, pattern: string): string[] {
  const p = norm(pattern);
  const segs = p.split("/");
  const firstGlob = segs.findIndex((s) => hasGlob(s));
  const staticPart = segs.slice(0, firstGlob === -1 ? segs.length : firstGlob).join("/");
  const start = resolve(root, staticPart);
  const re = globToRegExp(p);
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 32) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith(".")) continue;
      const full = join(dir, e.name);
      const rel = toPosix(relative(root, full));
      let isDir = e.isDirectory();
      if (e.isSymbolicLink()) {
        try {
          isDir = statSync(full).isDirectory();
        } catch {
          continue;
        }
      }
      if (re.test(rel)) out.push(full);
      if (isDir && (e.name !== "node_modules" || staticPart.includes("node_modules"))) walk(full, depth + 1);
    }
  };
  walk(start, 0);
  return out;
}
