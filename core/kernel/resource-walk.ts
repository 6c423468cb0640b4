/**
 * The resource walker, defined once for the resources plugin (agent dir, project, settings paths)
 * and the packages plugin (a package's folders): which files a folder contributes as skills,
 * prompt templates or themes. Entries are visited in name order; links are followed (a broken
 * one is skipped); dot entries and node_modules are never entered.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export interface WalkEntry {
  name: string;
  path: string;
  kind: "file" | "dir";
}

/** A folder's entries (files and folders, links resolved), sorted by name; [] when unreadable. */
export function dirEntries(dir: string): WalkEntry[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: WalkEntry[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, e.name);
    let kind: WalkEntry["kind"] | undefined = e.isDirectory() ? "dir" : e.isFile() ? "file" : undefined;
    if (e.isSymbolicLink()) {
      try {
        const st = statSync(path);
        kind = st.isDirectory() ? "dir" : st.isFile() ? "file" : undefined;
      } catch {
        kind = undefined; // broken link
      }
    }
    if (kind) out.push({ name: e.name, path, kind });
  }
  return out;
}

const skipped = (name: string) => name.startsWith(".") || name === "node_modules";

/** Files under `dir` whose name matches `ext`: the folder itself, or (recursive) every folder below it. */
export function collectFiles(dir: string, ext: RegExp, opts: { recursive?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const e of dirEntries(dir)) {
    if (skipped(e.name)) continue;
    if (e.kind === "dir") {
      if (opts.recursive) out.push(...collectFiles(e.path, ext, opts));
    } else if (ext.test(e.name)) out.push(e.path);
  }
  return out;
}

/**
 * Skill files under `dir`: a folder holding SKILL.md is a skill root (nothing below it is
 * searched); otherwise its sub-folders are searched; in "pi" folders plain .md files directly in
 * `dir` are skills too, in "agents" folders (.agents/skills) they are not.
 */
export function collectSkillFiles(dir: string, mode: "pi" | "agents" = "pi"): string[] {
  const out: string[] = [];
  const walk = (d: string, root: boolean) => {
    const entries = dirEntries(d);
    const skillMd = entries.find((e) => e.name === "SKILL.md" && e.kind === "file");
    if (skillMd) return void out.push(skillMd.path);
    for (const e of entries) {
      if (skipped(e.name)) continue;
      if (e.kind === "dir") walk(e.path, false);
      else if (root && mode === "pi" && e.name.endsWith(".md")) out.push(e.path);
    }
  };
  walk(dir, true);
  return out;
}

/** "file", "dir" or undefined (missing, or something else), links followed. */
export function pathKind(path: string): "file" | "dir" | undefined {
  try {
    const st = statSync(path);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : undefined;
  } catch {
    return undefined;
  }
}

/** The files a path contributes as resources of a kind: a file is itself; a folder is searched. */
export function resourceFiles(kind: "skills" | "prompts" | "themes", path: string): string[] {
  const k = pathKind(path);
  if (k !== "dir") return k === "file" ? [path] : [];
  if (kind === "skills") return collectSkillFiles(path, "pi");
  return collectFiles(path, kind === "prompts" ? /\.md$/ : /\.json$/, { recursive: true });
}
