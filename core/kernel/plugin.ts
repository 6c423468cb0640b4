/**
 * The plugin contract: `definePlugin({ name, version, kernel, dependsOn?, setup })`.
 *
 * `teardown` (optional) runs at kernel disposal; `api.onClose(fn)` registers more such steps.
 *
 * `kernel` is a semver range checked against KERNEL_API_VERSION; a manifest that does not
 * fit is refused with one diagnostic naming the plugin and the reason.
 */
import { createRequire } from "node:module";
import type { PluginApi } from "./kernel.js";
import type { ServiceName } from "./services.js";
import { KERNEL_API_VERSION } from "./api-version.js";

export { KERNEL_API_VERSION };

export interface PluginManifest {
  name: string;
  version: string;
  /** Semver range of the kernel API this plugin works with, e.g. "^1.0.0". */
  kernel: string;
  description?: string;
  dependsOn?: string[];
  /**
   * Kernel services this plugin cannot work without (keys of KernelServices). Checked at
   * registration like dependsOn: the plugin is set up once another plugin (or the CLI) has
   * provided them; when none does, it is refused with a message naming the service.
   */
  requires?: ServiceName[];
  /** Register only: tap hooks, add tools, flags, commands. Actions that need a session throw until bound. */
  setup(api: PluginApi): void | Promise<void>;
  /**
   * Release what setup acquired (connections, child processes, timers). Runs once when the kernel
   * is disposed, after the plugins set up later than this one; a failure is reported with its name.
   */
  teardown?(api: PluginApi): void | Promise<void>;
}

export function definePlugin<T extends PluginManifest>(manifest: T): T {
  return manifest;
}

const NAME_RE = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

type Semver = typeof import("semver");
let semver: Semver | undefined;

/**
 * Load semver for checkManifest (PluginHost does before it checks a manifest that is not
 * verified). Not at start-up: the manifests of this build's own plugins are verified (see
 * markVerifiedManifests), and semver is ~70 KB of code compiled at every start (~5 ms on Node 20,
 * which has no compile cache).
 */
export async function loadSemver(): Promise<void> {
  semver ??= ((await import("semver")) as { default: Semver }).default;
}

const verified = new WeakSet<object>();

/**
 * The plugins of this build (sdk/builtins.ts): their versions and kernel ranges are constants
 * the tests check with semver (tests/builtin-manifests.test.ts), so checkManifest does not parse
 * them again at every start. Any other manifest (a user's, an SDK host's own) is checked in full.
 */
export function markVerifiedManifests(manifests: readonly object[]): void {
  for (const m of manifests) verified.add(m);
}

/** Whether checkManifest can check `m` without semver. */
export function isVerifiedManifest(m: unknown): boolean {
  return typeof m === "object" && m !== null && verified.has(m);
}

/** Returns the reason the manifest is refused, or undefined when it is acceptable. */
export function checkManifest(m: unknown, apiVersion = KERNEL_API_VERSION): string | undefined {
  if (!m || typeof m !== "object") return "the module does not export a plugin manifest (use definePlugin({...}) as the default export)";
  const p = m as Partial<PluginManifest>;
  if (typeof p.name !== "string" || !p.name) return "manifest has no name";
  if (!NAME_RE.test(p.name)) return `manifest name "${p.name}" is not kebab-case`;
  if (!verified.has(m) || apiVersion !== KERNEL_API_VERSION) {
    const sv = (semver ??= createRequire(import.meta.url)("semver") as Semver);
    if (typeof p.version !== "string" || !sv.valid(p.version)) return `manifest version ${JSON.stringify(p.version)} is not a semver version`;
    if (typeof p.kernel !== "string" || !sv.validRange(p.kernel)) return `manifest kernel range ${JSON.stringify(p.kernel)} is not a semver range`;
    if (!sv.satisfies(apiVersion, p.kernel)) return `it needs kernel API ${p.kernel}, but this kernel provides ${apiVersion}`;
  }
  if (typeof p.setup !== "function") return "manifest has no setup() function";
  if (p.teardown !== undefined && typeof p.teardown !== "function") return "manifest teardown must be a function";
  if (p.dependsOn !== undefined && (!Array.isArray(p.dependsOn) || p.dependsOn.some((d) => typeof d !== "string")))
    return "manifest dependsOn must be an array of plugin names";
  if (p.requires !== undefined && (!Array.isArray(p.requires) || p.requires.some((d) => typeof d !== "string")))
    return "manifest requires must be an array of service names";
  return undefined;
}
