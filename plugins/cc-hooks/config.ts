/**
 * Reading Claude-Code-format `hooks` blocks from settings files and merging them.
 *
 * Sources, in this order (all of them run; none replaces another, as in Claude Code):
 *   1. global      <agentDir>/settings.json
 *   2. project     the project's .pi/settings.json (trusted projects only)
 *   3. claude      <cwd>/.claude/settings.json (trusted projects only)
 *   4. claude-local <cwd>/.claude/settings.local.json (trusted projects only)
 *
 * A malformed block is a diagnostic naming the file and the position (line/column for JSON
 * that does not parse, a JSON path such as `hooks.PreToolUse[0].hooks[1].timeout` for a
 * value of the wrong shape); the rest of the file still loads.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { jsonErrorPosition, CLAUDE_SETTINGS_DIR } from "../../core/kernel/index.js";

/** Events this plugin runs. */
export const SUPPORTED_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "Notification",
] as const;
export type HookEventName = (typeof SUPPORTED_EVENTS)[number];

/** Events Claude Code has that have no counterpart here (accepted, reported once, never run). */
export const UNSUPPORTED_EVENTS = new Set([
  "PermissionRequest", "PermissionDenied", "PostToolBatch", "UserPromptExpansion", "SubagentStart", "SubagentStop",
  "StopFailure", "PostCompact", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation",
  "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged",
  "FileChanged", "DirectoryAdded", "MessageDisplay", "PreSkillShellCommand", "PreModelSwitch", "PostModelSwitch",
]);

export type SourceKind = "global" | "project" | "claude" | "claude-local";

export interface CommandHook {
  event: HookEventName;
  /** The group's matcher as written ("" when omitted). */
  matcher: string;
  command: string;
  /** Seconds. */
  timeout?: number;
  /** The settings file it came from. */
  source: string;
  sourceKind: SourceKind;
  /** JSON path inside that file, e.g. hooks.PreToolUse[0].hooks[1]. */
  where: string;
}

export interface HookProblem {
  level: "error" | "warning";
  file: string;
  message: string;
}

export interface LoadedHooks {
  hooks: CommandHook[];
  problems: HookProblem[];
  /** Project files whose hooks were not loaded because the project is not trusted. */
  skipped: string[];
  /** Every file that was looked at and had a hooks block (for `hooks list`). */
  files: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

/** Parse one `hooks` value. Problems name `file` and the JSON path. */
export function parseHooksBlock(value: unknown, file: string, sourceKind: SourceKind): { hooks: CommandHook[]; problems: HookProblem[] } {
  const hooks: CommandHook[] = [];
  const problems: HookProblem[] = [];
  const bad = (where: string, what: string) => problems.push({ level: "error", file, message: `${where}: ${what}; ignored` });
  if (value === undefined) return { hooks, problems };
  if (!isObj(value)) {
    bad("hooks", "must be an object of event name → list of matcher groups");
    return { hooks, problems };
  }
  for (const [event, groups] of Object.entries(value)) {
    const base = `hooks.${event}`;
    if (UNSUPPORTED_EVENTS.has(event)) {
      problems.push({ level: "warning", file, message: `${base}: the ${event} event is not supported here; its hooks do not run (see docs/hooks.md)` });
      continue;
    }
    if (!(SUPPORTED_EVENTS as readonly string[]).includes(event)) {
      bad(base, `unknown hook event "${event}" (known: ${SUPPORTED_EVENTS.join(", ")})`);
      continue;
    }
    if (!Array.isArray(groups)) {
      bad(base, "must be a list of matcher groups [{matcher, hooks: [...]}]");
      continue;
    }
    groups.forEach((group, gi) => {
      const gw = `${base}[${gi}]`;
      if (!isObj(group)) return bad(gw, "must be an object {matcher?, hooks: [...]}");
      if (group.matcher !== undefined && typeof group.matcher !== "string") return bad(`${gw}.matcher`, "must be a string");
      const matcher = (group.matcher as string | undefined) ?? "";
      if (!isValidMatcher(matcher)) return bad(`${gw}.matcher`, `"${matcher}" is not a valid regular expression`);
      if (!Array.isArray(group.hooks)) return bad(`${gw}.hooks`, "must be a list of handlers [{type: \"command\", command}]");
      group.hooks.forEach((h, hi) => {
        const hw = `${gw}.hooks[${hi}]`;
        if (!isObj(h)) return bad(hw, "must be an object {type: \"command\", command, timeout?}");
        const type = h.type ?? "command";
        if (type !== "command") {
          problems.push({ level: "warning", file, message: `${hw}: handler type "${String(type)}" is not supported (only "command"); it does not run` });
          return;
        }
        if (typeof h.command !== "string" || !h.command.trim()) return bad(`${hw}.command`, "must be a non-empty string");
        if (h.timeout !== undefined && !(typeof h.timeout === "number" && Number.isFinite(h.timeout) && h.timeout > 0)) {
          return bad(`${hw}.timeout`, "must be a positive number of seconds");
        }
        hooks.push({ event: event as HookEventName, matcher, command: h.command, timeout: h.timeout as number | undefined, source: file, sourceKind, where: hw });
      });
    });
  }
  return { hooks, problems };
}

/** Matchers made only of name characters are exact names or `|`/`,` lists; anything else is a regular expression. */
export function isValidMatcher(m: string): boolean {
  if (m.trim() === "*" || isPlainMatcher(m)) return true;
  try {
    new RegExp(m);
    return true;
  } catch {
    return false;
  }
}
function isPlainMatcher(m: string): boolean {
  return /^[A-Za-z0-9_\- ,|]*$/.test(m);
}

/** Whether `matcher` selects any of `names` (Claude Code's rules: `*`/empty = all, plain = exact list, else unanchored regex). */
export function matches(matcher: string, names: readonly string[]): boolean {
  const m = matcher.trim();
  if (m === "" || m === "*") return true;
  if (isPlainMatcher(m)) {
    const list = m.split(/[|,]/).map((x) => x.trim()).filter(Boolean);
    return names.some((n) => list.includes(n));
  }
  let re: RegExp;
  try {
    re = new RegExp(m);
  } catch {
    return false;
  }
  return names.some((n) => re.test(n));
}

/** Read a JSON settings file's `hooks`; a file that does not parse is a problem with line and column. */
export function readHooksFile(file: string, sourceKind: SourceKind): { hooks: CommandHook[]; problems: HookProblem[]; present: boolean } {
  if (!existsSync(file)) return { hooks: [], problems: [], present: false };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return { hooks: [], problems: [{ level: "error", file, message: `cannot read: ${(error as Error).message}` }], present: true };
  }
  if (!text.trim()) return { hooks: [], problems: [], present: false };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { hooks: [], problems: [{ level: "error", file, message: `not valid JSON at ${errorPosition(text, error)}; its hooks are ignored` }], present: true };
  }
  if (!isObj(data)) return { hooks: [], problems: [{ level: "error", file, message: "must hold a JSON object; its hooks are ignored" }], present: true };
  if (data.hooks === undefined) return { hooks: [], problems: [], present: false };
  return { ...parseHooksBlock(data.hooks, file, sourceKind), present: true };
}

export interface LoadOptions {
  agentDir: string;
  cwd: string;
  trusted: boolean;
  /** The global settings object as the kernel read it (its file is <agentDir>/settings.json). */
  globalSettings: Obj;
  /** The project settings object and its file, as the kernel read them. */
  projectSettings: Obj;
  projectFile?: string;
  /** The project folder name (".pi"). */
  configDir: string;
}

/** Every hook in effect, in the documented order. */
export function loadHooks(o: LoadOptions): LoadedHooks {
  const out: LoadedHooks = { hooks: [], problems: [], skipped: [], files: [] };
  const add = (r: { hooks: CommandHook[]; problems: HookProblem[] }, file: string, present: boolean) => {
    out.hooks.push(...r.hooks);
    out.problems.push(...r.problems);
    if (present) out.files.push(file);
  };
  const globalFile = join(o.agentDir, "settings.json");
  add(parseHooksBlock(o.globalSettings.hooks, globalFile, "global"), globalFile, o.globalSettings.hooks !== undefined);

  const projectFile = o.projectFile ?? join(o.cwd, o.configDir, "settings.json");
  const projectHas = o.projectSettings.hooks !== undefined;
  if (projectHas) {
    if (o.trusted) add(parseHooksBlock(o.projectSettings.hooks, projectFile, "project"), projectFile, true);
    else out.skipped.push(projectFile);
  }
  for (const [name, kind] of [["settings.json", "claude"], ["settings.local.json", "claude-local"]] as const) {
    const file = join(o.cwd, CLAUDE_SETTINGS_DIR, name);
    if (!o.trusted) {
      if (existsSync(file)) {
        // Say that hooks were skipped only when the file has some (read, never run).
        const r = readHooksFile(file, kind);
        if (r.present) out.skipped.push(file);
      }
      continue;
    }
    const r = readHooksFile(file, kind);
    add(r, file, r.present);
  }
  return out;
}

/**
 * "line L, column C" of a JSON syntax error. Node's own message carries a position only for some
 * errors, so without one jsonc-parser (loaded here, on this error path only) locates it.
 */
function errorPosition(text: string, error: unknown): string {
  const fromNode = jsonErrorPosition(text, error);
  if (fromNode.startsWith("line ")) return fromNode;
  try {
    const jsonc = createRequire(import.meta.url)("jsonc-parser") as typeof import("jsonc-parser");
    const errors: import("jsonc-parser").ParseError[] = [];
    jsonc.parse(text, errors, { disallowComments: true, allowTrailingComma: false });
    if (errors.length) {
      const before = text.slice(0, errors[0]!.offset);
      const line = before.split("\n").length;
      return `line ${line}, column ${errors[0]!.offset - before.lastIndexOf("\n")} (${jsonc.printParseErrorCode(errors[0]!.error)})`;
    }
  } catch {
    /* fall back to Node's message */
  }
  return fromNode;
}
