/**
 * The default system prompt: a short head, the active tools with their prompt snippets and
 * guidelines, the date and the working directory. The resources plugin replaces the builder
 * (context files, SYSTEM.md, skills) through the kernel service "system-prompt".
 */
import type { ToolDefinition } from "../kernel/types.js";

export interface SystemPromptInput {
  cwd: string;
  tools: ToolDefinition[];
  /** --system-prompt: replaces the default head. */
  customPrompt?: string;
  /** --append-system-prompt. */
  appendPrompt?: string;
  date?: Date;
}

export type SystemPromptBuilder = (input: SystemPromptInput) => string | Promise<string>;

export const DEFAULT_HEAD =
  "You are an expert coding assistant working in the user's project through the tools below. " +
  "Read before you change, keep changes small and correct, and say plainly what you did.";

export function toolSection(tools: ToolDefinition[]): string {
  if (!tools.length) return "";
  const lines = ["Available tools:"];
  for (const t of tools) lines.push(`- ${t.name}: ${t.promptSnippet ?? firstLine(t.description)}`);
  const guidelines = tools.flatMap((t) => t.promptGuidelines ?? []);
  if (guidelines.length) {
    lines.push("", "Guidelines:");
    for (const g of [...new Set(guidelines)]) lines.push(`- ${g}`);
  }
  return lines.join("\n");
}

function firstLine(s: string): string {
  return (s ?? "").split("\n")[0]!.trim();
}

export const buildDefaultSystemPrompt: SystemPromptBuilder = (input) => {
  const parts: string[] = [input.customPrompt?.trim() || DEFAULT_HEAD];
  const tools = toolSection(input.tools);
  if (tools) parts.push(tools);
  if (input.appendPrompt?.trim()) parts.push(input.appendPrompt.trim());
  const date = (input.date ?? new Date()).toISOString().slice(0, 10);
  parts.push(`Current date: ${date}\nCurrent working directory: ${input.cwd}`);
  return parts.join("\n\n");
};
