/**
 * The e2e environment's cleanup ends what still works in its folder (a killed CLI's children,
 * such as a checkpoint capture's git) before removing it, and leaves other processes alone.
 */
import { describe, it, expect } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeE2eEnv } from "./helpers/e2e.js";

const exited = (child: ReturnType<typeof spawn>) => new Promise<void>((res) => (child.exitCode !== null || child.signalCode !== null ? res() : child.once("exit", () => res())));

describe("makeE2eEnv cleanup", () => {
  it("ends a process working in the folder, keeps one working elsewhere, and removes the folder", async () => {
    const e = makeE2eEnv("http://127.0.0.1:9");
    const elsewhere = mkdtempSync(join(tmpdir(), "pi-cleanup-other-"));
    const inside = spawn("sleep", ["60"], { cwd: e.cwd, stdio: "ignore" });
    const outside = spawn("sleep", ["60"], { cwd: elsewhere, stdio: "ignore" });
    try {
      e.cleanup();
      await exited(inside);
      expect(inside.signalCode).toBe("SIGKILL");
      expect(existsSync(e.root)).toBe(false);
      expect(outside.exitCode).toBeNull();
      expect(outside.signalCode).toBeNull();
    } finally {
      outside.kill("SIGKILL");
      await exited(outside);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
