/**
 * Skills (the Agent Skills format): a folder with a SKILL.md whose frontmatter has `name` and
 * `description`. Only the names, descriptions and paths go into the system prompt; the model
 * reads the SKILL.md with the read tool when a task matches (progressive disclosure), or the user
 * inlines one with `/skill:name args`.
 *
 * Folder rules: a folder holding SKILL.md is a skill root (nothing below it is searched);
 * otherwise sub-folders are searched for SKILL.md; in "pi" folders (agent dir skills/, .pi/skills,
 * package skills/) plain .md files directly in the folder are skills too, in "agents" folders
 * (.agents/skills) they are not. Dot folders and node_modules are skipped.
 *
 * Validation follows the Agent Skills rules; problems are warnings and the skill still loads,
 * except a skill without a description, which is skipped. Two skills with one name: the first
 * found wins and the other is reported.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { type Diagnostic, collectSkillFiles } from "../../core/kernel/index.js";
import { parseFrontmatter, stripFrontmatter } from "./frontmatter.js";

export const MAX_SKILL_NAME = 64;
export const MAX_SKILL_DESCRIPTION = 1024;

export type ResourceLocation = "user" | "project" | "path";

export interface Skill {
  name: string;
  description: string;
  /** The SKILL.md (or .md) file. */
  filePath: string;
  /** The skill's folder: relative references in the file resolve against it. */
  baseDir: string;
  location: ResourceLocation;
  /** Hidden from the system prompt; only `/skill:name` loads it. */
  disableModelInvocation: boolean;
  frontmatter: Record<string, unknown>;
}

/** Problems with a skill name (empty when valid). `expected` is the folder (or file stem) name. */
export function validateSkillName(name: string, expected?: string): string[] {
  const errors: string[] = [];
  if (expected !== undefined && name !== expected) errors.push(`name "${name}" does not match its folder "${expected}"`);
  if (name.length === 0) errors.push("name is empty");
  if (name.length > MAX_SKILL_NAME) errors.push(`name is longer than ${MAX_SKILL_NAME} characters (${name.length})`);
  if (!/^[a-z0-9-]*$/.test(name)) errors.push("name may only hold lowercase letters a-z, digits and hyphens");
  if (name.startsWith("-") || name.endsWith("-")) errors.push("name must not start or end with a hyphen");
  if (name.includes("--")) errors.push("name must not hold two hyphens in a row");
  return errors;
}

export function validateSkillDescription(description: unknown): string[] {
  if (typeof description !== "string" || !description.trim()) return ["description is missing (the skill is not loaded)"];
  if (description.length > MAX_SKILL_DESCRIPTION) return [`description is longer than ${MAX_SKILL_DESCRIPTION} characters (${description.length})`];
  return [];
}

export interface LoadResult<T> {
  items: T[];
  diagnostics: Diagnostic[];
}

/** Read one skill file. Returns undefined (with diagnostics) when it cannot be used. */
export function loadSkillFile(filePath: string, location: ResourceLocation, diagnostics: Diagnostic[]): Skill | undefined {
  let text: string;
  try {
    text = readFileSync(filePath, "utf8");
  } catch (error) {
    diagnostics.push({ level: "warning", source: filePath, message: "cannot read skill file", error });
    return undefined;
  }
  let fm: Record<string, unknown>;
  try {
    fm = parseFrontmatter(text).frontmatter;
  } catch (error) {
    diagnostics.push({ level: "warning", source: filePath, message: `skill frontmatter does not parse: ${(error as Error).message}` });
    return undefined;
  }
  const isSkillMd = basename(filePath) === "SKILL.md";
  const dir = dirname(filePath);
  // A SKILL.md is named after its folder, a loose .md file after its file name.
  const expected = isSkillMd ? basename(dir) : basename(filePath).replace(/\.md$/i, "");
  const name = typeof fm.name === "string" && fm.name.trim() ? fm.name.trim() : expected;
  for (const m of validateSkillDescription(fm.description)) diagnostics.push({ level: "warning", source: filePath, message: `skill "${name}": ${m}` });
  if (typeof fm.description !== "string" || !fm.description.trim()) return undefined;
  for (const m of validateSkillName(name, expected)) diagnostics.push({ level: "warning", source: filePath, message: `skill "${name}": ${m}` });
  return {
    name,
    description: fm.description.trim(),
    filePath,
    baseDir: dir,
    location,
    disableModelInvocation: fm["disable-model-invocation"] === true,
    frontmatter: fm,
  };
}

/** The skill files under a folder (the walker in core/kernel/resource-walk.ts). */
export { collectSkillFiles };

/**
 * Load skills from files and folders in order; the first skill of a name wins, later ones are
 * reported as collisions. The same file reached twice (a symlink) is silently skipped.
 */
export function loadSkills(entries: Array<{ path: string; location: ResourceLocation; mode?: "pi" | "agents" }>): LoadResult<Skill> {
  const byName = new Map<string, Skill>();
  const seenFiles = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  const collisions: Diagnostic[] = [];
  const add = (file: string, location: ResourceLocation) => {
    let real = file;
    try {
      real = realpathSync(file);
    } catch {
      /* keep the path as given */
    }
    if (seenFiles.has(real)) return;
    const skill = loadSkillFile(file, location, diagnostics);
    if (!skill) return;
    const existing = byName.get(skill.name);
    if (existing) {
      collisions.push({
        level: "warning",
        source: file,
        message: `skill name "${skill.name}" is taken by ${existing.filePath}; this one is not loaded`,
      });
      return;
    }
    seenFiles.add(real);
    byName.set(skill.name, skill);
  };
  for (const e of entries) {
    let st;
    try {
      st = statSync(e.path);
    } catch {
      diagnostics.push({ level: "warning", source: e.path, message: "skill path does not exist" });
      continue;
    }
    if (st.isDirectory()) for (const f of collectSkillFiles(e.path, e.mode ?? "pi")) add(f, e.location);
    else if (e.path.endsWith(".md")) add(e.path, e.location);
    else diagnostics.push({ level: "warning", source: e.path, message: "skill path is not a .md file or a folder" });
  }
  return { items: [...byName.values()], diagnostics: [...diagnostics, ...collisions] };
}

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** The skills block of the system prompt ("" when no skill is visible to the model). */
export function formatSkillsForPrompt(skills: Skill[]): string {
  const visible = skills.filter((s) => !s.disableModelInvocation);
  if (!visible.length) return "";
  const lines = [
    "Skills: each one below is a set of instructions for a kind of task. When a task fits a skill's",
    "description, read its file (location) with the read tool first and follow it. Paths inside a skill",
    "file are relative to the folder that holds it.",
    "",
    "<available_skills>",
  ];
  for (const s of visible) {
    lines.push("  <skill>");
    lines.push(`    <name>${escapeXml(s.name)}</name>`);
    lines.push(`    <description>${escapeXml(s.description)}</description>`);
    lines.push(`    <location>${escapeXml(s.filePath)}</location>`);
    lines.push("  </skill>");
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}

/**
 * `/skill:name args` → the skill's body wrapped in a <skill> block, then the arguments.
 * Other text (or an unknown skill) comes back unchanged. A file that cannot be read throws.
 */
export function expandSkillCommand(text: string, skills: Skill[]): string {
  if (!text.startsWith("/skill:")) return text;
  const space = text.search(/\s/);
  const name = space === -1 ? text.slice(7) : text.slice(7, space);
  const args = space === -1 ? "" : text.slice(space + 1).trim();
  const skill = skills.find((s) => s.name === name);
  if (!skill) return text;
  const body = stripFrontmatter(readFileSync(skill.filePath, "utf8")).trim();
  const block = `<skill name="${skill.name}" location="${skill.filePath}">\nPaths in this skill are relative to ${skill.baseDir}.\n\n${body}\n</skill>`;
  return args ? `${block}\n\n${args}` : block;
}
