/**
 * Prompt templates: Markdown files whose name is a slash command (`review.md` → `/review`).
 * `/name args` expands to the file's body with the arguments substituted:
 *
 *   $1, $2, …        one argument (missing → empty)
 *   ${1:-default}    that argument, or `default` when it is missing or empty
 *   $@, $ARGUMENTS   all arguments, joined by spaces
 *   ${@:-default}    all arguments, or `default` when there are none
 *   ${@:N}           arguments from the Nth on (1-based)
 *   ${@:N:L}         L arguments from the Nth
 *
 * Arguments are split on spaces and tabs; '…' and "…" group words (the quotes are dropped).
 * Substitution is one pass over the template: text inside arguments is never substituted again.
 * The description is the frontmatter `description`, else the first non-empty body line (cut at
 * 60 characters). Folders are read non-recursively.
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { type Diagnostic, collectFiles } from "../../core/kernel/index.js";
import { parseFrontmatter } from "./frontmatter.js";
import type { LoadResult, ResourceLocation } from "./skills.js";

export interface PromptTemplate {
  name: string;
  description: string;
  argumentHint?: string;
  /** The body (frontmatter removed). */
  content: string;
  filePath: string;
  location: ResourceLocation;
}

/** Split an argument string like a shell would for plain words and quotes (no escapes). */
export function parseCommandArgs(input: string): string[] {
  const args: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let has = false;
  for (const ch of input) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (ch === " " || ch === "\t" || ch === "\n") {
      if (cur || has) args.push(cur);
      cur = "";
      has = false;
    } else cur += ch;
  }
  if (cur || has) args.push(cur);
  return args;
}

/** Replace the placeholders of `template` with `args` in one pass. */
export function substituteArgs(template: string, args: string[]): string {
  const all = args.join(" ");
  return template.replace(/\$\{(\d+|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS|\$@|\$(\d+)/g, (_m, which?: string, fallback?: string, start?: string, len?: string, pos?: string) => {
    if (which !== undefined) {
      const value = which === "@" ? all : (args[Number(which) - 1] ?? "");
      return value === "" ? (fallback ?? "") : value;
    }
    if (pos !== undefined) return args[Number(pos) - 1] ?? "";
    if (start !== undefined) {
      const from = Math.max(0, Number(start) - 1);
      return (len !== undefined ? args.slice(from, from + Number(len)) : args.slice(from)).join(" ");
    }
    return all;
  });
}

export function loadTemplateFile(filePath: string, location: ResourceLocation, diagnostics: Diagnostic[]): PromptTemplate | undefined {
  let text: string;
  try {
    text = readFileSync(filePath, "utf8");
  } catch (error) {
    diagnostics.push({ level: "warning", source: filePath, message: "cannot read prompt template", error });
    return undefined;
  }
  let fm: Record<string, unknown> = {};
  let body: string;
  try {
    ({ frontmatter: fm, body } = parseFrontmatter(text));
  } catch (error) {
    diagnostics.push({ level: "warning", source: filePath, message: `prompt template frontmatter does not parse: ${(error as Error).message}` });
    return undefined;
  }
  let description = typeof fm.description === "string" ? fm.description.trim() : "";
  if (!description) {
    const first = body.split("\n").find((l) => l.trim())?.trim() ?? "";
    description = first.length > 60 ? `${first.slice(0, 60)}...` : first;
  }
  const hint = fm["argument-hint"];
  return {
    name: basename(filePath).replace(/\.md$/i, ""),
    description,
    ...(typeof hint === "string" && hint ? { argumentHint: hint } : {}),
    content: body,
    filePath,
    location,
  };
}

/** The .md files (or other `ext`) directly in `dir`, sorted by name. */
export function collectTemplateFiles(dir: string, ext = /\.md$/): string[] {
  return collectFiles(dir, ext);
}

/** Load templates from files and folders in order; the first of a name wins, later ones are reported. */
export function loadPromptTemplates(entries: Array<{ path: string; location: ResourceLocation }>): LoadResult<PromptTemplate> {
  const byName = new Map<string, PromptTemplate>();
  const diagnostics: Diagnostic[] = [];
  const collisions: Diagnostic[] = [];
  const add = (file: string, location: ResourceLocation) => {
    const t = loadTemplateFile(file, location, diagnostics);
    if (!t) return;
    const existing = byName.get(t.name);
    if (existing) {
      if (existing.filePath !== t.filePath) {
        collisions.push({ level: "warning", source: file, message: `prompt template "/${t.name}" is taken by ${existing.filePath}; this one is not loaded` });
      }
      return;
    }
    byName.set(t.name, t);
  };
  for (const e of entries) {
    let st;
    try {
      st = statSync(e.path);
    } catch {
      diagnostics.push({ level: "warning", source: e.path, message: "prompt template path does not exist" });
      continue;
    }
    if (st.isDirectory()) for (const f of collectTemplateFiles(e.path)) add(f, e.location);
    else if (e.path.endsWith(".md")) add(e.path, e.location);
    else diagnostics.push({ level: "warning", source: e.path, message: "prompt template path is not a .md file or a folder" });
  }
  return { items: [...byName.values()], diagnostics: [...diagnostics, ...collisions] };
}

/** `/name args` → the template with arguments substituted; anything else comes back unchanged. */
export function expandPromptTemplate(text: string, templates: PromptTemplate[]): string {
  if (!text.startsWith("/")) return text;
  const space = text.search(/\s/);
  const name = space === -1 ? text.slice(1) : text.slice(1, space);
  const t = templates.find((x) => x.name === name);
  if (!t) return text;
  return substituteArgs(t.content, parseCommandArgs(space === -1 ? "" : text.slice(space + 1)));
}
