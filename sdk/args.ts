/**
 * Command-line parsing in two passes: pass 1 knows the core flags (enough to find plugins and
 * extensions); pass 2 also knows the flags plugins and extensions registered. An unknown flag
 * is reported and ignored; it never swallows the message after it.
 *
 * Parsing uses yargs' own parser (yargs-parser, the engine inside `yargs`), imported directly:
 * importing `yargs` itself costs ~45 ms bundled (~100 ms unbundled) at every start because its
 * platform shim loads y18n, cliui and string-width — a quarter of the RPC start-up budget.
 * `yargs` renders --help (renderHelp), loaded only when help is asked for.
 */
import yargsParser from "yargs-parser";
import type { CliFlag } from "../core/kernel/kernel.js";
import type { ServiceName } from "../core/kernel/services.js";

export interface CoreFlag extends CliFlag {
  /** A kernel service that must exist for the flag to work; otherwise "not available yet". */
  requires?: ServiceName;
}

const G_MODE = "Modes";
const G_SESSION = "Sessions";
const G_MODEL = "Models";
const G_PROMPT = "Prompt and tools";
const G_RES = "Extensions and resources";
const G_OTHER = "Other";

/** The thinking levels --thinking (and a model's `:level`) take, pi 1.6's names (clamped to what the model offers). */
export const THINKING_FLAG_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

/** The reference CLI's flags. Those whose feature a plugin provides name the service they need. */
export const CORE_FLAGS: CoreFlag[] = [
  { name: "help", alias: "h", type: "boolean", description: "Show this help and exit", group: G_OTHER },
  { name: "version", alias: "v", type: "boolean", description: "Print the version and exit", group: G_OTHER },
  { name: "print", alias: "p", type: "boolean", description: "Print mode: run the prompts, print the last answer, exit", group: G_MODE },
  { name: "mode", type: "string", placeholder: "text|json|rpc", description: "Output mode: text (print), json (event stream), rpc (stdin/stdout protocol)", group: G_MODE },
  { name: "continue", alias: "c", type: "boolean", description: "Continue the most recent session of this folder", group: G_SESSION, requires: "sessions" },
  { name: "resume", alias: "r", type: "boolean", description: "Pick a session to resume (interactive)", group: G_SESSION }, // (sdk/session-setup.ts explains when no picker can run)
  { name: "session", type: "string", placeholder: "path|id", description: "Open a session file, or the session whose id starts with this prefix", group: G_SESSION, requires: "sessions" },
  { name: "fork", type: "string", placeholder: "path|id", description: "Start a new session forked from a session file or id", group: G_SESSION, requires: "sessions" },
  { name: "session-id", type: "string", placeholder: "id", description: "Open this folder's session with this id, or create it with that id", group: G_SESSION, requires: "sessions" },
  { name: "session-dir", type: "string", placeholder: "dir", description: "Folder for session files", group: G_SESSION, requires: "sessions" },
  { name: "name", alias: "n", type: "string", placeholder: "name", description: "Set the session's display name", group: G_SESSION },
  { name: "no-session", type: "boolean", description: "Keep the session in memory only", group: G_SESSION },
  { name: "provider", type: "string", placeholder: "name", description: "Provider of --model", group: G_MODEL },
  { name: "model", type: "string", placeholder: "pattern", description: "Model: provider/id, id, or a glob; ':level' sets thinking (e.g. sonnet:high)", group: G_MODEL },
  { name: "models", type: "string", placeholder: "a,b,...", description: "Models to cycle through (patterns, comma separated)", group: G_MODEL },
  { name: "thinking", type: "string", placeholder: "level", description: `Thinking level: ${THINKING_FLAG_LEVELS.join(", ")} (clamped to what the model offers)`, group: G_MODEL },
  { name: "api-key", type: "string", placeholder: "key", description: "API key for the selected model's provider (this run only, never saved)", group: G_MODEL },
  { name: "system-prompt", type: "string", placeholder: "text|file", description: "Replace the whole default system prompt", group: G_PROMPT },
  { name: "append-system-prompt", type: "string", placeholder: "text|file", description: "Append to the system prompt (repeatable)", group: G_PROMPT },
  { name: "tools", alias: "t", type: "string", placeholder: "a,b,...", description: "Tools to enable: names or * patterns (replaces the defaults), or only +name/-name entries (changes the defaults)", group: G_PROMPT },
  { name: "exclude-tools", alias: "xt", type: "string", placeholder: "a,b,...", description: "Tools to disable: names or * patterns, applied last (MCP tools included)", group: G_PROMPT },
  { name: "no-tools", alias: "nt", type: "boolean", description: "Start with every tool disabled (built-in, extension, MCP); --tools adds some back", group: G_PROMPT },
  { name: "no-builtin-tools", alias: "nbt", type: "boolean", description: "Disable the default built-in tools, keep extension and plugin tools", group: G_PROMPT },
  { name: "extension", alias: "e", type: "string", placeholder: "path|npm:pkg|git:repo", description: "Load an extension, or builtin:<name> (repeatable)", group: G_RES, requires: "extensions" },
  { name: "no-extensions", alias: "ne", type: "boolean", description: "Do not discover extensions (-e still loads)", group: G_RES },
  { name: "skill", type: "string", placeholder: "path", description: "Load a skill file or folder (repeatable)", group: G_RES, requires: "resources" },
  { name: "no-skills", alias: "ns", type: "boolean", description: "Do not discover skills", group: G_RES },
  { name: "prompt-template", type: "string", placeholder: "path", description: "Load a prompt template (repeatable)", group: G_RES, requires: "resources" },
  { name: "no-prompt-templates", alias: "np", type: "boolean", description: "Do not discover prompt templates", group: G_RES },
  { name: "theme", type: "string", placeholder: "path", description: "Load a theme (repeatable)", group: G_RES, requires: "themes" },
  { name: "use-theme", type: "string", placeholder: "name[/name]", description: "The interactive theme for this run", group: G_RES },
  { name: "no-themes", type: "boolean", description: "Do not discover themes", group: G_RES },
  { name: "verbose", type: "boolean", description: "Verbose start-up output", group: G_OTHER },
  { name: "tui-mode", type: "string", choices: ["fullscreen", "regular"], placeholder: "fullscreen|regular", description: "Terminal mode of the interactive UI for this run", group: G_OTHER },
  { name: "offline", type: "boolean", description: "No network use at start-up (also PI_OFFLINE=1)", group: G_OTHER },
];

/** Flags that take several values when repeated. */
const REPEATABLE = new Set(["extension", "skill", "prompt-template", "theme", "append-system-prompt"]);

export interface ParsedArgs {
  /** Flag values by their long name (kebab-case) and camelCase. */
  flags: Record<string, unknown>;
  /** Positional words, in order: messages (and @file references). */
  positionals: string[];
  /** Options that no flag table knows (reported, ignored). */
  unknown: string[];
}

/**
 * Single-dash words before yargs sees them: a multi-letter alias (`-nc`, `-ne`) becomes its long
 * flag; a group of known one-letter boolean flags (`-pc`) stays a group; anything else is an
 * unknown option, kept away from yargs so it cannot split it and swallow the next word.
 */
function normaliseShortFlags(argv: string[], flags: CliFlag[]): { argv: string[]; unknown: string[] } {
  const longAlias = new Map<string, string>();
  const shortBoolean = new Set<string>();
  const shortAny = new Set<string>();
  for (const f of flags) {
    for (const a of ([] as string[]).concat(f.alias ?? [])) {
      if (a.length > 1) longAlias.set(a, f.name);
      else {
        shortAny.add(a);
        if (f.type === "boolean") shortBoolean.add(a);
      }
    }
  }
  const out: string[] = [];
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const m = /^-([a-zA-Z]{2,})$/.exec(a);
    if (!m) {
      out.push(a);
      continue;
    }
    const word = m[1]!;
    if (longAlias.has(word)) out.push(`--${longAlias.get(word)}`);
    else if ([...word].every((c) => shortBoolean.has(c)) || ([...word.slice(0, -1)].every((c) => shortBoolean.has(c)) && shortAny.has(word.at(-1)!))) out.push(a);
    else unknown.push(a);
  }
  return { argv: out, unknown };
}

export function parseArgs(rawArgv: string[], flags: CliFlag[]): ParsedArgs {
  const pre = normaliseShortFlags(rawArgv, flags);
  const argv = pre.argv;
  const boolean: string[] = [];
  const string: string[] = [];
  const number: string[] = [];
  const alias: Record<string, string[]> = {};
  const defaults: Record<string, unknown> = {};
  for (const f of flags) {
    if (f.type === "boolean") boolean.push(f.name);
    else if (f.type === "number") number.push(f.name);
    else string.push(f.name);
    if (f.alias) alias[f.name] = ([] as string[]).concat(f.alias);
    if (f.default !== undefined) defaults[f.name] = f.default;
  }
  const out = yargsParser(argv, {
    boolean,
    string,
    number,
    alias,
    default: defaults,
    configuration: {
      "unknown-options-as-args": true,
      "boolean-negation": false,
      "populate--": true,
      "duplicate-arguments-array": true,
      "strip-aliased": true,
      "greedy-arrays": false,
      "camel-case-expansion": false,
    },
  }) as Record<string, unknown>;

  const positionals: string[] = [];
  const unknown: string[] = [...pre.unknown];
  for (const v of (out._ as unknown[]) ?? []) {
    const s = String(v);
    // A word of three or more dashes is no option (pi 1.6): `pi -p ---word` sends it as a message.
    if (s.startsWith("-") && s.length > 1 && !/^-\d/.test(s) && !s.startsWith("---")) unknown.push(s);
    else positionals.push(s);
  }
  for (const v of (out["--"] as unknown[]) ?? []) positionals.push(String(v));
  const result: Record<string, unknown> = {};
  for (const f of flags) {
    let v = out[f.name];
    if (v === undefined) continue;
    if (REPEATABLE.has(f.name) || f.type === "array") v = ([] as unknown[]).concat(v).map(String);
    else if (Array.isArray(v)) v = v[v.length - 1];
    result[f.name] = v;
    result[camel(f.name)] = v;
  }
  return { flags: result, positionals, unknown };
}

export function camel(s: string): string {
  return s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Help text from the flag and subcommand registries, laid out by yargs (loaded here only). */
export async function renderHelp(opts: {
  /** Provider variables (API keys and settings) to list under Environment. */
  providerEnv?: Array<{ name: string; provider: string }>;
  name: string;
  version: string;
  flags: Array<CliFlag & { source?: string }>;
  subcommands: Array<{ name: string; description: string; usage?: string }>;
  envVar: string;
}): Promise<string> {
  const { default: yargs } = await import("yargs");
  let y = yargs([])
    .scriptName(opts.name)
    .usage(
      [
        `${opts.name} ${opts.version} - a coding agent for your terminal`,
        "",
        "Usage:",
        ...usageLines(opts.name, [
          ["[options] [@file ...] [message ...]", "interactive, or print mode when piped"],
          ['-p "question"', "print the answer and exit"],
          ["--mode json|rpc ...", "machine-readable modes"],
          ...(opts.subcommands.length
            ? ([
                ["<command> [args]", "see Commands"],
                ["<command> --help", "the command's own help"],
              ] as Array<[string, string]>)
            : []),
        ]),
      ].join("\n"),
    )
    .help(false)
    .version(false)
    .wrap(Math.min(120, process.stdout.columns || 100))
    .exitProcess(false);
  for (const s of opts.subcommands) y = y.command(s.usage ?? s.name, s.description);
  const groups = new Map<string, string[]>();
  for (const f of opts.flags) {
    if (f.hidden) continue;
    const o: Record<string, unknown> = { describe: f.description, type: f.type === "array" ? "string" : f.type };
    if (f.alias) o.alias = f.alias;
    if (f.placeholder) o.requiresArg = false;
    if (f.placeholder) o.describe = `${f.description}  <${f.placeholder}>`;
    y = y.option(f.name, o as never);
    const g = f.group ?? "Extension flags";
    groups.set(g, [...(groups.get(g) ?? []), f.name]);
  }
  for (const [g, names] of groups) y = y.group(names, `${g}:`);
  const n = opts.name;
  const examples: Array<[string, string]> = [
    ["Interactive, with a first message", `${n} "List all .ts files in src/"`],
    ["Files in the first message", `${n} @prompt.md @image.png "What is in the picture?"`],
    ["Print the answer and exit", `${n} -p "Summarize README.md"`],
    ["A message that starts with a dash", `${n} -p -- "- Summarize these points"`],
    ["Continue the last session of this folder", `${n} --continue "What did we discuss?"`],
    ["A named session", `${n} --name "Refactor auth module"`],
    ["Another model (provider prefix, thinking suffix)", `${n} --model openai/gpt-4o:high "Help me refactor this code"`],
    ["Models Ctrl+P cycles through", `${n} --models "claude-sonnet*,gpt-4o"`],
    ["Read-only tools", `${n} --tools read,grep,find,ls -p "Review the code in src/"`],
    ["Export a session file to HTML", `${n} --export session.jsonl out.html`],
    ["Save an API key", `${n} auth login anthropic --api-key`],
  ];
  const own: Array<[string, string]> = [
    [opts.envVar, `agent folder (default ~/.${n}/agent)`],
    ["PI_OFFLINE=1", "no network at start-up (no package or catalogue downloads)"],
    ["PI_TIMING=1", "print where start-up time goes (stderr)"],
    ["PI_DEBUG=1", "print the stack of an unexpected error"],
    ["HTTP_PROXY, HTTPS_PROXY, NO_PROXY", "proxy for every HTTP request (or httpProxy in settings)"],
    ["VISUAL, EDITOR", "the external editor (Ctrl+G)"],
  ];
  const vars = [...own, ...(opts.providerEnv ?? []).map((v): [string, string] => [v.name, `${v.provider} provider`])];
  const w = Math.min(40, Math.max(...vars.map(([k]) => k.length)));
  // The examples and the environment are laid out here, not by yargs: its layout measures every
  // line's width character by character, which took about 80 ms for these ~130 short lines.
  const epilogue = [
    "Examples:",
    ...examples.flatMap(([what, cmd]) => [`  # ${what}`, `  ${cmd}`, ""]),
    "Environment:",
    ...vars.map(([k, d]) => `  ${k.padEnd(w)}  ${d}`),
  ].join("\n");
  return `${await y.getHelp()}\n\n${epilogue}\n`;
}

/**
 * The usage lines, their explanations in one column. Help is kept to printable ASCII: yargs
 * measures such text by its length, while one other character loads ICU's segmenter (~4 MiB).
 */
function usageLines(name: string, rows: Array<[string, string]>): string[] {
  const w = Math.max(...rows.map(([u]) => u.length));
  return rows.map(([u, what]) => `  ${name} ${u.padEnd(w)}   ${what}`);
}

/** Edit distance (Levenshtein, with adjacent swaps counted once) between two short words. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `word` (ties: the first), with its distance. */
export function closest(word: string, candidates: Iterable<string>): { name: string; distance: number } | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const c of candidates) {
    const distance = editDistance(word, c);
    if (!best || distance < best.distance) best = { name: c, distance };
  }
  return best;
}

/** Every spelling of the known flags: `--long` and `-a` / `-ne`. */
export function flagSpellings(flags: CliFlag[]): string[] {
  const out: string[] = [];
  for (const f of flags) {
    out.push(`--${f.name}`);
    for (const a of ([] as string[]).concat(f.alias ?? [])) out.push(a.length === 1 ? `-${a}` : `-${a}`);
  }
  return out;
}

/** "unknown option --modle (did you mean --model?)" — the closest known spelling always named. */
export function unknownFlagMessage(option: string, flags: CliFlag[]): string {
  const bare = option.replace(/=.*$/, "");
  const long = bare.startsWith("--");
  const spellings = flagSpellings(flags).filter((s) => s.startsWith("--") === long);
  const near = closest(bare, spellings.length ? spellings : flagSpellings(flags));
  return `unknown option ${bare}` + (near ? ` (closest known option: ${near.name}; see --help)` : "");
}

/**
 * The subcommand a first word was probably meant to be: a lowercase word one edit (or one swap
 * of neighbours) from a registered subcommand ("auht", "instal"). Two edits would catch ordinary
 * words ("first" → "list"), so they read as a message. `undefined` when the word reads like an
 * ordinary message.
 */
export function likelySubcommandTypo(word: string, subcommands: Iterable<string>): string | undefined {
  if (!/^[a-z][a-z0-9-]{1,30}$/.test(word)) return undefined;
  const near = closest(word, subcommands);
  if (!near || near.distance === 0) return undefined;
  return near.distance <= 1 && word.length >= 3 ? near.name : undefined;
}
