/**
 * pi 1.6's project_trust event. At start-up, when the project carries trust-gated configuration
 * (settings or resources in its `.pi` folder, or `.agents/skills` in it or a parent folder) and the command line did not decide (-a / -na / --trust),
 * the extensions that do not come with the project (-e, the user's folder, the global
 * `extensions` setting) load first; the hook asks them, and the first "yes" or "no" decides for
 * this process (`remember: true` saves it in the trust store) before any project code loads.
 * "undecided" (or no answer) leaves the decision to the trust plugin (trust store,
 * trustedProjects, defaultProjectTrust, the TUI's prompt).
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Kernel } from "../../core/kernel/index.js";

const CLI_WORDS = new Set(["--trust", "--approve", "-a", "--no-approve", "-na"]);

/** Whether the event is asked at this start-up. */
export function projectTrustPending(kernel: Kernel): boolean {
  const trust = kernel.service("project-trust");
  if (!trust || !kernel.hooks.project_trust) return false;
  const argv = kernel.service("argv") as { flags?: Record<string, unknown>; unknown?: string[] } | undefined;
  const flags = argv?.flags ?? {};
  if (flags["no-extensions"] === true) return false;
  if (flags.trust === true || flags.approve === true || flags["no-approve"] === true || flags.na === true) return false;
  if (argv?.unknown?.some((w) => CLI_WORDS.has(w))) return false;
  return hasTrustGatedConfig(kernel.cwd, kernel.app.configDir);
}

/** What pi 1.6 asks about: a project config folder holding settings or resources, or `.agents/skills` here or in a parent folder (not the user's own). */
const GATED_ENTRIES = ["settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"];
export function hasTrustGatedConfig(cwd: string, configDir: string): boolean {
  if (GATED_ENTRIES.some((e) => existsSync(join(cwd, configDir, e)))) return true;
  const userSkills = join(resolve(process.env.HOME || homedir()), ".agents", "skills");
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const skills = join(dir, ".agents", "skills");
    if (skills !== userSkills && existsSync(skills)) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** Ask the project_trust handlers; applies and returns their decision ("undecided" when none decided). */
export async function askProjectTrust(kernel: Kernel): Promise<"yes" | "no" | "undecided"> {
  const trust = kernel.service("project-trust");
  if (!trust || !kernel.hooks.project_trust.taps.length) return "undecided";
  const r = await kernel.hooks.project_trust.promise({ type: "project_trust", cwd: kernel.cwd });
  if (!r) return "undecided";
  if (r.trusted === "yes") trust.trust(kernel.cwd, { persist: r.remember === true });
  else if (r.trusted === "no") {
    if (typeof trust.decline === "function") trust.decline(kernel.cwd, { persist: r.remember === true });
  }
  return r.trusted;
}

/** The run's mode as the command line names it (`--mode rpc|json`, `-p`), for events fired before the mode is chosen. */
export function modeFromFlags(kernel: Kernel): string | undefined {
  const flags = (kernel.service("argv") as { flags?: Record<string, unknown> } | undefined)?.flags ?? {};
  if (typeof flags.mode === "string" && flags.mode) return flags.mode;
  if (flags.print === true) return "print";
  return undefined;
}
