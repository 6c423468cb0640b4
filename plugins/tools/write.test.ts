import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWriteTool, type WriteOperations } from "./write.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-write-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const write = (params: Record<string, unknown>) => createWriteTool(dir).execute("id", params as any, undefined, undefined, undefined);
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? "").join("");

describe("write", () => {
  it("creates missing parent folders and reports the bytes written", async () => {
    const r = await write({ path: "deep/er/file.txt", content: "héllo" });
    expect(readFileSync(join(dir, "deep/er/file.txt"), "utf8")).toBe("héllo");
    expect(text(r)).toBe("Wrote 6 bytes to deep/er/file.txt");
  });

  it("overwrites an existing file and accepts an @ prefix", async () => {
    writeFileSync(join(dir, "f.txt"), "old content that is longer");
    await write({ path: "@f.txt", content: "new" });
    expect(readFileSync(join(dir, "f.txt"), "utf8")).toBe("new");
  });

  it("writes an empty file", async () => {
    expect(text(await write({ path: "empty", content: "" }))).toBe("Wrote 0 bytes to empty");
    expect(readFileSync(join(dir, "empty"), "utf8")).toBe("");
  });

  it("reports a folder in the way, a file in the way and missing content", async () => {
    mkdirSync(join(dir, "taken"));
    await expect(write({ path: "taken", content: "x" })).rejects.toThrow(/Could not write taken: taken is a directory/);
    writeFileSync(join(dir, "plain"), "x");
    await expect(write({ path: "plain/child.txt", content: "x" })).rejects.toThrow(/Could not create the folder for plain\/child\.txt/);
    await expect(write({ path: "x.txt" })).rejects.toThrow(/needs content/);
    await expect(write({ content: "x" })).rejects.toThrow(/needs a path/);
  });

  it("refuses to write into a FIFO (it would block)", async () => {
    execFileSync("mkfifo", [join(dir, "pipe")]);
    await expect(write({ path: "pipe", content: "x" })).rejects.toThrow(/Could not write pipe: pipe is not a regular file/);
  });

  it("writes through custom operations", async () => {
    const made: string[] = [];
    const files = new Map<string, string>();
    const ops: WriteOperations = {
      mkdir: async (d) => void made.push(d),
      writeFile: async (p, c) => void files.set(p, c),
    };
    const tool = createWriteTool("/box/work", { operations: ops });
    await tool.execute("id", { path: "a/b.txt", content: "remote" }, undefined, undefined, undefined);
    expect(made).toEqual(["/box/work/a"]);
    expect(files.get("/box/work/a/b.txt")).toBe("remote");
  });
});
