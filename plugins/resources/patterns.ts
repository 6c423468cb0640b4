/**
 * Path patterns in the `skills`, `prompts`, `themes` (and `extensions`) settings arrays:
 *
 *   "path"        a file or folder to load (relative to the settings file's folder)
 *   "glob*"       keep only matching files (a pattern with * or ?)
 *   "!glob"       drop matching files
 *   "+path"       force a file back in (exact path)
 *   "-path"       force a file out (exact path; beats "+")
 *
 * Globs: `*` and `?` stay inside one path segment, `**` spans folders. A pattern is tried against
 * the path relative to the base folder, the file name and the absolute path; for a SKILL.md also
 * against its folder (so "-skills/foo" disables the skill in skills/foo/SKILL.md).
 */
import { createRequire } from "node:module";
import { basename, dirname, relative, sep } from "node:path";

type Picomatch = typeof import("picomatch");
/**
 * picomatch, loaded on the first glob: most starts have no pattern in these settings, and its
 * ~57 KB would otherwise be compiled at every start (Node 20 has no compile cache).
 */
let picomatch: Picomatch | undefined;
const loadPicomatch = (): Picomatch => (picomatch ??= createRequire(import.meta.url)("picomatch") as Picomatch);

const toPosix = (p: string) => p.split(sep).join("/");

const globCache = new Map<string, RegExp>();

/** A glob as a RegExp (picomatch: `*` and `?` stay in one segment, `**` spans folders, dotfiles match). */
export function globToRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (!re) globCache.set(glob, (re = loadPicomatch().makeRe(glob, { dot: true })));
  return re;
}

export const hasGlob = (s: string) => s.includes("*") || s.includes("?");
export const isOverride = (s: string) => s.startsWith("!") || s.startsWith("+") || s.startsWith("-");
export const isPattern = (s: string) => isOverride(s) || hasGlob(s);

function candidates(file: string, baseDir: string): string[] {
  const out = [toPosix(relative(baseDir, file)), basename(file), toPosix(file)];
  if (basename(file) === "SKILL.md") {
    const dir = dirname(file);
    out.push(toPosix(relative(baseDir, dir)), basename(dir), toPosix(dir));
  }
  return out;
}

export function matchesGlob(file: string, patterns: string[], baseDir: string): boolean {
  const names = candidates(file, baseDir);
  return patterns.some((p) => {
    const re = globToRegExp(toPosix(p).replace(/^\.\//, ""));
    return names.some((n) => re.test(n));
  });
}

export function matchesExact(file: string, patterns: string[], baseDir: string): boolean {
  // Exact patterns never match a bare file or folder name (indexes 1 and 4).
  const names = candidates(file, baseDir).filter((_, i) => i !== 1 && i !== 4);
  return patterns.some((p) => {
    const norm = toPosix(p).replace(/^\.\//, "").replace(/\/$/, "");
    return names.includes(norm);
  });
}

/** The files of `all` that the patterns keep (see the module comment). */
export function applyPatterns(all: string[], patterns: string[], baseDir: string): Set<string> {
  const includes: string[] = [];
  const excludes: string[] = [];
  const force: string[] = [];
  const forceOut: string[] = [];
  for (const p of patterns) {
    if (p.startsWith("+")) force.push(p.slice(1));
    else if (p.startsWith("-")) forceOut.push(p.slice(1));
    else if (p.startsWith("!")) excludes.push(p.slice(1));
    else includes.push(p);
  }
  let kept = includes.length ? all.filter((f) => matchesGlob(f, includes, baseDir)) : [...all];
  if (excludes.length) kept = kept.filter((f) => !matchesGlob(f, excludes, baseDir));
  if (force.length) for (const f of all) if (!kept.includes(f) && matchesExact(f, force, baseDir)) kept.push(f);
  if (forceOut.length) kept = kept.filter((f) => !matchesExact(f, forceOut, baseDir));
  return new Set(kept);
}

/** For auto-discovered files: only the override patterns (!, +, -) of a settings array apply. */
export function enabledByOverrides(file: string, patterns: string[], baseDir: string): boolean {
  const ex = patterns.filter((p) => p.startsWith("!")).map((p) => p.slice(1));
  const inc = patterns.filter((p) => p.startsWith("+")).map((p) => p.slice(1));
  const out = patterns.filter((p) => p.startsWith("-")).map((p) => p.slice(1));
  let enabled = true;
  if (ex.length && matchesGlob(file, ex, baseDir)) enabled = false;
  if (inc.length && matchesExact(file, inc, baseDir)) enabled = true;
  if (out.length && matchesExact(file, out, baseDir)) enabled = false;
  return enabled;
}
