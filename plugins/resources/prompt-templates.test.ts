import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expandPromptTemplate, loadPromptTemplates, parseCommandArgs, substituteArgs } from "./prompt-templates.js";

describe("parseCommandArgs", () => {
  it("splits on blanks and groups quoted words", () => {
    expect(parseCommandArgs(`Button "click handler" 'is disabled'  x`)).toEqual(["Button", "click handler", "is disabled", "x"]);
  });
  it("keeps an explicitly empty quoted argument and ignores surrounding blanks", () => {
    expect(parseCommandArgs(`  a "" b\t`)).toEqual(["a", "", "b"]);
    expect(parseCommandArgs("")).toEqual([]);
  });
  it("joins quoted text with adjacent characters like a shell", () => {
    expect(parseCommandArgs(`--name="a b" c`)).toEqual(["--name=a b", "c"]);
  });
});

describe("substituteArgs", () => {
  const args = ["one", "two", "three", "four"];
  it("replaces positional placeholders, missing ones with nothing", () => {
    expect(substituteArgs("$1-$2-$4-$5.", args)).toBe("one-two-four-.");
  });
  it("replaces $@ and $ARGUMENTS with every argument", () => {
    expect(substituteArgs("all: $@ | $ARGUMENTS", args)).toBe("all: one two three four | one two three four");
  });
  it("slices with ${@:N} and ${@:N:L}", () => {
    expect(substituteArgs("${@:2}", args)).toBe("two three four");
    expect(substituteArgs("${@:2:2}", args)).toBe("two three");
    expect(substituteArgs("${@:0:1}", args)).toBe("one");
    expect(substituteArgs("${@:9}", args)).toBe("");
  });
  it("does not substitute placeholders that come from the arguments", () => {
    expect(substituteArgs("[$1] [$@]", ["$2", "$ARGUMENTS"])).toBe("[$2] [$2 $ARGUMENTS]");
  });
  it("reads two-digit positions", () => {
    const many = Array.from({ length: 12 }, (_, i) => `a${i + 1}`);
    expect(substituteArgs("$10 $12", many)).toBe("a10 a12");
  });
});

describe("loading and expanding templates", () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("takes the description from frontmatter, else the first body line, and reports name collisions", () => {
    root = mkdtempSync(join(tmpdir(), "pt-"));
    const a = join(root, "a");
    const b = join(root, "b");
    mkdirSync(join(a, "nested"), { recursive: true });
    mkdirSync(b);
    writeFileSync(join(a, "review.md"), "---\ndescription: Review staged changes\nargument-hint: <file>\n---\nReview $1 carefully.\n");
    writeFileSync(join(a, "long.md"), `\n\n${"x".repeat(70)}\nmore`);
    writeFileSync(join(a, "notes.txt"), "not a template");
    writeFileSync(join(a, "nested", "deep.md"), "not loaded: folders are read non-recursively");
    writeFileSync(join(b, "review.md"), "second review");
    const r = loadPromptTemplates([
      { path: a, location: "project" },
      { path: b, location: "user" },
    ]);
    expect(r.items.map((t) => t.name).sort()).toEqual(["long", "review"]);
    const review = r.items.find((t) => t.name === "review")!;
    expect(review.description).toBe("Review staged changes");
    expect(review.argumentHint).toBe("<file>");
    expect(review.location).toBe("project");
    expect(review.content).toBe("Review $1 carefully.");
    expect(r.items.find((t) => t.name === "long")!.description).toBe(`${"x".repeat(60)}...`);
    const collision = r.diagnostics.find((d) => d.message.includes("/review"));
    expect(collision?.source).toBe(join(b, "review.md"));
    expect(collision?.message).toContain(join(a, "review.md"));
  });

  it("expands /name args and leaves other text alone", () => {
    root = mkdtempSync(join(tmpdir(), "pt-"));
    writeFileSync(join(root, "component.md"), "Create $1 with: ${@:2}");
    const { items } = loadPromptTemplates([{ path: join(root, "component.md"), location: "path" }]);
    expect(expandPromptTemplate(`/component Button "onClick handler" disabled`, items)).toBe("Create Button with: onClick handler disabled");
    expect(expandPromptTemplate("/component", items)).toBe("Create  with: ");
    expect(expandPromptTemplate("/unknown a b", items)).toBe("/unknown a b");
    expect(expandPromptTemplate("component a", items)).toBe("component a");
  });

  it("reports a missing path", () => {
    root = mkdtempSync(join(tmpdir(), "pt-"));
    const r = loadPromptTemplates([{ path: join(root, "nope.md"), location: "path" }]);
    expect(r.items).toEqual([]);
    expect(r.diagnostics[0]!.message).toContain("does not exist");
  });
});
