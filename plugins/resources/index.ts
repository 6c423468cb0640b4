/**
 * The resources plugin: what the model is told and what the user can type.
 *
 *   - the system prompt (kernel service "system-prompt"): SYSTEM.md / --system-prompt head, the
 *     tools, APPEND_SYSTEM.md / --append-system-prompt, the context files (AGENTS.md, CLAUDE.md),
 *     the skills block, the date and the working directory;
 *   - skills and prompt templates, registered as slash commands (sources "skill" / "prompt") and
 *     expanded by the kernel service "expand-prompt" (`/name args`, `/skill:name args`);
 *   - the resources_discover hook (extensions add skill, prompt and theme paths) at start-up and
 *     on reload; "reload-resources" (and `/reload` when no other plugin registered one). A
 *     session_start with reason "reload" (the extensions plugin's /reload) reloads too;
 *   - theme file paths for the TUI ("theme-paths").
 *
 * Resources load once, when the first session starts (after extensions have loaded and tapped
 * resources_discover) or when a service first needs them.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Kernel, type PluginApi, definePlugin, type ResourcesDiscoverEvent, type Diagnostic } from "../../core/kernel/index.js";
import type { SystemPromptBuilder } from "../../core/engine/index.js";
import { loadContextFiles, type ContextFile } from "./context-files.js";
import { discover, type PathLists } from "./discovery.js";
import { expandPromptTemplate, loadPromptTemplates, type PromptTemplate } from "./prompt-templates.js";
import { expandSkillCommand, loadSkills, type Skill } from "./skills.js";
import { buildResourceSystemPrompt } from "./system-prompt.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    resources: ResourcesService;
    "reload-resources": () => Promise<void>;
  }
}

export type { ContextFile } from "./context-files.js";
export type { Skill } from "./skills.js";
export type { PromptTemplate } from "./prompt-templates.js";
export { parseCommandArgs, substituteArgs, expandPromptTemplate } from "./prompt-templates.js";
export { validateSkillName, formatSkillsForPrompt, expandSkillCommand } from "./skills.js";
export { loadContextFiles } from "./context-files.js";
export { parseFrontmatter } from "./frontmatter.js";

/** Kernel service "package-resources" (provided by the packages plugin). */
export type PackageResourcesFn = (opts?: { reload?: boolean }) => Promise<Partial<PathLists> & { extensions?: string[]; temporary?: Partial<PathLists> }>;

/** Kernel service "resources". */
export interface ResourcesService {
  /** Load resources if that has not happened yet. */
  ready(): Promise<void>;
  /** Read everything again (packages, folders, resources_discover) and rebuild the commands. */
  reload(): Promise<void>;
  skills(): Skill[];
  promptTemplates(): PromptTemplate[];
  contextFiles(): ContextFile[];
  themePaths(): string[];
  /** Problems found by the last load (also reported to the kernel's diagnostics). */
  diagnostics(): Diagnostic[];
  /** `/template args` or `/skill:name args` expanded; other text unchanged. */
  expand(text: string): Promise<string>;
}

interface State {
  skills: Skill[];
  prompts: PromptTemplate[];
  contextFiles: ContextFile[];
  themePaths: string[];
  systemFile?: string;
  appendFile?: string;
  diagnostics: Diagnostic[];
}

const EMPTY: State = { skills: [], prompts: [], contextFiles: [], themePaths: [], diagnostics: [] };

function readOptional(paths: string[], diagnostics: Diagnostic[]): string | undefined {
  for (const p of paths) {
    if (!existsSync(p)) continue;
    try {
      return readFileSync(p, "utf8");
    } catch (error) {
      diagnostics.push({ level: "warning", source: p, message: "cannot read file", error });
    }
  }
  return undefined;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === "string" ? [v] : []);

export function createResources(
  kernel: Kernel,
  api: PluginApi,
): ResourcesService & { load(reason: "startup" | "reload"): Promise<void>; promptFiles(): { systemFile?: string; appendFile?: string } } {
  let state: State = EMPTY;
  let loading: Promise<void> | undefined;
  let commandScope: PluginApi | undefined;

  const flags = () => (kernel.service("argv")?.flags ?? {}) as Record<string, unknown>;

  async function load(reason: "startup" | "reload"): Promise<void> {
    const f = flags();
    const diagnostics: Diagnostic[] = [];
    const cwd = kernel.cwd;
    const agentDir = kernel.agentDir;
    const configDir = kernel.app.configDir;

    let packages: Awaited<ReturnType<PackageResourcesFn>> = {};
    const pkgFn = kernel.service("package-resources");
    if (typeof pkgFn === "function") {
      try {
        packages = (await pkgFn(reason === "reload" ? { reload: true } : undefined)) ?? {};
      } catch (error) {
        diagnostics.push({ level: "error", source: "packages", message: "could not resolve package resources", error });
      }
    }

    const event: ResourcesDiscoverEvent = { type: "resources_discover", cwd, reason, results: [] };
    if (kernel.hooks.resources_discover.isUsed()) await kernel.hooks.resources_discover.promise(event);
    const extra: PathLists = { skills: [], prompts: [], themes: [] };
    for (const r of event.results ?? []) {
      extra.skills.push(...strings(r?.skillPaths));
      extra.prompts.push(...strings(r?.promptPaths));
      extra.themes.push(...strings(r?.themePaths));
    }

    const input = {
      cwd,
      agentDir,
      configDir,
      globalSettings: kernel.settings.getGlobal(),
      projectSettings: kernel.settings.getProject(),
      packages,
      temporary: packages.temporary,
      cli: { skills: strings(f.skill), prompts: strings(f["prompt-template"]), themes: strings(f.theme) },
      extra,
      no: { skills: !!f["no-skills"], prompts: !!f["no-prompt-templates"], themes: !!f["no-themes"] },
    };
    const skills = loadSkills(discover("skills", input));
    const prompts = loadPromptTemplates(discover("prompts", input));
    const themePaths = discover("themes", input).map((e) => e.path);
    for (const p of themePaths) if (!existsSync(p)) diagnostics.push({ level: "warning", source: p, message: "theme path does not exist" });
    diagnostics.push(...skills.diagnostics, ...prompts.diagnostics);

    const contextFiles = f["no-context-files"] ? [] : loadContextFiles({ cwd, agentDir, report: (d) => diagnostics.push(d) });
    const systemFile = readOptional([join(cwd, configDir, "SYSTEM.md"), join(agentDir, "SYSTEM.md")], diagnostics);
    const appendFile = readOptional([join(cwd, configDir, "APPEND_SYSTEM.md"), join(agentDir, "APPEND_SYSTEM.md")], diagnostics);

    state = { skills: skills.items, prompts: prompts.items, contextFiles, themePaths, systemFile, appendFile, diagnostics };
    for (const d of diagnostics) kernel.diagnostics.report(d);
    registerCommands();
    invalidateSessionPrompt();
  }

  function registerCommands() {
    commandScope?.dispose();
    const scope = kernel.scope(api.name);
    commandScope = scope;
    const submit = async (text: string) => {
      const rt = kernel.bound(text.split(" ")[0]!);
      await rt.session.prompt(text);
    };
    for (const t of state.prompts) {
      scope.registerCommand({
        name: t.name,
        description: t.description,
        source: "prompt",
        location: t.location,
        path: t.filePath,
        handler: (args: string) => submit(args ? `/${t.name} ${args}` : `/${t.name}`),
      });
    }
    if (kernel.settings.get().enableSkillCommands !== false) {
      for (const s of state.skills) {
        scope.registerCommand({
          name: `skill:${s.name}`,
          description: s.description,
          source: "skill",
          location: s.location,
          path: s.filePath,
          handler: (args: string) => submit(args ? `/skill:${s.name} ${args}` : `/skill:${s.name}`),
        });
      }
    }
  }

  function invalidateSessionPrompt() {
    if (!kernel.isBound) return;
    try {
      const rt = kernel.bound("reload");
      rt.session?.invalidateSystemPrompt?.();
    } catch {
      /* not bound to a runtime with a session */
    }
  }

  const ready = () => (loading ??= load("startup").catch((error) => {
    kernel.diagnostics.report({ level: "error", source: api.name, message: "could not load resources", error });
  }));

  const reload = async () => {
    if (loading) await loading;
    loading = load("reload").catch((error) => {
      kernel.diagnostics.report({ level: "error", source: api.name, message: "could not reload resources", error });
    });
    await loading;
  };

  const expand = async (text: string): Promise<string> => {
    if (!text.startsWith("/")) return text;
    await ready();
    if (text.startsWith("/skill:")) {
      try {
        return expandSkillCommand(text, state.skills);
      } catch (error) {
        kernel.diagnostics.report({ level: "error", source: api.name, hook: "skill_expansion", message: `cannot read the skill for ${text.split(/\s/)[0]}`, error });
        return text;
      }
    }
    return expandPromptTemplate(text, state.prompts);
  };

  return {
    load,
    ready,
    reload,
    expand,
    skills: () => state.skills,
    promptTemplates: () => state.prompts,
    contextFiles: () => state.contextFiles,
    themePaths: () => state.themePaths,
    diagnostics: () => state.diagnostics,
    promptFiles: () => ({ systemFile: state.systemFile, appendFile: state.appendFile }),
  };
}

export default definePlugin({
  name: "resources",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Context files, system prompt, skills, prompt templates and theme paths",
  setup(api) {
    const kernel = api.kernel;
    const res = createResources(kernel, api);

    api.registerFlag({ name: "no-context-files", alias: "nc", type: "boolean", description: "Do not load AGENTS.md / CLAUDE.md context files", group: "Extensions and resources" });

    const builder: SystemPromptBuilder = async (input) => {
      await res.ready();
      let contextFiles = res.contextFiles();
      if (input.cwd !== kernel.cwd) {
        const noContext = (kernel.service("argv")?.flags ?? {})["no-context-files"];
        contextFiles = noContext ? [] : loadContextFiles({ cwd: input.cwd, agentDir: kernel.agentDir });
      }
      return buildResourceSystemPrompt(input, { ...res.promptFiles(), contextFiles, skills: res.skills() });
    };

    api.provide("system-prompt", builder);
    api.provide("expand-prompt", res.expand);
    api.provide("resources", res);
    api.provide("reload-resources", res.reload);
    api.provide("theme-paths", () => res.themePaths());
    if (!kernel.hasService("themes")) api.provide("themes", () => res.themePaths());

    api.on(
      "session_start",
      async (event) => {
        // The extensions plugin's /reload (and ctx.reload()) ends with session_start
        // {reason: "reload"} once extensions are loaded again: read resources again then.
        if (event.reason === "reload") await res.reload();
        else await res.ready();
        if (!kernel.commands.has("reload")) {
          api.registerCommand({
            name: "reload",
            description: "Reload skills, prompt templates, themes and context files",
            source: "builtin",
            handler: async (_args, ctx) => {
              await res.reload();
              const n = `${res.skills().length} skills, ${res.promptTemplates().length} prompt templates`;
              ctx?.ui?.notify?.(`Reloaded resources (${n})`, "info");
            },
          });
        }
      },
      { stage: -100 },
    );
  },
});
