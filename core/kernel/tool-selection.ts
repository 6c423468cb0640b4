/**
 * Which tools a first session starts with, with pi 1.6's rules:
 * - the default set is `defaultTools` (setting) or the tools plugin's default (read, bash, edit,
 *   write); a `defaultTools` made only of `+name` / `-name` entries changes that default;
 * - tools added by plugins, extensions and MCP servers are on as well;
 * - `--tools` with plain entries (names or `*` patterns) replaces the selection; MCP tools
 *   (`mcp__…`) stay unless an entry starts with `mcp__`; `--tools` made only of `+name` / `-name`
 *   entries changes the default selection instead; the two kinds cannot be mixed;
 * - `--no-builtin-tools` drops the default built-in set, `--no-tools` everything;
 * - `--exclude-tools` (names or patterns) removes tools last, MCP tools included.
 */
export interface ToolInfo {
  name: string;
  /** Registry source: "tools" for the built-in set, "mcp" for MCP servers, else a plugin/extension. */
  source: string;
}

export interface ToolSelectionInput {
  tools: ToolInfo[];
  /** The built-in default set (before `defaultTools`). */
  builtinDefaults: string[];
  /** The `defaultTools` setting, if any (the user's, when `projectDefaultTools` is given). */
  defaultTools?: string[];
  /** The project's `defaultTools`: applied on top of the user's (only +/- entries change it). */
  projectDefaultTools?: string[];
  /** Tools registered inactive (pi 1.6's codemode, tool_search): on only when a list names them. */
  inactiveByDefault?: string[];
  /** `--tools` entries. */
  allow?: string[];
  /** `--exclude-tools` entries. */
  exclude?: string[];
  noTools?: boolean;
  noBuiltinTools?: boolean;
}

export interface ToolSelection {
  active: string[];
  warnings: string[];
}

export class ToolSelectionError extends Error {}

const isMcp = (t: ToolInfo) => t.name.startsWith("mcp__") || t.source === "mcp";

/** `*` matches any characters; everything else is literal. */
export function toolPattern(p: string): RegExp {
  return new RegExp(`^${p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

function isDelta(list: string[]): boolean {
  return list.length > 0 && list.every((e) => e.startsWith("+") || e.startsWith("-"));
}

function applyDelta(base: string[], delta: string[], known: Set<string>, source: string, warnings: string[]): string[] {
  const out = [...base];
  for (const e of delta) {
    const name = e.slice(1);
    if (!known.has(name)) {
      warnings.push(`${source}: unknown tool "${name}" ignored`);
      continue;
    }
    if (e.startsWith("+")) {
      if (!out.includes(name)) out.push(name);
    } else {
      const i = out.indexOf(name);
      if (i >= 0) out.splice(i, 1);
    }
  }
  return out;
}

export function selectTools(input: ToolSelectionInput): ToolSelection {
  const warnings: string[] = [];
  const known = new Set(input.tools.map((t) => t.name));
  const inactive = new Set(input.inactiveByDefault ?? []);
  const extra = input.tools.filter((t) => t.source !== "tools" && !inactive.has(t.name)).map((t) => t.name);

  // The default selection: the built-in set, then the user's defaultTools, then the project's.
  // A list of only +name/-name entries changes the selection it inherits; a list with plain names
  // replaces it (its plain names form the selection, its +/- entries then apply in order); an
  // empty list means no built-in tools (pi 1.6).
  let defaults = input.builtinDefaults.filter((n) => known.has(n));
  const applyList = (base: string[], list: string[] | undefined): string[] => {
    if (!list) return base;
    if (!list.length) return [];
    if (isDelta(list)) return applyDelta(base, list, known, "defaultTools", warnings);
    const plain = list.filter((e) => !e.startsWith("+") && !e.startsWith("-"));
    for (const n of plain) if (!known.has(n)) warnings.push(`defaultTools: unknown tool "${n}" ignored`);
    return applyDelta(
      [...new Set(plain.filter((n) => known.has(n)))],
      list.filter((e) => e.startsWith("+") || e.startsWith("-")),
      known,
      "defaultTools",
      warnings,
    );
  };
  defaults = applyList(applyList(defaults, input.defaultTools), input.projectDefaultTools);
  let active: string[];
  if (input.noTools) active = [];
  else {
    active = input.noBuiltinTools ? [] : [...defaults];
    for (const n of extra) if (!active.includes(n)) active.push(n);
  }

  const allow = input.allow?.map((s) => s.trim()).filter(Boolean);
  if (allow && allow.length) {
    if (isDelta(allow)) {
      active = applyDelta(active, allow, known, "--tools", warnings);
    } else {
      if (allow.some((e) => e.startsWith("+") || e.startsWith("-"))) {
        throw new ToolSelectionError(`--tools cannot mix plain names with +name/-name entries (got ${allow.join(",")})`);
      }
      const filtersMcp = allow.some((e) => e.startsWith("mcp__"));
      const pats = allow.map(toolPattern);
      for (const e of allow) if (!e.includes("*") && !known.has(e)) warnings.push(`--tools: unknown tool "${e}" ignored (known: ${[...known].join(", ")})`);
      const picked = input.tools.filter((t) => pats.some((p) => p.test(t.name)) || (!filtersMcp && !input.noTools && isMcp(t))).map((t) => t.name);
      // Keep the order the entries name them in, then the rest.
      active = [...new Set([...allow.filter((e) => known.has(e)), ...picked])];
    }
  }

  const exclude = input.exclude?.map((s) => s.trim()).filter(Boolean);
  if (exclude && exclude.length) {
    const pats = exclude.map(toolPattern);
    active = active.filter((n) => !pats.some((p) => p.test(n)));
  }
  return { active, warnings };
}

/** A comma-separated flag value (or several, when repeated) as entries. */
export function listFlag(v: unknown): string[] | undefined {
  if (v === undefined || v === false) return undefined;
  return ([] as unknown[])
    .concat(v)
    .flatMap((x) => String(x).split(","))
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Tools that arrive after the session started (MCP servers connecting): which of `names` the
 * command line lets on — `--no-tools` none; `--tools` with a plain entry starting `mcp__` only the
 * ones it names or matches (other plain lists keep MCP tools); `--exclude-tools` removes matches.
 */
export function filterLateTools(names: string[], flags: Record<string, unknown> | undefined): string[] {
  if (!flags) return names;
  if (flags["no-tools"]) {
    const allow = listFlag(flags.tools) ?? [];
    if (!allow.length || isDelta(allow)) return [];
  }
  let out = names;
  const allow = listFlag(flags.tools);
  if (allow && allow.length && !isDelta(allow) && allow.some((e) => e.startsWith("mcp__"))) {
    const pats = allow.map(toolPattern);
    out = out.filter((n) => pats.some((p) => p.test(n)));
  } else if (allow && isDelta(allow)) {
    const removed = new Set(allow.filter((e) => e.startsWith("-")).map((e) => e.slice(1)));
    out = out.filter((n) => !removed.has(n));
  }
  const exclude = listFlag(flags["exclude-tools"]);
  if (exclude?.length) {
    const pats = exclude.map(toolPattern);
    out = out.filter((n) => !pats.some((p) => p.test(n)));
  }
  return out;
}
