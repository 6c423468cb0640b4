import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearExecutableCache, fdPath, helpText } from "./external-tools.js";
import { createFindTool, fdHonoursGitignore, insideGitRepository, localFind, type FindOperations } from "./find.js";
import type { SearchBackend } from "./grep.js";

/** Every engine available here: the in-process walker, and fd when installed. */
const engines: Array<{ name: string; backend: SearchBackend }> = [
  { name: "in-process", backend: "builtin" },
  ...(fdPath() ? [{ name: "fd", backend: "external" as SearchBackend }] : []),
];

let root: string;
const put = (rel: string, content = "") => {
  mkdirSync(join(root, rel, ".."), { recursive: true });
  writeFileSync(join(root, rel), content);
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "pi-find-"));
  put("README.MD");
  put("notes.md");
  put("src/b.ts");
  put("src/deep/c.ts");
  put("src/deep/c.test.ts");
  put(".hidden/h.ts");
  put(".gitignore", "build/\n*.gen.ts\n");
  put("build/out.ts");
  put("src/x.gen.ts");
  put(".git/HEAD.ts");
  symlinkSync(join(root, "src", "b.ts"), join(root, "link.ts"));
  symlinkSync(join(root, "loop2"), join(root, "loop1"));
  symlinkSync(join(root, "loop1"), join(root, "loop2"));
  symlinkSync(root, join(root, "src", "up"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? "").join("");
const paths = (out: string) => out.split("\n\n[")[0]!.split("\n").filter(Boolean).sort();

describe.each(engines)("find with $name", ({ backend }) => {
  const find = (params: Record<string, unknown>, signal?: AbortSignal) =>
    createFindTool(root, { backend }).execute("id", params as any, signal, undefined, undefined);

  it("matches names at any depth, includes hidden files and symlinks, honours .gitignore, skips .git", async () => {
    expect(paths(text(await find({ pattern: "*.ts" })))).toEqual([".hidden/h.ts", "link.ts", "src/b.ts", "src/deep/c.test.ts", "src/deep/c.ts"]);
  });

  it("lists folders with a trailing slash", async () => {
    expect(paths(text(await find({ pattern: "deep" })))).toEqual(["src/deep/"]);
  });

  it("matches whole paths when the pattern has a slash", async () => {
    expect(paths(text(await find({ pattern: "src/**/*.test.ts" })))).toEqual(["src/deep/c.test.ts"]);
    expect(paths(text(await find({ pattern: "deep/*.ts" })))).toEqual(["src/deep/c.test.ts", "src/deep/c.ts"]);
  });

  it("is case-insensitive for an all-lowercase pattern only", async () => {
    expect(paths(text(await find({ pattern: "*.md" })))).toEqual(["README.MD", "notes.md"]);
    expect(paths(text(await find({ pattern: "*.MD" })))).toEqual(["README.MD"]);
  });

  it("searches below a given path, relative to it", async () => {
    expect(paths(text(await find({ pattern: "*.ts", path: "src/deep" })))).toEqual(["c.test.ts", "c.ts"]);
  });

  it("stops at the limit and says so", async () => {
    const r = await find({ pattern: "*.ts", limit: 2 });
    const out = text(r);
    expect(paths(out)).toHaveLength(2);
    expect(out).toContain("\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]");
    expect(r.details?.resultLimitReached).toBe(2);
  });

  it("says when nothing matches, and reports a bad path", async () => {
    expect(text(await find({ pattern: "*.nothing" }))).toBe("No files found matching pattern");
    await expect(find({ pattern: "*", path: "missing" })).rejects.toThrow(`Path not found: ${join(root, "missing")}`);
    await expect(find({ pattern: "*", path: "notes.md" })).rejects.toThrow(`Not a directory: ${join(root, "notes.md")}`);
    await expect(find({ pattern: "*", path: "loop1" })).rejects.toThrow(/symbolic links/);
    await expect(find({ pattern: "" })).rejects.toThrow(/needs a pattern/);
  });

  it("stops when aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(find({ pattern: "*" }, ac.signal)).rejects.toThrow("Operation aborted");
  });
});

describe("find operations", () => {
  it("uses a custom glob (e.g. on a remote machine) and relativises its paths", async () => {
    const seen: unknown[] = [];
    const ops: FindOperations = {
      exists: () => true,
      glob: (pattern, cwd, options) => {
        seen.push({ pattern, cwd, options });
        return ["/remote/p/a.ts", "/remote/p/sub/b.ts"];
      },
    };
    const r = await createFindTool("/remote/p", { operations: ops }).execute("id", { pattern: "*.ts", limit: 5 }, undefined, undefined, undefined);
    expect(text(r)).toBe("a.ts\nsub/b.ts");
    expect(seen).toEqual([{ pattern: "*.ts", cwd: "/remote/p", options: { ignore: ["**/node_modules/**", "**/.git/**"], limit: 5, signal: undefined } }]);
  });
});

describe("outside a git repository: the same results with fd (old or current) and without it", () => {
  let plain: string;
  let fakeBin: string;
  const savedPath = process.env.PATH;
  beforeAll(() => {
    plain = mkdtempSync(join(tmpdir(), "pi-find-nogit-"));
    for (const [rel, content] of [[".gitignore", "ignored/\n*.log\n"], ["src/a.ts", ""], ["ignored/secret.ts", ""], ["debug.log", ""], ["src/keep.txt", ""]]) {
      mkdirSync(join(plain, rel!, ".."), { recursive: true });
      writeFileSync(join(plain, rel!), content!);
    }
    // A stand-in for a current fd: only its --help is read (whether it has --no-require-git).
    fakeBin = mkdtempSync(join(tmpdir(), "pi-find-fakefd-"));
    writeFileSync(join(fakeBin, "fd"), '#!/bin/sh\necho "    --no-require-git   Do not require a git repository to respect gitignores"\n', { mode: 0o755 });
  });
  afterAll(() => {
    process.env.PATH = savedPath;
    clearExecutableCache();
    rmSync(plain, { recursive: true, force: true });
    rmSync(fakeBin, { recursive: true, force: true });
  });
  const expected = [".gitignore", "src/", "src/a.ts", "src/keep.txt"];
  const run = (backend: SearchBackend) => localFind("*", plain, { ignore: ["**/.git/**"], limit: 100 }, backend).then((r) => r.sort());

  it("the in-process walker, and the default engine with whatever fd this machine has", async () => {
    expect(insideGitRepository(plain)).toBe(false);
    expect(await run("builtin")).toEqual(expected);
    expect(await run("auto")).toEqual(expected);
  });

  it("fd is used only when it honours .gitignore here; an fd without --no-require-git is not", async () => {
    const fd = fdPath();
    if (fd) {
      const current = helpText(fd).includes("--no-require-git");
      expect(fdHonoursGitignore(fd, plain)).toBe(current);
      if (current) expect(await run("external")).toEqual(expected);
      else await expect(run("external")).rejects.toThrow(/no --no-require-git .*outside a git repository/);
      // Inside a git repository even an old fd reads .gitignore.
      expect(fdHonoursGitignore(fd, root)).toBe(true);
    }
    // A current fd (its --help lists --no-require-git) is trusted anywhere.
    expect(fdHonoursGitignore(join(fakeBin, "fd"), plain)).toBe(true);
  });

  it("no fd on PATH: the default engine is the in-process walker; external says fd is missing", async () => {
    process.env.PATH = join(plain, "no-such-bin");
    clearExecutableCache();
    try {
      expect(fdPath()).toBeUndefined();
      expect(await run("auto")).toEqual(expected);
      await expect(run("external")).rejects.toThrow("fd is not on PATH");
    } finally {
      process.env.PATH = savedPath;
      clearExecutableCache();
    }
  });
});
