/**
 * pi 1.6's `DefaultResourceLoader` (and the `ResourceLoader` contract) over this project's
 * resource discovery. `reload()` builds a kernel with the built-in plugins for the loader's cwd
 * and agent dir: the extensions plugin loads the extensions (discovered, `additionalExtensionPaths`,
 * `extensionFactories`), the resources plugin finds skills, prompt templates, themes, context
 * files and SYSTEM.md / APPEND_SYSTEM.md exactly as the CLI does (settings entries, packages,
 * `resources_discover` handlers). The getters apply the loader's overrides.
 *
 * `createAgentSession({ resourceLoader })` runs the session on that same kernel (extensions load
 * once) with the loader's getters deciding the system prompt, skills, prompt templates and context
 * files. Any other ResourceLoader object works too: its getters are used as they are, and its
 * extensions (by path) are loaded into the session.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineApp } from "../../core/kernel/config.js";
import type { Kernel, PluginApi } from "../../core/kernel/kernel.js";
import { definePlugin, type PluginManifest } from "../../core/kernel/plugin.js";
import type { SettingsManager } from "../../core/kernel/settings.js";
import type { SystemPromptBuilder } from "../../core/engine/system-prompt.js";
import type { Diagnostic } from "../../core/kernel/types.js";
import { createResources, type ResourcesService } from "../../plugins/resources/index.js";
import { loadContextFiles } from "../../plugins/resources/context-files.js";
import { expandPromptTemplate, loadPromptTemplates, type PromptTemplate as OurPrompt } from "../../plugins/resources/prompt-templates.js";
import { expandSkillCommand, loadSkills, type Skill as OurSkill } from "../../plugins/resources/skills.js";
import { buildResourceSystemPrompt } from "../../plugins/resources/system-prompt.js";
import { parseThemeJson, type Theme } from "../../modes/tui/theme.js";
import { builtinPlugins } from "../builtins.js";
import { setupKernel } from "../kernel-setup.js";
import { packageInfo } from "../package-info.js";
import { createExtensionRuntime, loadExtensionsResultOf, type LoadExtensionsResult, type SourceInfo } from "./extension-runtime.js";

export interface ResourceDiagnostic {
  type: "warning" | "error" | "collision";
  message: string;
  path?: string;
}
export interface Skill {
  name: string;
  description: string;
  filePath: string;
  baseDir: string;
  sourceInfo: SourceInfo;
  disableModelInvocation: boolean;
}
export interface PromptTemplate {
  name: string;
  description: string;
  argumentHint?: string;
  content: string;
  sourceInfo: SourceInfo;
  filePath: string;
}
type Listed<K extends string, T> = { [P in K]: T[] } & { diagnostics: ResourceDiagnostic[] };
type AgentsFiles = { agentsFiles: Array<{ path: string; content: string }> };
type PathList = Array<{ path: string; metadata?: unknown }>;

export interface ResourceExtensionPaths {
  skillPaths?: PathList;
  promptPaths?: PathList;
  themePaths?: PathList;
}

export interface ResourceLoader {
  getExtensions(): LoadExtensionsResult;
  getSkills(): Listed<"skills", Skill>;
  getPrompts(): Listed<"prompts", PromptTemplate>;
  getThemes(): Listed<"themes", Theme>;
  getAgentsFiles(): AgentsFiles;
  getSystemPrompt(): string | undefined;
  getSystemPromptSource(): { path: string } | undefined;
  getAppendSystemPrompt(): string[];
  getAppendSystemPromptSources(): Array<{ path: string }>;
  extendResources(paths: ResourceExtensionPaths): void;
  reload(options?: unknown): Promise<void>;
}

export interface DefaultResourceLoaderOptions {
  cwd: string;
  agentDir: string;
  settingsManager?: SettingsManager;
  additionalExtensionPaths?: string[];
  additionalSkillPaths?: string[];
  additionalPromptTemplatePaths?: string[];
  additionalThemePaths?: string[];
  /** Inline extensions: `(pi) => { … }` factories. */
  extensionFactories?: Array<(pi: any) => unknown>;
  noExtensions?: boolean;
  noSkills?: boolean;
  noPromptTemplates?: boolean;
  noThemes?: boolean;
  noContextFiles?: boolean;
  /** Replaces SYSTEM.md: text, or the path of a file. */
  systemPrompt?: string;
  /** Appended after APPEND_SYSTEM.md: texts, or paths of files. */
  appendSystemPrompt?: string[];
  /** (this host) Trust the project for this loader, like `--trust`: its extensions and packages load. */
  trustProject?: boolean;
  extensionsOverride?: (base: LoadExtensionsResult) => LoadExtensionsResult;
  skillsOverride?: (base: Listed<"skills", Skill>) => Listed<"skills", Skill>;
  promptsOverride?: (base: Listed<"prompts", PromptTemplate>) => Listed<"prompts", PromptTemplate>;
  themesOverride?: (base: Listed<"themes", Theme>) => Listed<"themes", Theme>;
  agentsFilesOverride?: (base: AgentsFiles) => AgentsFiles;
  systemPromptOverride?: (base: string | undefined) => string | undefined;
  appendSystemPromptOverride?: (base: string[]) => string[];
  // Accepted for 1.6 compatibility: package output goes to stderr here; built-ins are kernel plugins.
  eventBus?: unknown;
  packageCommandOutput?: "inherit" | "capture";
  onPackageProgress?: (event: unknown) => void;
  disabledBuiltinExtensions?: string[];
}

type Base = ReturnType<typeof createResources>;

const scopeOf = (location: string): SourceInfo["scope"] => (location === "project" ? "project" : location === "user" ? "user" : "temporary");
const toSkill = (s: OurSkill): Skill => ({
  name: s.name,
  description: s.description,
  filePath: s.filePath,
  baseDir: s.baseDir,
  sourceInfo: { path: s.filePath, source: "local", scope: scopeOf(s.location), origin: "top-level", baseDir: s.baseDir },
  disableModelInvocation: s.disableModelInvocation,
});
const toPrompt = (p: OurPrompt): PromptTemplate => ({
  name: p.name,
  description: p.description,
  ...(p.argumentHint ? { argumentHint: p.argumentHint } : {}),
  content: p.content,
  sourceInfo: { path: p.filePath, source: "local", scope: scopeOf(p.location), origin: "top-level" },
  filePath: p.filePath,
});
const fromSkill = (s: Skill): OurSkill => ({ name: s.name, description: s.description, filePath: s.filePath, baseDir: s.baseDir, location: "path", disableModelInvocation: !!s.disableModelInvocation, frontmatter: {} });
const fromPrompt = (p: PromptTemplate): OurPrompt => ({ name: p.name, description: p.description, argumentHint: p.argumentHint, content: p.content, filePath: p.filePath, location: "path" });
const toDiagnostic = (d: Diagnostic): ResourceDiagnostic => ({ type: d.level === "error" ? "error" : "warning", message: d.message, path: d.source });

function loadThemes(paths: string[]): Listed<"themes", Theme> {
  const themes: Theme[] = [];
  const diagnostics: ResourceDiagnostic[] = [];
  for (const path of paths) {
    try {
      const r = parseThemeJson(JSON.parse(readFileSync(path, "utf8")), path);
      for (const message of r.errors) diagnostics.push({ type: "warning", message, path });
      if (r.theme && !themes.some((t) => t.name === r.theme!.name)) themes.push(r.theme);
    } catch (error) {
      diagnostics.push({ type: "warning", message: `cannot load theme: ${error instanceof Error ? error.message : String(error)}`, path });
    }
  }
  return { themes, diagnostics };
}

/** Text, or the content of the file it names. */
function promptInput(cwd: string, value: string): { text: string; path?: string } {
  const p = resolve(cwd, value);
  if (value.length < 4096 && existsSync(p)) {
    try {
      return { text: readFileSync(p, "utf8"), path: p };
    } catch {
      /* use the text */
    }
  }
  return { text: value };
}

/** The loader's skills, prompts, … computed from the base once per base change (overrides run then). */
function memo<I extends readonly unknown[], O>(fn: (...inputs: I) => O): (...inputs: I) => O {
  let last: I | undefined;
  let out: O;
  return (...inputs: I) => {
    if (!last || inputs.length !== last.length || inputs.some((x, i) => x !== last![i])) {
      out = fn(...inputs);
      last = inputs;
    }
    return out;
  };
}

export class DefaultResourceLoader implements ResourceLoader {
  readonly cwd: string;
  readonly agentDir: string;
  private readonly options: DefaultResourceLoaderOptions;
  private kernel: Kernel | undefined;
  private kernelTaken = false;
  private reloading = false;
  private base: Base | undefined;
  private diagnostics: Diagnostic[] = [];
  private extra = { skills: [] as string[], prompts: [] as string[], themes: [] as string[] };

  constructor(options: DefaultResourceLoaderOptions) {
    if (!options || typeof options.cwd !== "string" || typeof options.agentDir !== "string") {
      throw new TypeError("DefaultResourceLoader: { cwd, agentDir } are required (strings)");
    }
    this.options = { ...options };
    this.cwd = resolve(options.cwd);
    this.agentDir = resolve(options.agentDir);
  }

  /** The flags the loader's options stand for (what the CLI's -e, --skill, --no-… would set). */
  flags(): Record<string, unknown> {
    const o = this.options;
    const f: Record<string, unknown> = {};
    if (o.additionalExtensionPaths?.length) f.extension = o.additionalExtensionPaths.map((p) => resolve(this.cwd, p));
    if (o.additionalSkillPaths?.length) f.skill = [...o.additionalSkillPaths];
    if (o.additionalPromptTemplatePaths?.length) f["prompt-template"] = [...o.additionalPromptTemplatePaths];
    if (o.additionalThemePaths?.length) f.theme = [...o.additionalThemePaths];
    if (o.noExtensions) f["no-extensions"] = true;
    if (o.noSkills) f["no-skills"] = true;
    if (o.noPromptTemplates) f["no-prompt-templates"] = true;
    if (o.noThemes) f["no-themes"] = true;
    if (o.noContextFiles) f["no-context-files"] = true;
    if (o.trustProject) f.trust = true;
    return f;
  }

  /** The built-in plugins with the resources plugin answering through this loader. */
  plugins(list: PluginManifest[] = builtinPlugins()): PluginManifest[] {
    return list.map((p) => (p.name === "resources" ? loaderResourcesPlugin(this, true) : p));
  }

  extensionFactories(): Array<(pi: any) => unknown> {
    const list = this.options.extensionFactories ?? [];
    if (!Array.isArray(list)) throw new TypeError("DefaultResourceLoader: extensionFactories must be an array of functions");
    return list.filter((f, i) => {
      if (typeof f === "function") return true;
      this.diagnostics.push({ level: "error", source: `<inline:${i + 1}>`, message: "failed to load extension: an inline extension must be a function (pi) => { … }" });
      return false;
    });
  }

  /** Discover and load everything again (a new kernel: extensions load fresh). */
  async reload(_options?: unknown): Promise<void> {
    this.diagnostics = [];
    this.base = undefined;
    const factories = this.extensionFactories();
    this.reloading = true;
    const { kernel } = await setupKernel({
      app: defineApp("pi", packageInfo().version),
      cwd: this.cwd,
      agentDir: this.agentDir,
      argv: { flags: this.flags(), positionals: [], unknown: [] },
      settings: this.options.settingsManager,
      plugins: this.plugins(),
      extensionFactories: factories,
      onKernel: (k) => void k.diagnostics.subscribe((d) => void this.diagnostics.push(d), true),
    }).finally(() => (this.reloading = false));
    this.kernel = kernel;
    this.kernelTaken = false;
    await (this.base as Base | undefined)?.ready();
  }

  /** (SDK) The kernel of the last reload(), once, for the session that will run on it. */
  takeKernel(): Kernel | undefined {
    if (!this.kernel || this.kernelTaken) return undefined;
    this.kernelTaken = true;
    return this.kernel;
  }

  /**
   * (SDK) Called by the resources plugin of a kernel that runs on this loader: during reload(), or
   * when a session was made from a loader that was not reloaded (then the loader reads the
   * session's kernel).
   */
  attachBase(base: Base, kernel: Kernel): void {
    this.base = base;
    if (this.reloading) return;
    this.kernel = kernel;
    this.kernelTaken = true;
    this.diagnostics = [];
    kernel.diagnostics.subscribe((d) => void this.diagnostics.push(d), true);
  }

  // ---- getters ----

  getExtensions(): LoadExtensionsResult {
    return this.extensionsView(this.kernel, this.diagnostics.length);
  }
  private readonly extensionsView = memo((kernel: Kernel | undefined, _n: number): LoadExtensionsResult => {
    const base = kernel ? loadExtensionsResultOf(kernel, this.diagnostics) : { extensions: [], errors: [], warnings: [], runtime: createExtensionRuntime() };
    return this.options.extensionsOverride ? this.options.extensionsOverride(base) : base;
  });

  private baseDiagnostics(kind: RegExp): ResourceDiagnostic[] {
    return (this.base?.diagnostics() ?? []).filter((d) => kind.test(`${d.message} ${d.source}`)).map(toDiagnostic);
  }

  getSkills(): Listed<"skills", Skill> {
    return this.skillsView(this.base?.skills(), this.extra.skills.length);
  }
  private readonly skillsView = memo((skills: OurSkill[] | undefined, _n: number) => {
    const more = loadSkills(this.extra.skills.map((path) => ({ path, location: "path" as const })));
    const list = [...(skills ?? []), ...more.items.filter((s) => !(skills ?? []).some((b) => b.name === s.name))].map(toSkill);
    const base = { skills: list, diagnostics: [...this.baseDiagnostics(/skill/i), ...more.diagnostics.map(toDiagnostic)] };
    return this.options.skillsOverride ? this.options.skillsOverride(base) : base;
  });

  getPrompts(): Listed<"prompts", PromptTemplate> {
    return this.promptsView(this.base?.promptTemplates(), this.extra.prompts.length);
  }
  private readonly promptsView = memo((prompts: OurPrompt[] | undefined, _n: number) => {
    const more = loadPromptTemplates(this.extra.prompts.map((path) => ({ path, location: "path" as const })));
    const list = [...(prompts ?? []), ...more.items.filter((p) => !(prompts ?? []).some((b) => b.name === p.name))].map(toPrompt);
    const base = { prompts: list, diagnostics: [...this.baseDiagnostics(/prompt|template/i), ...more.diagnostics.map(toDiagnostic)] };
    return this.options.promptsOverride ? this.options.promptsOverride(base) : base;
  });

  getThemes(): Listed<"themes", Theme> {
    return this.themesView(this.base?.themePaths(), this.extra.themes.length);
  }
  private readonly themesView = memo((paths: string[] | undefined, _n: number) => {
    const base = loadThemes([...(paths ?? []), ...this.extra.themes]);
    return this.options.themesOverride ? this.options.themesOverride(base) : base;
  });

  getAgentsFiles(): AgentsFiles {
    return this.agentsView(this.base?.contextFiles());
  }
  private readonly agentsView = memo((files: Array<{ path: string; content: string }> | undefined) => {
    const base = { agentsFiles: (files ?? []).map((f) => ({ path: f.path, content: f.content })) };
    return this.options.agentsFilesOverride ? this.options.agentsFilesOverride(base) : base;
  });

  private promptFile(name: "SYSTEM.md" | "APPEND_SYSTEM.md"): { text: string; path: string } | undefined {
    for (const path of [join(this.cwd, ".pi", name), join(this.agentDir, name)]) {
      if (existsSync(path)) {
        try {
          return { text: readFileSync(path, "utf8"), path };
        } catch {
          return undefined;
        }
      }
    }
    return undefined;
  }

  getSystemPrompt(): string | undefined {
    return this.systemView(this.base)?.text;
  }
  getSystemPromptSource(): { path: string } | undefined {
    const v = this.systemView(this.base);
    return v?.path ? { path: v.path } : undefined;
  }
  private readonly systemView = memo((_base: Base | undefined) => {
    const given = this.options.systemPrompt !== undefined ? promptInput(this.cwd, this.options.systemPrompt) : this.base ? this.promptFile("SYSTEM.md") : undefined;
    if (!this.options.systemPromptOverride) return given;
    const text = this.options.systemPromptOverride(given?.text);
    return text === undefined ? undefined : { text, path: text === given?.text ? given?.path : undefined };
  });

  getAppendSystemPrompt(): string[] {
    return this.appendView(this.base).map((a) => a.text);
  }
  getAppendSystemPromptSources(): Array<{ path: string }> {
    return this.appendView(this.base).flatMap((a) => (a.path ? [{ path: a.path }] : []));
  }
  private readonly appendView = memo((_base: Base | undefined) => {
    const file = this.base ? this.promptFile("APPEND_SYSTEM.md") : undefined;
    const list: Array<{ text: string; path?: string }> = [...(file ? [file] : []), ...([] as string[]).concat(this.options.appendSystemPrompt ?? []).map((v) => promptInput(this.cwd, String(v)))];
    if (!this.options.appendSystemPromptOverride) return list;
    return this.options.appendSystemPromptOverride(list.map((a) => a.text)).map((text) => ({ text, path: list.find((a) => a.text === text)?.path }));
  });

  /** More skill, prompt and theme paths (what extensions' resources_discover returns). */
  extendResources(paths: ResourceExtensionPaths): void {
    const add = (list: PathList | undefined, into: string[]) => {
      for (const p of list ?? []) {
        const path = resolve(this.cwd, typeof p === "string" ? p : p.path);
        if (!into.includes(path)) into.push(path);
      }
    };
    add(paths.skillPaths, this.extra.skills);
    add(paths.promptPaths, this.extra.prompts);
    add(paths.themePaths, this.extra.themes);
  }
}

/**
 * The resources plugin of a kernel whose resources come from `loader`: the system prompt, prompt
 * expansion and the "resources" service read the loader's getters. With `withBase`, the usual
 * discovery runs underneath and the loader (a DefaultResourceLoader) reads it.
 */
export function loaderResourcesPlugin(loader: ResourceLoader, withBase: boolean): PluginManifest {
  return definePlugin({
    name: "resources",
    version: "1.0.0",
    kernel: "^1.0.0",
    description: "Context files, system prompt, skills, prompt templates and theme paths, from the SDK host's resource loader",
    setup(api) {
      const kernel = api.kernel;
      const base = withBase ? createResources(kernel, api) : undefined;
      if (base && loader instanceof DefaultResourceLoader) loader.attachBase(base, kernel);
      const ready = async () => void (await base?.ready());
      const skills = () => loader.getSkills().skills.map(fromSkill);
      const prompts = () => loader.getPrompts().prompts.map(fromPrompt);
      const themePaths = () => loader.getThemes().themes.flatMap((t) => ((t as { path?: string }).path ? [(t as { path: string }).path] : []));
      api.registerFlag({ name: "no-context-files", alias: "nc", type: "boolean", description: "Do not load AGENTS.md / CLAUDE.md context files", group: "Extensions and resources" });

      let commands: PluginApi | undefined;
      const registerCommands = () => {
        if (base) return; // the discovery underneath registers them
        commands?.dispose();
        commands = kernel.scope(api.name);
        const submit = async (text: string) => void (await kernel.bound(text.split(" ")[0]!).session.prompt(text));
        for (const t of prompts()) commands.registerCommand({ name: t.name, description: t.description, source: "prompt", path: t.filePath, handler: (args: string) => submit(args ? `/${t.name} ${args}` : `/${t.name}`) });
        for (const s of skills()) commands.registerCommand({ name: `skill:${s.name}`, description: s.description, source: "skill", path: s.filePath, handler: (args: string) => submit(args ? `/skill:${s.name} ${args}` : `/skill:${s.name}`) });
      };
      const reload = async () => {
        if (base) await base.reload();
        else await loader.reload();
        registerCommands();
      };
      const expand = async (text: string): Promise<string> => {
        if (!text.startsWith("/")) return text;
        await ready();
        if (!text.startsWith("/skill:")) return expandPromptTemplate(text, prompts());
        try {
          return expandSkillCommand(text, skills());
        } catch (error) {
          kernel.diagnostics.report({ level: "error", source: api.name, hook: "skill_expansion", message: `cannot read the skill for ${text.split(/\s/)[0]}`, error });
          return text;
        }
      };
      const builder: SystemPromptBuilder = async (input) => {
        await ready();
        const append = loader.getAppendSystemPrompt().filter((s) => s.trim());
        const contextFiles = input.cwd === kernel.cwd || !base ? loader.getAgentsFiles().agentsFiles : loadContextFiles({ cwd: input.cwd, agentDir: kernel.agentDir });
        return buildResourceSystemPrompt(input, { systemFile: loader.getSystemPrompt(), appendFile: append.length ? append.join("\n\n") : undefined, contextFiles, skills: skills() });
      };
      const service: ResourcesService = {
        ready,
        reload,
        expand,
        skills,
        promptTemplates: prompts,
        contextFiles: () => loader.getAgentsFiles().agentsFiles,
        themePaths,
        diagnostics: () => base?.diagnostics() ?? [],
      };
      api.provide("system-prompt", builder);
      api.provide("expand-prompt", expand);
      api.provide("resources", service);
      api.provide("reload-resources", reload);
      api.provide("theme-paths", themePaths);
      if (!kernel.hasService("themes")) api.provide("themes", themePaths);
      api.on(
        "session_start",
        async (event) => {
          if (event.reason === "reload") await reload();
          else {
            await ready();
            if (!commands) registerCommands();
          }
        },
        { stage: -100 },
      );
    },
  });
}

/**
 * What createAgentSession runs a session on when given a resource loader: the loader's own kernel
 * (a DefaultResourceLoader after reload(), the first time), else plugins and flags that make a new
 * kernel answer through the loader.
 */
export function sessionSetupForLoader(
  loader: ResourceLoader,
  opts: { plugins: PluginManifest[]; settings?: SettingsManager; cwd?: string; agentDir?: string },
): { kernel?: Kernel; plugins: PluginManifest[]; flags: Record<string, unknown>; extensionFactories: Array<(pi: any) => unknown>; cwd?: string; agentDir?: string } {
  if (!loader || typeof loader.getSystemPrompt !== "function" || typeof loader.getExtensions !== "function") {
    throw new TypeError("resourceLoader must implement ResourceLoader (getExtensions, getSkills, getPrompts, getThemes, getAgentsFiles, getSystemPrompt, …), e.g. a DefaultResourceLoader");
  }
  if (loader instanceof DefaultResourceLoader) {
    const same = (!opts.cwd || resolve(opts.cwd) === loader.cwd) && (!opts.agentDir || resolve(opts.agentDir) === loader.agentDir) && !opts.settings;
    const kernel = same ? loader.takeKernel() : undefined;
    return { kernel, plugins: loader.plugins(opts.plugins), flags: loader.flags(), extensionFactories: loader.extensionFactories(), cwd: loader.cwd, agentDir: loader.agentDir };
  }
  const listed = loader.getExtensions();
  const paths = (listed?.extensions ?? []).map((e) => e.path).filter((p) => typeof p === "string" && !p.startsWith("<"));
  return {
    plugins: opts.plugins.map((p) => (p.name === "resources" ? loaderResourcesPlugin(loader, false) : p)),
    flags: { "no-extensions": true, ...(paths.length ? { extension: paths } : {}) },
    extensionFactories: [],
  };
}
