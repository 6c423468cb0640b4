/**
 * One way to build a kernel for an app (`pi`, a team's CLI, an SDK host): settings (global agent
 * dir + project folder, a project's `.ts` config only when the project is trusted), the jiti
 * loader with the host package aliases, the built-in plugins (fail fast), the user plugins named
 * in settings (fail soft; a project's only when trusted), then the kernel_ready hook
 * (extension loading). The CLI (main.ts) and the SDK (sdk.ts) both call setupKernel().
 */
import { existsSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { AppConfig } from "../core/kernel/config.js";
import { Kernel } from "../core/kernel/kernel.js";
import { createLoader, type ModuleLoader } from "../core/kernel/loader.js";
import { PluginHost } from "../core/kernel/plugin-host.js";
import type { PluginManifest } from "../core/kernel/plugin.js";
import { SettingsManager } from "../core/kernel/settings.js";
import { isProjectTrustedAtStartup, untrustedMessage } from "../plugins/trust/index.js";
import { CORE_FLAGS, type ParsedArgs } from "./args.js";
import { packageInfo } from "./package-info.js";
import type { Timing } from "./timing.js";

/** A built-in plugin refused to start (a broken build: the app cannot run). */
export class PluginStartError extends Error {}

export interface KernelSetupOptions {
  app: AppConfig;
  cwd: string;
  agentDir: string;
  /** What plugins read as the kernel service "argv" (the CLI's pass-1 parse, or flags an SDK host chose). */
  argv: ParsedArgs;
  /** The raw words, for the start-up trust check (`--trust`) that runs before plugins exist. */
  rawArgv?: string[];
  /** Use these settings instead of loading them from the agent dir and the project. */
  settings?: SettingsManager;
  /** Kernel plugins, set up in dependency order; a refused one throws PluginStartError. */
  plugins: PluginManifest[];
  /** pi extension factories loaded inline (after the discovered extensions). */
  extensionFactories?: Array<(pi: any) => unknown>;
  /** Load the plugins the `plugins` setting names (default true). */
  userPlugins?: boolean;
  /** The setup deadline per plugin in milliseconds (default DEFAULT_SETUP_TIMEOUT_MS; 0: none). */
  pluginSetupTimeoutMs?: number;
  /** Called once the kernel exists, before any plugin is set up (subscribe to diagnostics here). */
  onKernel?: (kernel: Kernel) => void;
  timing?: Timing;
}

export interface KernelSetup {
  kernel: Kernel;
  loader: ModuleLoader;
  host: PluginHost;
}

export async function setupKernel(opts: KernelSetupOptions): Promise<KernelSetup> {
  const { app, cwd, agentDir, timing } = opts;
  const loader = createLoader({
    hostAliases: hostAliases(app),
    cacheDir: resolve(agentDir, "cache", "jiti"),
  });
  const rawArgv = opts.rawArgv ?? (opts.argv.flags.trust === true ? ["--trust"] : []);
  const settings =
    opts.settings ??
    (await SettingsManager.load({
      agentDir,
      cwd,
      configDir: app.configDir,
      name: app.name,
      // A project's <name>.config.ts is code; it runs only in a trusted project.
      importTs: (p) => {
        if (!isProjectTrustedAtStartup({ cwd, agentDir, argv: rawArgv })) {
          return Promise.reject(new Error(`${p} is code from a project that is not trusted, so it was not run (trust the project with --trust or "trustedProjects" in ${resolve(agentDir, "settings.json")})`));
        }
        return loader.import(p);
      },
    }));
  timing?.mark("settings");

  const kernel = new Kernel({ app, cwd, agentDir, settings });
  // Security: a project's shell, npm command and session folder apply only when it is trusted.
  const trustedAtStartup = isProjectTrustedAtStartup({ cwd, agentDir, argv: rawArgv });
  settings.setProjectTrust(() => kernel.service("project-trust")?.isTrusted(cwd) ?? trustedAtStartup);
  for (const d of settings.diagnostics) kernel.diagnostics.report(d);
  opts.onKernel?.(kernel);

  // Core flags belong to the CLI itself.
  for (const f of CORE_FLAGS) kernel.flags.register(f.name, f, "cli");
  kernel.provide("argv", opts.argv, "cli");
  kernel.provide("loader", loader, "cli");
  if (timing) kernel.provide("timing", timing, "cli");
  // Session storage is part of the core (core/stores/session): the session flags always work.
  kernel.provide("sessions", true, "cli");
  if (opts.extensionFactories?.length) kernel.provide("extension-factories", opts.extensionFactories, "cli");

  const host = new PluginHost(kernel, { setupTimeoutMs: opts.pluginSetupTimeoutMs });
  try {
    await host.load(opts.plugins.map((manifest) => ({ manifest, origin: "builtin", builtin: true })));
  } catch (e) {
    throw new PluginStartError((e as Error).message);
  }
  for (const t of host.timings) timing?.record(`plugin ${t.name}`, t.ms);

  // User plugins named in settings ("plugins": [paths]) load soft; the project layer's only in a trusted project.
  if (opts.userPlugins !== false) {
    let userPlugins = (settings.get().plugins as unknown as string[] | undefined) ?? [];
    const projectPlugins = settings.getProject().plugins;
    if (Array.isArray(projectPlugins) && projectPlugins.length && !kernel.service("project-trust")?.isTrusted(cwd)) {
      const globalPlugins = settings.getGlobal().plugins;
      userPlugins = Array.isArray(globalPlugins) ? (globalPlugins as string[]) : [];
      kernel.service("project-trust")?.noteSkipped({ kind: "plugin", path: projectPlugins.join(", ") });
      kernel.diagnostics.report({
        level: "warning",
        source: settings.projectPath() ?? resolve(cwd, app.configDir),
        message: untrustedMessage(kernel, `plugins (${(projectPlugins as string[]).join(", ")})`),
      });
    }
    if (Array.isArray(userPlugins) && userPlugins.length) {
      await host.loadFiles(loader, userPlugins.map((p) => resolve(cwd, p)));
    }
  }
  timing?.mark("plugins");

  // Every plugin is set up: their first live step (extension loading), in plugin order.
  await kernel.hooks.kernel_ready.promise({ type: "kernel_ready" });
  timing?.mark("ready");
  return { kernel, loader, host };
}

/**
 * The host packages an extension may import, mapped to the entry of the module graph this
 * process runs: the bundle's index when running from dist/bundle, else dist/sdk/index.js; and
 * each one's `/plugin` entry (the kernel's face) to plugin.js beside it.
 */
export function hostAliases(app: AppConfig): Record<string, string> {
  const here = fileURLToPath(import.meta.url);
  const root = packageInfo().root;
  const dir = here.includes(`${sep}dist${sep}bundle${sep}`) ? join(root, "dist", "bundle") : join(root, "dist", "sdk");
  const path = join(dir, "index.js");
  if (!existsSync(path)) return {};
  const out: Record<string, string> = {};
  for (const name of app.hostPackageNames) out[name] = path;
  // `<host>/plugin`: the kernel's face (sdk/plugin.ts), for plugins
  const plugin = join(dir, "plugin.js");
  if (existsSync(plugin)) for (const name of app.hostPackageNames) out[`${name}/plugin`] = plugin;
  return out;
}
