/**
 * Whether an installed package fits this host. A package declares what it needs in its
 * package.json:
 *
 *   "pi": { "kernel": "^1.0.0" }     the kernel API range (checked against KERNEL_API_VERSION)
 *   "engines": { "pi": ">=0.1.0" }   the app version range (the key is the app's name)
 *
 * Neither is required. A range that is not valid semver is refused too (a typo must not load
 * code that was never meant for this host).
 */
import semver from "semver";

export interface HostVersions {
  appName: string;
  appVersion: string;
  kernelApiVersion: string;
}

/** The reason the package is refused, or undefined when it fits. */
export function checkCompatibility(pkg: Record<string, unknown>, host: HostVersions): string | undefined {
  const id = `${typeof pkg.name === "string" ? pkg.name : "package"}${typeof pkg.version === "string" ? `@${pkg.version}` : ""}`;
  const pi = pkg.pi && typeof pkg.pi === "object" ? (pkg.pi as Record<string, unknown>) : undefined;
  const kernelRange = pi?.kernel;
  if (kernelRange !== undefined) {
    if (typeof kernelRange !== "string" || !semver.validRange(kernelRange)) return `${id} declares an invalid kernel range ${JSON.stringify(kernelRange)}`;
    if (!semver.satisfies(host.kernelApiVersion, kernelRange, { includePrerelease: true })) {
      return `${id} needs kernel API ${kernelRange}, but this ${host.appName} provides ${host.kernelApiVersion}`;
    }
  }
  const engines = pkg.engines && typeof pkg.engines === "object" ? (pkg.engines as Record<string, unknown>) : undefined;
  const appRange = engines?.[host.appName];
  if (appRange !== undefined) {
    if (typeof appRange !== "string" || !semver.validRange(appRange)) return `${id} declares an invalid engines.${host.appName} range ${JSON.stringify(appRange)}`;
    if (!semver.satisfies(host.appVersion, appRange, { includePrerelease: true })) {
      return `${id} needs ${host.appName} ${appRange}, but this is ${host.appName} ${host.appVersion}`;
    }
  }
  return undefined;
}
