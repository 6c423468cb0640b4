/**
 * Project trust: code that comes with the repository being worked on (`.pi/extensions/`,
 * project settings that name extensions, plugins or packages, `pi.config.ts`) runs only once
 * that project is trusted. Trust comes from `--trust` (this run), the global setting
 * `trustedProjects` (a project's own settings can never trust itself), or `trust(cwd)` (the
 * TUI's prompt; saved to the global settings).
 *
 * Kernel service "project-trust" (ProjectTrust below). Loaders that skip project code call
 * `noteSkipped()` so the TUI can say what trusting would load.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";
import { definePlugin } from "../../core/plugin.js";
import type { Kernel } from "../../core/kernel.js";

export type { ProjectTrust, SkippedItem } from "../../core/services.js";
import type { ProjectTrust, SkippedItem } from "../../core/services.js";
import { expandHome } from "../../core/fs-utils.js";



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

/** Whether the raw argv (or a parsed one) carries --trust. */
export function argvTrusts(argv: { flags?: Record<string, unknown>; unknown?: string[] } | string[] | undefined): boolean {
  if (!argv) return false;
  if (Array.isArray(argv)) return argv.includes("--trust");
  return argv.flags?.trust === true || !!argv.unknown?.includes("--trust");
}

/**
 * For start-up code that runs before the kernel exists (the project's `pi.config.ts`):
 * trusted by `--trust` or by `trustedProjects` in `<agentDir>/settings.json`.
 */
export function isProjectTrustedAtStartup(opts: { cwd: string; agentDir: string; argv?: string[] }): boolean {
  if (argvTrusts(opts.argv)) return true;
  const file = join(opts.agentDir, "settings.json");
  if (!existsSync(file)) return false;
  try {
    const json = JSON.parse(readFileSync(file, "utf8")) as { trustedProjects?: unknown };
    return Array.isArray(json?.trustedProjects) && isInside(opts.cwd, json.trustedProjects as string[]);
  } catch {
    return false;
  }
}

export function createProjectTrust(kernel: Kernel): ProjectTrust {
  const session = new Set<string>();
  const skippedBy = new Map<string, SkippedItem[]>();
  const listeners = new Set<(cwd: string) => void | Promise<void>>();
  const globalList = (): string[] => {
    const v = kernel.settings.getGlobal().trustedProjects;
    return Array.isArray(v) ? (v as string[]) : [];
  };
  const trust: ProjectTrust = {
    isTrusted(cwd = kernel.cwd) {
      const c = norm(cwd);
      if (argvTrusts(kernel.service("argv")) && c === norm(kernel.cwd)) return true;
      if ([...session].some((s) => isInside(c, [s]))) return true;
      return isInside(c, globalList());
    },
    trust(cwd = kernel.cwd, opts = {}) {
      const c = norm(cwd);
      session.add(c);
      if (opts.persist !== false && !isInside(c, globalList())) {
        kernel.settings.update({ trustedProjects: [...globalList(), c] }, "global");
      }
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
    `Trust it with --trust (this run), by answering the trust prompt in the interactive UI, ` +
    `or by adding it to "trustedProjects" in ${settingsFile}`
  );
}

export default definePlugin({
  name: "project-trust",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Project trust: a repository's own code (.pi extensions, plugins, packages) runs only once trusted",
  setup(api) {
    api.registerFlag({
      name: "trust",
      type: "boolean",
      description: "Trust this project for this run: load its .pi extensions, plugins and packages",
      group: "Extensions and resources",
    });
    api.provide("project-trust", createProjectTrust(api.kernel));
  },
});

