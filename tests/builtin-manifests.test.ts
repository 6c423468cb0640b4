/**
 * Start-up checks the manifests of this build's plugins without parsing their versions and kernel
 * ranges (semver is loaded only for other manifests: core/kernel/plugin.ts markVerifiedManifests); this
 * is where those versions are checked.
 */
import { describe, it, expect } from "@jest/globals";
import { checkManifest, isVerifiedManifest } from "../core/kernel/plugin.js";
import { builtinPlugins } from "../sdk/builtins.js";

describe("built-in plugin manifests", () => {
  it("every one is verified and passes the full check, semver included", () => {
    const all = builtinPlugins();
    expect(all.length).toBeGreaterThan(10);
    for (const m of all) {
      expect(isVerifiedManifest(m)).toBe(true);
      // a copy is not verified: checked in full, as a user's plugin is
      const copy = { ...m };
      expect(isVerifiedManifest(copy)).toBe(false);
      expect([m.name, checkManifest(copy)]).toEqual([m.name, undefined]);
    }
  });

  it("a verified manifest is still checked for its shape; any other one in full", () => {
    const m = builtinPlugins()[0]!;
    const bad = { ...m, kernel: "^9.0.0" };
    expect(checkManifest(bad)).toMatch(/needs kernel API \^9\.0\.0/);
    expect(checkManifest(m, "9.0.0")).toMatch(/needs kernel API/); // another API version: semver decides
    expect(checkManifest({ ...m, setup: 1 })).toMatch(/no setup/);
  });
});
