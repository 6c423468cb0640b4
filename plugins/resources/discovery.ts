/**
 * Where skills, prompt templates and themes come from, in precedence order (the first resource of
 * a name wins):
 *
 *   1. packages loaded for this run only (`-e npm:…`)
 *   2. project settings entries (`skills`, `prompts`, `themes` in .pi/settings.json)
 *   3. project folders: .pi/skills (and .agents/skills from the cwd up to the git root), .pi/prompts, .pi/themes
 *   4. global settings entries (agent dir settings.json)
 *   5. agent dir folders: skills/ (and ~/.agents/skills), prompts/, themes/
 *   6. installed packages (kernel service "package-resources")
 *   7. the command line: --skill, --prompt-template, --theme
 *   8. paths extensions return from the resources_discover hook
 *
 * --no-skills / --no-prompt-templates / --no-themes drop 2–6. Settings entries are resolved
 * against the folder of their settings file; patterns in those arrays ("!glob", "+path",
 * "-path", globs) filter the entries and the auto-discovered files of the same scope.
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { expandHome, resourceFiles } from "../../core/kernel/index.js";
import { applyPatterns, enabledByOverrides, isPattern } from "./patterns.js";
import { collectSkillFiles, type ResourceLocation } from "./skills.js";
import { collectTemplateFiles } from "./prompt-templates.js";

export type ResourceKind = "skills" | "prompts" | "themes";

export interface ResourceEntry {
  path: string;
  location: ResourceLocation;
  /** How to read a skills folder. */
  mode?: "pi" | "agents";
}

export interface PathLists {
  skills: string[];
  prompts: string[];
  themes: string[];
}

export interface DiscoveryInput {
  cwd: string;
  agentDir: string;
  /** Project config folder name, ".pi". */
  configDir: string;
  home?: string;
  globalSettings: Record<string, unknown>;
  projectSettings: Record<string, unknown>;
  /** Installed packages (already filtered by their settings). */
  packages?: Partial<PathLists>;
  /** Packages resolved for this run only (-e npm:…). */
  temporary?: Partial<PathLists>;
  /** Command-line paths (relative to cwd). */
  cli?: Partial<PathLists>;
  /** resources_discover results. */
  extra?: Partial<PathLists>;
  no?: Partial<Record<ResourceKind, boolean>>;
}

export function homeDir(): string {
  return process.env.HOME || homedir();
}

export function expandPath(p: string, base: string, home = homeDir()): string {
  const t = expandHome(p.trim(), home);
  return isAbsolute(t) ? t : resolve(base, t);
}

/** A `.git` file (a worktree or submodule pointing at its git folder). */
function isGitFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function findGitRoot(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    // A `.git` folder without HEAD (an empty placeholder) is no repository, as for git itself.
    const git = join(dir, ".git");
    if (existsSync(join(git, "HEAD")) || isGitFile(git)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** .agents/skills in the cwd and every parent up to the git root (or the filesystem root). */
export function ancestorAgentsSkillDirs(cwd: string): string[] {
  const out: string[] = [];
  const root = findGitRoot(cwd);
  let dir = resolve(cwd);
  for (;;) {
    out.push(join(dir, ".agents", "skills"));
    if (root && dir === root) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return out;
}

/** The files a folder contributes for a kind of resource (folders named in settings or packages). */
export function filesOf(kind: ResourceKind, path: string): string[] {
  return resourceFiles(kind, path);
}

function autoFiles(kind: ResourceKind, dir: string, mode: "pi" | "agents" = "pi"): string[] {
  if (!existsSync(dir)) return [];
  if (kind === "skills") return collectSkillFiles(dir, mode);
  if (kind === "prompts") return collectTemplateFiles(dir);
  return collectTemplateFiles(dir, /\.json$/);
}

function settingsArray(settings: Record<string, unknown>, kind: ResourceKind): string[] {
  const v = settings[kind];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** Entries for one kind, in precedence order, deduplicated by path. */
export function discover(kind: ResourceKind, input: DiscoveryInput): ResourceEntry[] {
  const home = input.home ?? homeDir();
  const out: ResourceEntry[] = [];
  const seen = new Set<string>();
  const push = (path: string, location: ResourceLocation, mode?: "pi" | "agents") => {
    const p = resolve(path);
    if (seen.has(p)) return;
    seen.add(p);
    out.push({ path: p, location, ...(mode ? { mode } : {}) });
  };
  for (const p of input.temporary?.[kind] ?? []) push(p, "path");
  if (!input.no?.[kind]) {
    const projectBase = join(input.cwd, input.configDir);
    const scopes: Array<{ settings: Record<string, unknown>; base: string; location: ResourceLocation; auto: Array<[string, "pi" | "agents"]> }> = [
      {
        settings: input.projectSettings,
        base: projectBase,
        location: "project",
        auto: [
          [join(projectBase, kind), "pi"],
          ...(kind === "skills"
            ? ancestorAgentsSkillDirs(input.cwd)
                .filter((d) => resolve(d) !== resolve(home, ".agents", "skills"))
                .map((d): [string, "agents"] => [d, "agents"])
            : []),
        ],
      },
      {
        settings: input.globalSettings,
        base: input.agentDir,
        location: "user",
        auto: [[join(input.agentDir, kind), "pi"], ...(kind === "skills" ? [[join(home, ".agents", "skills"), "agents"] as [string, "agents"]] : [])],
      },
    ];
    for (const s of scopes) {
      const entries = settingsArray(s.settings, kind);
      const plain = entries.filter((e) => !isPattern(e));
      const patterns = entries.filter((e) => isPattern(e));
      const files = plain.flatMap((e) => filesOf(kind, expandPath(e, s.base, home)));
      const enabled = applyPatterns(files, patterns, s.base);
      for (const f of files) if (enabled.has(f)) push(f, s.location);
      for (const [dir, mode] of s.auto) {
        for (const f of autoFiles(kind, dir, mode)) if (enabledByOverrides(f, patterns, s.base)) push(f, s.location, mode);
      }
    }
    for (const p of input.packages?.[kind] ?? []) push(p, "path");
  }
  for (const p of input.cli?.[kind] ?? []) push(expandPath(p, input.cwd, home), "path");
  for (const p of input.extra?.[kind] ?? []) push(expandPath(p, input.cwd, home), "path");
  return out;
}
