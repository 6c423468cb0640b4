import { describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withFileMutationQueue } from "./file-mutation-queue.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("withFileMutationQueue", () => {
  it("runs operations on one file one after the other, in order", async () => {
    const log: string[] = [];
    const op = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([
      withFileMutationQueue("/tmp/pi-q/a.txt", op("1")),
      withFileMutationQueue("/tmp/pi-q/./a.txt", op("2")),
      withFileMutationQueue("/tmp/pi-q/a.txt", op("3")),
    ]);
    expect(results).toEqual(["1", "2", "3"]);
    expect(log).toEqual(["1 start", "1 end", "2 start", "2 end", "3 start", "3 end"]);
  });

  it("lets different files proceed concurrently", async () => {
    const log: string[] = [];
    const op = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
    };
    await Promise.all([withFileMutationQueue("/tmp/pi-q/x", op("x")), withFileMutationQueue("/tmp/pi-q/y", op("y"))]);
    expect(log.slice(0, 2).sort()).toEqual(["x start", "y start"]);
  });

  it("treats a symlink and its target as the same file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-q-"));
    try {
      writeFileSync(join(dir, "real.txt"), "");
      symlinkSync(join(dir, "real.txt"), join(dir, "link.txt"));
      const log: string[] = [];
      const op = (name: string) => async () => {
        log.push(`${name} start`);
        await tick();
        log.push(`${name} end`);
      };
      await Promise.all([withFileMutationQueue(join(dir, "real.txt"), op("r")), withFileMutationQueue(join(dir, "link.txt"), op("l"))]);
      expect(log).toEqual(["r start", "r end", "l start", "l end"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps going after a failing operation", async () => {
    const failing = withFileMutationQueue("/tmp/pi-q/f", async () => {
      throw new Error("boom");
    });
    const next = withFileMutationQueue("/tmp/pi-q/f", async () => "after");
    await expect(failing).rejects.toThrow("boom");
    await expect(next).resolves.toBe("after");
  });
});
