/**
 * Project trust: code that comes with the repository being worked on (`.pi/extensions/`,
 * project settings that name extensions, plugins or packages, `pi.config.ts`) runs only once
 * that project is trusted. The decision, first match wins (pi 1.6's order):
 *   1. the command line: `-na` / `--no-approve` declines; `-a` / `--approve` / `--trust` trusts;
 *   2. a decision taken in this process (`trust(cwd, {persist: false})`);
 *   3. the trust store `<agentDir>/trust.json` ({"<folder>": true|false}; the nearest folder
 *      at or above cwd decides) — what `trust(cwd)` writes;
 *   4. our older global setting `trustedProjects` (folders; kept as an alias);
 *   5. the global setting `defaultProjectTrust`: "always" trusts; "ask" (default) and "never"
 *      decline, and the interactive UI asks only for "ask".
 * A project's own settings can never trust itself (only the global layer is read).
 *
 * Kernel service "project-trust" (ProjectTrust below). Loaders that skip project code call
 * `noteSkipped()` so the TUI can say what trusting would load.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { definePlugin, type Kernel, type ProjectTrust, type SkippedItem, expandHome } from "../../core/kernel/index.js";

export type { ProjectTrust, SkippedItem } from "../../core/kernel/index.js";



function norm(p: string): string {
  const r = resolve(expandHome(p));
  return r.length > 1 && r.endsWith(sep) ? r.slice(0, -1) : r;
}

/** `cwd` equals a trusted folder or lies inside one. */
export function isInside(cwd: string, folders: readonly string[]): boolean {
  const c = norm(cwd);
  return folders.some((f) => {
    if (typeof f !== "string" || !f.trim()) return false;
    const t = norm(f);
    return c === t || c.startsWith(t === sep ? t : t + sep);
  });
}

const TRUST_WORDS = ["--trust", "--approve", "-a"];
const DECLINE_WORDS = ["--no-approve", "-na"];

/**
 * The command line's decision: true (`--trust`, `-a`, `--approve`), false (`-na`,
 * `--no-approve`, which wins), or undefined. Takes the raw argv or a parsed one.
 */
export function argvDecision(argv: { flags?: Record<string, unknown>; unknown?: string[] } | string[] | undefined): boolean | undefined {
  if (!argv) return undefined;
  if (Array.isArray(argv)) {
    const words = argv.slice(0, argv.includes("--") ? argv.indexOf("--") : argv.length);
    if (words.some((w) => DECLINE_WORDS.includes(w))) return false;
    return words.some((w) => TRUST_WORDS.includes(w)) ? true : undefined;
  }
  if (argv.flags?.["no-approve"] === true || argv.unknown?.some((w) => DECLINE_WORDS.includes(w))) return false;
  if (argv.flags?.trust === true || argv.flags?.approve === true || argv.unknown?.some((w) => TRUST_WORDS.includes(w))) return true;
  return undefined;
}

/** Whether the raw argv (or a parsed one) trusts the project (--trust, -a, --approve; not with -na). */
export function argvTrusts(argv: { flags?: Record<string, unknown>; unknown?: string[] } | string[] | undefined): boolean {
  return argvDecision(argv) === true;
}

export type TrustStore = Record<string, boolean>;

/** `<agentDir>/trust.json`: folder → true/false (null entries and other values are skipped). */
export function readTrustStore(agentDir: string, report?: (message: string) => void): TrustStore {
  const file = join(agentDir, "trust.json");
  if (!existsSync(file)) return {};
  try {
    const raw = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as unknown;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("expected an object of folder: true|false");
    const out: TrustStore = {};
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (v === true || v === false) out[norm(k)] = v;
    return out;
  } catch (e) {
    report?.(`${file}: ${(e as Error).message}; saved trust decisions are ignored`);
    return {};
  }
}

export function writeTrustStore(agentDir: string, updates: TrustStore): void {
  const file = join(agentDir, "trust.json");
  let current: Record<string, unknown> = {};
  try {
    if (existsSync(file)) current = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    current = {};
  }
  const next = { ...current, ...updates };
  const sorted = Object.fromEntries(Object.keys(next).sort().map((k) => [k, next[k]]));
  mkdirSync(agentDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify(sorted, null, 2) + "\n", "utf8");
}

/** The nearest saved decision at or above `cwd`. */
export function storeDecision(store: TrustStore, cwd: string): boolean | undefined {
  let dir = norm(cwd);
  for (;;) {
    if (dir in store) return store[dir];
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export type DefaultProjectTrust = "ask" | "always" | "never";

/** The global `defaultProjectTrust` ("ask" when unset or not one of the three). */
export function defaultTrustOf(globalSettings: Record<string, unknown>): DefaultProjectTrust {
  const v = globalSettings.defaultProjectTrust;
  return v === "always" || v === "never" ? v : "ask";
}

/** Steps 3-5 of the decision, from the global settings object and the trust store. */
function savedDecision(cwd: string, agentDir: string, global: Record<string, unknown>, report?: (m: string) => void): boolean {
  const stored = storeDecision(readTrustStore(agentDir, report), cwd);
  if (stored !== undefined) return stored;
  if (Array.isArray(global.trustedProjects) && isInside(cwd, global.trustedProjects as string[])) return true;
  return defaultTrustOf(global) === "always";
}

/**
 * For start-up code that runs before the kernel exists (the project's `pi.config.ts`): the
 * same decision from the raw argv, trust.json and `<agentDir>/settings.json`.
 */
export function isProjectTrustedAtStartup(opts: { cwd: string; agentDir: string; argv?: string[] }): boolean {
  const cli = argvDecision(opts.argv);
  if (cli !== undefined) return cli;
  let global: Record<string, unknown> = {};
  const file = join(opts.agentDir, "settings.json");
  try {
    if (existsSync(file)) global = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    global = {};
  }
  return savedDecision(opts.cwd, opts.agentDir, global && typeof global === "object" ? global : {});
}

export function createProjectTrust(kernel: Kernel): ProjectTrust {
  const session = new Set<string>();
  const declined = new Set<string>();
  const skippedBy = new Map<string, SkippedItem[]>();
  const listeners = new Set<(cwd: string) => void | Promise<void>>();
  const globalList = (): string[] => {
    const v = kernel.settings.getGlobal().trustedProjects;
    return Array.isArray(v) ? (v as string[]) : [];
  };
  const report = (message: string) => kernel.diagnostics.report({ level: "warning", source: "project-trust", message });
  const trust: ProjectTrust = {
    isTrusted(cwd = kernel.cwd) {
      const c = norm(cwd);
      const cli = c === norm(kernel.cwd) ? argvDecision(kernel.service("argv")) : undefined;
      if (cli !== undefined) return cli;
      if (declined.has(c)) return false;
      if ([...session].some((s) => isInside(c, [s]))) return true;
      return savedDecision(c, kernel.agentDir, kernel.settings.getGlobal() as Record<string, unknown>, report);
    },
    promptSuppressed(cwd = kernel.cwd) {
      const c = norm(cwd);
      if (c === norm(kernel.cwd) && argvDecision(kernel.service("argv")) !== undefined) return true;
      if (storeDecision(readTrustStore(kernel.agentDir), c) !== undefined) return true;
      return defaultTrustOf(kernel.settings.getGlobal() as Record<string, unknown>) !== "ask";
    },
    trust(cwd = kernel.cwd, opts = {}) {
      const c = norm(cwd);
      session.add(c);
      declined.delete(c);
      if (opts.persist !== false && !isInside(c, globalList())) writeTrustStore(kernel.agentDir, { [c]: true });
      skippedBy.delete(c);
      for (const l of listeners) {
        try {
          const r = l(c);
          if (r && typeof (r as Promise<void>).then === "function") {
            (r as Promise<void>).then(undefined, (error) =>
              kernel.diagnostics.report({ level: "error", source: "project-trust", message: "a trust listener failed", error }),
            );
          }
        } catch (error) {
          kernel.diagnostics.report({ level: "error", source: "project-trust", message: "a trust listener failed", error });
        }
      }
    },
    decline(cwd = kernel.cwd, opts = {}) {
      const c = norm(cwd);
      declined.add(c);
      session.delete(c);
      if (opts.persist === true) writeTrustStore(kernel.agentDir, { [c]: false });
    },
    hasProjectCode(cwd = kernel.cwd) {
      const dir = join(cwd, kernel.app.configDir);
      if (existsSync(join(dir, "extensions")) || existsSync(join(cwd, `${kernel.app.name}.config.ts`))) return true;
      if (norm(cwd) === norm(kernel.cwd)) {
        const p = kernel.settings.getProject();
        for (const k of ["extensions", "plugins", "packages"]) if (Array.isArray(p[k]) && (p[k] as unknown[]).length) return true;
      }
      return (skippedBy.get(norm(cwd))?.length ?? 0) > 0;
    },
    noteSkipped(item, cwd = kernel.cwd) {
      const c = norm(cwd);
      const list = skippedBy.get(c) ?? [];
      if (!list.some((i) => i.kind === item.kind && i.path === item.path)) list.push(item);
      skippedBy.set(c, list);
    },
    skipped(cwd = kernel.cwd) {
      return [...(skippedBy.get(norm(cwd)) ?? [])];
    },
    onTrust(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  return trust;
}

/** The message a loader reports when it skips an untrusted project's code. */
export function untrustedMessage(kernel: Kernel, what: string): string {
  const settingsFile = join(kernel.agentDir, "settings.json");
  return (
    `project ${kernel.cwd} is not trusted, so its ${what} did not load. ` +
    `Trust it with -a / --approve (this run), by answering the trust prompt in the interactive UI, ` +
    `or by saving a decision in ${join(kernel.agentDir, "trust.json")} ({"${kernel.cwd}": true}; "trustedProjects" in ${settingsFile} still works)`
  );
}

// ---- settings trust ---------------------------------------------------------------------------------
/**
 * A project's values for settings that widen what the agent may do or run (TRUST_GATED_SETTINGS:
 * the shell, npm command and session folder, the model, provider and tools; LOWER_ONLY_SETTINGS:
 * limits it may only lower) are ignored until the project is trusted; say so once at start-up
 * with how to trust, and apply them as soon as the project is trusted.
 */
export function gateProjectSettings(kernel: Kernel, trust: ProjectTrust): void {
  const settings = kernel.settings;
  if (typeof settings.setProjectTrust !== "function") return;
  settings.setProjectTrust(() => trust.isTrusted(kernel.cwd));
  const ignored = settings.ignoredProjectKeys();
  if (ignored.length) {
    const valueOf = (key: string) => key.split(".").reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined), settings.getProject());
    const values = ignored.map((k) => `${k}=${JSON.stringify(valueOf(k))}`).join(", ");
    trust.noteSkipped({ kind: "settings", path: ignored.join(", ") });
    kernel.diagnostics.report({
      level: "warning",
      source: settings.projectPath() ?? join(kernel.cwd, kernel.app.configDir, "settings.json"),
      message:
        `project ${kernel.cwd} is not trusted, so its settings ${values} were ignored (they run commands, choose where files are written, pick the model or the tools, or raise a limit). ` +
        `Trust it with --trust (this run), by answering the trust prompt in the interactive UI, ` +
        `or by adding it to "trustedProjects" in ${join(kernel.agentDir, "settings.json")}`,
    });
  }
  trust.onTrust(() => settings.refreshTrust());
}
// ---- end settings trust -----------------------------------------------------------------------------

export default definePlugin({
  name: "project-trust",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Project trust: a repository's own code (.pi extensions, plugins, packages) runs only once trusted",
  setup(api) {
    api.registerFlag({
      name: "trust",
      type: "boolean",
      description: "Trust this project for this run: load its .pi extensions, plugins and packages (same as -a)",
      group: "Extensions and resources",
    });
    api.registerFlag({ name: "approve", alias: "a", type: "boolean", description: "Trust this project's files for this run", group: "Extensions and resources" });
    api.registerFlag({ name: "no-approve", alias: "na", type: "boolean", description: "Ignore this project's trust-gated files for this run", group: "Extensions and resources" });
    const trust = createProjectTrust(api.kernel);
    api.provide("project-trust", trust);
    gateProjectSettings(api.kernel, trust);
  },
});

