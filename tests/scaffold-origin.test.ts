/**
 * How a scaffold depends on pi-kernel: by its path only for a local checkout; by a version range
 * when pi-kernel is installed (from a registry, or from a packed tarball, which npm's hidden lock
 * file names so the scaffold's "Next:" can install the same one).
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostOrigin } from "../plugins/scaffolds/index.js";

const root = mkdtempSync(join(tmpdir(), "pi-origin-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("hostOrigin", () => {
  it("a checkout: a file: path", () => {
    const checkout = join(root, "src", "pi-kernel");
    mkdirSync(checkout, { recursive: true });
    expect(hostOrigin(checkout, "0.3.0")).toEqual({ kind: "checkout", spec: `file:${checkout}` });
  });

  it("installed from a registry: a range", () => {
    const installed = join(root, "reg", "lib", "node_modules", "pi-kernel");
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(root, "reg", "lib", "node_modules", ".package-lock.json"), JSON.stringify({ packages: { "node_modules/pi-kernel": { version: "0.3.0", resolved: "https://registry.npmjs.org/pi-kernel/-/pi-kernel-0.3.0.tgz" } } }));
    expect(hostOrigin(installed, "0.3.0")).toEqual({ kind: "installed", spec: "^0.3.0" });
  });

  it("installed from a tarball: a range, and the tarball while it exists; a scoped install too", () => {
    const lib = join(root, "tgz", "lib");
    const installed = join(lib, "node_modules", "@team", "pi-kernel");
    mkdirSync(installed, { recursive: true });
    const tarball = join(root, "pi-kernel-0.3.0.tgz");
    writeFileSync(join(lib, "node_modules", ".package-lock.json"), JSON.stringify({ packages: { "node_modules/@team/pi-kernel": { resolved: `file:../../pi-kernel-0.3.0.tgz` } } }));
    expect(hostOrigin(installed, "0.3.0")).toEqual({ kind: "installed", spec: "^0.3.0" });
    writeFileSync(tarball, "");
    expect(hostOrigin(installed, "0.3.0")).toEqual({ kind: "installed", spec: "^0.3.0", tarball });
  });
});
