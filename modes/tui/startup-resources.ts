/**
 * The start-up list of what was loaded, under the header as pi 1.6 shows it: context files,
 * skills, prompt templates and extensions, each section a heading and one short name per line
 * (file names, `/template` names). Hidden when quietStartup is true or "header".
 */
import { basename, dirname } from "node:path";
import type { Kernel } from "../../core/kernel/index.js";

interface ResourcesView {
  skills(): Array<{ name: string; filePath?: string; location?: string }>;
  promptTemplates(): Array<{ name: string; location?: string }>;
  contextFiles(): Array<{ path: string }>;
}
interface ExtensionsView {
  list(): Array<{ name: string; origin: string }>;
}

/** A module's file name; a folder's `index.ts` is named by its folder. */
function fileLabel(path: string): string {
  const b = basename(path);
  return /^index\.[cm]?[jt]s$/.test(b) ? basename(dirname(path)) : b;
}

interface Item {
  short: string;
  /** The full form (Ctrl+O): a path or name under its scope. */
  full: string;
  scope?: string;
}

/** Extension origins as the scope headings 1.6 uses. */
const ORIGIN_SCOPE: Record<string, string> = { global: "user", settings: "user", project: "project", "project-settings": "project", cli: "path", package: "package" };

/** The sections to show (empty ones left out), or none when start-up is quiet. */
export function startupResources(kernel: Kernel): Array<{ title: string; items: Item[] }> {
  const quiet = kernel.settings.get().quietStartup as unknown;
  if (quiet === true || quiet === "header") return [];
  const res = kernel.service("resources") as ResourcesView | undefined;
  const ext = kernel.service("extensions") as ExtensionsView | undefined;
  const safe = <T>(f: () => T[]): T[] => {
    try {
      return f();
    } catch {
      return [];
    }
  };
  const sections: Array<{ title: string; items: Item[] }> = [
    { title: "Context", items: safe(() => res?.contextFiles() ?? []).map((f) => ({ short: basename(f.path), full: f.path })) },
    { title: "Skills", items: safe(() => res?.skills() ?? []).map((s) => ({ short: s.name, full: s.filePath ?? s.name, scope: s.location })) },
    { title: "Prompts", items: safe(() => res?.promptTemplates() ?? []).map((p) => ({ short: `/${p.name}`, full: `/${p.name}`, scope: p.location })) },
    {
      title: "Extensions",
      items: safe(() => ext?.list() ?? [])
        .filter((e) => e.origin !== "inline" && !e.name.startsWith("<"))
        .map((e) => ({ short: fileLabel(e.name), full: e.name, scope: ORIGIN_SCOPE[e.origin] ?? e.origin })),
    },
  ];
  return sections.filter((s) => s.items.length);
}

/**
 * The sections as lines: "[Title]" then the items indented; `expanded` (Ctrl+O) shows full paths
 * grouped by scope (user, project, path, package).
 */
export function startupResourceLines(kernel: Kernel, style: { heading(s: string): string; item(s: string): string }, expanded = false): string[] {
  const out: string[] = [];
  for (const s of startupResources(kernel)) {
    if (out.length) out.push("");
    out.push(style.heading(`[${s.title}]`));
    if (!expanded) {
      for (const i of s.items) out.push(style.item(`  ${i.short}`));
      continue;
    }
    const scopes = [...new Set(s.items.map((i) => i.scope ?? ""))];
    for (const scope of scopes) {
      if (scope) out.push(style.item(`  ${scope}`));
      for (const i of s.items.filter((x) => (x.scope ?? "") === scope)) out.push(style.item(`${scope ? "    " : "  "}${i.full}`));
    }
  }
  return out;
}
