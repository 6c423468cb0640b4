/**
 * Bash commands as the shell will run them, for permission rules and the built-in danger check.
 *
 * The command is parsed with mvdan-sh (the mvdan/sh parser, full bash syntax, compiled to
 * JavaScript; synchronous). It is heavy (~1.5 MB, about half a second to load on a busy
 * machine), so it loads on first use.
 *
 * Every simple command in the tree is found — in pipelines, lists, subshells, groups, control
 * bodies, functions, command and process substitutions, here-documents — its words are
 * unquoted and unescaped, wrappers that run their arguments as a command (`env`, `sudo`,
 * `timeout`, `xargs`, `busybox`, …; bash-programs.ts) are stripped with their options, and the
 * command name is reduced to its base name (`/bin/rm` → `rm`). Shell code handed over as text
 * is analysed too: `sh -c` (options before or after `-c`), `env -S`, `trap`, `alias`,
 * `find -exec`, `watch`, `su -c`, `git -c alias.x='!…'` and git's command-valued keys,
 * variables such as `GIT_SSH_COMMAND` and `PROMPT_COMMAND`.
 *
 * What cannot be known without running the command makes the analysis "opaque" (the gate then
 * asks, and without a UI that means blocked): `eval`, `source`, a command name built at run
 * time, a script built at run time, a shell or interpreter reading its program from stdin or a
 * descriptor (`… | sh`, `bash /dev/stdin <<EOF`), variables bash evaluates as code (`PS4`,
 * `BASH_ENV`, `BASH_ALIASES`, …), a quoted text holding `$(…)` in a command that also evaluates
 * names or arithmetic (array subscripts in `declare`, `printf -v`, `test -v`, `read`, `let`,
 * `(( ))`, `[[ ]]` run substitutions), `awk` and `sed` programs that run commands, and a
 * command that does not parse.
 */
import { createRequire } from "node:module";
import {
  AWKS, COMMAND_OPTION, COMMAND_VARS, EVALUATING_BUILTINS, INTERPRETERS, OPAQUE_VAR_RE, SHELL_JOINERS, SHELLS,
  WRAPPER_POSITIONALS, WRAPPER_VALUE_OPTS, WRAPPERS, gitConfigEffect, shellInvocation,
} from "./bash-programs.js";

/** One simple command the shell will run. */
export interface AnalysedCommand {
  /** Base name of the program. */
  name: string;
  /** Its arguments as written: literal text unquoted, anything expanded at run time as its source text. */
  shown: string[];
  /** The wrappers stripped in front of it (`sudo`, `env`, …). */
  wrappers: string[];
}

export interface BashAnalysis {
  /** Each simple command, normalised: base name of the command, then its literal arguments. */
  commands: string[];
  /** The same commands with their wrappers kept (`sudo apt install x`), for allow rules. */
  wrapped: string[];
  /** The same commands, structured (for the built-in danger check). */
  parts: AnalysedCommand[];
  /** Why the command cannot be analysed statically (undefined when it can). */
  opaque?: string;
  /** A shell or interpreter reads its program from stdin or a descriptor. */
  readsStdin?: boolean;
  /** A shell runs a script file (its content is not analysed). */
  runsFile?: boolean;
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

function unescapeBare(s: string): string {
  return s.replace(/\\\n/g, "").replace(/\\([\s\S])/g, "$1");
}
function unescapeDouble(s: string): string {
  return s.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
}

/** The literal text of a word, or undefined when it depends on expansion at run time. */
function literal(word: Node | null | undefined, S: ShSyntax, commandWord: boolean): string | undefined {
  if (!word) return undefined;
  let out = "";
  for (const part of word.Parts ?? []) {
    const t = S.NodeType(part);
    if (t === "Lit") {
      const v = String(part.Value);
      // In the command name, globs and brace expansion change what runs ({r,}m is rm).
      if (commandWord && /[*?[{]/.test(v) && v !== "[") return undefined;
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

/** Quoted or escaped text that would be code if bash evaluated it again. */
const CODE_IN_TEXT = /\$[({]|`|\\(?:x24|0?44|u0024|U00000024|x60|140)/i;
const CODE_ESCAPED = /\\[$`]|\\(?:x24|0?44|u0024|x60|140)/i;

class Collector {
  commands: string[] = [];
  wrapped: string[] = [];
  parts: AnalysedCommand[] = [];
  opaque?: string;
  readsStdin = false;
  runsFile = false;
  /** The command evaluates names or arithmetic somewhere. */
  evaluates = false;
  /** xargs's replace string (`-I X`) while its command is being read. */
  xargsReplace?: string;
  constructor(readonly depth: number) {}
  fail(why: string): void {
    this.opaque ??= why;
  }
  nested(script: string | undefined, what: string): void {
    if (script === undefined) return this.fail(`${what} is built at run time`);
    if (this.depth > 5) return this.fail(`${what} is nested too deeply`);
    const inner = analyzeBash(script, this.depth + 1);
    this.commands.push(...inner.commands);
    this.wrapped.push(...inner.wrapped);
    this.parts.push(...inner.parts);
    if (inner.readsStdin) this.readsStdin = true;
    if (inner.runsFile) this.runsFile = true;
    if (inner.opaque) this.fail(inner.opaque);
  }
  /** A variable set by an assignment, `export`, `declare` or `env NAME=…`. */
  assign(name: string, value: string | undefined): void {
    if (COMMAND_VARS.has(name)) this.nested(value, `the command in ${name}`);
    else if (/^PS[0-4]$/.test(name)) {
      if (value === undefined || /[$`]/.test(value)) this.fail(`${name} holds text bash expands (and runs) when it prints that prompt`);
    } else if (OPAQUE_VAR_RE.test(name)) this.fail(`assigning ${name} makes bash or a program run code the rules cannot see`);
  }
}

const text = (ws: Array<string | undefined>) => ws.map((x) => (x === undefined ? "$?" : x)).join(" ").replace(/\s+/g, " ").trim();
const NAME_ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=([\s\S]*)$/;

interface Words {
  lit: Array<string | undefined>;
  shown: string[];
}

/** Skip a wrapper's options (clusters, glued and separate values); returns the index of its command. */
function skipOptions(name: string, w: Words, c: Collector): number {
  const valueOpts = WRAPPER_VALUE_OPTS[name] ?? new Set<string>();
  let i = 1;
  while (i < w.lit.length) {
    const x = w.lit[i];
    if (x === undefined) return i;
    if (x === "--") return i + 1;
    if (name === "env" && NAME_ASSIGN.test(x)) {
      const m = NAME_ASSIGN.exec(x)!;
      c.assign(m[1]!, m[2]);
      i++;
      continue;
    }
    if (!x.startsWith("-") || x.length < 2) break;
    let value: string | undefined;
    let opt: string;
    let takesNext = false;
    if (x.startsWith("--")) {
      const eq = x.indexOf("=");
      opt = eq < 0 ? x.slice(2) : x.slice(2, eq);
      if (valueOpts.has(opt)) {
        if (eq < 0) takesNext = true;
        else value = x.slice(eq + 1);
      }
    } else {
      opt = "";
      for (let k = 1; k < x.length; k++) {
        if (valueOpts.has(x[k]!)) {
          opt = x[k]!;
          if (k === x.length - 1) takesNext = true;
          else value = x.slice(k + 1);
          break;
        }
      }
    }
    if (takesNext) {
      value = w.lit[i + 1];
      i += 2;
    } else i++;
    if (name === "env" && (opt === "S" || opt === "split-string")) {
      // env -S splits its value into a command line and runs it, followed by the remaining words.
      if (value === undefined || /[$\\]/.test(value)) c.fail("env -S with a command line built at run time");
      else c.nested([value, ...w.lit.slice(i).map((a) => (a === undefined ? "$X" : `'${a.replace(/'/g, "'\\''")}'`))].join(" "), "env -S");
      return w.lit.length;
    }
    if (name === "xargs" && (opt === "I" || opt === "i" || opt === "replace")) c.xargsReplace = value ?? "{}";
  }
  return Math.min(i + (WRAPPER_POSITIONALS[name] ?? 0), w.lit.length);
}

/** The value of a `-c SCRIPT` / `--command SCRIPT` / `--command=SCRIPT` option. */
function commandOption(letters: Set<string>, rest: Array<string | undefined>): { found: boolean; script?: string } {
  for (let i = 0; i < rest.length; i++) {
    const x = rest[i];
    if (x === undefined) continue;
    for (const l of letters) {
      if (l.length === 1 ? x === `-${l}` : x === `--${l}`) return { found: true, script: rest[i + 1] };
      if (l.length > 1 && x.startsWith(`--${l}=`)) return { found: true, script: x.slice(l.length + 3) };
      if (l.length === 1 && new RegExp(`^-[A-Za-z]*${l}$`).test(x)) return { found: true, script: rest[i + 1] };
    }
  }
  return { found: false };
}

/** git: global `-c key=value`, `git config key value`, and subcommands that run a command. */
function analyseGit(rest: Array<string | undefined>, c: Collector): void {
  const checkKv = (kv: string | undefined) => {
    if (kv === undefined) return c.fail("git -c with a setting built at run time");
    const eq = kv.indexOf("=");
    const effect = gitConfigEffect(eq < 0 ? kv : kv.slice(0, eq), eq < 0 ? "true" : kv.slice(eq + 1));
    if (effect?.opaque) c.fail(effect.opaque);
    if (effect?.script !== undefined) c.nested(effect.script, `the command git runs for ${kv.slice(0, eq)}`);
  };
  let i = 0;
  for (; i < rest.length; i++) {
    const x = rest[i];
    if (x === undefined) return c.fail("git with an option built at run time");
    if (x === "-c") checkKv(rest[++i]);
    else if (/^-c./.test(x)) checkKv(x.slice(2));
    else if (x.startsWith("--config-env")) c.fail("git --config-env reads a setting from the environment");
    else if (x.startsWith("--exec-path=")) c.fail("git --exec-path runs git commands from another folder");
    else if (["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds", "--attr-source"].includes(x)) i++;
    else if (!x.startsWith("-")) break;
  }
  const sub = rest[i];
  const args = rest.slice(i + 1);
  if (sub === "config") {
    const pos: Array<string | undefined> = [];
    for (let k = 0; k < args.length; k++) {
      const x = args[k];
      if (x !== undefined && x.startsWith("-")) {
        if (["-f", "--file", "--blob", "--type", "--default", "--comment", "--value"].includes(x)) k++;
        continue;
      }
      pos.push(x);
    }
    if (pos[0] === "set" || pos[0] === "--add") pos.shift();
    if (pos.length >= 2) {
      if (pos[0] === undefined) return c.fail("git config with a key built at run time");
      const effect = gitConfigEffect(pos[0], pos[1]);
      if (effect?.opaque) c.fail(effect.opaque);
      if (effect?.script !== undefined) c.nested(effect.script, `the command git runs for ${pos[0]}`);
    }
  } else if (sub === "bisect" && args[0] === "run") c.nested(joinWords(args.slice(1)), "git bisect run");
  else if (sub === "submodule" && args.includes("foreach")) c.nested(joinWords(args.slice(args.indexOf("foreach") + 1).filter((a) => a !== "--recursive")), "git submodule foreach");
  else if (sub === "rebase" || sub === "difftool" || sub === "filter-branch" || sub === "mergetool") {
    for (let k = 0; k < args.length; k++) {
      const x = args[k];
      if (x === undefined) continue;
      const m = /^(--exec|-x|--extcmd|--tool-help|--(?:env|tree|index|parent|msg|commit|tag-name|subdirectory)-filter|-t|--tool)(?:=([\s\S]*))?$/.exec(x);
      if (m && m[1] !== "--tool-help") c.nested(m[2] ?? args[k + 1], `git ${sub} ${m[1]}`);
    }
  }
}

function joinWords(ws: Array<string | undefined>): string | undefined {
  return ws.some((w) => w === undefined) ? undefined : ws.join(" ");
}

/** `find … -exec cmd {} ;` (and -execdir, -ok, -okdir; fd's -x / -X): the commands it runs. */
function analyseExec(w: Words, start: number, flags: RegExp, c: Collector): void {
  for (let i = start; i < w.lit.length; i++) {
    if (!flags.test(w.lit[i] ?? "")) continue;
    let end = i + 1;
    while (end < w.lit.length && w.lit[end] !== ";" && w.lit[end] !== "+") end++;
    const sub: Words = { lit: w.lit.slice(i + 1, end), shown: w.shown.slice(i + 1, end) };
    if (!sub.lit.length) continue;
    const first = sub.lit[0];
    if (first === undefined || first.includes("{}")) c.fail(`${w.lit[i]} runs a program named by what find finds`);
    else simpleCommand(sub, c);
    i = end;
  }
}

/** One simple command (its words already literal where possible). */
function simpleCommand(all: Words, c: Collector): void {
  let w = all;
  const wrappers: string[] = [];
  for (let guard = 0; guard < 30 && w.lit.length; guard++) {
    const first = w.lit[0];
    if (first === undefined) break;
    const name = first.split("/").pop()!;
    if (guard > 0 && NAME_ASSIGN.test(first)) {
      const m = NAME_ASSIGN.exec(first)!;
      c.assign(m[1]!, m[2]);
      w = { lit: w.lit.slice(1), shown: w.shown.slice(1) };
      continue;
    }
    const cmdOpt = COMMAND_OPTION.get(name);
    if (cmdOpt) {
      const r = commandOption(cmdOpt, w.lit.slice(1));
      if (r.found) {
        c.nested(r.script, `${name} -c`);
        break;
      }
      if (name === "script") {
        c.fail("script starts a shell reading its commands from the terminal");
        break;
      }
    }
    if (!WRAPPERS.has(name)) break;
    if (name === "xargs") c.xargsReplace = undefined;
    wrappers.push(name);
    const i = skipOptions(name, w, c);
    w = { lit: w.lit.slice(i), shown: w.shown.slice(i) };
    if (name === "xargs") {
      const rep = c.xargsReplace;
      const cmd = w.lit[0];
      if (cmd !== undefined && (cmd.includes("{}") || (rep && cmd.includes(rep)))) {
        c.fail("xargs runs a program named by its input");
        return;
      }
    }
  }
  if (!w.lit.length) return;
  // xargs adds the words it reads to the command ("$?" stands for them).
  if (wrappers.includes("xargs")) w = { lit: [...w.lit, undefined], shown: [...w.shown, "$?"] };
  const first = w.lit[0];
  if (first === undefined || first === "") return c.fail("the command name is built at run time (a variable, a substitution or an expansion)");
  if (/[*?[{]/.test(first) && first !== "[") return c.fail("the command name is built at run time (a glob or brace expansion)");
  const name = first.split("/").pop()!;
  const rest = w.lit.slice(1);
  c.commands.push(text([name, ...rest]));
  c.wrapped.push(text(wrappers.length ? all.lit : [name, ...rest]));
  c.parts.push({ name, shown: w.shown.slice(1), wrappers });
  if (EVALUATING_BUILTINS.has(name)) {
    c.evaluates = true;
    // read PS4, printf -v BASH_ENV …: a builtin that assigns a variable bash later runs as code.
    for (const a of rest) {
      if (a !== undefined && (OPAQUE_VAR_RE.test(a) || COMMAND_VARS.has(a))) c.fail(`${name} ${a} sets a variable that bash or a program runs as code`);
    }
  }
  if (name === "eval") {
    // Fails closed, and a literal text is still read, so the danger check sees what it runs.
    c.fail("eval runs text built at run time");
    const script = joinWords(rest);
    if (script !== undefined && c.depth <= 5) c.nested(script, "eval's text");
  }
  else if (name === "source" || name === ".") c.fail(`${name} runs a script the rules cannot see`);
  else if (name === "hash" && rest.some((a) => a === undefined || /^-[A-Za-z]*p/.test(a))) c.fail("hash -p makes a command name run another program");
  else if (name === "enable" && rest.some((a) => a === undefined || /^-[A-Za-z]*f/.test(a))) c.fail("enable -f loads code into bash");
  else if (name === "trap") {
    const args = rest.filter((a) => a === undefined || !/^-[lp-]*$/.test(a) || a === "-");
    if (args.length >= 2 && args[0] !== "-") c.nested(args[0], "the trap's command");
  } else if (name === "alias") {
    for (const a of rest) {
      if (a === undefined) c.fail("an alias built at run time");
      // The alias's words come first and the words after the alias follow ("$?" stands for them).
      else if (a.includes("=")) c.nested(`${a.slice(a.indexOf("=") + 1)} "$?"`, `alias ${a.slice(0, a.indexOf("="))}`);
    }
  } else if ((name === "mapfile" || name === "readarray") && rest.some((a) => a === "-C")) {
    c.nested(rest[rest.indexOf("-C") + 1], `${name} -C`);
  } else if (name === "complete" || name === "compgen" || name === "bind") {
    if (rest.some((a) => a === undefined || /^-[A-Za-z]*[CFx]/.test(a))) c.fail(`${name} runs a command or function the rules cannot see`);
  } else if (SHELLS.has(name)) {
    const inv = shellInvocation(name, rest);
    if (inv.kind === "script") c.nested(inv.script, `the script of ${name} -c`);
    else if (inv.kind === "stdin") {
      c.readsStdin = true;
      c.fail(inv.why);
    } else if (inv.kind === "dynamic") c.fail(`${name} runs a script named at run time`);
    else c.runsFile = true;
  } else if (SHELL_JOINERS.has(name)) {
    if (name === "parallel") {
      const cut = rest.findIndex((a) => a === ":::" || a === "::::");
      const cmd = cut < 0 ? rest : rest.slice(0, cut);
      if (!cmd.length || cmd.some((a) => a === undefined || a.includes("{}"))) c.fail("parallel runs commands named by its input");
      else c.nested(`${joinWords(cmd.filter((a) => !a!.startsWith("-")))} "$?"`, "parallel's command");
    } else {
      const i = rest.findIndex((a, k) => a !== undefined && !a.startsWith("-") && !/^-[nd]$/.test(rest[k - 1] ?? ""));
      if (i >= 0) c.nested(joinWords(rest.slice(i)), `${name}'s command`);
    }
  } else if (AWKS.has(name)) {
    let program: string | undefined;
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i];
      if (a === undefined) return c.fail("awk with a program or option built at run time");
      if (a === "-f" || a.startsWith("--file") || /^-f./.test(a)) return c.fail("awk runs a program file the rules cannot see");
      if (a === "-v" || a === "-F" || a === "--assign" || a === "--field-separator") {
        i++;
        continue;
      }
      if (a.startsWith("-")) continue;
      program = a;
      break;
    }
    if (program === undefined) c.fail("awk reads its program from stdin");
    else if (/system\s*\(|\||@load|extension\s*\(/.test(program)) c.fail("the awk program runs commands");
  } else if (INTERPRETERS.has(name) || /^python\d/.test(name)) {
    const arg = rest.find((x) => x === undefined || !x.startsWith("-") || x === "-");
    if (rest.length && rest.indexOf(arg) >= 0 && arg === undefined) {
      c.runsFile = true;
      c.fail(`${name} runs a program named at run time`);
    } else if (arg === undefined && !rest.some((x) => x === undefined)) {
      c.readsStdin = true;
      c.fail(`${name} reads its program from stdin`);
    } else if (arg === "-" || (arg !== undefined && (/^\/dev\/(stdin|fd\/)/.test(arg) || /^\/proc\/[^/]+\/fd\//.test(arg)))) {
      c.readsStdin = true;
      c.fail(`${name} reads its program from ${arg}`);
    }
  } else if (name === "sed" || name === "gsed") {
    const scripts: Array<string | undefined> = [];
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i];
      if (a === "-e" || a === "--expression") scripts.push(rest[++i]);
      else if (a !== undefined && a.startsWith("--expression=")) scripts.push(a.slice(13));
      else if (a === "-f" || a === "--file") i++;
      else if (a === undefined || !a.startsWith("-")) {
        if (!scripts.length) scripts.push(a);
        break;
      }
    }
    for (const s of scripts) {
      if (s === undefined) c.fail("sed with a program built at run time");
      else if (/(^|[;{}\n]|[0-9$/!,])\s*e(\s|;|$)|[^\\]\/[gpiImMw0-9]*e[gpiImMw0-9]*\s*($|;|})/.test(s)) c.fail("the sed program runs commands (e)");
    }
  } else if (name === "find") analyseExec(w, 1, /^-(exec|execdir|ok|okdir)$/, c);
  else if (name === "fd" || name === "fdfind") analyseExec(w, 1, /^(-x|--exec|-X|--exec-batch)$/, c);
  else if (name === "git") analyseGit(rest, c);
}

/** Analyse a bash command line. */
export function analyzeBash(command: string, depth = 0): BashAnalysis {
  const S = sh();
  let file: Node;
  try {
    file = S.NewParser(S.Variant(S.LangBash)).Parse(command, "");
  } catch (error) {
    const msg = error instanceof Error ? error.message : String((error as Node)?.Error?.() ?? error);
    return { commands: [], wrapped: [], parts: [], opaque: `the command does not parse (${msg.split("\n")[0]})` };
  }
  const c = new Collector(depth);
  const src = Buffer.from(command, "utf8");
  const shownOf = (word: Node) => literal(word, S, false) ?? src.subarray(word.Pos().Offset(), word.End().Offset()).toString("utf8");
  let codeInText = false;
  S.Walk(file, (node) => {
    if (!node) return true;
    const type = S.NodeType(node);
    switch (type) {
      case "Lit":
        if (CODE_ESCAPED.test(String(node.Value))) codeInText = true;
        return true;
      case "SglQuoted":
        if (CODE_IN_TEXT.test(String(node.Value))) codeInText = true;
        return true;
      case "ArithmCmd":
      case "ArithmExp":
      case "LetClause":
      case "TestClause":
        c.evaluates = true;
        return true;
      case "ParamExp":
        if (node.Index || node.Excl || node.Nameref) c.evaluates = true;
        return true;
      case "Assign": {
        if (node.Index) c.evaluates = true;
        if (node.Naked) {
          // declare/export/local argument: a name, NAME=value, or an option.
          const v = literal(node.Value, S, false);
          if (v === undefined) c.fail("declare, export or local with a name built at run time");
          else if (NAME_ASSIGN.test(v)) {
            const m = NAME_ASSIGN.exec(v)!;
            c.assign(m[1]!, m[2]);
          } else if (OPAQUE_VAR_RE.test(v) || COMMAND_VARS.has(v)) c.fail(`declaring ${v} makes bash or a program run code the rules cannot see`);
          else if (!v.startsWith("-") && /[[$`]/.test(v)) c.evaluates = true;
        } else if (node.Name) {
          c.assign(String(node.Name.Value), node.Array ? undefined : node.Value ? literal(node.Value, S, false) : "");
        }
        return true;
      }
      case "DeclClause": {
        c.evaluates = true;
        const variant = String(node.Variant?.Value ?? "declare");
        c.commands.push(text([variant, ...(node.Args ?? []).map((a: Node) => (a.Naked ? literal(a.Value, S, false) : a.Name ? String(a.Name.Value) : undefined))]));
        c.wrapped.push(c.commands[c.commands.length - 1]!);
        c.parts.push({ name: variant, shown: [], wrappers: [] });
        return true;
      }
      case "CallExpr": {
        const args: Node[] = node.Args ?? [];
        if (!args.length) return true;
        simpleCommand({ lit: args.map((a, i) => literal(a, S, i === 0)), shown: args.map(shownOf) }, c);
        return true;
      }
      default:
        return true;
    }
  });
  if (codeInText && c.evaluates) {
    c.fail("a quoted text holding shell code ($(…), `…`) reaches a builtin that evaluates names or arithmetic (declare, printf -v, test -v, read, let, (( )), [[ ]], array subscripts)");
  }
  return { commands: c.commands, wrapped: c.wrapped, parts: c.parts, opaque: c.opaque, readsStdin: c.readsStdin || undefined, runsFile: c.runsFile || undefined };
}
