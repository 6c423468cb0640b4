/**
 * Context files: instructions for the model kept next to the code.
 *
 * In each folder the first of AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD that exists counts.
 * Order: the agent dir's file first (global instructions), then the folders from the outermost
 * down to the working directory, so the most specific file comes last. A file is listed once
 * even when the agent dir is also one of those folders.
 *
 * The folders searched are the working directory and its parents up to the repository root (a
 * folder holding `.git`) or the home folder, whichever comes first, and only while a folder is
 * owned by the user and not writable by everyone: another account's file in /tmp or a shared
 * parent never becomes the model's instructions. A context file itself must be owned by the
 * user (or root) and not writable by everyone.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Diagnostic } from "../../core/kernel/index.js";

export const CONTEXT_FILE_NAMES = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"] as const;

export interface ContextFile {
  path: string;
  content: string;
}

/** Owned by this user (or root, for files) and not writable by everyone; true where owners do not apply. */
function safeOwner(path: string, allowRoot: boolean): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  try {
    const st = statSync(path);
    if (st.mode & 0o002) return false;
    return st.uid === uid || (allowRoot && st.uid === 0);
  } catch {
    return false;
  }
}

function contextFileIn(dir: string, report?: (d: Diagnostic) => void, checked = false): ContextFile | undefined {
  for (const name of CONTEXT_FILE_NAMES) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    if (checked && !safeOwner(path, true)) {
      report?.({ level: "warning", source: path, message: "context file ignored: it is writable by everyone or owned by another user" });
      return undefined;
    }
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
  const home = resolve(homedir());
  let dir = resolve(opts.cwd);
  for (;;) {
    if (!safeOwner(dir, false)) break;
    const f = contextFileIn(dir, opts.report, true);
    if (f && !seen.has(f.path)) {
      chain.unshift(f);
      seen.add(f.path);
    }
    if (dir === home || existsSync(join(dir, ".git"))) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  out.push(...chain);
  return out;
}
