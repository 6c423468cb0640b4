/**
 * The plugin host: checks manifests, orders plugins by dependsOn, runs setup() and isolates
 * failures. Built-in plugins fail fast (a broken build is a bug); user plugins fail soft: one
 * diagnostic naming the plugin and the reason, everything it registered undone, the CLI
 * still starts. A setup() that does not settle within the setup deadline fails the same way,
 * naming the plugin. A plugin set up here has its `teardown` run at kernel disposal.
 */
import { checkManifest, isVerifiedManifest, loadSemver, type PluginManifest } from "./plugin.js";
import type { Kernel, PluginApi } from "./kernel.js";
import type { ModuleLoader } from "./loader.js";
import { DeadlineError, withDeadline } from "./deadline.js";

/** How long one plugin's setup() may take (milliseconds) unless the host is told otherwise. */
export const DEFAULT_SETUP_TIMEOUT_MS = 30_000;

export interface PluginHostOptions {
  /** The setup deadline per plugin in milliseconds (0 or Infinity: none). */
  setupTimeoutMs?: number;
}

export interface LoadedPlugin {
  manifest: PluginManifest;
  api: PluginApi;
  builtin: boolean;
  /** Where it came from (a file path for user plugins). */
  origin: string;
}

export interface PluginCandidate {
  manifest: unknown;
  origin: string;
  builtin?: boolean;
}

export class PluginHost {
  readonly loaded = new Map<string, LoadedPlugin>();
  /** Per plugin: milliseconds its setup took (PI_TIMING). */
  readonly timings: Array<{ name: string; ms: number }> = [];

  private readonly setupTimeoutMs: number;

  constructor(
    private readonly kernel: Kernel,
    opts: PluginHostOptions = {},
  ) {
    this.setupTimeoutMs = opts.setupTimeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS;
  }

  private refuse(c: PluginCandidate, name: string, reason: string): void {
    const message = `plugin ${name} refused: ${reason}`;
    if (c.builtin) throw new Error(message);
    this.kernel.diagnostics.report({ level: "error", source: c.origin, message });
  }

  /** Check, order and set up a batch of plugins. */
  async load(candidates: PluginCandidate[]): Promise<void> {
    const accepted: PluginCandidate[] = [];
    const names = new Set<string>(this.loaded.keys());
    if (candidates.some((c) => !isVerifiedManifest(c.manifest))) await loadSemver();
    for (const c of candidates) {
      const m = c.manifest as Partial<PluginManifest> | undefined;
      const name = typeof m?.name === "string" && m.name ? m.name : c.origin;
      const reason = checkManifest(c.manifest, this.kernel.apiVersion);
      if (reason) {
        this.refuse(c, name, reason);
        continue;
      }
      if (names.has(name)) {
        this.refuse(c, name, `the name "${name}" is already taken by ${this.loaded.get(name)?.origin ?? "another plugin in this batch"}`);
        continue;
      }
      names.add(name);
      accepted.push(c);
    }
    await this.setupInOrder(this.order(accepted));
  }

  /**
   * Set up in dependency order; a plugin whose required services are not provided yet waits
   * (with the plugins that depend on it) until the rest of the batch is set up. What is still
   * missing then refuses it, naming the service.
   */
  private async setupInOrder(ordered: PluginCandidate[]): Promise<void> {
    const missing = (c: PluginCandidate) => ((c.manifest as PluginManifest).requires ?? []).filter((s) => !this.kernel.hasService(s));
    let pending = ordered;
    for (;;) {
      const waiting: PluginCandidate[] = [];
      const waitingNames = new Set<string>();
      let progress = false;
      for (const c of pending) {
        const m = c.manifest as PluginManifest;
        if (missing(c).length || (m.dependsOn ?? []).some((d) => waitingNames.has(d))) {
          waitingNames.add(m.name);
          waiting.push(c);
          continue;
        }
        await this.setupOne(c);
        progress = true;
      }
      pending = waiting;
      if (!pending.length || !progress) break;
    }
    for (const c of pending) {
      const lack = missing(c);
      const reason = lack.length
        ? `it requires the service "${lack[0]}", which no installed plugin provides`
        : "a plugin it depends on requires a service no installed plugin provides";
      this.refuse(c, (c.manifest as PluginManifest).name, reason);
    }
  }

  /** Topological order by dependsOn; a missing dependency or a cycle refuses the plugin. */
  private order(batch: PluginCandidate[]): PluginCandidate[] {
    const byName = new Map(batch.map((c) => [(c.manifest as PluginManifest).name, c]));
    const out: PluginCandidate[] = [];
    const state = new Map<string, "visiting" | "done" | "refused">();
    const visit = (name: string, trail: string[]): boolean => {
      const st = state.get(name);
      if (st === "done") return true;
      if (st === "refused") return false;
      const c = byName.get(name)!;
      if (st === "visiting") {
        this.refuse(c, name, `dependency cycle: ${[...trail, name].join(" -> ")}`);
        state.set(name, "refused");
        return false;
      }
      state.set(name, "visiting");
      for (const dep of (c.manifest as PluginManifest).dependsOn ?? []) {
        if (this.loaded.has(dep)) continue;
        if (!byName.has(dep)) {
          this.refuse(c, name, `it depends on "${dep}", which is not installed`);
          state.set(name, "refused");
          return false;
        }
        if (!visit(dep, [...trail, name])) {
          if (state.get(name) !== "refused") this.refuse(c, name, `its dependency "${dep}" was refused`);
          state.set(name, "refused");
          return false;
        }
      }
      state.set(name, "done");
      out.push(c);
      return true;
    };
    for (const name of byName.keys()) visit(name, []);
    return out;
  }

  private async setupOne(c: PluginCandidate): Promise<void> {
    const manifest = c.manifest as PluginManifest;
    const api = this.kernel.scope(manifest.name);
    const t0 = performance.now();
    const setup = Promise.resolve().then(() => manifest.setup(api));
    try {
      await withDeadline(setup, this.setupTimeoutMs, `plugin ${manifest.name} setup()`);
    } catch (error) {
      api.dispose();
      const late = error instanceof DeadlineError;
      // a setup that settles after its deadline has its late registrations undone too
      if (late) void setup.then(() => api.dispose(), () => api.dispose());
      const message = late
        ? `plugin ${manifest.name} refused: setup() did not finish within ${this.setupTimeoutMs} ms`
        : `plugin ${manifest.name} refused: setup() threw: ${error instanceof Error ? error.message : String(error)}`;
      if (c.builtin) throw late ? new Error(message) : error;
      this.kernel.diagnostics.report({ level: "error", source: c.origin, message, ...(late ? {} : { error }) });
      return;
    } finally {
      this.timings.push({ name: manifest.name, ms: performance.now() - t0 });
    }
    const teardown = manifest.teardown;
    if (teardown) api.onClose(() => teardown.call(manifest, api));
    this.loaded.set(manifest.name, { manifest, api, builtin: !!c.builtin, origin: c.origin });
  }

  /** Load user plugin modules from files (default export = manifest). */
  async loadFiles(loader: ModuleLoader, paths: string[]): Promise<void> {
    const candidates: PluginCandidate[] = [];
    for (const path of paths) {
      try {
        const mod = await loader.import<{ default?: unknown }>(path);
        candidates.push({ manifest: mod?.default ?? mod, origin: path });
      } catch (error) {
        const msg = error instanceof Error ? error.message : String(error);
        this.kernel.diagnostics.report({ level: "error", source: path, message: `plugin refused: cannot load module: ${msg}`, error });
      }
    }
    await this.load(candidates);
  }
}
