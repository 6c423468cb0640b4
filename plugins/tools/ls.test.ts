import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLsTool, type LsOperations } from "./ls.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-ls-"));
});
afterEach(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

const ls = (params: Record<string, unknown> = {}) => createLsTool(dir).execute("id", params as any, undefined, undefined, undefined);
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? "").join("");

describe("ls", () => {
  it("lists entries alphabetically (ignoring case), folders with /, dotfiles included", async () => {
    for (const f of ["b.txt", "A.txt", ".env", "c.md"]) writeFileSync(join(dir, f), "");
    mkdirSync(join(dir, "Src"));
    mkdirSync(join(dir, ".git"));
    const r = await ls();
    expect(text(r)).toBe([".env", ".git/", "A.txt", "b.txt", "c.md", "Src/"].join("\n"));
    expect(r.details).toBeUndefined();
  });

  it("stops at the limit and says so", async () => {
    for (const f of ["a", "b", "c", "d"]) writeFileSync(join(dir, f), "");
    const r = await ls({ limit: 2 });
    expect(text(r)).toBe("a\nb\n\n[2 entries limit reached. Use limit=4 for more]");
    expect(r.details?.entryLimitReached).toBe(2);
  });

  it("lists a sub-folder given with @, and says when a folder is empty", async () => {
    mkdirSync(join(dir, "sub"));
    mkdirSync(join(dir, "sub", "inner"));
    expect(text(await ls({ path: "@sub" }))).toBe("inner/");
    expect(text(await ls({ path: "sub/inner" }))).toBe("(empty directory)");
  });

  it("lists broken and looping symlinks without failing", async () => {
    symlinkSync(join(dir, "nowhere"), join(dir, "dangling"));
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    mkdirSync(join(dir, "real"));
    symlinkSync(join(dir, "real"), join(dir, "to-real"));
    expect(text(await ls())).toBe("dangling\nloop-a\nloop-b\nreal/\nto-real/");
  });

  it("reports a missing path, a file, a symlink loop and a folder it may not read", async () => {
    await expect(ls({ path: "missing" })).rejects.toThrow(`Path not found: ${join(dir, "missing")}`);
    writeFileSync(join(dir, "f.txt"), "");
    await expect(ls({ path: "f.txt" })).rejects.toThrow(`Not a directory: ${join(dir, "f.txt")}`);
    symlinkSync(join(dir, "l2"), join(dir, "l1"));
    symlinkSync(join(dir, "l1"), join(dir, "l2"));
    await expect(ls({ path: "l1" })).rejects.toThrow(/symbolic links/);
    mkdirSync(join(dir, "locked"));
    writeFileSync(join(dir, "locked", "inside"), "");
    chmodSync(join(dir, "locked"), 0o000);
    try {
      if (process.getuid?.() === 0) expect(text(await ls({ path: "locked" }))).toBe("inside");
      else await expect(ls({ path: "locked" })).rejects.toThrow(/Cannot read directory .*Permission denied/);
    } finally {
      chmodSync(join(dir, "locked"), 0o755);
    }
  });

  it("rejects a limit that is not a number", async () => {
    await expect(ls({ limit: "ten" })).rejects.toThrow(/limit must be a number/);
  });

  it("lists through custom operations", async () => {
    const tree: Record<string, string[] | null> = { "/r": ["z", "dir"], "/r/z": null, "/r/dir": [] };
    const ops: LsOperations = {
      exists: (p) => p in tree,
      stat: (p) => {
        if (!(p in tree)) throw Object.assign(new Error("x"), { code: "ENOENT" });
        return { isDirectory: () => Array.isArray(tree[p]) };
      },
      readdir: (p) => tree[p] as string[],
    };
    expect(text(await createLsTool("/r", { operations: ops }).execute("id", {}, undefined, undefined, undefined))).toBe("dir/\nz");
  });
});
