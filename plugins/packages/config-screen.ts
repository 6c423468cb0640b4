/**
 * `pi config` in a terminal: one screen with the built-in extensions and every package resource
 * as on/off toggles, followed by the settings entries (the same as the TUI's /settings). Each
 * change is written at once to the global settings, or with -l to the project's. When stdout is
 * not a terminal the caller prints the list instead (`settingsListing`).
 */
import { type Kernel, BUILTIN_EXTENSION_NAMES, resolveBuiltinExtensions } from "../../core/kernel/index.js";
import { formatSettingsList } from "../../core/kernel/lazy.js";
import type { ResolvedPackage, PackageManager } from "./package-manager.js";

type Obj = Record<string, unknown>;

/** The printed settings section of `pi config` (no terminal). */
export function settingsListing(kernel: Kernel, local: boolean): string {
  const s = kernel.settings;
  const layer = local ? s.getProject() : s.getGlobal();
  return formatSettingsList(s.get() as unknown as Obj, layer).join("\n");
}

function setBuiltin(kernel: Kernel, name: string, on: boolean, scope: "global" | "project"): void {
  const s = kernel.settings;
  const list = (scope === "global" ? s.getGlobal().extensions : s.getProject().extensions) as unknown;
  const path = `builtin:${name}`;
  const kept = (Array.isArray(list) ? list : []).filter((e) => typeof e !== "string" || (e !== `+${path}` && e !== `-${path}`));
  s.update({ extensions: [...kept, `${on ? "+" : "-"}${path}`] }, scope);
}

/**
 * The screen for `resolved` (every configured package); `local` starts in the project's
 * settings. Tab switches between the global and the project settings, as in 1.6.
 */
export async function runConfigScreen(kernel: Kernel, pm: PackageManager, resolved: ResolvedPackage[], local: boolean): Promise<number> {
  const { runStandaloneScreen } = await import("../../modes/tui/standalone-screen.js");
  const { catalogEntries, saveEntry } = await import("../../modes/tui/settings-screen.js");
  const { findThemes } = await import("../../modes/tui/theme.js");
  const s = kernel.settings;
  const bool = ["true", "false"];
  let themes: string[] = ["dark", "light"];
  try {
    themes = [...new Set([...themes, ...findThemes(kernel).themes.keys()])];
  } catch {
    // themes that do not load are reported by the TUI; the two built-ins remain
  }
  type Toggle = { id: string; label: string; description: string; values: string[]; value(): string; set(v: string): void };
  const changed = { global: 0, project: 0 };
  let current!: { scope: "global" | "project"; change(id: string, v: string): void };

  const build = (isLocal: boolean) => {
    const scope = isLocal ? "project" : "global";
    const builtinOn = (n: string) =>
      resolveBuiltinExtensions({ global: s.getGlobal().extensions, project: isLocal ? s.getProject().extensions : undefined }).enabled.has(n);
    const toggles: Toggle[] = BUILTIN_EXTENSION_NAMES.map((n) => ({
      id: `builtin:${n}`,
      label: `Built-in: ${n}`,
      description: `The built-in ${n} extension ("-builtin:${n}" in "extensions" turns it off)`,
      values: bool,
      value: () => String(builtinOn(n)),
      set: (v) => setBuiltin(kernel, n, v === "true", scope),
    }));
    for (const r of resolved) {
      if (r.status !== "ok" || (isLocal && r.scope !== "project")) continue;
      for (const x of r.resources) {
        const rel = x.rel.endsWith("/SKILL.md") ? x.rel.slice(0, -9) : x.rel;
        let on = x.enabled;
        toggles.push({
          id: `${r.source}:${x.rel}`,
          label: `${r.source}: ${rel}`,
          description: `${x.type.replace(/s$/, "")} ${rel} of ${r.source} (${r.scope === "project" ? "project" : "global"} package)`,
          values: bool,
          value: () => String(on),
          set: (v) => {
            pm.setResourceEnabled(r.source, x.rel, v === "true", isLocal ? "project" : undefined);
            on = v === "true";
          },
        });
      }
    }
    const settingEntries = catalogEntries(s, scope, themes);
    current = {
      scope,
      change: (id, v) => {
        const t = toggles.find((x) => x.id === id);
        if (t) t.set(v);
        else {
          const entry = settingEntries.find((x) => x.id === id)?.entry;
          if (entry) saveEntry(s, entry, v, scope);
        }
        changed[scope]++;
      },
    };
    return {
      title: `${isLocal ? "Project" : "Global"} configuration: ${isLocal ? `${kernel.app.configDir}/settings.json` : "settings.json"}`,
      entries: [...toggles, ...settingEntries],
    };
  };

  const first = build(local);
  await runStandaloneScreen({
    ...first,
    hint: "Type to search · Enter/Space to change · Tab global/project · Esc to close",
    change: (e, v) => current.change(e.id, v),
    switchTab: () => build(current.scope === "global"),
  });
  const problems = s.diagnostics.filter((d) => d.level !== "info");
  for (const d of problems) process.stderr.write(`${kernel.app.name} config: ${d.source}: ${d.message}\n`);
  const said = (["global", "project"] as const).filter((k) => changed[k]).map((k) => `${changed[k]} change${changed[k] === 1 ? "" : "s"} saved to the ${k} settings.`);
  process.stdout.write(said.length ? `${said.join("\n")}\n` : "No changes.\n");
  return problems.length ? 1 : 0;
}
