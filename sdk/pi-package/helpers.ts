/**
 * Helpers the pi 1.6 package exports (names and signatures of its dist/index.d.ts), built on
 * this project's own pieces: key hints from the TUI's default keybindings, the TUI's theme and
 * highlighter, the edit tool's line diff, the resources plugin's skill and context-file loaders.
 * Nothing here loads pi-tui (the pi-tui components are in modes/tui/pi-components/).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { getAgentDir } from "../../plugins/extensions/helpers.js";
import { loadSkills as loadSkillEntries, type Skill as OurSkill } from "../../plugins/resources/skills.js";
import { loadContextFiles } from "../../plugins/resources/context-files.js";
import { diffLines } from "../../plugins/tools/edit-diff.js";
import { detectImageMime } from "../file-args.js";
import { packageInfo } from "../package-info.js";
import { Theme, builtinTheme } from "../../modes/tui/theme.js";
import { highlightCode as highlightWith, languageFromPath } from "../../modes/tui/highlight.js";
import { getActiveTheme, setActiveTheme } from "../../modes/tui/pi-theme.js";
import { colorDiffLines } from "../../modes/tui/format.js";
import type { Diagnostic } from "../../core/kernel/types.js";

export { Theme };
export { copyToClipboard, keyHint, keyText, rawKeyHint } from "../../modes/tui/pi-components/hints.js";
export { formatReadLineRange, parseSkillBlock, truncateToVisualLines, type ParsedSkillBlock, type VisualTruncateResult } from "../../modes/tui/format.js";

// ---- theme and code ----------------------------------------------------------------------------

/** Select the theme the exported theme helpers use: "dark" (default) or "light". */
export function initTheme(themeName?: string, _enableWatcher?: boolean): void {
  const name = themeName ?? "dark";
  if (name !== "dark" && name !== "light") throw new Error(`initTheme: unknown theme "${name}" (built-in themes: dark, light)`);
  setActiveTheme(builtinTheme(name));
}

/** The highlighter's language for a file path (by extension), or undefined. */
export function getLanguageFromPath(filePath: string): string | undefined {
  return languageFromPath(filePath);
}

/** `code` highlighted with the active theme, one string per source line. */
export function highlightCode(code: string, lang?: string): string[] {
  return highlightWith(code, lang, getActiveTheme());
}

// ---- diffs -----------------------------------------------------------------------------------------

/** A unified diff (`--- a/path`, `+++ b/path`, `@@` hunks with `contextLines` of context). */
export function generateUnifiedPatch(path: string, oldContent: string, newContent: string, contextLines = 3): string {
  type Line = { tag: " " | "-" | "+"; text: string; a: number; b: number };
  const lines: Line[] = [];
  let a = 1, b = 1;
  const body = (t: string) => (t.endsWith("\n") ? t.slice(0, -1) : t);
  for (const part of diffLines(body(oldContent), body(newContent))) {
    for (const text of part.lines) {
      if (part.kind === "equal") lines.push({ tag: " ", text, a: a++, b: b++ });
      else if (part.kind === "removed") lines.push({ tag: "-", text, a: a++, b });
      else lines.push({ tag: "+", text, a, b: b++ });
    }
  }
  const out = [`--- a/${path}`, `+++ b/${path}`];
  let i = 0;
  while (i < lines.length) {
    while (i < lines.length && lines[i]!.tag === " ") i++;
    if (i >= lines.length) break;
    const start = Math.max(0, i - contextLines);
    let end = i;
    // extend the hunk while the next change is within 2 × context lines
    for (;;) {
      while (end < lines.length && lines[end]!.tag !== " ") end++;
      let next = end;
      while (next < lines.length && lines[next]!.tag === " ") next++;
      if (next < lines.length && next - end <= 2 * contextLines) end = next;
      else break;
    }
    const stop = Math.min(lines.length, end + contextLines);
    const hunk = lines.slice(start, stop);
    const oldCount = hunk.filter((l) => l.tag !== "+").length;
    const newCount = hunk.filter((l) => l.tag !== "-").length;
    const oldStart = oldCount ? hunk.find((l) => l.tag !== "+")!.a : hunk[0]!.a - 1;
    const newStart = newCount ? hunk.find((l) => l.tag !== "-")!.b : hunk[0]!.b - 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const l of hunk) out.push(l.tag + l.text);
    i = stop;
  }
  return out.join("\n") + "\n";
}

export interface RenderDiffOptions {
  filePath?: string;
}

/** A diff in the edit tool's format coloured with the active theme (see colorDiffLines). */
export function renderDiff(diffText: string, _options?: RenderDiffOptions): string {
  return colorDiffLines(diffText, getActiveTheme()).join("\n");
}

// ---- sources, package, resources ------------------------------------------------------------------

export interface SyntheticSourceInfoOptions {
  source: string;
  scope?: "user" | "project" | "temporary";
  origin?: "package" | "top-level";
  baseDir?: string;
  changelogPath?: string;
}

/** The sourceInfo of a resource that has no file of its own (a tool or command made in code). */
export function createSyntheticSourceInfo(path: string, options: SyntheticSourceInfoOptions) {
  return {
    path,
    source: options.source,
    scope: options.scope ?? "temporary",
    origin: options.origin ?? "top-level",
    baseDir: options.baseDir,
    ...(options.changelogPath ? { changelogPath: options.changelogPath } : {}),
  };
}

/** This package's root folder. */
export function getPackageDir(): string {
  return packageInfo().root;
}
export function getReadmePath(): string {
  return join(getPackageDir(), "README.md");
}
export function getDocsPath(): string {
  return join(getPackageDir(), "docs");
}
export function getExamplesPath(): string {
  return join(getPackageDir(), "examples");
}

/** The custom entry type pi 1.6 keeps a virtual model's state under. */
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";

/** The image type of a file by its first bytes (png, jpeg, gif, webp), or null. */
export async function detectSupportedImageMimeTypeFromFile(filePath: string): Promise<string | null> {
  const fh = await open(filePath, "r");
  try {
    const buf = Buffer.alloc(64);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return detectImageMime(buf.subarray(0, bytesRead)) ?? null;
  } finally {
    await fh.close();
  }
}

/** The credential stored for a provider in auth.json (the agent dir's by default), or undefined. */
export function readStoredCredential(providerId: string, authPath: string = join(getAgentDir(), "auth.json")): unknown {
  try {
    const data = JSON.parse(readFileSync(authPath, "utf8").replace(/^\uFEFF/, "")) as Record<string, unknown>;
    return data[providerId];
  } catch {
    return undefined;
  }
}

export interface Skill {
  name: string;
  description: string;
  filePath: string;
  baseDir: string;
  sourceInfo: ReturnType<typeof createSyntheticSourceInfo>;
  disableModelInvocation: boolean;
}
export interface LoadSkillsResult {
  skills: Skill[];
  diagnostics: Diagnostic[];
}

function toSkill(s: OurSkill, source: string): Skill {
  return {
    name: s.name,
    description: s.description,
    filePath: s.filePath,
    baseDir: s.baseDir,
    sourceInfo: createSyntheticSourceInfo(s.filePath, { source, scope: s.location === "project" ? "project" : s.location === "user" ? "user" : "temporary", baseDir: s.baseDir }),
    disableModelInvocation: s.disableModelInvocation,
  };
}

/** The skills in one folder (SKILL.md folders, and direct .md files at its root). */
export function loadSkillsFromDir(options: { dir: string; source: string }): LoadSkillsResult {
  if (!existsSync(options.dir) || !statSync(options.dir).isDirectory()) return { skills: [], diagnostics: [] };
  const r = loadSkillEntries([{ path: options.dir, location: "path", mode: "pi" }]);
  return { skills: r.items.map((s) => toSkill(s, options.source)), diagnostics: r.diagnostics };
}

/** Skills from the agent dir's and the project's skills folders plus `skillPaths`. */
export function loadSkills(options: { cwd?: string; agentDir?: string; skillPaths?: string[]; includeDefaults?: boolean } = {}): LoadSkillsResult {
  const cwd = options.cwd ?? process.cwd();
  const agentDir = options.agentDir ?? getAgentDir();
  const entries: Array<{ path: string; location: "user" | "project" | "path"; mode?: "pi" | "agents" }> = [];
  if (options.includeDefaults !== false) {
    entries.push({ path: join(agentDir, "skills"), location: "user" }, { path: join(cwd, ".pi", "skills"), location: "project" });
  }
  for (const p of options.skillPaths ?? []) entries.push({ path: isAbsolute(p) ? p : resolve(cwd, p), location: "path" });
  const r = loadSkillEntries(entries.filter((e) => existsSync(e.path)));
  return { skills: r.items.map((s) => toSkill(s, s.location)), diagnostics: r.diagnostics };
}

/** AGENTS.md / CLAUDE.md files that apply to `cwd` (the agent dir's, then from the root down). */
export function loadProjectContextFiles(options: { cwd: string; agentDir: string }): Array<{ path: string; content: string }> {
  return loadContextFiles({ cwd: options.cwd, agentDir: options.agentDir }).map((f) => ({ path: f.path, content: f.content }));
}
