/**
 * The packages plugin: pi packages (bundles of extensions, skills, prompt templates and themes
 * from npm, git or a local folder).
 *
 *   pi install <source> [-l]          install and add to the global (or, -l, project) settings
 *   pi remove|uninstall <source> [-l] remove and drop from settings
 *   pi update [source]                update every non-pinned npm and git package (or one)
 *   pi list                           the packages in settings and where they are installed
 *   pi config                         list package resources and whether they are enabled
 *   pi config enable|disable <source> <resource> [-l]     (or <source>:<resource>)
 *
 * Services:
 *   "package-resources"      (opts?: {reload?}) => Promise<{extensions, skills, prompts, themes,
 *                            temporary: {skills, prompts, themes}}> — absolute paths of the enabled
 *                            resources of installed, compatible packages (project packages only in
 *                            a trusted project: kernel service "project-trust"). Missing packages
 *                            are installed first unless PI_OFFLINE is set.
 *   "resolve-package-source" (source) => Promise<string> — the folder of a package for this run
 *                            only (pi -e npm:… / git:…), installed under the OS temp folder.
 *   "package-manager"        () => Promise<PackageManager> — for hosts and other plugins.
 */
import { type Kernel, type PluginApi, type SubcommandContext, definePlugin, KERNEL_API_VERSION, BUILTIN_EXTENSION_NAMES, resolveBuiltinExtensions, type PackageResourcePaths } from "../../core/kernel/index.js";
import type { PackageManager, PackageManagerOptions, ResolvedPackage } from "./package-manager.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    /** The package manager of this run (created on first use). */
    "package-manager": () => Promise<unknown>;
  }
}

export type { PackageManager, ResolvedPackage, UpdateResult } from "./package-manager.js";

export type { PackageResourcePaths } from "../../core/kernel/index.js";

const SUBCOMMANDS = ["install", "remove", "uninstall", "update", "list", "config"];

const isOffline = () => /^(1|true|yes)$/i.test(process.env.PI_OFFLINE ?? "");

async function createManager(kernel: Kernel, io: Pick<PackageManagerOptions, "log" | "output">): Promise<PackageManager> {
  const { PackageManager } = await import("./package-manager.js");
  return new PackageManager({
    cwd: kernel.cwd,
    agentDir: kernel.agentDir,
    configDir: kernel.app.configDir,
    settings: kernel.settings,
    host: { appName: kernel.app.name, appVersion: kernel.app.version, kernelApiVersion: KERNEL_API_VERSION },
    offline: isOffline(),
    ...io,
  });
}

async function projectTrusted(kernel: Kernel): Promise<boolean> {
  const trust = kernel.service("project-trust");
  if (!trust || typeof trust.isTrusted !== "function") return false;
  try {
    return !!(await trust.isTrusted(kernel.cwd));
  } catch {
    return false;
  }
}

// ---- the subcommands --------------------------------------------------------------------------

interface ParsedCommandArgs {
  positionals: string[];
  local: boolean;
  self: boolean;
  /** update (pi 1.6): --extensions, --models, --all */
  extensions: boolean;
  models: boolean;
  all: boolean;
  unknown?: string;
}

function parseCommandArgs(args: string[]): ParsedCommandArgs {
  const out: ParsedCommandArgs = { positionals: [], local: false, self: false, extensions: false, models: false, all: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-l" || a === "--local") out.local = true;
    else if (a === "--self") out.self = true;
    else if (a === "--extensions") out.extensions = true;
    else if (a === "--models") out.models = true;
    else if (a === "--all") out.all = true;
    // `--force` reinstalls pi itself (1.6), which is not done here; trust flags are read by the CLI.
    else if (a === "--force" || a === "-a" || a === "--approve" || a === "-na" || a === "--no-approve") continue;
    // pi's `update --extension <source>`: the same as a positional source.
    else if (a === "--extension" && args[i + 1] && !args[i + 1]!.startsWith("-")) out.positionals.push(args[++i]!);
    else if (a.startsWith("-") && a.length > 1) out.unknown ??= a;
    else out.positionals.push(a);
  }
  return out;
}

/** 1.6's "Built-in" section of `pi config`: the built-in extensions and whether they are on. */
function listBuiltins(kernel: Kernel, local: boolean): string {
  const s = kernel.settings;
  const scopeOf = (list: unknown) => resolveBuiltinExtensions({ global: s.getGlobal().extensions, project: list });
  const { enabled } = scopeOf(local ? s.getProject().extensions : undefined);
  const where = local ? `${kernel.app.configDir}/settings.json` : "settings.json";
  const lines = [`Built-in extensions (${where}; "-builtin:<name>" in "extensions" turns one off):`];
  for (const n of BUILTIN_EXTENSION_NAMES) lines.push(`  [${enabled.has(n) ? "x" : " "}] ${n}`);
  return lines.join("\n");
}

function describeResolved(r: ResolvedPackage): string {
  return `${r.source} (${r.scope === "project" ? "project" : "global"})`;
}

async function runPackageCommand(name: string, args: string[], ctx: SubcommandContext): Promise<number> {
  const { kernel } = ctx;
  const app = kernel.app.name;
  const out = (s: string) => ctx.stdout(s.endsWith("\n") ? s : `${s}\n`);
  const fail = (msg: string) => {
    ctx.stderr(`${app} ${name}: ${msg}`);
    return 1;
  };
  const a = parseCommandArgs(args);
  if (a.unknown) return fail(`unknown option ${a.unknown}`);
  const pm = await createManager(kernel, { log: (l) => out(l), output: (chunk) => ctx.stderr(chunk.replace(/\n$/, "")) });
  try {
    switch (name) {
      case "install": {
        const source = a.positionals[0];
        if (!source || a.positionals.length > 1) return fail(`usage: ${app} install <source> [-l]`);
        const root = await pm.install(source, { local: a.local });
        out(`Installed ${source} → ${root}`);
        return 0;
      }
      case "remove":
      case "uninstall": {
        const source = a.positionals[0];
        if (!source || a.positionals.length > 1) return fail(`usage: ${app} remove <source> [-l]`);
        await pm.remove(source, { local: a.local });
        out(`Removed ${source}`);
        return 0;
      }
      case "update": {
        // pi 1.6: no target (or --self, self, pi) updates pi itself; --extensions every package;
        // <source> / --extension <source> one; --models the model catalogs; --all pi and packages.
        const target = a.positionals[0];
        const selfTarget = target === "self" || target === "pi" || target === app;
        const selfOnly = a.self || selfTarget || (!target && !a.extensions && !a.models && !a.all);
        const selfNote = `${app} itself is not updated by this command; reinstall it with the package manager that installed it (e.g. npm install -g <package>)`;
        if (selfOnly) return fail(`${selfNote}. To update installed packages: ${app} update --extensions`);
        if (a.models) {
          out(`Model catalogs: the built-in catalog ships with this version of ${app} and models.json is read at every start; nothing to refresh.`);
          if (!a.extensions && !a.all && !target) return 0;
        }
        const results = await pm.update(target);
        let failed = 0;
        for (const r of results) {
          if (r.status === "updated") out(`Updated ${r.source}`);
          else if (r.status === "failed") {
            failed++;
            ctx.stderr(`${app} update: ${r.source}: ${r.error}`);
          }
        }
        if (!results.some((r) => r.status === "updated" || r.status === "failed")) out("Nothing to update");
        if (a.all) ctx.stderr(`${app} update: ${selfNote}`);
        return failed ? 1 : 0;
      }
      case "list": {
        const all = pm.configured(false);
        if (!all.length) {
          out("No packages installed.");
          return 0;
        }
        for (const scope of ["user", "project"] as const) {
          const some = all.filter((c) => c.scope === scope);
          if (!some.length) continue;
          out(scope === "user" ? "User packages:" : "Project packages:");
          for (const c of some) {
            if (c.error) {
              out(`  ${c.source}  (invalid: ${c.error})`);
              continue;
            }
            out(`  ${c.source}${c.filter ? " (filtered)" : ""}${c.parsed.type !== "local" && c.parsed.pinned ? " (pinned)" : ""}`);
            const path = pm.installPath(c.parsed, c.scope);
            out(`    ${path && pm.isInstalled(c.parsed, c.scope) ? path : "(not installed)"}`);
          }
        }
        return 0;
      }
      case "config": {
        const [verb, ...rest] = a.positionals;
        if (!verb || verb === "list") {
          const trusted = true; // listing never runs code; show project packages too
          // -l (pi 1.6): the project's overrides only (.pi/settings.json).
          const all = await pm.resolve({ installMissing: false, trusted });
          const resolved = all.filter((r) => !a.local || r.scope === "project");
          // In a terminal (1.6): an interactive toggle screen; otherwise the list.
          if (!verb && process.stdout.isTTY && process.stdin.isTTY) return (await import("./config-screen.js")).runConfigScreen(kernel, pm, all, a.local);
          const settingsList = async () => out("\n" + (await import("./config-screen.js")).settingsListing(kernel, a.local));
          out(listBuiltins(kernel, a.local));
          if (!resolved.length) {
            out(a.local ? `No project packages configured (${kernel.app.configDir}/settings.json).` : "No packages configured.");
            await settingsList();
            return 0;
          }
          for (const r of resolved) {
            out(`${describeResolved(r)}${r.root ? `  ${r.root}` : ""}`);
            if (r.status !== "ok") {
              out(`  (${r.message ?? r.status})`);
              continue;
            }
            if (!r.resources.length) out("  (no resources)");
            for (const type of ["extensions", "skills", "prompts", "themes"] as const) {
              const items = r.resources.filter((x) => x.type === type);
              if (!items.length) continue;
              out(`  ${type}:`);
              for (const x of items) out(`    [${x.enabled ? "x" : " "}] ${x.rel.endsWith("/SKILL.md") ? x.rel.slice(0, -9) : x.rel}`);
            }
          }
          await settingsList();
          return 0;
        }
        if (verb !== "enable" && verb !== "disable") return fail(`unknown action "${verb}" (use: list, enable, disable)`);
        let pkgRef: string | undefined;
        let resource: string | undefined;
        if (rest.length === 2) [pkgRef, resource] = rest;
        else if (rest.length === 1) {
          const arg = rest[0]!;
          const known = pm.configured(false).map((c) => c.source).sort((x, y) => y.length - x.length);
          pkgRef = known.find((s) => arg.startsWith(`${s}:`));
          if (pkgRef) resource = arg.slice(pkgRef.length + 1);
          else {
            const i = arg.lastIndexOf(":");
            if (i > 0) [pkgRef, resource] = [arg.slice(0, i), arg.slice(i + 1)];
          }
        }
        if (!pkgRef || !resource) return fail(`usage: ${app} config ${verb} <package source> <resource path> [-l]`);
        const r = pm.setResourceEnabled(pkgRef, resource, verb === "enable", a.local ? "project" : undefined);
        out(`${verb === "enable" ? "Enabled" : "Disabled"} ${r.rel} (${r.type}) of ${r.source} in the ${r.scope === "project" ? "project" : "global"} settings`);
        return 0;
      }
    }
    return fail("unknown command");
  } catch (error) {
    return fail((error as Error).message ?? String(error));
  }
}

// ---- the plugin -------------------------------------------------------------------------------

export function setupPackages(api: PluginApi): void {
  const kernel = api.kernel;
  let manager: Promise<PackageManager> | undefined;
  const startupManager = () =>
    (manager ??= createManager(kernel, {
      log: (line) => {
        // Before a mode owns the terminal, progress goes to stderr; later it is a diagnostic.
        if (!kernel.isBound) process.stderr.write(`${line}\n`);
        else api.report("info", line);
      },
      output: undefined,
    }));

  // Configured packages are resolved once (and again on reload); packages for this run are
  // added on every call, since -e sources may be resolved after the first call.
  let configuredOnce: Promise<Omit<PackageResourcePaths, "temporary">> | undefined;
  const resolveConfigured = async (): Promise<Omit<PackageResourcePaths, "temporary">> => {
    const out = { extensions: [] as string[], skills: [] as string[], prompts: [] as string[], themes: [] as string[] };
    const configured = kernel.settings.get().packages;
    if (!Array.isArray(configured) || !configured.length) return out;
    const pm = await startupManager();
    // While `pi install|remove|update|list|config` runs, nothing is installed or reported here.
    const first = kernel.service("argv")?.positionals?.[0];
    const packageCommand = !!first && SUBCOMMANDS.includes(first);
    const installMissing = !isOffline() && !packageCommand;
    const list = await pm.resolve({ installMissing, trusted: await projectTrusted(kernel) });
    const trust = kernel.service("project-trust");
    for (const r of list) {
      if (r.status === "ok") {
        for (const x of r.resources) if (x.enabled) out[x.type].push(x.path);
      } else if (!packageCommand) {
        if (r.status === "untrusted") trust?.noteSkipped?.({ kind: "package", path: r.source });
        api.report(r.status === "error" ? "error" : "warning", `package ${describeResolved(r)} not loaded: ${r.message ?? r.status}`);
      }
    }
    return out;
  };
  const packageResources = async (opts?: { reload?: boolean }): Promise<PackageResourcePaths> => {
    if (opts?.reload || !configuredOnce) configuredOnce = resolveConfigured();
    const out: PackageResourcePaths = { ...(await configuredOnce), temporary: { skills: [], prompts: [], themes: [] } };
    if (manager) {
      const pm = await manager;
      const { collectPackageResources } = await import("./package-resources.js");
      for (const root of pm.temporary) {
        for (const x of collectPackageResources(root)) if (x.enabled && x.type !== "extensions") out.temporary[x.type].push(x.path);
      }
    }
    return out;
  };

  api.provide("package-resources", packageResources);
  api.provide("resolve-package-source", async (source: string) => (await startupManager()).resolveTemporary(source));
  api.provide("package-manager", () => startupManager());

  const sub = (name: string, description: string, usage: string, aliases?: string[], help?: () => string) =>
    api.registerSubcommand({ name, description, usage, aliases, help, run: (args, ctx) => runPackageCommand(name, args, ctx) });
  sub("install", "Install a package (npm:, git:, or a path) and add it to settings", "install <source> [-l]");
  sub("remove", "Remove a package and drop it from settings", "remove <source> [-l]", ["uninstall"]);
  const app = kernel.app.name;
  sub("update", "Update installed packages (pinned versions are skipped)", "update [source] [--extensions|--models|--all]", undefined, () =>
    [
      "Usage:",
      `  ${app} update [source] [--extensions|--models|--all] [--extension <source>]`,
      "",
      "Update installed packages (pinned versions are skipped).",
      "",
      "Options:",
      "  --extensions          Update every installed package",
      "  <source>, --extension <source>   Update one package",
      "  --models              Model catalogs: built in here, nothing to refresh (exits 0)",
      "  --all                 Every package (and a note that the app itself is not updated here)",
      `  (no target), --self, self, pi   Update ${app} itself: not done by this command (exit 1)`,
      "",
    ].join("\n"),
  );
  sub("list", "List the packages in settings", "list");
  sub("config", "Toggle built-in extensions, package resources and settings (a list when not in a terminal)", "config [-l] [enable|disable <source> <resource>]", undefined, () =>
    [
      "Usage:",
      `  ${app} config [-l]`,
      `  ${app} config enable|disable <source> <resource> [-l]`,
      "",
      "In a terminal: a screen to turn built-in extensions, package resources and settings on or off",
      "(type to search, Enter/Space to change, Esc to close). Otherwise: the list of them and their values.",
      "enable|disable: turn one package resource on or off.",
      "",
      "Options:",
      `  -l, --local   The project's settings (${kernel.app.configDir}/settings.json) instead of the global ones`,
      "",
    ].join("\n"),
  );
  // Options of those commands, so the CLI does not warn about them.
  api.registerFlag({ name: "local", alias: "l", type: "boolean", description: "install/remove: use the project settings", hidden: true });
  api.registerFlag({ name: "self", type: "boolean", description: "update: the app itself", hidden: true });
}

export default definePlugin({
  name: "packages",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "pi packages: install, remove, update, list, config; package resources",
  setup: setupPackages,
});
