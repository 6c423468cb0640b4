/**
 * pi 1.6's `DefaultPackageManager` over this project's package manager (plugins/packages): the
 * same places (`<agentDir>/npm`, `<agentDir>/git`, `.pi/npm`, `.pi/git`), the same staged installs
 * and compatibility checks, the same `packages` setting. `resolve()` answers with 1.6's shape: every
 * extension, skill, prompt and theme path with its metadata (package resources and the top-level
 * ones of the settings and the conventional folders).
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve as resolvePath } from "node:path";
import { KERNEL_API_VERSION } from "../../core/kernel/plugin.js";
import type { SettingsManager } from "../../core/kernel/settings.js";
import { discoverInFolder, expandPath as expandExtensionPath, resolveFrom } from "../../plugins/extensions/discovery.js";
import { PackageError, PackageManager, type ConfiguredPackage as OurConfigured } from "../../plugins/packages/package-manager.js";
import { collectPackageResources } from "../../plugins/packages/package-resources.js";
import { parseSource, type PackageScope } from "../../plugins/packages/sources.js";
import { discover, type ResourceKind } from "../../plugins/resources/discovery.js";
import { isProjectTrustedAtStartup } from "../../plugins/trust/index.js";
import { packageInfo } from "../package-info.js";

type SourceScope = "user" | "project" | "temporary";

export interface PathMetadata {
  source: string;
  scope: SourceScope;
  origin: "package" | "top-level";
  baseDir?: string;
}
export interface ResolvedResource {
  path: string;
  enabled: boolean;
  metadata: PathMetadata;
}
export interface PackageInstallFailure {
  source: string;
  scope: SourceScope;
  message: string;
}
export interface ResolvedPaths {
  extensions: ResolvedResource[];
  skills: ResolvedResource[];
  prompts: ResolvedResource[];
  themes: ResolvedResource[];
  installFailures?: PackageInstallFailure[];
}
export type MissingSourceAction = "install" | "skip" | "error";
export interface ProgressEvent {
  type: "start" | "progress" | "complete" | "error" | "result";
  action: "install" | "remove" | "update" | "clone" | "pull";
  source: string;
  message?: string;
}
export type ProgressCallback = (event: ProgressEvent) => void;
export interface ConfiguredPackage {
  source: string;
  scope: "user" | "project";
  filtered: boolean;
  installedPath?: string;
}
export type PackageCommandOutput = "inherit" | "capture";

export interface DefaultPackageManagerOptions {
  cwd: string;
  agentDir: string;
  settingsManager: SettingsManager;
  /** Where npm and git output goes: `inherit` (stderr, default) or `capture` (kept for error messages only). */
  commandOutput?: PackageCommandOutput;
  /** Accepted for 1.6 compatibility: built-in extensions are kernel plugins here. */
  builtinExtensions?: string[];
}

type PackageResourceKind = "extensions" | "skills" | "prompts" | "themes";
const emptyPaths = (): ResolvedPaths => ({ extensions: [], skills: [], prompts: [], themes: [] });
const isOffline = () => /^(1|true|yes)$/i.test(process.env.PI_OFFLINE ?? "");

export class DefaultPackageManager {
  private readonly cwd: string;
  private readonly agentDir: string;
  private readonly settingsManager: SettingsManager;
  private readonly pm: PackageManager;
  private progress: ProgressCallback | undefined;
  private current = { action: "install" as ProgressEvent["action"], source: "" };

  constructor(options: DefaultPackageManagerOptions) {
    if (!options || typeof options.cwd !== "string" || typeof options.agentDir !== "string" || !options.settingsManager) {
      throw new TypeError("DefaultPackageManager: { cwd, agentDir, settingsManager } are required");
    }
    this.cwd = resolvePath(options.cwd);
    this.agentDir = resolvePath(options.agentDir);
    this.settingsManager = options.settingsManager;
    const info = packageInfo();
    this.pm = new PackageManager({
      cwd: this.cwd,
      agentDir: this.agentDir,
      configDir: ".pi",
      settings: options.settingsManager,
      host: { appName: "pi", appVersion: info.version, kernelApiVersion: KERNEL_API_VERSION },
      offline: isOffline(),
      log: (line) => this.progress?.({ type: "progress", action: this.current.action, source: this.current.source, message: line }),
      output: options.commandOutput === "capture" ? () => undefined : (chunk) => void process.stderr.write(chunk),
    });
  }

  setProgressCallback(callback: ProgressCallback | undefined): void {
    this.progress = callback;
  }

  private async withProgress<T>(action: ProgressEvent["action"], source: string, fn: () => Promise<T>): Promise<T> {
    this.current = { action, source };
    this.progress?.({ type: "start", action, source });
    try {
      const r = await fn();
      this.progress?.({ type: "complete", action, source });
      return r;
    } catch (error) {
      this.progress?.({ type: "error", action, source, message: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }

  private trusted(): boolean {
    return isProjectTrustedAtStartup({ cwd: this.cwd, agentDir: this.agentDir });
  }

  private base(scope: "user" | "project"): string {
    return scope === "project" ? join(this.cwd, ".pi") : this.agentDir;
  }

  // ---- settings ----

  private entries(scope: "user" | "project"): Array<string | Record<string, unknown>> {
    const layer = scope === "project" ? this.settingsManager.getProject() : this.settingsManager.getGlobal();
    return Array.isArray(layer.packages) ? [...(layer.packages as Array<string | Record<string, unknown>>)] : [];
  }

  private find(source: string, scope: "user" | "project"): OurConfigured | undefined {
    return this.pm.configured(false).find((c) => c.scope === scope && this.pm.matches(c, source));
  }

  /** Add a source to the `packages` setting (global, or the project's with `local`). False when it is there already. */
  addSourceToSettings(source: string, options: { local?: boolean } = {}): boolean {
    const scope = options.local ? "project" : "user";
    if (this.find(source, scope)) return false;
    const p = parseSource(source, this.cwd);
    const entry = p.type === "local" ? relative(this.base(scope), p.path) || "." : source;
    return this.settingsManager.update({ packages: [...this.entries(scope), entry] } as never, scope === "project" ? "project" : "global");
  }

  /** Drop a source from the `packages` setting. False when it was not there. */
  removeSourceFromSettings(source: string, options: { local?: boolean } = {}): boolean {
    const scope = options.local ? "project" : "user";
    const hit = this.find(source, scope);
    if (!hit) return false;
    const list = this.entries(scope).filter((e) => e !== hit.entry);
    return this.settingsManager.update({ packages: list } as never, scope === "project" ? "project" : "global");
  }

  listConfiguredPackages(): ConfiguredPackage[] {
    return this.pm.configured(false).map((c) => {
      const installedPath = c.error ? undefined : this.pm.installPath(c.parsed, c.scope);
      return {
        source: c.source,
        scope: c.scope,
        filtered: !!c.filter && Object.keys(c.filter).length > 0,
        ...(installedPath && existsSync(installedPath) ? { installedPath } : {}),
      };
    });
  }

  getInstalledPath(source: string, scope: "user" | "project"): string | undefined {
    const path = this.pm.installPath(parseSource(source, this.base(scope)), scope);
    return path && existsSync(path) ? path : undefined;
  }

  // ---- install, remove, update ----

  /** Install a package (staged, checked) without touching the settings. */
  async install(source: string, options: { local?: boolean } = {}): Promise<void> {
    const scope: PackageScope = options.local ? "project" : "user";
    await this.withProgress("install", source, async () => {
      const p = parseSource(source, this.cwd);
      if (p.type === "local") {
        if (!existsSync(p.path)) throw new PackageError(`${source}: ${p.path} does not exist`);
      } else if (p.type === "npm") await this.pm.installNpm(p, scope);
      else await this.pm.installGit(p, scope);
    });
  }

  /** Install and record in the settings (`pi install`). */
  async installAndPersist(source: string, options: { local?: boolean } = {}): Promise<void> {
    await this.withProgress("install", source, () => this.pm.install(source, options));
  }

  /** Delete the installed copy of a package; the settings keep it (it is installed again on the next resolve). */
  async remove(source: string, options: { local?: boolean } = {}): Promise<void> {
    const scope: PackageScope = options.local ? "project" : "user";
    await this.withProgress("remove", source, async () => {
      const p = parseSource(source, this.cwd);
      if (p.type === "local") return;
      const path = this.pm.installPath(p, scope);
      if (path && existsSync(path)) rmSync(path, { recursive: true, force: true });
    });
  }

  /** Uninstall and drop from the settings (`pi remove`). False when no settings entry matches. */
  async removeAndPersist(source: string, options: { local?: boolean } = {}): Promise<boolean> {
    try {
      await this.withProgress("remove", source, () => this.pm.remove(source, options));
      return true;
    } catch (error) {
      if (error instanceof PackageError && /^no package matching/.test(error.message)) return false;
      throw error;
    }
  }

  /** Update every unpinned npm and git package (or the one named); a failure throws naming the packages. */
  async update(source?: string): Promise<void> {
    const results = await this.withProgress("update", source ?? "", () => this.pm.update(source));
    for (const r of results) if (r.status === "updated") this.progress?.({ type: "result", action: "update", source: r.source, message: `${r.source} updated` });
    const failed = results.filter((r) => r.status === "failed");
    if (failed.length) throw new PackageError(`update failed: ${failed.map((f) => `${f.source}: ${f.error ?? "failed"}`).join("; ")}`);
  }

  // ---- resolving ----

  /**
   * Every resource of the configured packages and the top-level ones (settings entries, the agent
   * dir's and the project's folders). Missing packages are installed, unless `onMissing` answers
   * "skip" (left out) or "error" (throws), or PI_OFFLINE is set.
   */
  async resolve(onMissing?: (source: string) => Promise<MissingSourceAction>): Promise<ResolvedPaths> {
    const out = emptyPaths();
    const failures: PackageInstallFailure[] = [];
    const trusted = this.trusted();
    const add = (kind: PackageResourceKind, path: string, enabled: boolean, metadata: PathMetadata) => {
      if (!out[kind].some((r) => r.path === path)) out[kind].push({ path, enabled, metadata });
    };

    // top level: settings entries and the conventional folders
    const input = {
      cwd: this.cwd,
      agentDir: this.agentDir,
      configDir: ".pi",
      globalSettings: this.settingsManager.getGlobal(),
      projectSettings: this.settingsManager.getProject(),
    };
    for (const kind of ["skills", "prompts", "themes"] as ResourceKind[]) {
      for (const e of discover(kind, input)) {
        const scope: SourceScope = e.location === "project" ? "project" : e.location === "user" ? "user" : "temporary";
        add(kind, e.path, true, { source: "local", scope, origin: "top-level", baseDir: scope === "project" ? join(this.cwd, ".pi") : this.agentDir });
      }
    }
    const extensionSpecs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && !!x.trim() && !/^[+!-]/.test(x.trim())) : []);
    const topExtensions: Array<[string[], "user" | "project"]> = [[discoverInFolder(join(this.agentDir, "extensions")), "user"]];
    for (const spec of extensionSpecs(input.globalSettings.extensions)) topExtensions.push([expandExtensionPath(resolveFrom(this.agentDir, spec)) ?? [], "user"]);
    if (trusted) {
      topExtensions.push([discoverInFolder(join(this.cwd, ".pi", "extensions")), "project"]);
      for (const spec of extensionSpecs(input.projectSettings.extensions)) topExtensions.push([expandExtensionPath(resolveFrom(join(this.cwd, ".pi"), spec)) ?? [], "project"]);
    }
    for (const [paths, scope] of topExtensions) for (const p of paths) add("extensions", p, true, { source: "local", scope, origin: "top-level", baseDir: this.base(scope) });

    // packages
    let resolved = await this.pm.resolve({ installMissing: false, trusted });
    const missing = resolved.filter((r) => r.status === "missing" && r.parsed.type !== "local");
    if (missing.length && !isOffline()) {
      let installed = false;
      for (const m of missing) {
        const action = onMissing ? await onMissing(m.source) : "install";
        if (action === "error") throw new PackageError(`package ${m.source} is not installed`);
        if (action !== "install") continue;
        try {
          await this.install(m.source, { local: m.scope === "project" });
          installed = true;
        } catch (error) {
          failures.push({ source: m.source, scope: m.scope, message: error instanceof Error ? error.message : String(error) });
        }
      }
      if (installed) resolved = await this.pm.resolve({ installMissing: false, trusted });
    }
    for (const r of resolved) {
      if (r.status === "ok") {
        for (const res of r.resources) add(res.type, res.path, res.enabled, { source: r.source, scope: r.scope, origin: "package", baseDir: r.root });
      } else if (r.status !== "untrusted" && !failures.some((f) => f.source === r.source) && !(r.status === "missing" && onMissing)) {
        failures.push({ source: r.source, scope: r.scope, message: r.message ?? r.status });
      }
    }
    if (failures.length) out.installFailures = failures;
    return out;
  }

  /** The resources of `-e`-style sources: npm:/git: packages for this run (or installed with `local`), paths as they are. */
  async resolveExtensionSources(sources: string[], options: { local?: boolean; temporary?: boolean } = {}): Promise<ResolvedPaths> {
    const out = emptyPaths();
    const scope: SourceScope = options.temporary ? "temporary" : options.local ? "project" : "user";
    for (const source of sources) {
      const p = parseSource(source, this.cwd);
      let root: string;
      if (p.type === "local") {
        if (!existsSync(p.path)) throw new PackageError(`${source}: ${p.path} does not exist`);
        if (statSync(p.path).isFile()) {
          out.extensions.push({ path: p.path, enabled: true, metadata: { source, scope, origin: "top-level" } });
          continue;
        }
        root = p.path;
      } else if (options.temporary !== false && scope === "temporary") {
        root = await this.withProgress("install", source, () => this.pm.resolveTemporary(source));
      } else {
        const s = scope === "project" ? "project" : "user";
        root = this.pm.installPath(p, s) ?? "";
        if (!root || !existsSync(root)) {
          await this.install(source, { local: s === "project" });
          root = this.pm.installPath(p, s)!;
        }
      }
      for (const res of collectPackageResources(root)) out[res.type].push({ path: res.path, enabled: res.enabled, metadata: { source, scope, origin: "package", baseDir: root } });
    }
    return out;
  }
}
