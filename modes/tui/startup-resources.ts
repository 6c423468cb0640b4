/**
 * The start-up list of what was loaded, under the header as pi 1.6 shows it: context files,
 * skills, prompt templates and extensions, each section a heading and one short name per line
 * (file names, `/template` names). Hidden when quietStartup is true or "header".
 */
import { basename, dirname } from "node:path";
import type { Kernel } from "../../core/kernel.js";

interface ResourcesView {
  skills(): Array<{ name: string }>;
  promptTemplates(): Array<{ name: string }>;
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

/** The sections to show (empty ones left out), or none when start-up is quiet. */
export function startupResources(kernel: Kernel): Array<{ title: string; items: string[] }> {
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
  const sections = [
    { title: "Context", items: safe(() => res?.contextFiles() ?? []).map((f) => basename(f.path)) },
    { title: "Skills", items: safe(() => res?.skills() ?? []).map((s) => s.name) },
    { title: "Prompts", items: safe(() => res?.promptTemplates() ?? []).map((p) => `/${p.name}`) },
    { title: "Extensions", items: safe(() => ext?.list() ?? []).filter((e) => e.origin !== "inline" && !e.name.startsWith("<")).map((e) => fileLabel(e.name)) },
  ];
  return sections.filter((s) => s.items.length);
}

/** The sections as lines: "[Title]" then the items indented. */
export function startupResourceLines(kernel: Kernel, style: { heading(s: string): string; item(s: string): string }): string[] {
  const out: string[] = [];
  for (const s of startupResources(kernel)) {
    if (out.length) out.push("");
    out.push(style.heading(`[${s.title}]`));
    for (const i of s.items) out.push(style.item(`  ${i}`));
  }
  return out;
}
