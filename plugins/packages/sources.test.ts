import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { identityOf, parseSource, SourceError } from "./sources.js";
import { checkCompatibility } from "./compat.js";
import { collectPackageResources } from "./package-resources.js";
import { applyPatterns } from "./filters.js";

describe("parseSource", () => {
  it("reads npm names, versions and pinning", () => {
    expect(parseSource("npm:foo", "/b")).toMatchObject({ type: "npm", name: "foo", pinned: false });
    expect(parseSource("npm:foo@1.2.3", "/b")).toMatchObject({ type: "npm", name: "foo", version: "1.2.3", pinned: true });
    expect(parseSource("npm:@scope/bar@^2", "/b")).toMatchObject({ name: "@scope/bar", version: "^2", pinned: true });
    expect(parseSource("npm:foo@latest", "/b")).toMatchObject({ name: "foo", pinned: false });
    expect(parseSource("npm:./pkg-1.0.0.tgz", "/base")).toMatchObject({ type: "npm", file: "/base/pkg-1.0.0.tgz", pinned: true });
    expect(() => parseSource("npm:Bad Name", "/b")).toThrow(SourceError);
    expect(() => parseSource("npm:", "/b")).toThrow(/needs a package name/);
  });

  it("reads git shorthands, URLs and refs", () => {
    expect(parseSource("git:github.com/user/repo@v1", "/b")).toMatchObject({ type: "git", host: "github.com", path: "user/repo", ref: "v1", pinned: true, repo: "https://github.com/user/repo" });
    expect(parseSource("git:git@github.com:user/repo.git", "/b")).toMatchObject({ host: "github.com", path: "user/repo", pinned: false, repo: "git@github.com:user/repo.git" });
    expect(parseSource("https://gitlab.com/g/sub/repo@main", "/b")).toMatchObject({ host: "gitlab.com", path: "g/sub/repo", ref: "main" });
    expect(parseSource("ssh://git@github.com/user/repo", "/b")).toMatchObject({ host: "github.com", path: "user/repo", ref: undefined });
    expect(parseSource("git:file:///srv/repos/tool@abc123", "/b")).toMatchObject({ host: "local", path: "srv/repos/tool", repo: "file:///srv/repos/tool", ref: "abc123" });
    expect(() => parseSource("git:nohost", "/b")).toThrow(/not a git repository/);
  });

  it("treats anything else as a local path resolved against the base", () => {
    expect(parseSource("./pkg", "/base")).toEqual({ type: "local", source: "./pkg", path: "/base/pkg" });
    expect(parseSource("/abs/pkg", "/base")).toMatchObject({ path: "/abs/pkg" });
    // A bare host/path without git: is a local path, as in pi.
    expect(parseSource("github.com/user/repo", "/base").type).toBe("local");
  });

  it("gives one identity per package regardless of version or ref", () => {
    expect(identityOf(parseSource("npm:foo@1", "/b"))).toBe(identityOf(parseSource("npm:foo", "/b")));
    expect(identityOf(parseSource("git:github.com/u/r@v1", "/b"))).toBe(identityOf(parseSource("https://github.com/u/r", "/b")));
    expect(identityOf(parseSource("./x", "/a"))).not.toBe(identityOf(parseSource("./x", "/b")));
  });
});

describe("checkCompatibility", () => {
  const host = { appName: "pi", appVersion: "0.3.0", kernelApiVersion: "1.0.0" };
  it("accepts packages without ranges or with fitting ones", () => {
    expect(checkCompatibility({ name: "a" }, host)).toBeUndefined();
    expect(checkCompatibility({ name: "a", pi: { kernel: "^1.0.0" }, engines: { pi: ">=0.2.0", node: ">=99" } }, host)).toBeUndefined();
  });
  it("refuses a kernel or app range that does not fit, naming both versions", () => {
    expect(checkCompatibility({ name: "a", version: "2.0.0", pi: { kernel: "^2.0.0" } }, host)).toBe("a@2.0.0 needs kernel API ^2.0.0, but this pi provides 1.0.0");
    expect(checkCompatibility({ name: "a", engines: { pi: ">=1.0.0" } }, host)).toBe("a needs pi >=1.0.0, but this is pi 0.3.0");
    expect(checkCompatibility({ name: "a", pi: { kernel: "not a range" } }, host)).toContain("invalid kernel range");
  });
});

describe("package resources", () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const w = (p: string, t = "x") => {
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, t);
  };

  it("reads conventional folders when there is no manifest", () => {
    root = mkdtempSync(join(tmpdir(), "pkgres-"));
    w(join(root, "package.json"), JSON.stringify({ name: "p", pi: { kernel: "^1.0.0" } }));
    w(join(root, "extensions", "a.ts"));
    w(join(root, "extensions", "sub", "index.ts"));
    w(join(root, "extensions", "notes.md"));
    w(join(root, "skills", "s1", "SKILL.md"));
    w(join(root, "skills", "top.md"));
    w(join(root, "prompts", "deep", "p.md"));
    w(join(root, "themes", "t.json"));
    const r = collectPackageResources(root);
    expect(r.map((x) => `${x.type}:${x.rel}:${x.enabled}`)).toEqual([
      "extensions:extensions/a.ts:true",
      "extensions:extensions/sub/index.ts:true",
      "skills:skills/s1/SKILL.md:true",
      "skills:skills/top.md:true",
      "prompts:prompts/deep/p.md:true",
      "themes:themes/t.json:true",
    ]);
  });

  it("follows the manifest (globs and !exclusions) and then the settings filter", () => {
    root = mkdtempSync(join(tmpdir(), "pkgres-"));
    w(join(root, "package.json"), JSON.stringify({ name: "p", pi: { extensions: ["src/*.ts", "!src/legacy.ts"], skills: ["./my-skills"] } }));
    w(join(root, "src", "a.ts"));
    w(join(root, "src", "b.ts"));
    w(join(root, "src", "legacy.ts"));
    w(join(root, "my-skills", "one", "SKILL.md"));
    w(join(root, "my-skills", "two", "SKILL.md"));
    w(join(root, "prompts", "ignored.md")); // the manifest names no prompts
    let r = collectPackageResources(root);
    expect(r.map((x) => x.rel)).toEqual(["src/a.ts", "src/b.ts", "my-skills/one/SKILL.md", "my-skills/two/SKILL.md"]);
    r = collectPackageResources(root, { extensions: ["-src/b.ts"], skills: [] });
    expect(r.filter((x) => x.enabled).map((x) => x.rel)).toEqual(["src/a.ts"]);
    r = collectPackageResources(root, { skills: ["!**", "+my-skills/two"] });
    expect(r.filter((x) => x.type === "skills" && x.enabled).map((x) => x.rel)).toEqual(["my-skills/two/SKILL.md"]);
  });

  it("applies include globs, exclusions, force-includes and force-excludes in that order", () => {
    root = "/pkg";
    const all = ["/pkg/a/x.ts", "/pkg/a/y.ts", "/pkg/b/z.ts"];
    expect([...applyPatterns(all, ["a/*.ts", "!a/y.ts"], root)]).toEqual(["/pkg/a/x.ts"]);
    expect([...applyPatterns(all, ["a/*.ts", "!a/y.ts", "+a/y.ts", "-a/x.ts"], root)]).toEqual(["/pkg/a/y.ts"]);
    expect([...applyPatterns(all, ["**/z.ts"], root)]).toEqual(["/pkg/b/z.ts"]);
    root = mkdtempSync(join(tmpdir(), "pkgres-"));
  });
});
