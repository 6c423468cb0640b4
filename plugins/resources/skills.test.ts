import { describe, it, expect, afterEach, beforeEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectSkillFiles, expandSkillCommand, formatSkillsForPrompt, loadSkills, validateSkillName } from "./skills.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "skills-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function skill(dir: string, fm: string, body = "Do the thing.") {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\n${fm}\n---\n${body}\n`);
}

describe("validateSkillName", () => {
  it("accepts lowercase names with single hyphens that match the folder", () => {
    expect(validateSkillName("pdf-tools", "pdf-tools")).toEqual([]);
    expect(validateSkillName("a1", "a1")).toEqual([]);
  });
  it("names each rule a name breaks", () => {
    expect(validateSkillName("PDF-Tools", "PDF-Tools").join()).toContain("lowercase");
    expect(validateSkillName("-pdf", "-pdf").join()).toContain("start or end");
    expect(validateSkillName("pdf-", "pdf-").join()).toContain("start or end");
    expect(validateSkillName("pdf--x", "pdf--x").join()).toContain("two hyphens");
    expect(validateSkillName("x".repeat(65), "x".repeat(65)).join()).toContain("longer than 64");
    expect(validateSkillName("pdf", "other").join()).toContain('does not match its folder "other"');
    expect(validateSkillName("a b", "a b").join()).toContain("lowercase");
  });
});

describe("loadSkills", () => {
  it("loads valid skills, warns about bad names but keeps them, and skips skills without a description", () => {
    skill(join(root, "s", "good"), "name: good\ndescription: A good skill");
    skill(join(root, "s", "Bad_Name"), "name: Bad_Name\ndescription: Still loads");
    skill(join(root, "s", "nodesc"), "name: nodesc");
    skill(join(root, "s", "mismatch"), "name: other-name\ndescription: Name differs from folder");
    const r = loadSkills([{ path: join(root, "s"), location: "user" }]);
    expect(r.items.map((s) => s.name).sort()).toEqual(["Bad_Name", "good", "other-name"]);
    const msgs = r.diagnostics.map((d) => `${d.source}: ${d.message}`);
    expect(msgs.some((m) => m.includes("Bad_Name") && m.includes("lowercase"))).toBe(true);
    expect(msgs.some((m) => m.includes("nodesc") && m.includes("description is missing"))).toBe(true);
    expect(msgs.some((m) => m.includes("other-name") && m.includes('folder "mismatch"'))).toBe(true);
    const good = r.items.find((s) => s.name === "good")!;
    expect(good.filePath).toBe(join(root, "s", "good", "SKILL.md"));
    expect(good.baseDir).toBe(join(root, "s", "good"));
    expect(good.location).toBe("user");
  });

  it("keeps the first skill of a name and reports the later one as a collision", () => {
    skill(join(root, "project", "deploy"), "name: deploy\ndescription: project deploy");
    skill(join(root, "global", "deploy"), "name: deploy\ndescription: global deploy");
    const r = loadSkills([
      { path: join(root, "project"), location: "project" },
      { path: join(root, "global"), location: "user" },
    ]);
    expect(r.items).toHaveLength(1);
    expect(r.items[0]!.description).toBe("project deploy");
    const c = r.diagnostics.find((d) => d.message.includes("taken by"));
    expect(c?.source).toBe(join(root, "global", "deploy", "SKILL.md"));
    expect(c?.message).toContain(join(root, "project", "deploy", "SKILL.md"));
  });

  it("does not report the same file reached twice through a symlink", () => {
    skill(join(root, "real", "linked"), "name: linked\ndescription: via two paths");
    mkdirSync(join(root, "other"));
    symlinkSync(join(root, "real", "linked"), join(root, "other", "linked"));
    const r = loadSkills([
      { path: join(root, "real"), location: "user" },
      { path: join(root, "other"), location: "user" },
    ]);
    expect(r.items).toHaveLength(1);
    expect(r.diagnostics).toEqual([]);
  });

  it("reads loose .md files only at the top of pi folders, and stops at a skill root", () => {
    mkdirSync(join(root, "pi"), { recursive: true });
    writeFileSync(join(root, "pi", "loose.md"), "---\ndescription: a loose skill\n---\nbody");
    skill(join(root, "pi", "outer"), "name: outer\ndescription: outer");
    skill(join(root, "pi", "outer", "inner"), "name: inner\ndescription: never seen, under a skill root");
    skill(join(root, "pi", "group", "nested"), "name: nested\ndescription: found recursively");
    mkdirSync(join(root, "pi", "node_modules", "x"), { recursive: true });
    writeFileSync(join(root, "pi", "node_modules", "x", "SKILL.md"), "---\ndescription: skipped\n---\n");
    expect(collectSkillFiles(join(root, "pi"), "pi").map((f) => f.slice(root.length))).toEqual(["/pi/group/nested/SKILL.md", "/pi/loose.md", "/pi/outer/SKILL.md"]);
    expect(collectSkillFiles(join(root, "pi"), "agents").map((f) => f.slice(root.length))).toEqual(["/pi/group/nested/SKILL.md", "/pi/outer/SKILL.md"]);
    const r = loadSkills([{ path: join(root, "pi"), location: "project" }]);
    expect(r.items.find((s) => s.name === "loose")?.description).toBe("a loose skill");
    expect(r.diagnostics).toEqual([]);
  });

  it("reports a frontmatter that does not parse", () => {
    mkdirSync(join(root, "broken"));
    writeFileSync(join(root, "broken", "SKILL.md"), "---\nname: [unclosed\ndescription: x\n---\nbody");
    const r = loadSkills([{ path: join(root, "broken", "SKILL.md"), location: "path" }]);
    expect(r.items).toEqual([]);
    expect(r.diagnostics[0]!.message).toContain("frontmatter");
  });
});

describe("prompt block and /skill: expansion", () => {
  it("lists visible skills as XML with escaped text and hides disable-model-invocation ones", () => {
    skill(join(root, "a"), "name: a\ndescription: Use <this> & that");
    skill(join(root, "hidden"), "name: hidden\ndescription: only by command\ndisable-model-invocation: true");
    const { items } = loadSkills([{ path: root, location: "user" }]);
    const block = formatSkillsForPrompt(items);
    expect(block).toContain("<available_skills>");
    expect(block).toContain("<name>a</name>");
    expect(block).toContain("<description>Use &lt;this&gt; &amp; that</description>");
    expect(block).toContain(`<location>${join(root, "a", "SKILL.md")}</location>`);
    expect(block).not.toContain("hidden");
    expect(formatSkillsForPrompt(items.filter((s) => s.name === "hidden"))).toBe("");
  });

  it("expands /skill:name with the body (no frontmatter), the folder and the arguments", () => {
    skill(join(root, "deploy"), "name: deploy\ndescription: deploys", "Run ./scripts/go.sh");
    const { items } = loadSkills([{ path: root, location: "user" }]);
    const out = expandSkillCommand("/skill:deploy to staging now", items);
    expect(out.startsWith(`<skill name="deploy" location="${join(root, "deploy", "SKILL.md")}">\n`)).toBe(true);
    expect(out).toContain(join(root, "deploy"));
    expect(out).toContain("Run ./scripts/go.sh\n</skill>\n\nto staging now");
    expect(out).not.toContain("description: deploys");
    expect(expandSkillCommand("/skill:deploy", items).endsWith("</skill>")).toBe(true);
    expect(expandSkillCommand("/skill:nope x", items)).toBe("/skill:nope x");
  });
});
