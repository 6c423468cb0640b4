/**
 * pi 1.6's project_trust event. At start-up, when the project carries trust-gated configuration
 * (its `.pi` folder or `.agents/skills`) and the command line did not decide (-a / -na / --trust),
 * the extensions that do not come with the project (-e, the user's folder, the global
 * `extensions` setting) load first; the hook asks them, and the first "yes" or "no" decides for
 * this process (`remember: true` saves it in the trust store) before any project code loads.
 * "undecided" (or no answer) leaves the decision to the trust plugin (trust store,
 * trustedProjects, defaultProjectTrust, the TUI's prompt).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Kernel } from "../../core/kernel.js";

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
  return existsSync(join(kernel.cwd, kernel.app.configDir)) || existsSync(join(kernel.cwd, ".agents", "skills"));
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
