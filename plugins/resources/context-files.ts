/**
 * Context files: instructions for the model kept next to the code.
 *
 * In each folder the first of AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD that exists counts.
 * Order: the agent dir's file first (global instructions), then every folder from the filesystem
 * root down to the working directory, so the most specific file comes last. A file is listed
 * once even when the agent dir is also one of those folders.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Diagnostic } from "../../core/types.js";

export const CONTEXT_FILE_NAMES = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"] as const;

export interface ContextFile {
  path: string;
  content: string;
}

function contextFileIn(dir: string, report?: (d: Diagnostic) => void): ContextFile | undefined {
  for (const name of CONTEXT_FILE_NAMES) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    try {
      return { path, content: readFileSync(path, "utf8") };
    } catch (error) {
      report?.({ level: "warning", source: path, message: "cannot read context file", error });
    }
  }
  return undefined;
}

export function loadContextFiles(opts: { cwd: string; agentDir: string; report?: (d: Diagnostic) => void }): ContextFile[] {
  const out: ContextFile[] = [];
  const seen = new Set<string>();
  const global = contextFileIn(opts.agentDir, opts.report);
  if (global) {
    out.push(global);
    seen.add(global.path);
  }
  const chain: ContextFile[] = [];
  let dir = resolve(opts.cwd);
  for (;;) {
    const f = contextFileIn(dir, opts.report);
    if (f && !seen.has(f.path)) {
      chain.unshift(f);
      seen.add(f.path);
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  out.push(...chain);
  return out;
}
