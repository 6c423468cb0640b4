/**
 * Permission rules: `Tool` or `Tool(pattern)`.
 *
 * - `Tool` is a tool name, or a glob over tool names (`mcp__*`); bare, it matches every call.
 * - bash: `pattern` is a command glob (`*` = any characters, spaces and slashes included;
 *   `?` = one character), matched against the whole command, against each simple command
 *   in it (split at `;`, `&&`, `||`, `|` and newlines), whitespace runs collapsed, and — once
 *   any bash rule exists — against each simple command of the parsed command (bash-analysis.ts:
 *   quotes and escapes removed, wrappers stripped, `/bin/rm` → `rm`, subshells, groups, bodies
 *   and `sh -c` scripts included). A command that cannot be analysed statically asks (no UI:
 *   denied) while a bash deny or ask rule exists.
 *   A deny or ask rule fires when any part matches; an allow rule covers a command only when
 *   every part is matched by some allow rule (so `bash(git *)` does not allow
 *   `git status; rm -rf /`).
 * - tools with a path argument (read, write, edit, ls, grep, find, …): `pattern` is a path
 *   glob (`**` = any number of folders, `*` = within one name, `?` = one character); relative
 *   patterns are relative to the working folder, `~` is the home folder.
 * - any other tool: `pattern` is a glob over the JSON text of the arguments.
 *
 * Precedence: deny, then ask, then allow, then the built-in default (dangerous bash asks,
 * everything else is allowed).
 */
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, posix, resolve } from "node:path";
import { expandHome, pathSpellings } from "../../core/kernel/index.js";
import { analyzeBash, type BashAnalysis } from "./bash-analysis.js";

export type Decision = "allow" | "ask" | "deny";

export interface PermissionPolicy {
  allow: string[];
  ask: string[];
  deny: string[];
}

export interface ParsedRule {
  text: string;
  tool: RegExp;
  pattern?: string;
}

export interface Evaluation {
  decision: Decision;
  /** The rule that decided, or undefined for the built-in default. */
  rule?: string;
  /** Why (for ask/deny): the rule or the built-in danger found. */
  reason?: string;
}

const RULE_RE = /^\s*([A-Za-z0-9_.*?:\-]+)\s*(?:\(([\s\S]*)\))?\s*$/;

/** Parse one rule; returns an error message for a malformed one. */
export function parseRule(text: unknown): ParsedRule | { error: string } {
  if (typeof text !== "string" || !text.trim()) return { error: `a rule must be a non-empty string, got ${JSON.stringify(text)}` };
  const m = RULE_RE.exec(text);
  if (!m) return { error: `rule ${JSON.stringify(text)} is not "Tool" or "Tool(pattern)"` };
  const pattern = m[2]?.trim();
  if (m[2] !== undefined && !pattern) return { error: `rule ${JSON.stringify(text)} has an empty pattern; write "${m[1]}" to match every call` };
  return { text, tool: globToRegExp(m[1]!, "name"), pattern };
}

function escapeRe(s: string): string {
  return s.replace(/[.+^${}()|[\]\\]/g, "\\$&");
}

/**
 * A glob as a RegExp. "path": `**` spans folders, `*` and `?` stay inside one name.
 * "text" / "name": `*` is any run of characters, `?` one character.
 */
export function globToRegExp(glob: string, mode: "path" | "text" | "name"): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (mode === "path" && glob[i + 1] === "*") {
        i++;
        if (glob[i + 1] === "/") {
          i++;
          re += "(?:.*/)?";
        } else if (re.endsWith("/")) {
          re = re.slice(0, -1) + "(?:/.*)?";
        } else re += ".*";
      } else re += mode === "path" ? "[^/]*" : "[\\s\\S]*";
    } else if (c === "?") re += mode === "path" ? "[^/]" : "[\\s\\S]";
    else re += escapeRe(c);
  }
  return new RegExp(`^${re}$`);
}

// ---- commands -----------------------------------------------------------------------------------

/** Collapse whitespace runs; trim. */
function tidy(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

/** The simple commands of a command line (split at ; && || | and newlines, quotes respected). */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  let cur = "";
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      cur += c;
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < command.length) cur += command[++i];
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      cur += c;
      continue;
    }
    if (c === "\\" && i + 1 < command.length) {
      cur += c + command[++i];
      continue;
    }
    if (c === ";" || c === "\n" || c === "|" || (c === "&" && command[i + 1] === "&")) {
      if (c === "&" || (c === "|" && command[i + 1] === "|")) i++;
      parts.push(cur);
      cur = "";
      continue;
    }
    cur += c;
  }
  parts.push(cur);
  return parts.map(tidy).filter(Boolean);
}

function words(segment: string): string[] {
  return segment
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.replace(/^['"]|['"]$/g, ""));
}

/** Drop wrappers that do not change what runs: sudo/env/command/nohup/time and VAR=value. */
function commandWords(segment: string): { words: string[]; sudo: boolean } {
  let w = words(segment.replace(/^[({]\s*/, ""));
  let sudo = false;
  for (;;) {
    const first = w[0];
    if (!first) break;
    if (first === "sudo" || first === "doas") {
      sudo = true;
      w = w.slice(1);
      while (w[0]?.startsWith("-")) w = w.slice(1);
    } else if (["env", "command", "nohup", "time", "exec", "nice"].includes(first) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) {
      w = w.slice(1);
    } else break;
  }
  return { words: w, sudo };
}

const DANGEROUS_RM_TARGET = /^(\/+\*?|\/+\.|~\/?\*?|\$\{?HOME\}?\/?\*?|\.\.(\/.*)?|\.\.\/?\*?)$/;

/** The text-only check, for a command the parser cannot read (bash would most likely refuse it too). */
function textDangerReason(command: string): string | undefined {
  const whole = tidy(command);
  if (/\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(\S*\/)?(ba|z|da|k|fi|tc|c)?sh\b/.test(whole)) return "a download piped into a shell";
  if (/\b(ba|z|da|k)?sh\b[^;&|]*(\$\(|<\(|`)\s*(curl|wget)\b/.test(whole)) return "a download run by a shell";
  for (const seg of splitCommand(command)) {
    const { words: w, sudo } = commandWords(seg);
    if (sudo) return "sudo";
    const cmd = w[0]?.split("/").pop();
    if (cmd === "rm") {
      const flags = w.slice(1).filter((x) => x.startsWith("-"));
      const recursive = flags.some((f) => f === "--recursive" || /^-[a-zA-Z]*[rR]/.test(f));
      const target = w.slice(1).find((x) => !x.startsWith("-") && DANGEROUS_RM_TARGET.test(x));
      if (recursive && target) return `recursive rm of ${target}`;
    }
  }
  return undefined;
}

/**
 * Whether deleting `target` recursively reaches the whole file system, a top-level folder, the
 * home folder or above it, or above the working folder: `/`, `/*`, `/etc`, `~`, `~/.`, `$HOME/..`,
 * `"$HOME"`, `../..`.
 */
export function dangerousDeleteTarget(target: string): boolean {
  const t = target.replace(/^"?\$(?:HOME|\{HOME(?:[:?=+-][^}]*)?\})"?(?=\/|$)/, "~").replace(/^["']|["']$/g, "");
  if (!t || /^\$/.test(t)) return false;
  if (/^~[^/]+\/?(\*|\.)?$/.test(t)) return true; // another user's home folder (`~root`)
  const HOME = "/__home__";
  const CWD = "/__cwd__";
  const base = t === "~" || t.startsWith("~/") ? HOME + t.slice(1) : t.startsWith("/") ? t : `${CWD}/${t}`;
  let n = posix.normalize(base).replace(/\/+$/, "") || "/";
  while (/\/(\*|\.\*|\.\[!.\]\*)$/.test(n)) n = n.replace(/\/[^/]*$/, "") || "/"; // `dir/*` empties dir
  if (t.startsWith("/")) return n.split("/").filter(Boolean).length <= 1;
  if (base.startsWith(HOME)) return n === HOME || !n.startsWith(HOME + "/");
  return !(n === CWD || n.startsWith(CWD + "/"));
}

const MAYBE_DANGEROUS = /rm|sudo|doas|run0|pkexec|su\b|runuser|chmod|chown|dd|mkfs|wipefs|curl|wget|fetch|aria2c|http|xh|GET|lwp|find|eval|\$|`|<\(/;
const DOWNLOADERS = new Set(["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lwp-request", "GET"]);
const PRIVILEGE = new Set(["sudo", "doas", "run0", "pkexec", "su", "runuser"]);

/**
 * The built-in default: why this bash command needs a person to say yes, or undefined.
 * Catches rm -r of /, a top-level folder, ~ or anything above the home or working folder,
 * sudo (and doas, pkexec, su), chmod/chown 777, a download run by a shell or an interpreter,
 * and dd onto a device. The command is parsed (bash-analysis.ts), so quoting, wrappers and
 * `sh -c` do not hide it.
 */
export function dangerousCommandReason(command: string, analysis?: BashAnalysis): string | undefined {
  // The parser (~300 ms to load) is needed only when a word that can be dangerous appears once
  // quotes and escapes are removed; `git status`, `npm test`, `ls` never load it.
  if (!analysis && !MAYBE_DANGEROUS.test(command.replace(/['"\\]/g, ""))) return undefined;
  const a = analysis ?? analyzeBash(command);
  if (a.opaque?.startsWith("the command does not parse")) return textDangerReason(command);
  const names = new Set(a.parts.map((p) => p.name));
  const download = [...names].some((n) => DOWNLOADERS.has(n));
  if (download && a.readsStdin) return "a download piped into a shell";
  if (download && (a.opaque || a.runsFile)) return "a download run by a shell";
  if (a.parts.some((p) => p.wrappers.some((w) => PRIVILEGE.has(w)) || PRIVILEGE.has(p.name))) return "sudo";
  for (const p of a.parts) {
    const w = p.shown;
    if (p.name === "rm") {
      const flags = w.filter((x) => x.startsWith("-"));
      const recursive = flags.some((f) => f === "--recursive" || /^-[a-zA-Z]*[rR]/.test(f));
      const target = w.find((x) => !x.startsWith("-") && dangerousDeleteTarget(x));
      if ((recursive && target !== undefined) || flags.includes("--no-preserve-root")) return `recursive rm of ${target ?? "/"}`;
    }
    if (p.name === "find" && w.includes("-delete")) {
      const target = w.find((x) => !x.startsWith("-") && dangerousDeleteTarget(x));
      if (target !== undefined) return `find -delete under ${target}`;
    }
    if ((p.name === "chmod" || p.name === "chown") && w.some((x) => /^0?777$/.test(x) || /(^|[:=])0?777$/.test(x))) return `${p.name} 777`;
    if (p.name === "dd" && w.some((x) => /^of=\/dev\//.test(x) && !/^of=\/dev\/(null|zero|stdout|stderr|fd\/\d+)$/.test(x))) return "dd onto a device";
    if (/^mkfs(\.|$)/.test(p.name) || p.name === "wipefs") return `${p.name} formats a device`;
  }
  return undefined;
}

// ---- matching -----------------------------------------------------------------------------------

function pathArg(input: Record<string, unknown>): string | undefined {
  for (const k of ["path", "file_path", "filePath"]) {
    const v = input?.[k];
    if (typeof v === "string" && v) return v;
  }
  return undefined;
}

function absolutePath(p: string, cwd: string): string {
  const e = expandHome(p.replace(/^@/, ""));
  return isAbsolute(e) ? resolve(e) : resolve(cwd, e);
}

const PATH_TOOLS = new Set(["read", "write", "edit", "ls", "grep", "find"]);

// ---- real paths (security hardening) -------------------------------------------------
/** A path that cannot be resolved safely (a symlink loop, an unreadable folder on the way). */
export class UnresolvablePathError extends Error {}

/**
 * The path the OS will really use for `p` (absolute, `..` already folded the way the tools fold
 * it): symlinks of the file and of every folder followed, `/proc/self/root`-style aliases
 * resolved. A file that does not exist yet resolves through its nearest existing folder; a
 * dangling symlink resolves to where it points (a write through it creates that file).
 */
export function realTarget(p: string, depth = 0): string {
  if (depth > 40) throw new UnresolvablePathError(`too many symbolic links resolving ${p}`);
  try {
    return realpathSync(p);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw new UnresolvablePathError(`cannot resolve ${p}: ${code ?? String(error)}`);
  }
  let link: string | undefined;
  try {
    if (lstatSync(p).isSymbolicLink()) link = readlinkSync(p);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw new UnresolvablePathError(`cannot resolve ${p}: ${code ?? String(error)}`);
  }
  if (link !== undefined) return realTarget(resolve(dirname(p), link), depth + 1);
  const parent = dirname(p);
  if (parent === p) return p;
  return join(realTarget(parent, depth + 1), basename(p));
}

/** The pattern with the real path of its literal folder prefix (so a rule on a symlinked folder still matches). */
function realPattern(pat: string): string {
  const glob = pat.search(/[*?]/);
  const literal = glob < 0 ? pat : pat.slice(0, pat.lastIndexOf("/", glob) + 1);
  const dir = literal.endsWith("/") && literal.length > 1 ? literal.slice(0, -1) : literal;
  if (!dir) return pat;
  try {
    return realTarget(dir) + pat.slice(dir.length);
  } catch {
    return pat;
  }
}

/** The folder a path pattern names before its first glob character. */
function literalFolder(pat: string): string {
  const glob = pat.search(/[*?]/);
  if (glob < 0) return pat;
  const cut = pat.lastIndexOf("/", glob);
  return cut <= 0 ? "/" : pat.slice(0, cut);
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

interface PathTargets {
  lexical: string;
  real?: string;
  error?: string;
}

function pathTargets(p: string, cwd: string): PathTargets {
  const lexical = absolutePath(p, cwd);
  try {
    return { lexical, real: realTarget(lexical) };
  } catch (error) {
    return { lexical, error: error instanceof Error ? error.message : String(error) };
  }
}
// ---- end real paths ---------------------------------------------------------------------------------

/**
 * Whether a rule (tool part and pattern) matches one part of the call. `side` "restrict" (deny,
 * ask) matches the written path or the real one, and for grep a search folder that contains the
 * rule's folder; "allow" needs the real path to match.
 */
function matchesPattern(rule: ParsedRule, toolName: string, input: Record<string, unknown>, cwd: string, segment?: string, side: "restrict" | "allow" = "allow"): boolean {
  if (!rule.tool.test(toolName)) return false;
  if (rule.pattern === undefined) return true;
  if (toolName === "bash") {
    const text = segment ?? tidy(String(input?.command ?? ""));
    return globToRegExp(tidy(rule.pattern), "text").test(text);
  }
  const p = pathArg(input);
  if (p !== undefined || PATH_TOOLS.has(toolName)) {
    const pat = absolutePath(rule.pattern, cwd);
    const pats = [...new Set([pat, realPattern(pat)])].map((x) => globToRegExp(x, "path"));
    // Every spelling the tool may open (the read tool falls back to them when the written one is missing).
    const spellings = [absolutePath(p ?? ".", cwd), ...pathSpellings(absolutePath(p ?? ".", cwd))];
    if (side === "allow") {
      const opened = spellings.find((x) => existsSync(x)) ?? spellings[0]!;
      const t = pathTargets(opened, cwd);
      return !!t.real && pats.some((re) => re.test(t.real!));
    }
    return spellings.some((spelling) => {
      const t = pathTargets(spelling, cwd);
      if (t.error) return true; // cannot tell where it goes: a restricting rule applies (fail closed)
      if (pats.some((re) => re.test(t.lexical) || re.test(t.real!))) return true;
      if (toolName === "grep" && isDirectory(t.real!)) {
        // A recursive search from a folder above the rule's folder would read the files it covers.
        const inside = (folder: string) => folder.startsWith(t.real!.endsWith("/") ? t.real! : t.real! + "/");
        return inside(literalFolder(pat)) || inside(literalFolder(realPattern(pat)));
      }
      return false;
    });
  }
  return globToRegExp(rule.pattern, "text").test(JSON.stringify(input ?? {}));
}

/** Deny and ask rules: does any part of the call match? */
function anyMatch(rule: ParsedRule, toolName: string, input: Record<string, unknown>, cwd: string, parsed?: BashAnalysis): boolean {
  if (toolName === "bash" && rule.pattern !== undefined && rule.tool.test("bash")) {
    const cmd = String(input?.command ?? "");
    if (matchesPattern(rule, toolName, input, cwd, tidy(cmd))) return true;
    if (splitCommand(cmd).some((seg) => matchesPattern(rule, toolName, input, cwd, seg))) return true;
    return !!parsed?.commands.some((seg) => matchesPattern(rule, toolName, input, cwd, seg));
  }
  return matchesPattern(rule, toolName, input, cwd, undefined, "restrict");
}

/** Allow rules: is every part of the call covered by some rule? Returns the rules used. */
function allowCovers(rules: ParsedRule[], toolName: string, input: Record<string, unknown>, cwd: string, parsed?: BashAnalysis): ParsedRule | undefined {
  if (parsed && rules.some((r) => r.pattern !== undefined && r.tool.test("bash"))) {
    // Parsed: every simple command the shell will run must be allowed; an opaque command never is by a pattern.
    const bare = rules.find((r) => r.pattern === undefined && r.tool.test(toolName));
    let used: ParsedRule | undefined;
    if (!parsed.opaque && parsed.commands.length) {
      for (let i = 0; i < parsed.commands.length; i++) {
        const forms = [parsed.commands[i]!, parsed.wrapped[i]!];
        const r = rules.find((x) => x.pattern !== undefined && forms.some((f) => matchesPattern(x, toolName, input, cwd, f)));
        if (!r) return bare;
        used ??= r;
      }
    }
    return used ?? bare;
  }
  const segs = toolName === "bash" ? splitCommand(String(input?.command ?? "")) : [];
  // A pattern's * must not swallow a second command: compound commands are judged part by part.
  if (segs.length <= 1) return rules.find((r) => matchesPattern(r, toolName, input, cwd));
  const bare = rules.find((r) => r.pattern === undefined && r.tool.test(toolName));
  if (bare) return bare;
  let used: ParsedRule | undefined;
  for (const seg of segs) {
    const r = rules.find((x) => x.pattern !== undefined && matchesPattern(x, toolName, input, cwd, seg));
    if (!r) return undefined;
    used ??= r;
  }
  return used;
}

export interface CompiledPolicy {
  allow: ParsedRule[];
  ask: ParsedRule[];
  deny: ParsedRule[];
  errors: string[];
}

export function compilePolicy(policy: Partial<PermissionPolicy>): CompiledPolicy {
  const out: CompiledPolicy = { allow: [], ask: [], deny: [], errors: [] };
  for (const kind of ["allow", "ask", "deny"] as const) {
    const list = policy[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      out.errors.push(`permissions.${kind} must be an array of rules`);
      continue;
    }
    for (const text of list) {
      const r = parseRule(text);
      if ("error" in r) out.errors.push(`permissions.${kind}: ${r.error}`);
      else out[kind].push(r);
    }
  }
  return out;
}

/** Decide one tool call. */
export function evaluate(policy: CompiledPolicy, toolName: string, input: Record<string, unknown>, cwd: string): Evaluation {
  if (toolName !== "bash" && (pathArg(input) !== undefined || PATH_TOOLS.has(toolName))) {
    const rules = [...policy.deny, ...policy.ask].filter((r) => r.pattern !== undefined && r.tool.test(toolName));
    const t = rules.length ? pathTargets(pathArg(input) ?? ".", cwd) : undefined;
    if (t?.error) return { decision: "deny", rule: rules[0]!.text, reason: `a path rule applies and the path cannot be resolved safely (${t.error})` };
  }
  // Bash rules match the parsed command; the parser loads only when a bash rule exists.
  const bashRule = (r: ParsedRule) => r.pattern !== undefined && r.tool.test("bash");
  let parsed: BashAnalysis | undefined;
  if (toolName === "bash" && [...policy.deny, ...policy.ask, ...policy.allow].some(bashRule)) {
    parsed = analyzeBash(String(input?.command ?? ""));
  }
  const deny = policy.deny.find((r) => anyMatch(r, toolName, input, cwd, parsed));
  if (deny) return { decision: "deny", rule: deny.text, reason: `deny rule "${deny.text}"` };
  const restricting = [...policy.deny, ...policy.ask].find(bashRule);
  if (parsed?.opaque && restricting) {
    return { decision: "ask", rule: restricting.text, reason: `the command cannot be checked against rule "${restricting.text}": ${parsed.opaque}` };
  }
  // A command whose arguments are known only at run time (`rm "$X"`, `xargs rm`, an alias's
  // arguments) cannot be cleared by a deny or ask rule about that program: it asks.
  const unknownArgs = parsed?.commands.find((c) => c.split(" ").includes("$?"));
  if (unknownArgs) {
    const program = unknownArgs.split(" ")[0];
    const about = [...policy.deny, ...policy.ask].find((r) => bashRule(r) && tidy(r.pattern!).split(" ")[0] === program);
    if (about) {
      return { decision: "ask", rule: about.text, reason: `the command cannot be checked against rule "${about.text}": the arguments of ${program} are known only at run time` };
    }
  }
  const ask = policy.ask.find((r) => anyMatch(r, toolName, input, cwd, parsed));
  if (ask) return { decision: "ask", rule: ask.text, reason: `ask rule "${ask.text}"` };
  const allow = allowCovers(policy.allow, toolName, input, cwd, parsed);
  if (allow) return { decision: "allow", rule: allow.text };
  if (toolName === "bash") {
    const why = dangerousCommandReason(String(input?.command ?? ""), parsed);
    if (why) return { decision: "ask", reason: why };
  }
  return { decision: "allow" };
}

/** One line naming the call: `bash: rm -rf /`, `write /etc/passwd`, `tool {"a":1}`. */
export function describeCall(toolName: string, input: Record<string, unknown>): string {
  if (toolName === "bash") return `bash: ${tidy(String(input?.command ?? ""))}`.slice(0, 300);
  const p = pathArg(input);
  if (p) return `${toolName} ${p}`;
  const json = JSON.stringify(input ?? {});
  return `${toolName} ${json.length > 200 ? json.slice(0, 197) + "..." : json}`;
}
