/**
 * The full system prompt, in this order:
 *
 *   head           --system-prompt, else SYSTEM.md (project .pi/, else the agent dir), else the default
 *   tools          the active tools' snippets and guidelines (core toolSection)
 *   append         APPEND_SYSTEM.md (project .pi/, else the agent dir), then --append-system-prompt
 *   # Project Context   each context file as "## <path>" and its text, outermost first
 *   skills         the <available_skills> block (only when the read tool is active)
 *   date and cwd   "Current date: YYYY-MM-DD" (local date) and "Current working directory: <cwd>"
 */
import { DEFAULT_HEAD, toolSection, type SystemPromptInput } from "../../core/engine/index.js";
import type { ContextFile } from "./context-files.js";
import { formatSkillsForPrompt, type Skill } from "./skills.js";

export interface ResourcePromptParts {
  /** SYSTEM.md text (used when there is no --system-prompt). */
  systemFile?: string;
  /** APPEND_SYSTEM.md text. */
  appendFile?: string;
  contextFiles: ContextFile[];
  skills: Skill[];
}

export function localDate(d: Date): string {
  const mm = String(d.getMonth() + 1).padStart(2, "0");
  const dd = String(d.getDate()).padStart(2, "0");
  return `${d.getFullYear()}-${mm}-${dd}`;
}

export function buildResourceSystemPrompt(input: SystemPromptInput, parts: ResourcePromptParts): string {
  const sections: string[] = [];
  const head = input.customPrompt?.trim() || parts.systemFile?.trim() || DEFAULT_HEAD;
  sections.push(head);
  const tools = toolSection(input.tools);
  if (tools) sections.push(tools);
  for (const extra of [parts.appendFile, input.appendPrompt]) if (extra?.trim()) sections.push(extra.trim());
  if (parts.contextFiles.length) {
    const ctx = ["# Project Context", "", "Instructions from the context files of this project, from the most general to the most specific:"];
    for (const f of parts.contextFiles) ctx.push("", `## ${f.path}`, "", f.content.trim());
    sections.push(ctx.join("\n"));
  }
  if (input.tools.some((t) => t.name === "read")) {
    const block = formatSkillsForPrompt(parts.skills);
    if (block) sections.push(block);
  }
  const cwd = input.cwd.replace(/\\/g, "/");
  sections.push(`Current date: ${localDate(input.date ?? new Date())}\nCurrent working directory: ${cwd}`);
  return sections.join("\n\n");
}
