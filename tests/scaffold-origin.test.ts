/**
 * How a scaffold depends on pi-kernel: by its path only for a local checkout; by a version range
 * when pi-kernel is installed (from a registry, or from a packed tarball).
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
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

  it("installed (from a registry or a tarball, scoped or not): a range", () => {
    for (const installed of [join(root, "reg", "lib", "node_modules", "pi-kernel"), join(root, "tgz", "node_modules", "@team", "pi-kernel")]) {
      mkdirSync(installed, { recursive: true });
      expect(hostOrigin(installed, "0.3.0")).toEqual({ kind: "installed", spec: "^0.3.0" });
    }
  });
});
