/**
 * Installing, removing, updating and resolving pi packages.
 *
 * Where packages live:
 *   npm, global     <agentDir>/npm/node_modules/<name>        (an npm prefix; not `npm -g`)
 *   npm, project    <cwd>/.pi/npm/node_modules/<name>
 *   git, global     <agentDir>/git/<host>/<path>
 *   git, project    <cwd>/.pi/git/<host>/<path>
 *   this run only   <agentDir>/tmp/extensions/{npm,git}/<hash>/…  (pi -e npm:…; never in settings)
 *   local           where it is (settings keep the path, relative to the settings file's folder)
 *
 * npm runs with pi's peer semantics (npm's --legacy-peer-deps; pnpm and bun: their settings that
 * turn automatic peer installs off) on install, update, remove and a git checkout's dependency
 * install: the host packages an extension names as peers (pi-coding-agent, pi-ai, pi-agent-core,
 * pi-tui under both scopes, typebox) are served by the host's module loader, never installed.
 * `pi update` also drops host packages an older install put into the prefix.
 *
 * npm installs straight into the prefix (no copy of it per install). What an install changes is
 * kept aside first (the package's previous folder, the prefix's package.json and lock files) and
 * put back when npm fails or the result does not fit this host's kernel API and app version (see
 * compat.ts), so the previous install and the settings stay as they were. Settings are written
 * only after a good install. A git checkout is cloned into a sibling folder and swapped in.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import semver from "semver";
import type { SettingsManager } from "../../core/kernel/index.js";
import { checkCompatibility, type HostVersions } from "./compat.js";
import { collectPackageResources, readJson, RESOURCE_TYPES, type PackageFilter, type PackageResource, type ResourceType } from "./package-resources.js";
import { readPackageJsonOf, runCommand } from "./run.js";
import { identityOf, parseSource, shortHash, SourceError, type GitSource, type NpmSource, type PackageScope, type ParsedSource } from "./sources.js";

export interface PackageManagerOptions {
  cwd: string;
  agentDir: string;
  /** Project config folder name (".pi"). */
  configDir: string;
  settings: SettingsManager;
  host: HostVersions;
  env?: NodeJS.ProcessEnv;
  /** Root for packages loaded for one run (default <agentDir>/tmp/extensions). */
  tempRoot?: string;
  /** Progress lines ("Installing npm:foo…"). */
  log?: (line: string) => void;
  /** Output of npm and git as it arrives. */
  output?: (chunk: string) => void;
  /** PI_OFFLINE: no installs at start-up, no updates. */
  offline?: boolean;
}

export type SettingsScope = "user" | "project";

export interface ConfiguredPackage {
  source: string;
  scope: SettingsScope;
  entry: string | Record<string, unknown>;
  filter?: PackageFilter;
  parsed: ParsedSource;
  identity: string;
  /** Why the settings entry cannot be used (a malformed source). */
  error?: string;
}

export interface ResolvedPackage extends ConfiguredPackage {
  status: "ok" | "missing" | "incompatible" | "untrusted" | "error";
  root?: string;
  message?: string;
  resources: PackageResource[];
}

export interface UpdateResult {
  source: string;
  scope: SettingsScope;
  status: "updated" | "skipped-pinned" | "skipped-local" | "failed";
  error?: string;
}

export class PackageError extends Error {}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

export class PackageManager {
  readonly cwd: string;
  readonly agentDir: string;
  private readonly opts: PackageManagerOptions;
  /** Roots of packages resolved for this run only. */
  readonly temporary: string[] = [];

  constructor(opts: PackageManagerOptions) {
    this.opts = opts;
    this.cwd = opts.cwd;
    this.agentDir = opts.agentDir;
  }

  // ---- places ---------------------------------------------------------------------------------

  baseDir(scope: SettingsScope): string {
    return scope === "project" ? join(this.cwd, this.opts.configDir) : this.agentDir;
  }
  /**
   * Where `-e npm:x` / `-e git:…` packages of one run live: `<agentDir>/tmp/extensions`, the
   * user's own 0700 folder (a shared temp folder would let another account plant the package).
   */
  private tempRoot(): string {
    if (this.opts.tempRoot) return this.opts.tempRoot;
    const root = join(this.agentDir, "tmp", "extensions");
    mkdirSync(root, { recursive: true, mode: 0o700 });
    chmodSync(root, 0o700);
    return root;
  }
  npmPrefix(scope: PackageScope, spec?: string): string {
    if (scope === "temporary") return join(this.tempRoot(), "npm", shortHash(spec ?? ""));
    return join(this.baseDir(scope), "npm");
  }
  gitPath(p: GitSource, scope: PackageScope): string {
    if (scope === "temporary") return join(this.tempRoot(), "git", shortHash(`${p.repo}@${p.ref ?? ""}`), p.host, p.path);
    return join(this.baseDir(scope), "git", p.host, p.path);
  }

  /** The npm package name of a source (file specs: read from the file, else from the prefix's package.json). */
  npmName(p: NpmSource, scope?: PackageScope): string | undefined {
    if (p.name) return p.name;
    if (p.file && existsSync(p.file)) {
      try {
        const name = readPackageJsonOf(p.file).name;
        if (typeof name === "string" && name) return (p.name = name);
      } catch {
        /* fall through */
      }
    }
    if (scope) {
      const prefix = this.npmPrefix(scope, p.spec);
      const deps = readJson(join(prefix, "package.json"))?.dependencies;
      if (isObj(deps)) {
        for (const [name, v] of Object.entries(deps)) {
          if (typeof v === "string" && v.startsWith("file:") && resolve(prefix, v.slice(5)) === p.file) return name;
        }
      }
    }
    return undefined;
  }

  /** Where the package is (or would be) installed. */
  installPath(p: ParsedSource, scope: PackageScope): string | undefined {
    if (p.type === "local") return p.path;
    if (p.type === "git") return this.gitPath(p, scope);
    const name = this.npmName(p, scope);
    return name ? join(this.npmPrefix(scope, p.spec), "node_modules", name) : undefined;
  }

  isInstalled(p: ParsedSource, scope: PackageScope): boolean {
    const path = this.installPath(p, scope);
    return !!path && existsSync(path);
  }

  private identity(p: ParsedSource, scope?: PackageScope): string {
    if (p.type === "npm" && !p.name) this.npmName(p, scope);
    return identityOf(p);
  }

  // ---- settings -------------------------------------------------------------------------------

  /** The raw `packages` array of one settings layer (malformed items included, so saving keeps them). */
  private entries(scope: SettingsScope): Array<string | Record<string, unknown>> {
    const layer = scope === "project" ? this.opts.settings.getProject() : this.opts.settings.getGlobal();
    const v = layer.packages;
    return Array.isArray(v) ? (v as Array<string | Record<string, unknown>>) : [];
  }

  /** Packages in settings: project first, then global; `dedupe` drops a global one the project also has. */
  configured(dedupe = false): ConfiguredPackage[] {
    const out: ConfiguredPackage[] = [];
    for (const scope of ["project", "user"] as const) {
      for (const entry of this.entries(scope)) {
        const source = typeof entry === "string" ? entry : isObj(entry) && typeof entry.source === "string" ? entry.source : undefined;
        let parsed: ParsedSource;
        try {
          if (source === undefined) throw new SourceError(`a "packages" entry must be a source string or {"source": …}, not ${JSON.stringify(entry)}`);
          parsed = parseSource(source, this.baseDir(scope));
        } catch (error) {
          const text = source ?? JSON.stringify(entry);
          out.push({ source: text, scope, entry, parsed: { type: "local", source: text, path: "" }, identity: `invalid:${scope}:${text}`, error: (error as Error).message });
          continue;
        }
        const filter: PackageFilter | undefined = isObj(entry)
          ? Object.fromEntries(RESOURCE_TYPES.filter((t) => Array.isArray(entry[t])).map((t) => [t, (entry[t] as unknown[]).map(String)]))
          : undefined;
        const identity = this.identity(parsed, scope);
        if (dedupe && out.some((o) => o.identity === identity)) continue;
        out.push({ source, scope, entry, filter, parsed, identity });
      }
    }
    return out;
  }

  /** Fail before any work when the settings file of `scope` could not be written afterwards. */
  private assertWritable(scope: SettingsScope): void {
    const path = scope === "project" ? (this.opts.settings.projectPath() ?? join(this.baseDir("project"), "settings.json")) : join(this.agentDir, "settings.json");
    if (path.endsWith(".ts")) throw new PackageError(`the project settings are in ${path}, which is not written automatically; add the package there by hand`);
    if (!existsSync(path)) return;
    try {
      const text = readFileSync(path, "utf8");
      if (text.trim()) JSON.parse(text);
    } catch (error) {
      throw new PackageError(`cannot update ${path}: it does not parse (${(error as Error).message}); fix it first`);
    }
  }

  private save(scope: SettingsScope, packages: Array<string | Record<string, unknown>>): void {
    const before = this.opts.settings.diagnostics.length;
    const ok = this.opts.settings.update({ packages }, scope === "project" ? "project" : "global");
    if (!ok) {
      const tsFile = scope === "project" ? this.opts.settings.projectPath() : undefined;
      if (tsFile?.endsWith(".ts")) throw new PackageError(`the project settings are in ${tsFile}, which is not written automatically; add the package there by hand`);
      const why = this.opts.settings.diagnostics.slice(before).map((d) => d.message).join("; ");
      throw new PackageError(`could not save the ${scope === "project" ? "project" : "global"} settings${why ? `: ${why}` : ""}`);
    }
  }

  /** The settings form of a source: local paths relative to the settings folder, file specs absolute. */
  private settingsSource(p: ParsedSource, scope: SettingsScope): string {
    if (p.type === "local") return relative(this.baseDir(scope), p.path) || ".";
    if (p.type === "npm" && p.file) return `npm:${p.file}`;
    return p.source;
  }

  private addToSettings(p: ParsedSource, scope: SettingsScope): void {
    const id = this.identity(p, scope);
    const source = this.settingsSource(p, scope);
    const list = [...this.entries(scope)];
    const idx = list.findIndex((e) => this.entryIdentity(e, scope) === id);
    if (idx === -1) list.push(source);
    else {
      const cur = list[idx]!;
      list[idx] = typeof cur === "string" ? source : { ...cur, source };
    }
    this.save(scope, list);
  }

  private entryIdentity(e: string | Record<string, unknown>, scope: SettingsScope): string | undefined {
    const source = typeof e === "string" ? e : isObj(e) && typeof e.source === "string" ? e.source : undefined;
    if (source === undefined) return undefined;
    try {
      return this.identity(parseSource(source, this.baseDir(scope)), scope);
    } catch {
      return undefined;
    }
  }

  // ---- running npm and git --------------------------------------------------------------------

  private npmCommand(): { command: string; args: string[]; custom: boolean } {
    const v = this.opts.settings.get().npmCommand as unknown;
    if (v === undefined || (Array.isArray(v) && v.length === 0)) return { command: "npm", args: [], custom: false };
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && x)) {
      throw new PackageError(`settings "npmCommand" must be an array of strings, like ["npm"] or ["mise", "exec", "--", "npm"]`);
    }
    return { command: v[0]!, args: v.slice(1), custom: true };
  }

  /** Which package manager npmCommand runs: npm, pnpm or bun (directly or behind a wrapper such as `mise exec --`); anything else is treated as npm. */
  private managerName(): "npm" | "pnpm" | "bun" {
    return packageManagerOf(this.npmCommand());
  }

  /** The flags that keep the package manager from installing or solving peers (the host serves pi's packages). */
  private noPeerFlags(): string[] {
    const m = this.managerName();
    if (m === "bun") return ["--omit=peer"];
    if (m === "pnpm") return ["--config.auto-install-peers=false", "--config.strict-peer-dependencies=false", "--config.strict-dep-builds=false"];
    return ["--legacy-peer-deps", "--no-audit", "--no-fund"];
  }

  private async npm(args: string[], cwd?: string): Promise<void> {
    const c = this.npmCommand();
    await runCommand(c.command, [...c.args, ...args], { cwd, env: this.opts.env, output: this.opts.output });
  }

  private async npmInstallInto(prefix: string, spec: string): Promise<void> {
    // npm writes broken nested lock paths when --prefix goes through a symlink.
    const root = realpathSync(prefix);
    if (this.managerName() === "bun") await this.npm(["install", spec, "--cwd", root, ...this.noPeerFlags()]);
    else await this.npm(["install", spec, "--prefix", root, ...this.noPeerFlags()]);
  }

  private async npmUninstallFrom(prefix: string, name: string): Promise<void> {
    const root = realpathSync(prefix);
    const m = this.managerName();
    if (m === "bun") await this.npm(["uninstall", name, "--cwd", root]);
    else if (m === "pnpm") await this.npm(["uninstall", name, "--prefix", root]);
    else await this.npm(["uninstall", name, "--prefix", root, ...this.noPeerFlags()]);
  }

  private async git(args: string[], cwd?: string): Promise<void> {
    await runCommand("git", args, { cwd, env: { ...(this.opts.env ?? process.env), GIT_TERMINAL_PROMPT: "0" }, output: this.opts.output });
  }

  private log(line: string) {
    this.opts.log?.(line);
  }

  /** Refuse a package that does not fit this host. */
  private checkRoot(root: string): void {
    const pkg = readJson(join(root, "package.json"));
    if (!pkg) return;
    const why = checkCompatibility(pkg, this.opts.host);
    if (why) throw new PackageError(`refused: ${why}`);
  }

  // ---- staged installs ------------------------------------------------------------------------

  private static ensureIgnored(dir: string) {
    mkdirSync(dir, { recursive: true });
    const p = join(dir, ".gitignore");
    if (!existsSync(p)) writeFileSync(p, "*\n!.gitignore\n");
  }

  /** Put `staging` where `target` is, keeping `target` if anything fails. */
  private static swapIn(target: string, staging: string) {
    if (!existsSync(target)) {
      mkdirSync(dirname(target), { recursive: true });
      renameSync(staging, target);
      return;
    }
    const backup = `${target}.old-${process.pid}-${Date.now().toString(36)}`;
    renameSync(target, backup);
    try {
      renameSync(staging, target);
    } catch (error) {
      renameSync(backup, target);
      throw error;
    }
    rmSync(backup, { recursive: true, force: true });
  }

  /**
   * npm install `spec` into the prefix of `scope`. What it changes is kept aside and put back
   * when npm fails or the package does not fit this host. Returns the package folder.
   */
  async installNpm(p: NpmSource, scope: PackageScope, spec = p.spec): Promise<string> {
    if (p.file && !existsSync(p.file)) throw new PackageError(`${p.source}: ${p.file} does not exist`);
    const name = this.npmName(p);
    if (!name) throw new PackageError(`${p.source}: cannot tell the package name`);
    const prefix = this.npmPrefix(scope, p.spec);
    mkdirSync(prefix, { recursive: true });
    if (!existsSync(join(prefix, "package.json"))) writeFileSync(join(prefix, "package.json"), JSON.stringify({ name: "pi-packages", private: true }, null, 2) + "\n");
    if (scope !== "temporary") PackageManager.ensureIgnored(prefix);
    const dir = join(prefix, "node_modules", name);
    const saved = PrefixSnapshot.take(prefix, dir);
    try {
      await this.npmInstallInto(prefix, spec);
      if (!existsSync(join(dir, "package.json"))) throw new PackageError(`${p.source}: npm finished but ${name} is not in ${join(prefix, "node_modules")}`);
      this.checkRoot(dir);
    } catch (error) {
      saved.restore();
      throw error;
    }
    saved.drop();
    return dir;
  }

  private async npmDepsInstall(dir: string) {
    if (!existsSync(join(dir, "package.json"))) return;
    const m = this.managerName();
    if (m === "bun") await this.npm(["install", "--omit=dev", "--omit=peer"], dir);
    else if (m === "pnpm") await this.npm(["install", "--prod", ...this.noPeerFlags()], dir);
    else await this.npm(["install", "--omit=dev", ...this.noPeerFlags()], dir);
  }

  /**
   * Drop the host packages an install without pi's peer semantics put at the top of a prefix
   * (the host serves them; a copy there only costs space and can block updates). One the prefix
   * itself depends on is kept.
   */
  pruneHostPackages(prefix: string): string[] {
    const deps = readJson(join(prefix, "package.json"))?.dependencies;
    const removed: string[] = [];
    for (const name of HOST_PEER_PACKAGES) {
      if (isObj(deps) && name in deps) continue;
      const dir = join(prefix, "node_modules", name);
      if (!existsSync(dir)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(name);
    }
    if (removed.length) {
      // The lock files still list them: drop those entries so npm does not bring them back.
      for (const lock of [join(prefix, "package-lock.json"), join(prefix, "node_modules", ".package-lock.json")]) {
        const j = readJson(lock);
        if (!isObj(j) || !isObj(j.packages)) continue;
        for (const key of Object.keys(j.packages)) if (removed.some((n) => key === `node_modules/${n}` || key.startsWith(`node_modules/${n}/`))) delete j.packages[key];
        writeFileSync(lock, JSON.stringify(j, null, 2) + "\n");
      }
    }
    return removed;
  }

  /** git clone (and checkout the ref, and npm install), staged. Returns the checkout. */
  async installGit(p: GitSource, scope: PackageScope): Promise<string> {
    const target = this.gitPath(p, scope);
    if (scope !== "temporary") PackageManager.ensureIgnored(join(this.baseDir(scope), "git"));
    mkdirSync(dirname(target), { recursive: true });
    const staging = mkdtempSync(join(dirname(target), `.${basename(target)}.staging-`));
    try {
      await this.git(["clone", "--quiet", p.repo, staging]);
      if (p.ref) await this.git(["checkout", "--quiet", p.ref], staging);
      await this.npmDepsInstall(staging);
      this.checkRoot(staging);
      PackageManager.swapIn(target, staging);
      return target;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  /** Fetch and move to the upstream head, staged. */
  async updateGit(p: GitSource, scope: PackageScope): Promise<string> {
    const target = this.gitPath(p, scope);
    if (!existsSync(target)) return this.installGit(p, scope);
    const staging = mkdtempSync(join(dirname(target), `.${basename(target)}.staging-`));
    try {
      cpSync(target, staging, { recursive: true, verbatimSymlinks: true });
      await this.git(["fetch", "--quiet", "origin"], staging);
      try {
        await this.git(["reset", "--quiet", "--hard", "@{upstream}"], staging);
      } catch {
        await this.git(["remote", "set-head", "origin", "-a"], staging).catch(() => undefined);
        await this.git(["reset", "--quiet", "--hard", "origin/HEAD"], staging);
      }
      await this.git(["clean", "-fdxq"], staging);
      await this.npmDepsInstall(staging);
      this.checkRoot(staging);
      PackageManager.swapIn(target, staging);
      return target;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  private async installParsed(p: ParsedSource, scope: PackageScope): Promise<string> {
    if (p.type === "npm") return this.installNpm(p, scope);
    if (p.type === "git") return this.installGit(p, scope);
    if (!existsSync(p.path)) throw new PackageError(`${p.source}: ${p.path} does not exist`);
    this.checkRoot(p.path);
    return p.path;
  }

  // ---- commands -------------------------------------------------------------------------------

  /** `pi install <source> [-l]`: install (staged), then record in settings. Returns the package folder. */
  async install(source: string, opts: { local?: boolean } = {}): Promise<string> {
    const scope: SettingsScope = opts.local ? "project" : "user";
    const p = parseSource(source, this.cwd);
    this.assertWritable(scope);
    this.log(`Installing ${source}${scope === "project" ? " into the project" : ""}…`);
    const root = await this.installParsed(p, scope);
    this.addToSettings(p, scope);
    return root;
  }

  /** `pi remove <source> [-l]`. Throws when no settings entry matches. */
  async remove(source: string, opts: { local?: boolean } = {}): Promise<void> {
    const scope: SettingsScope = opts.local ? "project" : "user";
    const list = this.entries(scope);
    const hit = this.configured(false).find((c) => c.scope === scope && this.matches(c, source));
    const idx = hit ? list.indexOf(hit.entry) : -1;
    if (idx === -1) {
      const other: SettingsScope = scope === "project" ? "user" : "project";
      const elsewhere = this.configured(false).some((c) => c.scope === other && this.matches(c, source));
      throw new PackageError(
        `no package matching ${source} in the ${scope === "project" ? "project" : "global"} settings` +
          (elsewhere ? ` (it is in the ${other === "project" ? "project settings: add -l" : "global settings: drop -l"})` : ""),
      );
    }
    const installed = hit!.parsed;
    this.assertWritable(scope);
    this.log(`Removing ${source}…`);
    if (installed.type === "npm") {
      const name = this.npmName(installed, scope);
      const prefix = this.npmPrefix(scope);
      if (name && existsSync(join(prefix, "node_modules", name))) await this.npmUninstallFrom(prefix, name);
    } else if (installed.type === "git") {
      const target = this.gitPath(installed, scope);
      rmSync(target, { recursive: true, force: true });
      // Drop folders left empty, up to the git root.
      const root = join(this.baseDir(scope), "git");
      for (let d = dirname(target); d.startsWith(root) && d !== root; d = dirname(d)) {
        try {
          if (readdirSync(d).length) break;
          rmSync(d, { recursive: true, force: true });
        } catch {
          break;
        }
      }
    }
    this.save(scope, list.filter((_, i) => i !== idx));
  }

  /** `pi update [source]`: every non-pinned npm and git package (or the one named). */
  async update(source?: string): Promise<UpdateResult[]> {
    let targets = this.configured(false);
    if (source) {
      targets = targets.filter((t) => this.matches(t, source));
      if (!targets.length) throw new PackageError(`no package matching ${source} in settings`);
    }
    const results: UpdateResult[] = [];
    if (this.opts.offline) {
      this.log("Offline (PI_OFFLINE): packages are not updated");
      return results;
    }
    await this.cleanPrefixes(targets);
    for (const t of targets) {
      const p = t.parsed;
      if (t.error) {
        results.push({ source: t.source, scope: t.scope, status: "failed", error: t.error });
        continue;
      }
      if (p.type === "local") {
        results.push({ source: t.source, scope: t.scope, status: "skipped-local" });
        continue;
      }
      if (p.pinned) {
        this.log(`Skipping ${t.source} (pinned)`);
        results.push({ source: t.source, scope: t.scope, status: "skipped-pinned" });
        continue;
      }
      this.log(`Updating ${t.source}…`);
      try {
        if (p.type === "npm") await this.installNpm(p, t.scope, `${p.name}@latest`);
        else await this.updateGit(p, t.scope);
        results.push({ source: t.source, scope: t.scope, status: "updated" });
      } catch (error) {
        results.push({ source: t.source, scope: t.scope, status: "failed", error: (error as Error).message });
      }
    }
    return results;
  }

  /**
   * The npm prefixes of `targets` (pinned packages' too) without the host packages an older
   * install put there; npm then reconciles the prefix, dropping what only those needed.
   */
  private async cleanPrefixes(targets: ConfiguredPackage[]): Promise<void> {
    const prefixes = new Set(targets.filter((t) => !t.error && t.parsed.type === "npm").map((t) => this.npmPrefix(t.scope)));
    for (const prefix of prefixes) {
      if (!existsSync(join(prefix, "node_modules"))) continue;
      const pruned = this.pruneHostPackages(prefix);
      if (!pruned.length) continue;
      this.log(`Removing host packages pi serves itself from ${prefix}: ${pruned.join(", ")}`);
      try {
        if (this.managerName() === "bun") await this.npm(["install", "--cwd", realpathSync(prefix), ...this.noPeerFlags()]);
        else await this.npm(["install", "--prefix", realpathSync(prefix), ...this.noPeerFlags()]);
      } catch (error) {
        this.log(`Could not tidy ${prefix} after that: ${(error as Error).message.split("\n")[0]}`);
      }
    }
  }

  // ---- resolution -----------------------------------------------------------------------------

  private async ensureInstalled(c: ConfiguredPackage, installMissing: boolean): Promise<{ root?: string; installed: boolean }> {
    const p = c.parsed;
    const path = this.installPath(p, c.scope);
    let present = !!path && existsSync(path);
    if (present && p.type === "npm" && p.version && !p.file) {
      const v = readJson(join(path!, "package.json"))?.version;
      if (p.pinned && semver.validRange(p.version) && !(typeof v === "string" && semver.satisfies(v, p.version))) present = false;
    }
    if (present) return { root: path, installed: false };
    if (p.type === "local" || !installMissing || this.opts.offline) return { root: undefined, installed: false };
    this.log(`Installing missing package ${c.source} (${c.scope === "project" ? "project" : "global"})…`);
    return { root: await this.installParsed(p, c.scope), installed: true };
  }

  /**
   * The configured packages (project entries win over global ones of the same identity) with
   * their resources. Missing npm and git packages are installed when `installMissing`; project
   * packages are skipped unless `trusted`.
   */
  async resolve(opts: { installMissing?: boolean; trusted?: boolean } = {}): Promise<ResolvedPackage[]> {
    const out: ResolvedPackage[] = [];
    for (const c of this.configured(true)) {
      if (c.error) {
        out.push({ ...c, status: "error", resources: [], message: c.error });
        continue;
      }
      if (c.scope === "project" && !opts.trusted) {
        out.push({ ...c, status: "untrusted", resources: [], message: "project packages load only in a trusted project (run with --trust, or add the folder to trustedProjects in the global settings)" });
        continue;
      }
      try {
        const { root } = await this.ensureInstalled(c, !!opts.installMissing);
        if (!root) {
          const message = c.parsed.type === "local" ? `${c.parsed.path} does not exist` : `${c.source} is not installed${this.opts.offline ? " (offline)" : ""}`;
          out.push({ ...c, status: "missing", resources: [], message });
          continue;
        }
        const pkg = readJson(join(root, "package.json"));
        const why = pkg ? checkCompatibility(pkg, this.opts.host) : undefined;
        if (why) {
          out.push({ ...c, root, status: "incompatible", resources: [], message: why });
          continue;
        }
        out.push({ ...c, root, status: "ok", resources: collectPackageResources(root, c.filter) });
      } catch (error) {
        out.push({ ...c, status: "error", resources: [], message: error instanceof SourceError || error instanceof PackageError ? error.message : String((error as Error)?.message ?? error) });
      }
    }
    return out;
  }

  /** A package for this run only (pi -e npm:…): installed under the temp root when missing. */
  async resolveTemporary(source: string): Promise<string> {
    const p = parseSource(source, this.cwd);
    let root: string;
    if (p.type === "local") {
      if (!existsSync(p.path)) throw new PackageError(`${source}: ${p.path} does not exist`);
      this.checkRoot(p.path);
      root = p.path;
    } else {
      const path = this.installPath(p, "temporary");
      if (path && existsSync(path)) {
        this.checkRoot(path);
        root = path;
      } else {
        if (this.opts.offline) throw new PackageError(`${source} is not cached and PI_OFFLINE forbids installing it`);
        this.log(`Installing ${source} for this run…`);
        root = await this.installParsed(p, "temporary");
      }
    }
    if (!this.temporary.includes(root)) this.temporary.push(root);
    return root;
  }

  // ---- pi config ------------------------------------------------------------------------------

  /**
   * Enable or disable one resource of a configured package by writing "+rel" / "-rel" into the
   * package's settings filter. `resource` is the path relative to the package root (for a
   * skill, its folder is enough) or, when unique, a file or skill name.
   */
  setResourceEnabled(pkgRef: string, resource: string, enabled: boolean, scope?: SettingsScope): { source: string; scope: SettingsScope; type: ResourceType; rel: string } {
    const c = this.findConfigured(pkgRef, scope);
    this.assertWritable(c.scope);
    const root = this.installPath(c.parsed, c.scope);
    if (!root || !existsSync(root)) throw new PackageError(`${c.source} is not installed; run "${this.opts.host.appName} install ${c.source}${c.scope === "project" ? " -l" : ""}" first`);
    const res = findResource(collectPackageResources(root, c.filter), resource);
    const list = [...this.entries(c.scope)];
    const idx = list.findIndex((e) => (typeof e === "string" ? e : isObj(e) ? e.source : undefined) === c.source);
    const cur = list[idx]!;
    const obj: Record<string, unknown> = typeof cur === "string" ? { source: cur } : { ...cur };
    const before = Array.isArray(obj[res.type]) ? (obj[res.type] as unknown[]).map(String) : undefined;
    const strip = (s: string) => (/^[!+-]/.test(s) ? s.slice(1) : s);
    let next = (before ?? []).filter((s) => strip(s).replace(/^\.\//, "") !== res.rel);
    // An explicit [] means "none": keep everything else off when one is switched on.
    if (enabled && before !== undefined && before.length === 0) next = ["!**"];
    next.push(`${enabled ? "+" : "-"}${res.rel}`);
    obj[res.type] = next;
    list[idx] = obj;
    this.save(c.scope, list);
    return { source: c.source, scope: c.scope, type: res.type, rel: res.rel };
  }

  /** Whether a settings entry is meant by `ref`: its exact source, the same identity, or a bare npm name / git host/path. */
  matches(c: ConfiguredPackage, ref: string): boolean {
    if (c.error) return c.source === ref;
    if (c.source === ref) return true;
    try {
      if (this.identity(parseSource(ref, this.cwd)) === c.identity) return true;
    } catch {
      /* not a source: try the bare forms */
    }
    return (c.parsed.type === "npm" && c.parsed.name === ref) || (c.parsed.type === "git" && `${c.parsed.host}/${c.parsed.path}` === ref);
  }

  findConfigured(pkgRef: string, scope?: SettingsScope): ConfiguredPackage {
    const all = this.configured(false).filter((c) => !scope || c.scope === scope);
    const hit = all.find((c) => !c.error && c.source === pkgRef) ?? all.find((c) => !c.error && this.matches(c, pkgRef));
    if (!hit) {
      const known = all.map((c) => c.source);
      throw new PackageError(`no configured package matches ${pkgRef}${known.length ? ` (configured: ${known.join(", ")})` : " (no packages are configured)"}`);
    }
    return hit;
  }
}

/** Find a resource by relative path, skill folder, or (when unique) name. */
export function findResource(resources: PackageResource[], ref: string): PackageResource {
  const r = ref.replace(/\\/g, "/").replace(/^\.\//, "").replace(/\/$/, "");
  const exact = resources.find((x) => x.rel === r || (x.rel.endsWith("/SKILL.md") && x.rel.slice(0, -"/SKILL.md".length) === r));
  if (exact) return exact;
  const stem = (rel: string) => {
    const parts = rel.split("/");
    const file = parts[parts.length - 1]!;
    return file === "SKILL.md" ? parts[parts.length - 2]! : file.replace(/\.[^.]+$/, "");
  };
  const byName = resources.filter((x) => stem(x.rel) === r || x.rel.split("/").pop() === r);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) throw new PackageError(`"${ref}" matches several resources: ${byName.map((x) => x.rel).join(", ")}; use the path`);
  throw new PackageError(`no resource "${ref}" in this package (it has: ${resources.map((x) => x.rel).join(", ") || "nothing"})`);
}

/** The packages pi serves to extensions itself (both scopes); never installed into a prefix. */
export const HOST_PEER_PACKAGES: readonly string[] = ["@earendil-works", "@mariozechner"].flatMap((scope) =>
  ["pi-coding-agent", "pi-ai", "pi-agent-core", "pi-tui"].map((n) => `${scope}/${n}`),
);

/** npm, pnpm or bun, as 1.6 tells them apart: the command itself, the one after a `--`, or the only one named among a wrapper's arguments. */
export function packageManagerOf(c: { command: string; args: string[] }): "npm" | "pnpm" | "bun" {
  const norm = (x: string) => basename(x).replace(/\.(cmd|exe)$/i, "");
  const known = (x: string | undefined): x is "npm" | "pnpm" | "bun" => x === "npm" || x === "pnpm" || x === "bun";
  const sep = c.args.lastIndexOf("--");
  if (sep >= 0) {
    const wrapped = c.args[sep + 1] ? norm(c.args[sep + 1]!) : norm(c.command);
    return known(wrapped) ? wrapped : "npm";
  }
  const direct = norm(c.command);
  if (known(direct)) return direct;
  const named = [...new Set(c.args.map(norm).filter(known))];
  if (named.length > 1) throw new PackageError(`settings "npmCommand" names several package managers (${named.join(", ")}); put the one to use after "--"`);
  return named[0] ?? "npm";
}

/**
 * What an npm install into a prefix changes, kept aside: the package's folder (moved out of
 * node_modules, so npm puts a fresh one there) and the prefix's package.json and lock files.
 */
class PrefixSnapshot {
  private constructor(
    private readonly prefix: string,
    private readonly dir: string,
    private readonly aside: string | undefined,
    private readonly files: Map<string, string | undefined>,
  ) {}

  static take(prefix: string, dir: string): PrefixSnapshot {
    const files = new Map<string, string | undefined>();
    for (const f of [join(prefix, "package.json"), join(prefix, "package-lock.json"), join(prefix, "node_modules", ".package-lock.json")]) {
      files.set(f, existsSync(f) ? readFileSync(f, "utf8") : undefined);
    }
    let aside: string | undefined;
    if (existsSync(dir)) {
      aside = mkdtempSync(join(dirname(prefix), `.${basename(prefix)}.previous-`));
      renameSync(dir, join(aside, "pkg"));
    }
    return new PrefixSnapshot(prefix, dir, aside, files);
  }

  restore(): void {
    rmSync(this.dir, { recursive: true, force: true });
    if (this.aside) {
      mkdirSync(dirname(this.dir), { recursive: true });
      renameSync(join(this.aside, "pkg"), this.dir);
      rmSync(this.aside, { recursive: true, force: true });
    }
    for (const [f, text] of this.files) {
      if (text === undefined) rmSync(f, { force: true });
      else writeFileSync(f, text);
    }
  }

  drop(): void {
    if (this.aside) rmSync(this.aside, { recursive: true, force: true });
  }
}
