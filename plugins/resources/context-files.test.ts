import { describe, it, expect, afterEach } from "@jest/globals";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContextFiles } from "./context-files.js";
import { parseFrontmatter, parseSimpleYaml, setYamlParserForTests } from "./frontmatter.js";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("loadContextFiles", () => {
  it("puts the agent dir's file first, then folders from the outermost down to the cwd", () => {
    root = mkdtempSync(join(tmpdir(), "ctx-"));
    const agent = join(root, "agent");
    const cwd = join(root, "repo", "pkg", "sub");
    mkdirSync(agent, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(agent, "AGENTS.md"), "global");
    writeFileSync(join(root, "CLAUDE.md"), "outer claude");
    writeFileSync(join(root, "repo", "AGENTS.md"), "repo agents");
    writeFileSync(join(root, "repo", "CLAUDE.md"), "repo claude (AGENTS.md wins)");
    writeFileSync(join(cwd, "AGENTS.md"), "cwd");
    const files = loadContextFiles({ cwd, agentDir: agent });
    expect(files.map((f) => f.content)).toEqual(["global", "outer claude", "repo agents", "cwd"]);
    expect(files[3]!.path).toBe(join(cwd, "AGENTS.md"));
  });

  it("lists a file once when the agent dir is one of the folders on the way", () => {
    root = mkdtempSync(join(tmpdir(), "ctx-"));
    const cwd = join(root, "work");
    mkdirSync(cwd);
    writeFileSync(join(root, "AGENTS.md"), "both");
    const files = loadContextFiles({ cwd, agentDir: root });
    expect(files.filter((f) => f.content === "both")).toHaveLength(1);
    expect(files[0]!.path).toBe(join(root, "AGENTS.md"));
  });
});

describe("loadContextFiles: only folders the user owns, up to the repository root", () => {
  it("stops below a world-writable folder (/tmp, a shared parent) and skips a world-writable file", () => {
    root = mkdtempSync(join(tmpdir(), "ctx-"));
    const shared = join(root, "shared");
    const cwd = join(shared, "project");
    mkdirSync(cwd, { recursive: true });
    chmodSync(shared, 0o777);
    writeFileSync(join(shared, "AGENTS.md"), "planted by another account");
    writeFileSync(join(root, "AGENTS.md"), "above the shared folder");
    writeFileSync(join(cwd, "AGENTS.md"), "mine");
    expect(loadContextFiles({ cwd, agentDir: join(root, "agent") }).map((f) => f.content)).toEqual(["mine"]);
    chmodSync(join(cwd, "AGENTS.md"), 0o666);
    const reports: string[] = [];
    expect(loadContextFiles({ cwd, agentDir: join(root, "agent"), report: (d) => reports.push(d.message) })).toEqual([]);
    expect(reports.join("\n")).toContain("writable by everyone");
  });

  it("stops at the repository root (a folder holding .git)", () => {
    root = mkdtempSync(join(tmpdir(), "ctx-"));
    const repo = join(root, "repo");
    const cwd = join(repo, "pkg");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(root, "AGENTS.md"), "outside the repository");
    writeFileSync(join(repo, "AGENTS.md"), "repo");
    writeFileSync(join(cwd, "CLAUDE.md"), "pkg");
    expect(loadContextFiles({ cwd, agentDir: join(root, "agent") }).map((f) => f.content)).toEqual(["repo", "pkg"]);
  });
});

describe("frontmatter", () => {
  afterEach(() => setYamlParserForTests(undefined));

  for (const mode of ["js-yaml", "fallback"] as const) {
    it(`reads key: value pairs, quotes, block scalars and lists (${mode})`, () => {
      root = mkdtempSync(join(tmpdir(), "fm-"));
      if (mode === "fallback") setYamlParserForTests("fallback");
      const text = [
        "---",
        "name: my-skill",
        "description: >",
        "  Folded text",
        "  on two lines",
        'quoted: "a: b"',
        "single: 'it''s'",
        "flag: true",
        "allowed:",
        "  - read",
        "  - bash",
        "metadata:",
        "  owner: team",
        "---",
        "",
        "Body line",
      ].join("\r\n");
      const { frontmatter, body } = parseFrontmatter(text);
      expect(frontmatter.name).toBe("my-skill");
      expect(String(frontmatter.description).trim()).toBe("Folded text on two lines");
      expect(frontmatter.quoted).toBe("a: b");
      expect(frontmatter.single).toBe("it's");
      expect(frontmatter.flag).toBe(true);
      expect(frontmatter.allowed).toEqual(["read", "bash"]);
      expect(frontmatter.metadata).toEqual({ owner: "team" });
      expect(body).toBe("Body line");
    });
  }

  it("returns the whole text as body when there is no frontmatter", () => {
    root = mkdtempSync(join(tmpdir(), "fm-"));
    expect(parseFrontmatter("# Title\n---\nx")).toEqual({ frontmatter: {}, body: "# Title\n---\nx" });
  });

  it("the fallback parser rejects lines it cannot read", () => {
    root = mkdtempSync(join(tmpdir(), "fm-"));
    expect(() => parseSimpleYaml("just words")).toThrow(/not "key: value"/);
    expect(() => parseSimpleYaml('a: "open')).toThrow(/unterminated/);
  });
});
