import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { collectFiles, collectSkillFiles, resourceFiles } from "./resource-walk.js";

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function tree(files: string[]): string {
  root = mkdtempSync(join(tmpdir(), "walk-"));
  for (const f of files) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), "x");
  }
  return root;
}
const rel = (r: string, files: string[]) => files.map((f) => f.slice(r.length + 1));

describe("the resource walker", () => {
  it("prompts/themes: name order, recursive for a named folder, flat for a resource dir; dot entries and node_modules skipped", () => {
    const r = tree(["b.md", "a.md", "sub/c.md", ".hidden/d.md", "node_modules/e.md", "notes.txt", "t.json"]);
    expect(rel(r, resourceFiles("prompts", r))).toEqual(["a.md", "b.md", "sub/c.md"]);
    expect(rel(r, collectFiles(r, /\.md$/))).toEqual(["a.md", "b.md"]);
    expect(rel(r, resourceFiles("themes", r))).toEqual(["t.json"]);
    expect(resourceFiles("prompts", join(r, "a.md"))).toEqual([join(r, "a.md")]);
    expect(resourceFiles("prompts", join(r, "missing"))).toEqual([]);
  });

  it("skills: a SKILL.md folder is a root; top-level .md only in pi folders; links followed, broken ones skipped", () => {
    const r = tree(["s/one/SKILL.md", "s/one/deeper/SKILL.md", "s/loose.md", "s/group/two/SKILL.md", "elsewhere/three/SKILL.md"]);
    symlinkSync(join(r, "elsewhere", "three"), join(r, "s", "linked"));
    symlinkSync(join(r, "nowhere"), join(r, "s", "broken"));
    expect(rel(r, collectSkillFiles(join(r, "s"), "pi"))).toEqual(["s/group/two/SKILL.md", "s/linked/SKILL.md", "s/loose.md", "s/one/SKILL.md"]);
    expect(rel(r, collectSkillFiles(join(r, "s"), "agents"))).toEqual(["s/group/two/SKILL.md", "s/linked/SKILL.md", "s/one/SKILL.md"]);
  });
});
