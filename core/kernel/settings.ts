/**
 * Layered settings: `<agentDir>/settings.json` (global) and the project's `.pi/settings.json`
 * found through cosmiconfig (which also accepts `.pirc.json` and `pi.config.ts`), merged
 * project over global, nested objects one level deep, over typed defaults.
 *
 * A malformed file is a diagnostic naming the file and the position; it never crashes the
 * CLI and it is never rewritten (writes to a file that did not parse are refused).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Diagnostic } from "./types.js";
import { applyPi16Aliases } from "./settings-compat.js";
import { writeFileAtomic } from "./fs-utils.js";
import { projectSettingsPlaces } from "./project-files.js";
import { installPiSettingsAccessors, type PiSettingsAccessors } from "./settings-accessors.js";
import { homedir } from "node:os";

/** Default limit of one protocol input line (RPC, ACP), in characters: `rpc.maxLineLength`, `acp.maxLineLength`. */
export const DEFAULT_MAX_INPUT_LINE = 64 * 1024 * 1024;

export interface PermissionRules {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

export interface Settings {
  defaultProvider?: string;
  defaultModel?: string;
  defaultThinkingLevel?: string;
  hideThinkingBlock: boolean;
  thinkingBudgets?: Record<string, number>;
  theme: string;
  quietStartup: boolean;
  doubleEscapeAction: "tree" | "fork" | "none";
  treeFilterMode: string;
  compaction: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
  branchSummary: { reserveTokens: number; skipPrompt: boolean };
  retry: {
    enabled: boolean;
    maxRetries: number;
    baseDelayMs: number;
    maxDelayMs: number;
    provider?: { timeoutMs?: number; maxRetries?: number; maxRetryDelayMs?: number };
  };
  steeringMode: "all" | "one-at-a-time";
  followUpMode: "all" | "one-at-a-time";
  transport: string;
  terminal: { showImages: boolean; imageWidthCells: number; clearOnShrink: boolean };
  images: { autoResize: boolean; blockImages: boolean };
  shellPath?: string;
  shellCommandPrefix?: string;
  npmCommand?: string[];
  sessionDir?: string;
  enabledModels?: string[];
  markdown: { codeBlockIndent: string };
  packages: Array<string | Record<string, unknown>>;
  extensions: string[];
  skills: string[];
  prompts: string[];
  themes: string[];
  enableSkillCommands: boolean;
  // added by this project
  permissions: PermissionRules;
  yolo: boolean;
  trustedProjects: string[];
  mcpServers: Record<string, unknown>;
  [key: string]: unknown;
}

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  hideThinkingBlock: false,
  theme: "dark",
  quietStartup: false,
  doubleEscapeAction: "tree",
  treeFilterMode: "default",
  compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
  branchSummary: { reserveTokens: 16384, skipPrompt: false },
  retry: { enabled: true, maxRetries: 3, baseDelayMs: 2000, maxDelayMs: 60000 },
  steeringMode: "one-at-a-time",
  followUpMode: "one-at-a-time",
  transport: "sse",
  terminal: { showImages: true, imageWidthCells: 60, clearOnShrink: false },
  images: { autoResize: true, blockImages: false },
  markdown: { codeBlockIndent: "  " },
  packages: [],
  extensions: [],
  skills: [],
  prompts: [],
  themes: [],
  enableSkillCommands: true,
  permissions: {},
  yolo: false,
  trustedProjects: [],
  mcpServers: {},
}) as Settings;

// ---- project trust for settings ----------------------------------------------------------------
/**
 * Settings that widen what the agent may do or run: a value that is executed or names a program
 * or a folder written to, and the model, provider and tool choice (an untrusted repository must
 * not pick a provider that serves a script of tool calls, nor turn bash back on over a read-only
 * global `defaultTools`). A project's own value for one of these applies only while the project
 * is trusted; otherwise it is ignored (the global value, or the default, stays in force) and the
 * trust plugin reports it. Keys that load code (extensions, plugins, packages, mcpServers, a
 * `.ts` config) are gated by their own loaders.
 */
export const TRUST_GATED_SETTINGS: readonly string[] = Object.freeze([
  "shellPath", "shellCommandPrefix", "npmCommand", "sessionDir",
  "defaultProvider", "defaultModel", "enabledModels", "defaultTools",
]);

/**
 * Settings a project layer never sets, trusted or not: the scripted `faux` provider's script
 * comes only from a flag, the environment (PI_FAUX_SCRIPT) or the global settings.
 */
export const GLOBAL_ONLY_SETTINGS: readonly string[] = Object.freeze(["faux", "trustedProjects", "defaultProjectTrust", "httpProxy"]);

/**
 * Limits an untrusted project may only lower (a positive number not above the global value or
 * the default): a larger value would let the project's inputs use more of the machine.
 * `zeroIsNone`: 0 means "no limit", so a project's 0 is a raise.
 */
export const LOWER_ONLY_SETTINGS: ReadonlyArray<{ path: readonly string[]; fallback: number; zeroIsNone?: boolean }> = Object.freeze([
  { path: ["rpc", "maxLineLength"], fallback: DEFAULT_MAX_INPUT_LINE },
  { path: ["acp", "maxLineLength"], fallback: DEFAULT_MAX_INPUT_LINE },
  { path: ["extensionHandlerTimeoutMs"], fallback: 10 * 60 * 1000, zeroIsNone: true },
]);

function getPath(o: Obj, path: readonly string[]): unknown {
  let v: unknown = o;
  for (const k of path) v = isObj(v) ? v[k] : undefined;
  return v;
}

/** A copy of `o` without the value at `path`. */
function withoutPath(o: Obj, path: readonly string[]): Obj {
  const [k, ...rest] = path;
  if (!k || !(k in o)) return o;
  if (!rest.length) {
    const { [k]: _dropped, ...others } = o;
    return others;
  }
  return isObj(o[k]) ? { ...o, [k]: withoutPath(o[k] as Obj, rest) } : o;
}
// ---- end project trust for settings ------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

/** Merge `over` onto `base`: top-level keys replace, nested plain objects merge one level deep. */
export function mergeSettings(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isObj(v) && isObj(base[k]) ? { ...(base[k] as Obj), ...v } : v;
  }
  return out;
}

/** Turn a JSON.parse error into "line L, column C". */
export function jsonErrorPosition(text: string, error: unknown): string {
  const msg = error instanceof Error ? error.message : String(error);
  const m = /position (\d+)/.exec(msg);
  const lc = /line (\d+) column (\d+)/.exec(msg);
  if (lc) return `line ${lc[1]}, column ${lc[2]}`;
  if (!m) return msg;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  const column = pos - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}

interface LayerFile {
  path?: string;
  data: Obj;
  /** The file exists but did not parse: never write to it. */
  broken: boolean;
}

// pi's named accessors (getTheme, setDefaultModel, …) are added to the prototype below.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface SettingsManager extends PiSettingsAccessors {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SettingsManager {
  private global: LayerFile;
  private project: LayerFile;
  private merged: Settings;
  private overrides: Obj = {};
  /** Whether the project layer's trust-gated keys apply (set by whoever knows the trust state). */
  private projectTrusted: () => boolean = () => true;
  readonly diagnostics: Diagnostic[] = [];

  private constructor(
    private readonly globalPath: string | undefined,
    project: LayerFile,
    global: LayerFile,
    private readonly projectDefaultPath: string | undefined,
  ) {
    this.global = global;
    this.project = project;
    this.merged = this.compute();
  }

  /** In memory only (tests, SDK hosts that do not want files). */
  static inMemory(settings: Partial<Settings> = {}, options?: { projectTrusted?: boolean }): SettingsManager {
    const sm = new SettingsManager(undefined, { data: {}, broken: false }, { data: settings as Obj, broken: false }, undefined);
    if (options?.projectTrusted !== undefined) sm.setProjectTrusted(options.projectTrusted);
    return sm;
  }

  /**
   * Synchronous load as pi's SDK does it: `<agentDir>/settings.json` and `<cwd>/.pi/settings.json`
   * (JSON files only; `load()` also finds .pirc.json and pi.config.ts). `agentDir` defaults to
   * PI_CODING_AGENT_DIR or ~/.pi/agent.
   */
  static create(cwd: string, agentDir?: string, options?: { projectTrusted?: boolean }): SettingsManager {
    const dir = agentDir ?? process.env.PI_CODING_AGENT_DIR ?? join(homedir(), ".pi", "agent");
    const diagnostics: Diagnostic[] = [];
    const projectPath = join(cwd, ".pi", "settings.json");
    const sm = new SettingsManager(join(dir, "settings.json"), readJsonLayer(projectPath, diagnostics), readJsonLayer(join(dir, "settings.json"), diagnostics), projectPath);
    sm.diagnostics.push(...diagnostics);
    if (options?.projectTrusted !== undefined) sm.setProjectTrusted(options.projectTrusted);
    return sm;
  }

  /** Settings read from a pi-style storage (`withLock(scope, fn)` hands over each layer's text); kept in memory. */
  static fromStorage(storage: { withLock(scope: "global" | "project", fn: (current: string | undefined) => string | undefined): void }, options?: { projectTrusted?: boolean }): SettingsManager {
    const layer = (scope: "global" | "project"): LayerFile => {
      let data: Obj = {};
      storage.withLock(scope, (current) => {
        try {
          const parsed = current ? JSON.parse(current) : {};
          if (isObj(parsed)) data = parsed;
        } catch {
          /* unreadable text: an empty layer, as for a missing file */
        }
        return undefined;
      });
      return { data, broken: false };
    };
    const sm = new SettingsManager(undefined, layer("project"), layer("global"), undefined);
    if (options?.projectTrusted !== undefined) sm.setProjectTrusted(options.projectTrusted);
    return sm;
  }

  /** Whether the project's trust-gated keys apply now. */
  isProjectTrusted(): boolean {
    return this.projectTrusted();
  }

  /** Fixed trust answer (pi's form of setProjectTrust). */
  setProjectTrusted(trusted: boolean): void {
    this.setProjectTrust(() => trusted);
  }

  /** Re-read the JSON settings files from disk. */
  async reload(): Promise<void> {
    if (this.globalPath) this.global = readJsonLayer(this.globalPath, this.diagnostics);
    const projectFile = this.project.path ?? this.projectDefaultPath;
    if (projectFile?.endsWith(".json")) this.project = readJsonLayer(projectFile, this.diagnostics);
    this.merged = this.compute();
  }

  /**
   * Load both layers. `configDir` is the project folder name (".pi"); `name` the cosmiconfig
   * module name ("pi" finds .pirc.json and pi.config.ts).
   */
  static async load(opts: {
    agentDir: string;
    cwd: string;
    configDir?: string;
    name?: string;
    /** Imports a .ts config (the kernel's jiti loader); optional. */
    importTs?: (path: string) => Promise<unknown>;
    /** Skip the project layer (an untrusted project's settings can still be read: they hold no code). */
    project?: boolean;
  }): Promise<SettingsManager> {
    const diagnostics: Diagnostic[] = [];
    const globalPath = join(opts.agentDir, "settings.json");
    const global = readJsonLayer(globalPath, diagnostics);
    const configDir = opts.configDir ?? ".pi";
    const name = opts.name ?? "pi";
    let project: LayerFile = { data: {}, broken: false };
    if (opts.project !== false) project = await loadProjectLayer(opts.cwd, configDir, name, opts.importTs, diagnostics);
    const sm = new SettingsManager(globalPath, project, global, join(opts.cwd, configDir, "settings.json"));
    sm.diagnostics.push(...diagnostics);
    return sm;
  }

  get(): Settings {
    return this.merged;
  }

  getGlobal(): Obj {
    return this.global.data;
  }

  getProject(): Obj {
    return this.project.data;
  }

  /** The project layer as it applies now: without its trust-gated keys while the project is untrusted. */
  getProjectApplied(): Obj {
    return this.gatedProject().data;
  }

  projectPath(): string | undefined {
    return this.project.path;
  }

  /**
   * Decide whether the project's trust-gated keys (TRUST_GATED_SETTINGS) apply. Call
   * `refreshTrust()` when the answer changes.
   */
  setProjectTrust(isTrusted: () => boolean): void {
    this.projectTrusted = isTrusted;
    this.merged = this.compute();
  }

  refreshTrust(): void {
    this.merged = this.compute();
  }

  /** The project's trust-gated keys being ignored now (empty when the project is trusted). */
  ignoredProjectKeys(): string[] {
    return this.gatedProject().ignored;
  }

  /** Runtime-only values (CLI flags); never persisted. */
  setOverride(key: string, value: unknown): void {
    this.overrides[key] = value;
    this.merged = this.compute();
  }

  /**
   * Persist keys into one layer ("global" by default). Refuses (with a diagnostic, returning
   * false) when that file exists but did not parse: a malformed file is never rewritten.
   */
  update(patch: Obj, scope: "global" | "project" = "global"): boolean {
    const layer = scope === "global" ? this.global : this.project;
    const path = scope === "global" ? this.globalPath : (this.project.path ?? this.projectDefaultPath);
    if (layer.broken) {
      this.diagnostics.push({
        level: "warning",
        source: path ?? "settings",
        message: `not saving settings: ${path} did not parse; fix it by hand first`,
      });
      return false;
    }
    layer.data = mergeSettings(layer.data, patch);
    this.merged = this.compute();
    if (!path) return true;
    if (scope === "project" && path.endsWith(".ts")) return false;
    try {
      // Re-read to keep keys another process wrote meanwhile.
      let onDisk: Obj = {};
      if (existsSync(path)) {
        try {
          const parsed = JSON.parse(readFileSync(path, "utf8"));
          if (isObj(parsed)) onDisk = parsed;
        } catch {
          return false;
        }
      }
      const next = mergeSettings(onDisk, patch);
      writeFileAtomic(path, JSON.stringify(next, null, 2) + "\n");
      layer.path = path;
      return true;
    } catch (error) {
      this.diagnostics.push({ level: "warning", source: path, message: "could not save settings", error });
      return false;
    }
  }

  /**
   * The project layer as it applies now: global-only keys dropped; while the project is not
   * trusted, trust-gated keys dropped and limits kept only when they lower the global value.
   */
  private gatedProject(): { data: Obj; ignored: string[] } {
    let data = this.project.data;
    const ignored: string[] = [];
    for (const k of GLOBAL_ONLY_SETTINGS) {
      if (data[k] !== undefined) data = withoutPath(data, [k]);
    }
    const present = TRUST_GATED_SETTINGS.some((k) => data[k] !== undefined) || LOWER_ONLY_SETTINGS.some((l) => getPath(data, l.path) !== undefined);
    if (!present || this.projectTrusted()) return { data, ignored };
    for (const k of TRUST_GATED_SETTINGS) {
      if (data[k] === undefined) continue;
      ignored.push(k);
      data = withoutPath(data, [k]);
    }
    for (const l of LOWER_ONLY_SETTINGS) {
      const v = getPath(data, l.path);
      if (v === undefined) continue;
      const g = Number(getPath(this.global.data, l.path));
      const base = Number.isFinite(g) && (g > 0 || (g === 0 && !l.zeroIsNone)) ? g : l.fallback;
      const limitless = l.zeroIsNone && g === 0;
      const n = Number(v);
      if (typeof v === "number" && Number.isFinite(n) && n > 0 && (limitless || n <= base)) continue;
      ignored.push(l.path.join("."));
      data = withoutPath(data, l.path);
    }
    return { data, ignored };
  }

  private compute(): Settings {
    let m = mergeSettings(DEFAULT_SETTINGS as unknown as Obj, this.global.data);
    m = mergeSettings(m, this.gatedProject().data);
    m = mergeSettings(m, this.overrides);
    return applyPi16Aliases(m) as Settings; // (1.6 compat) $schema, retry.maxAgentDelayMs
  }
}

installPiSettingsAccessors(SettingsManager.prototype);

function readJsonLayer(path: string, diagnostics: Diagnostic[]): LayerFile {
  if (!existsSync(path)) return { data: {}, broken: false };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    diagnostics.push({ level: "error", source: path, message: "cannot read settings file", error });
    return { path, data: {}, broken: true };
  }
  if (!text.trim()) return { path, data: {}, broken: false };
  try {
    const data = JSON.parse(text);
    if (!isObj(data)) {
      diagnostics.push({ level: "error", source: path, message: "settings file must hold a JSON object; ignored" });
      return { path, data: {}, broken: true };
    }
    return { path, data, broken: false };
  } catch (error) {
    diagnostics.push({
      level: "error",
      source: path,
      message: `malformed JSON at ${jsonErrorPosition(text, error)}; this file is ignored until fixed`,
    });
    return { path, data: {}, broken: true };
  }
}

async function loadProjectLayer(
  cwd: string,
  configDir: string,
  name: string,
  importTs: ((path: string) => Promise<unknown>) | undefined,
  diagnostics: Diagnostic[],
): Promise<LayerFile> {
  // Fast path: nothing there, no need to load cosmiconfig at all.
  const places = projectSettingsPlaces(configDir, name);
  if (!places.some((p) => existsSync(join(cwd, p)))) return { data: {}, broken: false };
  const { cosmiconfig } = await import("cosmiconfig");
  const explorer = cosmiconfig(name, {
    searchPlaces: places,
    searchStrategy: "none",
    cache: false,
    loaders: {
      ".ts": async (filepath: string) => {
        if (!importTs) throw new Error("TypeScript config needs the plugin loader");
        const mod = (await importTs(filepath)) as { default?: unknown };
        return mod && typeof mod === "object" && "default" in mod ? mod.default : mod;
      },
    },
  });
  try {
    const found = await explorer.search(cwd);
    // An empty file (e.g. the sandbox's placeholder for a start-up file) is no settings file.
    if (!found || found.isEmpty) return { data: {}, broken: false };
    if (!isObj(found.config)) {
      diagnostics.push({ level: "error", source: found.filepath, message: "settings must be an object; ignored" });
      return { path: found.filepath, data: {}, broken: true };
    }
    return { path: found.filepath, data: found.config, broken: false };
  } catch (error) {
    const msg = error instanceof Error ? error.message : String(error);
    const file = places.map((p) => join(cwd, p)).find((p) => existsSync(p)) ?? cwd;
    let detail = msg.split("\n")[0]!;
    if (file.endsWith(".json")) {
      // cosmiconfig's message names the file but not the place; JSON.parse's does.
      try {
        const text = readFileSync(file, "utf8");
        try {
          JSON.parse(text);
        } catch (e) {
          detail = `malformed JSON at ${jsonErrorPosition(text, e)}`;
        }
      } catch {
        /* unreadable: keep cosmiconfig's message */
      }
    }
    diagnostics.push({ level: "error", source: file, message: `cannot load project settings: ${detail}; this file is ignored until fixed` });
    return { path: file, data: {}, broken: true };
  }
}
