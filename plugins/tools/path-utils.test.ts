import { describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { assertLocalAccess, describeFsError, expandPath, readLocalFile, resolveReadPath, resolveToCwd, SYNC_IO_MAX_BYTES, writeLocalFile } from "./path-utils.js";

describe("path-utils", () => {
  it("expands ~ and strips a leading @", () => {
    expect(expandPath("~")).toBe(homedir());
    expect(expandPath("~/x/y")).toBe(join(homedir(), "x/y"));
    expect(expandPath("@src/a.ts")).toBe("src/a.ts");
    expect(expandPath("@~/notes")).toBe(join(homedir(), "notes"));
    expect(expandPath("a~b")).toBe("a~b");
  });

  it("resolves relative paths against cwd and keeps absolute ones", () => {
    expect(resolveToCwd("src/a.ts", "/proj")).toBe("/proj/src/a.ts");
    expect(resolveToCwd("@src/../b.ts", "/proj")).toBe("/proj/b.ts");
    expect(resolveToCwd("/etc/hosts", "/proj")).toBe("/etc/hosts");
    expect(resolveToCwd("~/f", "/proj")).toBe(join(homedir(), "f"));
  });

  it("rejects a path with a NUL character", () => {
    expect(() => resolveToCwd("a\0b", "/proj")).toThrow(/NUL/);
  });

  it("finds a file whose name uses a narrow no-break space before PM", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-paths-"));
    try {
      const real = join(dir, "Shot 1.02.03\u202FPM.png");
      writeFileSync(real, "x");
      expect(resolveReadPath("Shot 1.02.03 PM.png", dir)).toBe(real);
      expect(resolveReadPath("missing.txt", dir)).toBe(join(dir, "missing.txt"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("describes file-system errors by code", () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(describeFsError(err("ENOENT"), "a.txt")).toBe("File not found: a.txt");
    expect(describeFsError(err("EACCES"), "a.txt")).toBe("Permission denied: a.txt");
    expect(describeFsError(err("EISDIR"), "d")).toMatch(/is a directory/);
    expect(describeFsError(err("ELOOP"), "l")).toMatch(/symbolic links/);
  });

  it("reads and writes small and big files alike, and fails with the file-system error's code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-paths-"));
    try {
      const small = join(dir, "small.txt");
      const big = join(dir, "big.txt");
      const bigText = "é".repeat(SYNC_IO_MAX_BYTES); // 2 bytes each: over the synchronous limit
      await writeLocalFile(small, "hello\n");
      await writeLocalFile(big, bigText);
      expect((await readLocalFile(small)).toString("utf8")).toBe("hello\n");
      expect((await readLocalFile(big)).toString("utf8")).toBe(bigText);
      await expect(readLocalFile(join(dir, "missing.txt"))).rejects.toMatchObject({ code: "ENOENT" });
      await expect(readLocalFile(dir)).rejects.toMatchObject({ code: "EISDIR" });
      await expect(assertLocalAccess(join(dir, "missing.txt"), 4)).rejects.toMatchObject({ code: "ENOENT" });
      await expect(assertLocalAccess(small, 4)).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
