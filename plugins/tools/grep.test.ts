import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ripgrepPath } from "./external-tools.js";
import { createGrepTool, type GrepOperations, type SearchBackend } from "./grep.js";
import { compilePattern, configureInProcessSearch, inProcessSearchStats, requiredLiteral, searchInProcess, searchText } from "./grep-search.js";

/** Every search engine: the in-process one (alone and with worker threads) and ripgrep (scripts/system-deps.sh installs it). */
interface Engine {
  name: string;
  backend: SearchBackend;
  workers: number;
}
const engines: Engine[] = [
  { name: "in-process", backend: "builtin", workers: 0 },
  { name: "in-process with worker threads", backend: "builtin", workers: 2 },
  { name: "ripgrep", backend: "external", workers: 0 },
];

it("has ripgrep to test the external engine with", () => {
  if (!ripgrepPath()) {
    throw new Error("this test needs `rg` (Debian package ripgrep), which is not installed: run `bash scripts/system-deps.sh` as root, or `sudo apt-get install -y ripgrep`");
  }
});

let root: string;
const put = (rel: string, content: string | Buffer) => {
  mkdirSync(join(root, rel, ".."), { recursive: true });
  writeFileSync(join(root, rel), content);
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "pi-grep-"));
  put("a.txt", "hello world\nfoo bar\nHello again\n");
  put("src/b.ts", "const hello = 1;\nexport { hello };\n");
  put("src/deep/c.ts", "// HELLO\n");
  put(".hidden/h.txt", "hello hidden\n");
  put(".gitignore", "ignored.txt\nbuild/\n");
  put("ignored.txt", "hello ignored\n");
  put("build/out.txt", "hello build\n");
  put(".git/config", "hello git\n");
  put("bin.dat", Buffer.from("hello\0binary"));
  put("long.txt", `hello ${"x".repeat(1000)}\n`);
  put("crlf.txt", "hello crlf\r\nline2\r\n");
  put("latin1.txt", Buffer.from("hello caf\xe9\n", "latin1"));
  put("sub/.gitignore", "*.log\n!keep.log\n");
  put("sub/keep.log", "hello keep\n");
  put("sub/other.log", "hello other\n");
  symlinkSync(join(root, "a.txt"), join(root, "link.txt"));
  symlinkSync(join(root, "loop2"), join(root, "loop1"));
  symlinkSync(join(root, "loop1"), join(root, "loop2"));
  symlinkSync(root, join(root, "sub", "back-to-root"));
});
afterAll(() => {
  configureInProcessSearch({ workers: undefined, inlineFiles: 1500, batchFiles: 128 });
  rmSync(root, { recursive: true, force: true });
});

const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? "").join("");
/** The "path:line" keys of the matches in grep output. */
const keys = (out: string) =>
  out
    .split("\n\n[")[0]!
    .split("\n")
    .map((l) => /^(.+?):(\d+): /.exec(l))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => `${m[1]}:${m[2]}`)
    .sort();

describe.each(engines)("grep with $name", (engine) => {
  beforeAll(() => configureInProcessSearch({ workers: engine.workers, inlineFiles: 0, batchFiles: 2 }));
  const grep = (params: Record<string, unknown>, cwd = root) =>
    createGrepTool(cwd, { backend: engine.backend }).execute("id", params as any, undefined, undefined, undefined);

  it("finds matches in hidden files, honours .gitignore (nested, with negation) and skips .git, binaries and symlinks", async () => {
    expect(keys(text(await grep({ pattern: "hello" })))).toEqual(
      [".hidden/h.txt:1", "a.txt:1", "crlf.txt:1", "latin1.txt:1", "long.txt:1", "src/b.ts:1", "src/b.ts:2", "sub/keep.log:1"].sort(),
    );
  });

  it("prints path:line: text, without carriage returns", async () => {
    const out = text(await grep({ pattern: "crlf" }));
    expect(out).toBe("crlf.txt:1: hello crlf");
  });

  it("ignores case on request", async () => {
    expect(keys(text(await grep({ pattern: "hello", ignoreCase: true, glob: "*.{txt,ts}" })))).toEqual(
      [".hidden/h.txt:1", "a.txt:1", "a.txt:3", "crlf.txt:1", "latin1.txt:1", "long.txt:1", "src/b.ts:1", "src/b.ts:2", "src/deep/c.ts:1"].sort(),
    );
  });

  it("searches literally on request, and by regular expression otherwise", async () => {
    expect(keys(text(await grep({ pattern: "{ hello }", literal: true })))).toEqual(["src/b.ts:2"]);
    expect(keys(text(await grep({ pattern: "^const hel+o\\s=" })))).toEqual(["src/b.ts:1"]);
  });

  it("filters files by glob, relative to the searched folder", async () => {
    expect(keys(text(await grep({ pattern: "hello", glob: "*.ts" })))).toEqual(["src/b.ts:1", "src/b.ts:2"]);
    expect(keys(text(await grep({ pattern: "hello", glob: "deep/*.ts", path: "src", ignoreCase: true })))).toEqual(["deep/c.ts:1"]);
    expect(keys(text(await grep({ pattern: "hello", glob: "!*.txt" })))).toEqual(["src/b.ts:1", "src/b.ts:2", "sub/keep.log:1"]);
    expect(keys(text(await grep({ pattern: "hello", glob: "!src/**" })))).toEqual(
      [".hidden/h.txt:1", "a.txt:1", "crlf.txt:1", "latin1.txt:1", "long.txt:1", "sub/keep.log:1"].sort(),
    );
    // a glob does not bring back ignored files
    expect(keys(text(await grep({ pattern: "hello", glob: "ignored.txt" })))).toEqual([]);
  });

  it("shows context lines around matches", async () => {
    expect(text(await grep({ pattern: "foo", context: 1 }))).toBe("a.txt-1- hello world\na.txt:2: foo bar\na.txt-3- Hello again");
  });

  it("stops at the limit and says so", async () => {
    const r = await grep({ pattern: "hello", limit: 2 });
    const out = text(r);
    expect(keys(out)).toHaveLength(2);
    expect(out).toContain("\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern");
    expect(r.details?.matchLimitReached).toBe(2);
  });

  it("cuts long lines", async () => {
    const r = await grep({ pattern: "hello x+" });
    const out = text(r);
    expect(out).toContain(`long.txt:1: hello ${"x".repeat(494)}... [truncated]`);
    expect(out).toContain("Some lines truncated to 500 chars");
    expect(r.details?.linesTruncated).toBe(true);
  });

  it("searches a single file, showing its name", async () => {
    expect(text(await grep({ pattern: "world", path: "a.txt" }))).toBe("a.txt:1: hello world");
    expect(text(await grep({ pattern: "world", path: "@a.txt" }))).toBe("a.txt:1: hello world");
  });

  it("says when nothing matches and when the path does not exist", async () => {
    expect(text(await grep({ pattern: "zzz-not-there" }))).toBe("No matches found");
    await expect(grep({ pattern: "x", path: "missing" })).rejects.toThrow(`Path not found: ${join(root, "missing")}`);
  });

  it("refuses a FIFO given as the path instead of blocking", async () => {
    const d = mkdtempSync(join(tmpdir(), "pi-grep-fifo-"));
    try {
      execFileSync("mkfifo", [join(d, "pipe")]);
      await expect(grep({ pattern: "x", path: "pipe" }, d)).rejects.toThrow(/pipe is not a regular file/);
      writeFileSync(join(d, "ok.txt"), "x marks\n");
      // inside a folder a FIFO is simply not searched
      expect(text(await grep({ pattern: "x" }, d))).toBe("ok.txt:1: x marks");
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it("reports an invalid regular expression", async () => {
    await expect(grep({ pattern: "foo(" })).rejects.toThrow(/regex|regular expression/i);
  });

  it("finds a match at the end of a 10 MB single-line file", async () => {
    const big = mkdtempSync(join(tmpdir(), "pi-grep-big-"));
    try {
      writeFileSync(join(big, "huge.txt"), `${"a".repeat(10 * 1024 * 1024)}NEEDLE\n`);
      const out = text(await grep({ pattern: "NEEDLE" }, big));
      expect(out.startsWith(`huge.txt:1: ${"a".repeat(500)}... [truncated]`)).toBe(true);
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  });

  it("skips or reports a file it may not read", async () => {
    const d = mkdtempSync(join(tmpdir(), "pi-grep-perm-"));
    try {
      writeFileSync(join(d, "open.txt"), "hello open\n");
      writeFileSync(join(d, "closed.txt"), "hello closed\n");
      chmodSync(join(d, "closed.txt"), 0o000);
      const out = text(await grep({ pattern: "hello" }, d));
      if (process.getuid?.() === 0) {
        expect(keys(out)).toEqual(["closed.txt:1", "open.txt:1"]);
      } else {
        expect(keys(out)).toEqual(["open.txt:1"]);
        expect(out).toMatch(/could not be (read|searched)/);
      }
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("grep engines", () => {
  it("the in-process search really uses worker threads for big trees, with the same results", async () => {
    const req = { pattern: "hello", searchPath: root, isDirectory: true, limit: 1000 };
    configureInProcessSearch({ workers: 0 });
    const alone = await searchInProcess(req);
    const before = inProcessSearchStats().workerBatchesAnswered;
    configureInProcessSearch({ workers: 2, inlineFiles: 0, batchFiles: 1 });
    const threaded = await searchInProcess(req);
    expect(inProcessSearchStats().workerBatchesAnswered).toBeGreaterThan(before);
    expect(threaded.matches).toEqual(alone.matches);
  });

  it("falls back to the in-process search for look-around, which ripgrep does not support", async () => {
    const out = text(await createGrepTool(root).execute("id", { pattern: "hello(?= world)" }, undefined, undefined, undefined));
    expect(keys(out)).toEqual(["a.txt:1"]);
  });

  it("runs a custom search operation (e.g. on a remote machine)", async () => {
    const ops: GrepOperations = {
      isDirectory: () => true,
      readFile: () => "l1\nneedle\nl3",
      search: async (req) => ({ matches: [{ filePath: `${req.searchPath}/r.txt`, lineNumber: 2, lineText: "needle" }], limitReached: false, notes: [] }),
    };
    const r = await createGrepTool("/remote", { operations: ops }).execute("id", { pattern: "needle", context: 1 }, undefined, undefined, undefined);
    expect(text(r)).toBe("r.txt-1- l1\nr.txt:2: needle\nr.txt-3- l3");
  });

  it("stops an aborted search", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(createGrepTool(root, { backend: "builtin" }).execute("id", { pattern: "x" }, ac.signal, undefined, undefined)).rejects.toThrow("Operation aborted");
  });
});

describe("the in-process matcher", () => {
  it("reports each matching line once, with its number", () => {
    const p = compilePattern("o", {});
    const found: string[] = [];
    searchText("foo\nbar\nboo\n", p.regex, p.lineRegex, 1, (n, t) => (found.push(`${n}:${t}`), true));
    expect(found).toEqual(["1:foo", "3:boo"]);
  });

  it("does not report matches that span lines, but does report the line that matches alone", () => {
    const p = compilePattern("a\\s+b", {});
    const found: number[] = [];
    searchText("a\nb\na b\n", p.regex, p.lineRegex, 1, (n) => (found.push(n), true));
    expect(found).toEqual([3]);
  });

  it("handles empty matches and anchors without looping", () => {
    const p = compilePattern("^", {});
    const found: number[] = [];
    searchText("x\ny\n", p.regex, p.lineRegex, 1, (n) => (found.push(n), true));
    expect(found).toEqual([1, 2]);
  });

  it("accepts inline flags and Rust-style named groups", () => {
    expect(compilePattern("(?i)abc", {}).regex.flags).toContain("i");
    expect(compilePattern("(?P<word>\\w+)", {}).regex.source).toContain("(?<word>");
  });

  it("extracts a literal every match must contain", () => {
    expect(requiredLiteral("NEEDLE_\\w+_42")).toBe("NEEDLE_");
    expect(requiredLiteral("foo.*barbaz")).toBe("barbaz");
    expect(requiredLiteral("ab?cdef")).toBe("cdef");
    expect(requiredLiteral("a|b")).toBeUndefined();
    expect(requiredLiteral("(abc)?xy")).toBe("xy");
    expect(requiredLiteral("\\.config")).toBe(".config");
  });
});
