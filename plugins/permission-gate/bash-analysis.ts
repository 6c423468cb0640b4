/**
 * Bash commands as the shell will run them, for permission rules.
 *
 * The command is parsed with mvdan-sh (the mvdan/sh parser, full bash syntax, compiled to
 * JavaScript; synchronous). It is heavy (~1.5 MB, about half a second to load on a busy
 * machine), so it loads on first use, and the gate uses it only when a bash rule exists.
 *
 * Every simple command in the tree is found — in pipelines, lists, subshells, groups, control
 * bodies, functions, command and process substitutions — its words are unquoted and
 * unescaped, wrappers that run their arguments as a command (`env`, `command`, `exec`, `nice`,
 * `timeout`, `time`, `nohup`, `sudo`, `doas`, `xargs`, `stdbuf`, `builtin`) are stripped, and
 * the command name is reduced to its base name (`/bin/rm` → `rm`). `sh -c '…'` with a literal
 * script is analysed recursively.
 *
 * What cannot be known without running the command makes the analysis "opaque": `eval`, a
 * command name built from a variable, a substitution or an expansion, `sh -c` with a dynamic
 * script, a shell or interpreter reading its program from stdin (`… | sh`, `bash < x`),
 * `source` of anything, and a command that does not parse.
 */
import { createRequire } from "node:module";

export interface BashAnalysis {
  /** Each simple command, normalised: base name of the command, then its literal arguments. */
  commands: string[];
  /** The same commands with their wrappers kept (`sudo apt install x`), for allow rules. */
  wrapped: string[];
  /** Why the command cannot be analysed statically (undefined when it can). */
  opaque?: string;
}

type Node = Record<string, any>;
interface ShSyntax {
  NewParser(...opts: unknown[]): { Parse(src: string, name: string): Node };
  Walk(node: Node, fn: (n: Node | null) => boolean): void;
  NodeType(node: Node): string;
  Variant(v: number): unknown;
  LangBash: number;
}

let syntax: ShSyntax | undefined;
function sh(): ShSyntax {
  if (!syntax) {
    const req = createRequire(import.meta.url);
    syntax = (req("mvdan-sh") as { syntax: ShSyntax }).syntax;
  }
  return syntax;
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"]);
const INTERPRETERS = new Set(["python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun", "osascript", "Rscript"]);
const WRAPPERS = new Set(["env", "command", "exec", "nice", "timeout", "time", "nohup", "sudo", "doas", "xargs", "stdbuf", "builtin", "ionice", "chroot", "setsid", "unbuffer", "watch", "strace", "ltrace", "nocorrect", "noglob"]);
/** Wrapper options that take a value in the next word. */
const WRAPPER_VALUE_OPTS: Record<string, Set<string>> = {
  env: new Set(["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]),
  exec: new Set(["-a"]),
  nice: new Set(["-n", "--adjustment"]),
  timeout: new Set(["-s", "--signal", "-k", "--kill-after"]),
  sudo: new Set(["-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "-t", "-U"]),
  doas: new Set(["-u", "-C"]),
  xargs: new Set(["-I", "-i", "-n", "-P", "-L", "-l", "-s", "-d", "-E", "-e", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file"]),
  stdbuf: new Set(["-i", "-o", "-e"]),
  ionice: new Set(["-c", "-n", "-p"]),
  watch: new Set(["-n", "--interval", "-d"]),
  strace: new Set(["-o", "-e", "-p", "-s"]),
};

function unescapeBare(s: string): string {
  return s.replace(/\\\n/g, "").replace(/\\([\s\S])/g, "$1");
}
function unescapeDouble(s: string): string {
  return s.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
}

/** The literal text of a word, or undefined when it depends on expansion at run time. */
function literal(word: Node, S: ShSyntax, commandWord: boolean): string | undefined {
  let out = "";
  for (const part of word.Parts ?? []) {
    const t = S.NodeType(part);
    if (t === "Lit") {
      const v = String(part.Value);
      // In the command name, globs and brace expansion change what runs ({r,}m is rm).
      if (commandWord && /[*?[{]/.test(v)) return undefined;
      out += unescapeBare(v);
    } else if (t === "SglQuoted") {
      if (part.Dollar) return undefined; // $'…' escapes: not worth decoding, treat as dynamic
      out += String(part.Value);
    } else if (t === "DblQuoted") {
      if (part.Dollar) return undefined;
      for (const p of part.Parts ?? []) {
        if (S.NodeType(p) !== "Lit") return undefined;
        out += unescapeDouble(String(p.Value));
      }
    } else return undefined;
  }
  return out;
}

function stripWrappers(words: Array<string | undefined>): Array<string | undefined> {
  let w = words;
  for (let guard = 0; guard < 20 && w.length; guard++) {
    const first = w[0];
    if (first === undefined) return w;
    const name = first.split("/").pop()!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first) && guard > 0) {
      w = w.slice(1); // env FOO=1 cmd
      continue;
    }
    if (!WRAPPERS.has(name)) return w;
    const valueOpts = WRAPPER_VALUE_OPTS[name] ?? new Set<string>();
    let i = 1;
    while (i < w.length) {
      const x = w[i];
      if (x === undefined) break;
      if (x === "--") {
        i++;
        break;
      }
      if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(x)) i++;
      else if (x.startsWith("-") && x.length > 1) i += valueOpts.has(x) ? 2 : 1;
      else break;
    }
    if ((name === "timeout" || name === "chroot") && i < w.length) i++; // the duration; the new root
    w = w.slice(i);
  }
  return w;
}

/** Analyse a bash command line. */
export function analyzeBash(command: string, depth = 0): BashAnalysis {
  const S = sh();
  let file: Node;
  try {
    file = S.NewParser(S.Variant(S.LangBash)).Parse(command, "");
  } catch (error) {
    const msg = error instanceof Error ? error.message : String((error as Node)?.Error?.() ?? error);
    return { commands: [], wrapped: [], opaque: `the command does not parse (${msg.split("\n")[0]})` };
  }
  const commands: string[] = [];
  const wrapped: string[] = [];
  let opaque: string | undefined;
  const fail = (why: string) => {
    opaque ??= why;
  };
  S.Walk(file, (node) => {
    if (!node) return true;
    const type = S.NodeType(node);
    if (type !== "CallExpr") return true;
    const args: Node[] = node.Args ?? [];
    if (!args.length) return true;
    const all = args.map((a, i) => literal(a, S, i === 0));
    const words = stripWrappers(all);
    // After wrappers the first word is the command name: it must be literal.
    if (!words.length) return true;
    const first = words[0];
    if (first === undefined || first === "") {
      fail("the command name is built at run time (a variable, a substitution or an expansion)");
      return true;
    }
    if (/[*?[{]/.test(first)) {
      fail("the command name is built at run time (a glob or brace expansion)");
      return true;
    }
    const name = first.split("/").pop()!;
    const rest = words.slice(1);
    const text = (ws: Array<string | undefined>) => ws.map((x) => (x === undefined ? "$?" : x)).join(" ").replace(/\s+/g, " ").trim();
    commands.push(text([name, ...rest]));
    wrapped.push(text(all.length === words.length ? [name, ...rest] : all));
    if (name === "eval") fail("eval runs text built at run time");
    else if (name === "source" || name === ".") fail(`${name} runs a script the rules cannot see`);
    else if (SHELLS.has(name)) {
      const c = rest.findIndex((x) => x !== undefined && /^-[A-Za-z]*c[A-Za-z]*$/.test(x));
      if (c >= 0) {
        const script = rest[c + 1];
        if (script === undefined) fail(`${name} -c with a script built at run time`);
        else if (depth > 5) fail(`${name} -c nested too deeply`);
        else {
          const inner = analyzeBash(script, depth + 1);
          commands.push(...inner.commands);
          wrapped.push(...inner.wrapped);
          if (inner.opaque) fail(inner.opaque);
        }
      } else if (!rest.some((x) => x === undefined || !x.startsWith("-"))) {
        fail(`${name} reads its commands from stdin`);
      } else if (rest.some((x) => x === undefined)) {
        fail(`${name} runs a script named at run time`);
      }
    } else if (INTERPRETERS.has(name) || /^python\d/.test(name)) {
      if (!rest.some((x) => x === undefined || !x.startsWith("-"))) fail(`${name} reads its program from stdin`);
    }
    return true;
  });
  return { commands, wrapped, opaque };
}
