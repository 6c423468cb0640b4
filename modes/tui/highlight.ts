/**
 * A small syntax highlighter for code blocks and file previews: comments, strings, numbers,
 * keywords, types and function names for the common languages, emitted as SGR through the
 * theme's syntax tokens. Unknown languages get the generic C-like rules. Results are cached by
 * (language, code), so a closed code block is highlighted once.
 */
import type { Theme } from "./theme.js";

interface LangSpec {
  keywords: Set<string>;
  lineComment?: string[];
  blockComment?: [string, string];
  /** String delimiters; backtick strings may span lines. */
  quotes: string[];
  types?: boolean;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const JS = words(
  "abstract as async await break case catch class const continue debugger declare default delete do else enum export extends false finally for from function get if implements import in instanceof interface keyof let new null of package private protected public readonly return satisfies set static super switch this throw true try type typeof undefined var void while with yield",
);
const PY = words(
  "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return self True try while with yield match case",
);
const SH = words("if then else elif fi for while until do done case esac in function return local export readonly echo exit set unset shift source alias cd");
const GO = words(
  "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
);
const RUST = words(
  "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
);
const C = words(
  "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected virtual template typename namespace using new delete this true false null nullptr throw try catch final override import package extends implements interface boolean byte",
);
const SQL = words(
  "select from where insert into values update set delete create table drop alter add index primary key foreign references join left right inner outer on group by order having limit offset as and or not null is in like distinct union all",
);
const JSON_WORDS = words("true false null");

const SPECS: Record<string, LangSpec> = {
  js: { keywords: JS, lineComment: ["//"], blockComment: ["/*", "*/"], quotes: ['"', "'", "`"], types: true },
  py: { keywords: PY, lineComment: ["#"], quotes: ['"', "'"], types: true },
  sh: { keywords: SH, lineComment: ["#"], quotes: ['"', "'"] },
  go: { keywords: GO, lineComment: ["//"], blockComment: ["/*", "*/"], quotes: ['"', "'", "`"], types: true },
  rust: { keywords: RUST, lineComment: ["//"], blockComment: ["/*", "*/"], quotes: ['"'], types: true },
  c: { keywords: C, lineComment: ["//"], blockComment: ["/*", "*/"], quotes: ['"', "'"], types: true },
  sql: { keywords: SQL, lineComment: ["--"], blockComment: ["/*", "*/"], quotes: ["'", '"'] },
  json: { keywords: JSON_WORDS, quotes: ['"'] },
  yaml: { keywords: words("true false null yes no"), lineComment: ["#"], quotes: ['"', "'"] },
  ruby: { keywords: words("def end if elsif else unless while until do class module return yield self nil true false require begin rescue ensure then"), lineComment: ["#"], quotes: ['"', "'"], types: true },
};

const ALIASES: Record<string, string> = {
  javascript: "js", js: "js", jsx: "js", mjs: "js", cjs: "js", typescript: "js", ts: "js", tsx: "js", mts: "js", cts: "js",
  python: "py", py: "py", bash: "sh", sh: "sh", shell: "sh", zsh: "sh", console: "sh", fish: "sh",
  go: "go", golang: "go", rust: "rust", rs: "rust", c: "c", h: "c", cpp: "c", "c++": "c", cc: "c", hpp: "c", java: "c",
  cs: "c", csharp: "c", kotlin: "c", kt: "c", swift: "c", scala: "c", php: "c", dart: "c",
  sql: "sql", json: "json", jsonc: "json", json5: "json", yaml: "yaml", yml: "yaml", toml: "yaml", ini: "yaml",
  ruby: "ruby", rb: "ruby",
};

/** Language of a file path by its extension (for read/write previews). */
export function languageFromPath(path: string): string | undefined {
  const m = /\.([A-Za-z0-9+]+)$/.exec(path);
  if (!m) return /(^|\/)(Dockerfile|Makefile)$/.test(path) ? "sh" : undefined;
  const ext = m[1]!.toLowerCase();
  if (ext === "md" || ext === "markdown" || ext === "txt") return undefined;
  return ALIASES[ext] ? ext : undefined;
}

const cache = new Map<string, string[]>();
const CACHE_MAX = 500;

/**
 * Highlight `code` as `lang`; returns one SGR-coloured string per source line (each line's
 * colours are closed on that line). Plain text when the language is unknown to both tables
 * and `lang` is "text"/"plain".
 */
export function highlightCode(code: string, lang: string | undefined, theme: Theme): string[] {
  const key = `${theme.name}\0${lang ?? ""}\0${code}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let lines: string[];
  const l = (lang ?? "").toLowerCase();
  if (l === "text" || l === "plain" || l === "txt" || l === "markdown" || l === "md" || l === "diff") {
    lines = l === "diff" ? code.split("\n").map((x) => diffLine(x, theme)) : code.split("\n");
  } else {
    try {
      lines = tokenize(code, SPECS[ALIASES[l] ?? ""] ?? SPECS.js!, theme);
    } catch {
      lines = code.split("\n");
    }
  }
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, lines);
  return lines;
}

function diffLine(line: string, theme: Theme): string {
  if (line.startsWith("+")) return theme.fg("toolDiffAdded", line);
  if (line.startsWith("-")) return theme.fg("toolDiffRemoved", line);
  if (line.startsWith("@@")) return theme.fg("accent", line);
  return line;
}

function tokenize(code: string, spec: LangSpec, theme: Theme): string[] {
  const lines: string[] = [""];
  const emit = (text: string, token?: string) => {
    const parts = text.split("\n");
    parts.forEach((p, i) => {
      if (i > 0) lines.push("");
      if (p) lines[lines.length - 1] += token ? theme.fg(token, p) : p;
    });
  };
  const n = code.length;
  let i = 0;
  let plain = "";
  const flush = () => {
    if (plain) emit(plain);
    plain = "";
  };
  while (i < n) {
    const ch = code[i]!;
    // comments
    if (spec.lineComment?.some((c) => code.startsWith(c, i)) && !(ch === "#" && spec.lineComment[0] === "#" && i > 0 && /[\w$]/.test(code[i - 1]!))) {
      flush();
      const end = code.indexOf("\n", i);
      const stop = end === -1 ? n : end;
      emit(code.slice(i, stop), "syntaxComment");
      i = stop;
      continue;
    }
    if (spec.blockComment && code.startsWith(spec.blockComment[0], i)) {
      flush();
      const end = code.indexOf(spec.blockComment[1], i + spec.blockComment[0].length);
      const stop = end === -1 ? n : end + spec.blockComment[1].length;
      emit(code.slice(i, stop), "syntaxComment");
      i = stop;
      continue;
    }
    // strings
    if (spec.quotes.includes(ch)) {
      flush();
      let j = i + 1;
      while (j < n && code[j] !== ch) {
        if (code[j] === "\\") j++;
        else if (code[j] === "\n" && ch !== "`") break;
        j++;
      }
      const stop = Math.min(n, j + 1);
      emit(code.slice(i, stop), "syntaxString");
      i = stop;
      continue;
    }
    // numbers
    if (/[0-9]/.test(ch) && (i === 0 || !/[\w$]/.test(code[i - 1]!))) {
      flush();
      const m = /^(0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]+)?([eE][+-]?[0-9]+)?[a-zA-Z]*)/.exec(code.slice(i, i + 64))!;
      emit(m[0], "syntaxNumber");
      i += m[0].length;
      continue;
    }
    // identifiers
    if (/[A-Za-z_$]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(code[j]!)) j++;
      const word = code.slice(i, j);
      let token: string | undefined;
      if (spec.keywords.has(word)) token = "syntaxKeyword";
      else if (code[j] === "(") token = "syntaxFunction";
      else if (spec.types && /^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$/.test(word)) token = "syntaxType";
      if (token) {
        flush();
        emit(word, token);
      } else plain += word;
      i = j;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return lines;
}
