import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileGuardActive, guardedMkdir, guardedWriteFile, installFileGuard, runUnguarded, type FileWriteGuard } from "./file-guard.js";

let root: string;
let inside: string;
let outside: string;
let remove: (() => void) | undefined;

const isInside = (p: string, r: string) => p === r || p.startsWith(r + "/");

function guard(over: Partial<FileWriteGuard> = {}): void {
  remove = installFileGuard({
    source: "test",
    active: () => true,
    resolve: (abs) => abs,
    refuse: (real) => (isInside(real, inside) ? undefined : `${real} is outside ${inside}`),
    ...over,
  });
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "pi-file-guard-")));
  inside = join(root, "inside");
  outside = join(root, "outside");
  mkdirSync(inside);
  mkdirSync(outside);
});
afterEach(() => {
  remove?.();
  remove = undefined;
  rmSync(root, { recursive: true, force: true });
});

describe("file guard", () => {
  it("without an active guard, the callers write as usual", () => {
    expect(fileGuardActive()).toBe(false);
    expect(guardedWriteFile(join(outside, "a"), "x")).toBe(false);
    guard({ active: () => false });
    expect(fileGuardActive()).toBe(false);
    expect(guardedMkdir(join(outside, "d"))).toBe(false);
  });

  it("writes inside, replacing the content; refuses outside before opening", () => {
    guard();
    writeFileSync(join(inside, "f"), "a long old content");
    expect(guardedWriteFile(join(inside, "f"), "new")).toBe(true);
    expect(readFileSync(join(inside, "f"), "utf8")).toBe("new");
    expect(() => guardedWriteFile(join(outside, "g"), "x")).toThrow(/\[test\] .* is outside/);
    expect(existsSync(join(outside, "g"))).toBe(false);
    expect(() => guardedMkdir(join(outside, "d"))).toThrow(/outside/);
    expect(existsSync(join(outside, "d"))).toBe(false);
  });

  it("does not follow a link in the last part (a file swapped for a link after the check)", () => {
    guard();
    writeFileSync(join(outside, "victim"), "ORIGINAL");
    symlinkSync(join(outside, "victim"), join(inside, "link"));
    expect(() => guardedWriteFile(join(inside, "link"), "ESCAPED")).toThrow();
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("ORIGINAL");
  });

  it("checks where the open file really is (a folder swapped for a link after the check), and removes what it created there", () => {
    // The resolver saw `inside/dir` as a folder; by the time of the open it leads outside.
    symlinkSync(outside, join(inside, "dir"));
    guard();
    expect(() => guardedWriteFile(join(inside, "dir", "new"), "ESCAPED")).toThrow(/changed while it was written/);
    expect(existsSync(join(outside, "new"))).toBe(false);
    writeFileSync(join(outside, "old"), "ORIGINAL");
    expect(() => guardedWriteFile(join(inside, "dir", "old"), "ESCAPED")).toThrow(/changed while it was written/);
    expect(readFileSync(join(outside, "old"), "utf8")).toBe("ORIGINAL");
  });

  it("runUnguarded skips the guard (a write a person allowed)", () => {
    guard();
    expect(runUnguarded(() => guardedWriteFile(join(outside, "h"), "x"))).toBe(false);
    expect(runUnguarded(() => fileGuardActive())).toBe(false);
    expect(fileGuardActive()).toBe(true);
  });
});
