import { describe, expect, it } from "@jest/globals";
import { PathGlob, matchIgnore, parseIgnoreRules, type IgnoreScope } from "./glob.js";

const g = (pattern: string, opts: ConstructorParameters<typeof PathGlob>[1] = {}) => new PathGlob(pattern, opts);
const t = (glob: PathGlob, rel: string) => glob.test(rel, rel.slice(rel.lastIndexOf("/") + 1));

describe("PathGlob", () => {
  it("matches names at any depth when the pattern has no slash", () => {
    const glob = g("*.ts");
    expect(t(glob, "a.ts")).toBe(true);
    expect(t(glob, "src/deep/b.ts")).toBe(true);
    expect(t(glob, "src/b.tsx")).toBe(false);
  });

  it("keeps * and ? within one path segment", () => {
    expect(t(g("src/*.ts", { anchored: true }), "src/a.ts")).toBe(true);
    expect(t(g("src/*.ts", { anchored: true }), "src/x/a.ts")).toBe(false);
    expect(t(g("?.md"), "a.md")).toBe(true);
    expect(t(g("?.md"), "ab.md")).toBe(false);
  });

  it("lets ** span folders, including none", () => {
    const glob = g("src/**/*.spec.ts", { anchored: true });
    expect(t(glob, "src/a.spec.ts")).toBe(true);
    expect(t(glob, "src/x/y/a.spec.ts")).toBe(true);
    expect(t(glob, "lib/src/a.spec.ts")).toBe(false);
  });

  it("puts an implicit **/ before path patterns unless anchored", () => {
    expect(t(g("src/*.ts"), "pkg/src/a.ts")).toBe(true);
    expect(t(g("src/*.ts", { anchored: true }), "pkg/src/a.ts")).toBe(false);
    expect(t(g("/src/*.ts"), "pkg/src/a.ts")).toBe(false);
  });

  it("supports classes, negated classes, braces and escapes", () => {
    expect(t(g("file[0-9].txt"), "file3.txt")).toBe(true);
    expect(t(g("file[!0-9].txt"), "file3.txt")).toBe(false);
    expect(t(g("file[!0-9].txt"), "fileA.txt")).toBe(true);
    expect(t(g("*.{js,ts}", { braces: true }), "x.ts")).toBe(true);
    expect(t(g("*.{js,ts}", { braces: true }), "x.md")).toBe(false);
    expect(t(g("\\*.txt"), "*.txt")).toBe(true);
    expect(t(g("\\*.txt"), "a.txt")).toBe(false);
    expect(t(g("a+b(c).txt"), "a+b(c).txt")).toBe(true);
  });

  it("can ignore case", () => {
    expect(t(g("*.md", { ignoreCase: true }), "README.MD")).toBe(true);
    expect(t(g("*.md"), "README.MD")).toBe(false);
  });
});

describe("ignore rules", () => {
  const scope = (dir: string, text: string): IgnoreScope => ({ dir, rules: parseIgnoreRules(text) });

  it("skips comments and blank lines, honours escapes and trailing spaces", () => {
    const s = [scope("/r", "# comment\n\n\\#hash\nspaced   \n\\!bang\n")];
    expect(s[0]!.rules).toHaveLength(3);
    expect(matchIgnore(s, "/r/#hash", false)).toBe(true);
    expect(matchIgnore(s, "/r/spaced", false)).toBe(true);
    expect(matchIgnore(s, "/r/!bang", false)).toBe(true);
    expect(matchIgnore(s, "/r/# comment", false)).toBeUndefined();
  });

  it("matches names at any depth, anchored paths, and folders only with a trailing slash", () => {
    const s = [scope("/r", "*.log\n/build\nout/\ndocs/*.tmp\n")];
    expect(matchIgnore(s, "/r/a.log", false)).toBe(true);
    expect(matchIgnore(s, "/r/x/y/a.log", false)).toBe(true);
    expect(matchIgnore(s, "/r/build", true)).toBe(true);
    expect(matchIgnore(s, "/r/sub/build", true)).toBeUndefined();
    expect(matchIgnore(s, "/r/sub/out", true)).toBe(true);
    expect(matchIgnore(s, "/r/sub/out", false)).toBeUndefined();
    expect(matchIgnore(s, "/r/docs/a.tmp", false)).toBe(true);
    expect(matchIgnore(s, "/r/x/docs/a.tmp", false)).toBeUndefined();
  });

  it("lets the last rule win, and a negation re-include", () => {
    const s = [scope("/r", "*.txt\n!keep.txt\n")];
    expect(matchIgnore(s, "/r/a.txt", false)).toBe(true);
    expect(matchIgnore(s, "/r/keep.txt", false)).toBe(false);
  });

  it("gives deeper ignore files precedence", () => {
    const s = [scope("/r", "*.gen\n"), scope("/r/sub", "!special.gen\n")];
    expect(matchIgnore(s, "/r/sub/special.gen", false)).toBe(false);
    expect(matchIgnore(s, "/r/sub/other.gen", false)).toBe(true);
    expect(matchIgnore(s, "/r/special.gen", false)).toBe(true);
  });

  it("handles ** in ignore rules", () => {
    const s = [scope("/r", "**/cache/**\nlogs/**/*.old\n")];
    expect(matchIgnore(s, "/r/a/cache/x", false)).toBe(true);
    expect(matchIgnore(s, "/r/logs/a/b/c.old", false)).toBe(true);
    expect(matchIgnore(s, "/r/logs/c.old", false)).toBe(true);
  });
});
