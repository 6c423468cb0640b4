/**
 * pi 1.6's built-in extensions (`builtin:mcp`, `builtin:codemode`, `builtin:tool-search`,
 * `builtin:llama.cpp`) and the entries of the `extensions` setting that turn them on or off.
 * Here they are built-in plugins (the CLI applies the result, sdk/main.ts; `pi config` lists it);
 * what a name means is in docs/pi-1.6-compat.md.
 *
 * As 1.6 resolves them: each is on unless the global `extensions` list turns it off — `!glob`
 * matches names (`!builtin:*` turns all off), `+builtin:<name>` turns one on and
 * `-builtin:<name>` off (exact names, applied in that order); a `+`, `-` or `!` entry of the
 * project's list that matches a name decides for that name instead (last match wins);
 * `--no-extensions` turns all off, and `-e builtin:<name>` turns one on for the run.
 */
import { toolPattern } from "./tool-selection.js";

export const BUILTIN_EXTENSION_NAMES = ["mcp", "codemode", "tool-search", "llama.cpp"] as const;
const PREFIX = "builtin:";

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** Whether an `extensions` entry is about built-in extensions (and so is not a path to load). */
export function isBuiltinEntry(entry: string): boolean {
  return /^[+!-]?builtin:/.test(entry.trim());
}

/** `*` matches any characters (the names have no folders, so this is all of 1.6's glob that applies). */
function matches(pattern: string, path: string): boolean {
  return toolPattern(pattern).test(path);
}

export interface BuiltinResolution {
  enabled: Set<string>;
  /** Entries that match no built-in extension (said once, as a warning). */
  problems: string[];
}

export function resolveBuiltinExtensions(opts: {
  global: unknown;
  project?: unknown;
  noExtensions?: boolean;
  /** Names given with `-e builtin:<name>`. */
  explicit?: string[];
}): BuiltinResolution {
  const global = strings(opts.global).map((s) => s.trim());
  const project = strings(opts.project).map((s) => s.trim());
  const problems: string[] = [];
  const enabled = new Set<string>();
  const paths = BUILTIN_EXTENSION_NAMES.map((n) => PREFIX + n);
  for (const entry of [...global, ...project]) {
    if (!isBuiltinEntry(entry) || !/^[+-]/.test(entry)) continue;
    if (!paths.includes(entry.slice(1))) {
      problems.push(
        entry.includes("*")
          ? `"${entry}" matches no built-in extension: a "${entry[0]}" entry takes an exact name; to turn them all off write "!builtin:*"`
          : `"${entry}" names no built-in extension (known: ${paths.join(", ")})`,
      );
    }
  }
  for (const path of paths) {
    let on = true;
    if (global.some((e) => e.startsWith("!") && matches(e.slice(1), path))) on = false;
    if (global.includes(`+${path}`)) on = true;
    if (global.includes(`-${path}`)) on = false;
    for (const e of project) {
      if (e.startsWith("!") && matches(e.slice(1), path)) on = false;
      else if (e === `+${path}`) on = true;
      else if (e === `-${path}`) on = false;
    }
    if (opts.noExtensions) on = false;
    if (on) enabled.add(path.slice(PREFIX.length));
  }
  for (const n of opts.explicit ?? []) enabled.add(n);
  return { enabled, problems };
}
