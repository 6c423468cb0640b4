/**
 * Glob patterns and .gitignore rules, compiled to regular expressions.
 *
 * Glob syntax: `*` (any run of characters except "/"), `?` (one character except "/"),
 * `[abc]`, `[a-z]`, `[!x]` / `[^x]`, `**` as a whole path segment (any number of folders),
 * `\x` (a literal x) and, when `braces` is on, `{a,b}` alternatives.
 *
 * Ignore rules follow gitignore(5): `#` comments, `!` re-includes, a trailing "/" matches
 * folders only, a "/" at the start or in the middle anchors the rule to the folder of the
 * ignore file, otherwise the rule matches a name at any depth; the last matching rule wins.
 */

function escapeRegExpChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/** Index of the "]" closing the class that opens at `start`, or -1. */
function classEnd(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === "!" || p[i] === "^") i++;
  if (p[i] === "]") i++; // a leading "]" is literal
  for (; i < p.length; i++) {
    if (p[i] === "\\") i++;
    else if (p[i] === "]") return i;
  }
  return -1;
}

function classToRegExp(body: string): string {
  let negate = false;
  let i = 0;
  if (body[0] === "!" || body[0] === "^") {
    negate = true;
    i = 1;
  }
  let out = "";
  for (; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\" && i + 1 < body.length) {
      out += `\\${body[++i]}`;
    } else if (c === "[" && body[i + 1] === ":") {
      // POSIX class [:alpha:]
      const end = body.indexOf(":]", i + 2);
      const name = end > 0 ? body.slice(i + 2, end) : "";
      const posix: Record<string, string> = {
        alnum: "a-zA-Z0-9",
        alpha: "a-zA-Z",
        digit: "0-9",
        lower: "a-z",
        upper: "A-Z",
        space: "\\s",
        xdigit: "0-9a-fA-F",
        punct: "!-\\/:-@\\[-`{-~",
      };
      if (end > 0 && posix[name]) {
        out += posix[name];
        i = end + 1;
      } else out += "\\[";
    } else if (c === "]" || c === "^" || c === "\\" || c === "[") {
      out += `\\${c}`;
    } else {
      out += c;
    }
  }
  return negate ? `[^/${out}]` : `[${out}]`;
}

/** Split "{a,b{c,d}}" alternatives at depth 0; returns undefined if the brace is not closed. */
function braceGroup(p: string, start: number): { parts: string[]; end: number } | undefined {
  let depth = 0;
  let partStart = start + 1;
  const parts: string[] = [];
  for (let i = start; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "[") {
      const e = classEnd(p, i);
      if (e > 0) i = e;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) {
        parts.push(p.slice(partStart, i));
        return { parts, end: i };
      }
    } else if (c === "," && depth === 1) {
      parts.push(p.slice(partStart, i));
      partStart = i + 1;
    }
  }
  return undefined;
}

/** The regular-expression source (no anchors) for a glob. */
export function globToRegExpSource(pattern: string, opts: { braces?: boolean } = {}): string {
  const p = pattern;
  let out = "";
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "*") {
      let j = i;
      while (p[j + 1] === "*") j++;
      const stars = j - i + 1;
      const atSegmentStart = i === 0 || p[i - 1] === "/";
      const atSegmentEnd = j + 1 === p.length || p[j + 1] === "/";
      if (stars >= 2 && atSegmentStart && atSegmentEnd) {
        if (j + 1 === p.length) {
          // trailing "**": everything below (or anything at all for a bare "**")
          out += ".*";
        } else {
          // "**/": zero or more folders
          out += "(?:[^/]*/)*";
          j++; // swallow the "/"
        }
      } else {
        out += "[^/]*";
      }
      i = j;
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const end = classEnd(p, i);
      if (end < 0) out += "\\[";
      else {
        out += classToRegExp(p.slice(i + 1, end));
        i = end;
      }
    } else if (c === "\\") {
      if (i + 1 < p.length) out += escapeRegExpChar(p[++i]!);
      else out += "\\\\";
    } else if (c === "{" && opts.braces) {
      const g = braceGroup(p, i);
      if (!g) out += "\\{";
      else {
        out += `(?:${g.parts.map((part) => globToRegExpSource(part, opts)).join("|")})`;
        i = g.end;
      }
    } else {
      out += escapeRegExpChar(c);
    }
  }
  return out;
}

export function hasUpperCase(s: string): boolean {
  return s !== s.toLowerCase();
}

/**
 * A path glob. A pattern without "/" matches a name at any depth; one with "/" matches the
 * whole relative path (a leading "/" anchors it at the root; "**" spans folders).
 */
export class PathGlob {
  readonly regex: RegExp;
  readonly matchBasename: boolean;
  constructor(
    readonly pattern: string,
    opts: { braces?: boolean; ignoreCase?: boolean; anchored?: boolean } = {},
  ) {
    let p = pattern;
    if (p.endsWith("/") && p.length > 1) p = p.slice(0, -1);
    this.matchBasename = !p.includes("/");
    if (p.startsWith("/")) p = p.slice(1);
    else if (!this.matchBasename && !opts.anchored && !p.startsWith("**/")) p = `**/${p}`;
    this.regex = new RegExp(`^${globToRegExpSource(p, opts)}$`, opts.ignoreCase ? "i" : "");
  }
  /** `relPath`: "/"-separated, relative to the search root. */
  test(relPath: string, basename: string): boolean {
    return this.regex.test(this.matchBasename ? basename : relPath);
  }
}

// ---- ignore files ------------------------------------------------------------------------------

export interface IgnoreRule {
  pattern: string;
  negate: boolean;
  dirOnly: boolean;
  /** Matched against the basename (pattern had no inner "/") or the path relative to the ignore file's folder. */
  basename: boolean;
  regex: RegExp;
}

/** Parse the text of a .gitignore (or .ignore) file. Unparseable lines are skipped. */
export function parseIgnoreRules(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (let raw of text.split(/\r?\n/)) {
    if (raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
    if (raw === "" || raw.startsWith("#")) continue;
    // trailing spaces are ignored unless escaped
    let line = raw;
    let end = line.length;
    while (end > 0 && line[end - 1] === " " && line[end - 2] !== "\\") end--;
    line = line.slice(0, end);
    if (!line) continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/") && !line.endsWith("\\/")) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    if (!line) continue;
    const anchored = line.includes("/");
    let body = line.startsWith("/") ? line.slice(1) : line;
    if (!body) continue;
    try {
      const regex = new RegExp(`^${globToRegExpSource(body)}$`);
      rules.push({ pattern: raw, negate, dirOnly, basename: !anchored, regex });
    } catch {
      /* a rule that cannot be compiled is skipped, as git does with bad patterns */
    }
  }
  return rules;
}

/** The rules of one ignore file, scoped to the folder holding it. */
export interface IgnoreScope {
  /** Absolute folder path, no trailing separator. */
  dir: string;
  rules: IgnoreRule[];
}

/**
 * Decide whether `absPath` is ignored by a stack of scopes (outermost first). Deeper scopes
 * and later rules take precedence. Returns true (ignored), false (re-included) or undefined.
 */
export function matchIgnore(scopes: readonly IgnoreScope[], absPath: string, isDir: boolean, sep = "/"): boolean | undefined {
  const slash = absPath.lastIndexOf(sep);
  const name = absPath.slice(slash + 1);
  for (let s = scopes.length - 1; s >= 0; s--) {
    const scope = scopes[s]!;
    if (!absPath.startsWith(scope.dir + sep) && !(scope.dir === "" || scope.dir === sep)) continue;
    let rel: string | undefined;
    const rules = scope.rules;
    for (let r = rules.length - 1; r >= 0; r--) {
      const rule = rules[r]!;
      if (rule.dirOnly && !isDir) continue;
      let subject: string;
      if (rule.basename) subject = name;
      else {
        if (rel === undefined) {
          rel = absPath.slice(scope.dir === sep ? 1 : scope.dir.length + 1);
          if (sep !== "/") rel = rel.split(sep).join("/");
        }
        subject = rel;
      }
      if (rule.regex.test(subject)) return !rule.negate;
    }
  }
  return undefined;
}
