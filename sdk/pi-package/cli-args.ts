/**
 * pi 1.6's `parseArgs(args)`: a command line in 1.6's `Args` shape (camelCase fields, messages and
 * `@file` arguments apart, unknown `--flags` kept with their values for extensions, problems as
 * diagnostics instead of exits). It runs this CLI's own parser (sdk/args.ts) on its flag table;
 * only the unknown-flag rule and the shape are 1.6's.
 */
import type { CliFlag } from "../../core/kernel/kernel.js";
import { CORE_FLAGS, parseArgs as parseWithTable } from "../args.js";

export type Mode = "text" | "json" | "rpc";
export type ArgsThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

export interface Args {
  provider?: string;
  model?: string;
  apiKey?: string;
  systemPrompt?: string;
  appendSystemPrompt?: string[];
  thinking?: ArgsThinkingLevel;
  continue?: boolean;
  resume?: boolean;
  help?: boolean;
  version?: boolean;
  mode?: Mode;
  name?: string;
  noSession?: boolean;
  session?: string;
  sessionId?: string;
  fork?: string;
  sessionDir?: string;
  models?: string[];
  tools?: string[];
  excludeTools?: string[];
  noTools?: boolean;
  noBuiltinTools?: boolean;
  extensions?: string[];
  noExtensions?: boolean;
  noMcp?: boolean;
  print?: boolean;
  export?: string;
  noSkills?: boolean;
  skills?: string[];
  promptTemplates?: string[];
  noPromptTemplates?: boolean;
  themes?: string[];
  useTheme?: string;
  noThemes?: boolean;
  noContextFiles?: boolean;
  listModels?: string | true;
  offline?: boolean;
  tuiMode?: "fullscreen" | "regular";
  verbose?: boolean;
  projectTrustOverride?: boolean;
  messages: string[];
  fileArgs: string[];
  /** Flags no table knows (extension flags): name → value, or true. */
  unknownFlags: Map<string, boolean | string>;
  diagnostics: Array<{ type: "warning" | "error"; message: string }>;
}

const THINKING: readonly string[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** Flags of plugins (and of 1.6) that parseArgs knows besides the CLI's core table. */
const MORE_FLAGS: CliFlag[] = [
  { name: "no-context-files", alias: "nc", type: "boolean", description: "" },
  { name: "no-mcp", type: "boolean", description: "" },
  { name: "export", type: "string", description: "" },
  { name: "approve", alias: "a", type: "boolean", description: "" },
  { name: "no-approve", alias: "na", type: "boolean", description: "" },
  { name: "trust", type: "boolean", description: "" },
];

const TABLE: CliFlag[] = [...CORE_FLAGS, ...MORE_FLAGS];

export function isValidThinkingLevel(level: string): level is ArgsThinkingLevel {
  return THINKING.includes(level);
}

export function normalizeSessionName(value: string): string | undefined {
  const name = value.trim();
  return name ? name : undefined;
}

const list = (v: unknown): string[] =>
  ([] as unknown[])
    .concat(v ?? [])
    .flatMap((x) => String(x).split(","))
    .map((s) => s.trim())
    .filter(Boolean);

/** Parse a pi command line (without the node and script words) into 1.6's Args. */
export function parseArgs(args: string[]): Args {
  if (!Array.isArray(args)) throw new TypeError("parseArgs: expected the command line as an array of strings");
  const byLong = new Map<string, CliFlag>();
  const byShort = new Map<string, CliFlag>();
  for (const f of TABLE) {
    byLong.set(f.name, f);
    for (const a of ([] as string[]).concat(f.alias ?? [])) byShort.set(a, f);
  }
  const result: Args = { messages: [], fileArgs: [], unknownFlags: new Map(), diagnostics: [] };
  const kept: string[] = [];
  const takesValue = (f: CliFlag) => f.type !== "boolean";

  for (let i = 0; i < args.length; i++) {
    const a = String(args[i]);
    if (a === "--") {
      kept.push(...args.slice(i).map(String));
      break;
    }
    if (a === "--list-models") {
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith("-") && !next.startsWith("@")) result.listModels = args[++i]!;
      else result.listModels = true;
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq >= 0 ? eq : undefined);
      const f = byLong.get(name);
      if (!f) {
        // 1.6's rule for flags it does not know: `--x=v`, `--x v` (v not a flag or @file), else `--x` = true.
        const next = args[i + 1];
        if (eq >= 0) result.unknownFlags.set(name, a.slice(eq + 1));
        else if (next !== undefined && !next.startsWith("-") && !next.startsWith("@")) result.unknownFlags.set(name, args[++i]!);
        else result.unknownFlags.set(name, true);
        continue;
      }
      kept.push(a);
      if (takesValue(f) && eq < 0 && i + 1 < args.length) kept.push(String(args[++i]));
      continue;
    }
    if (a.startsWith("-") && a.length > 1 && !/^-\d/.test(a)) {
      const f = byShort.get(a.slice(1));
      if (!f) {
        result.diagnostics.push({ type: "error", message: `Unknown option: ${a}` });
        continue;
      }
      kept.push(`--${f.name}`);
      if (takesValue(f) && i + 1 < args.length) kept.push(String(args[++i]));
      continue;
    }
    kept.push(a);
  }

  const parsed = parseWithTable(kept, TABLE);
  for (const u of parsed.unknown) result.diagnostics.push({ type: "error", message: `Unknown option: ${u}` });
  for (const p of parsed.positionals) {
    if (p.startsWith("@")) result.fileArgs.push(p.slice(1));
    else result.messages.push(p);
  }
  const f = parsed.flags;
  const has = (k: string) => f[k] !== undefined;
  const str = (k: string) => (has(k) ? String(([] as unknown[]).concat(f[k]).at(-1)) : undefined);

  const booleans: Array<[string, keyof Args]> = [
    ["help", "help"], ["version", "version"], ["print", "print"], ["continue", "continue"], ["resume", "resume"],
    ["no-session", "noSession"], ["no-tools", "noTools"], ["no-builtin-tools", "noBuiltinTools"], ["no-extensions", "noExtensions"],
    ["no-mcp", "noMcp"], ["no-skills", "noSkills"], ["no-prompt-templates", "noPromptTemplates"], ["no-themes", "noThemes"],
    ["no-context-files", "noContextFiles"], ["offline", "offline"], ["verbose", "verbose"],
  ];
  for (const [flag, key] of booleans) if (f[flag] === true) (result as unknown as Record<string, unknown>)[key] = true;
  const strings: Array<[string, keyof Args]> = [
    ["provider", "provider"], ["model", "model"], ["api-key", "apiKey"], ["system-prompt", "systemPrompt"], ["name", "name"],
    ["session", "session"], ["session-id", "sessionId"], ["fork", "fork"], ["session-dir", "sessionDir"], ["use-theme", "useTheme"], ["export", "export"],
  ];
  for (const [flag, key] of strings) {
    const v = str(flag);
    if (v !== undefined) (result as unknown as Record<string, unknown>)[key] = v;
  }
  const arrays: Array<[string, keyof Args]> = [
    ["append-system-prompt", "appendSystemPrompt"], ["extension", "extensions"], ["skill", "skills"], ["prompt-template", "promptTemplates"], ["theme", "themes"],
  ];
  for (const [flag, key] of arrays) if (has(flag)) (result as unknown as Record<string, unknown>)[key] = ([] as unknown[]).concat(f[flag]).map(String);
  for (const [flag, key] of [["models", "models"], ["tools", "tools"], ["exclude-tools", "excludeTools"]] as const) if (has(flag)) result[key] = list(f[flag]);

  const thinking = str("thinking");
  if (thinking !== undefined) {
    if (isValidThinkingLevel(thinking)) result.thinking = thinking;
    else result.diagnostics.push({ type: "warning", message: `Invalid thinking level "${thinking}". Valid values: ${THINKING.join(", ")}` });
  }
  const mode = str("mode");
  if (mode !== undefined) {
    if (mode === "text" || mode === "json" || mode === "rpc") result.mode = mode;
    else result.diagnostics.push({ type: "error", message: `Invalid mode "${mode}". Valid values: text, json, rpc` });
  }
  const tui = str("tui-mode");
  if (tui !== undefined) {
    if (tui === "regular" || tui === "fullscreen") result.tuiMode = tui;
    else result.diagnostics.push({ type: "error", message: `Invalid TUI mode "${tui}". Valid values: regular, fullscreen` });
  }
  if (f.approve === true || f.trust === true) result.projectTrustOverride = true;
  if (f["no-approve"] === true) result.projectTrustOverride = false;
  return result;
}
