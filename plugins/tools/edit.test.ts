import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEditTool, prepareEditArguments, type EditOperations } from "./edit.js";
import { createWriteTool } from "./write.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-edit-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const put = (name: string, content: string | Buffer) => writeFileSync(join(dir, name), content);
const get = (name: string) => readFileSync(join(dir, name), "utf8");
const edit = (path: string, edits: Array<{ oldText: string; newText: string }>) =>
  createEditTool(dir).execute("id", { path, edits }, undefined, undefined, undefined);
const one = (path: string, oldText: string, newText: string) => edit(path, [{ oldText, newText }]);
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? "").join("");

describe("edit: exact replacement", () => {
  it("replaces a unique block and returns a diff and the first changed line", async () => {
    put("a.ts", "line 1\nline 2\nline 3\nold\nline 5\n");
    const r = await one("a.ts", "old", "new");
    expect(get("a.ts")).toBe("line 1\nline 2\nline 3\nnew\nline 5\n");
    expect(text(r)).toBe("Replaced 1 block(s) in a.ts.");
    expect(r.details).toEqual({
      diff: [" 1 line 1", " 2 line 2", " 3 line 3", "-4 old", "+4 new", " 5 line 5"].join("\n"),
      firstChangedLine: 4,
    });
  });

  it("applies several disjoint edits, each matched against the original", async () => {
    put("m.txt", "alpha\nbeta\ngamma\n");
    await edit("m.txt", [
      { oldText: "alpha", newText: "beta" },
      { oldText: "beta\n", newText: "BETA\n" },
    ]);
    expect(get("m.txt")).toBe("beta\nBETA\ngamma\n");
  });

  it("accepts the single-edit form and edits sent as a JSON string", async () => {
    put("l.txt", "one two three");
    const tool = createEditTool(dir);
    expect(tool.prepareArguments({ path: "l.txt", oldText: "two", newText: "2" })).toEqual({ path: "l.txt", edits: [{ oldText: "two", newText: "2" }] });
    await tool.execute("id", { path: "l.txt", oldText: "two", newText: "2" } as any, undefined, undefined, undefined);
    expect(get("l.txt")).toBe("one 2 three");
    await tool.execute("id", { path: "l.txt", edits: JSON.stringify([{ oldText: "three", newText: "3" }]) } as any, undefined, undefined, undefined);
    expect(get("l.txt")).toBe("one 2 3");
    expect(prepareEditArguments("not an object")).toBe("not an object");
  });

  it("keeps CRLF line endings, and gives new lines the file's ending", async () => {
    put("crlf.txt", "a\r\nb\r\nc\r\n");
    await one("crlf.txt", "b\nc", "B\nC\nD");
    expect(get("crlf.txt")).toBe("a\r\nB\r\nC\r\nD\r\n");
  });

  it("leaves the rest of a mixed-ending file byte for byte", async () => {
    put("mixed.txt", "x\r\ny\nz\r\n");
    await one("mixed.txt", "z", "Z");
    expect(get("mixed.txt")).toBe("x\r\ny\nZ\r\n");
  });

  it("keeps a byte order mark", async () => {
    put("bom.txt", "\uFEFFhello world");
    await one("bom.txt", "hello", "goodbye");
    expect(readFileSync(join(dir, "bom.txt"))[0]).toBe(0xef);
    expect(get("bom.txt")).toBe("\uFEFFgoodbye world");
  });
});

describe("edit: normalised matching", () => {
  it("tolerates trailing whitespace, touching only the matched lines", async () => {
    put("ws.js", "keep();   \nfunction f() {  \n  return 1;\n}\nkeep2();  \n");
    await one("ws.js", "function f() {\n  return 1;", "function f() {\n  return 2;");
    expect(get("ws.js")).toBe("keep();   \nfunction f() {\n  return 2;\n}\nkeep2();  \n");
  });

  it("matches typographic quotes, dashes and special spaces", async () => {
    put("q.txt", "say “hi” – it’s\u00a0fine\nother “quotes” stay\n");
    await one("q.txt", `say "hi" - it's fine`, "said hello");
    expect(get("q.txt")).toBe("said hello\nother “quotes” stay\n");
  });

  it("matches compatibility characters (NFKC)", async () => {
    put("w.txt", "value = ＡＢＣ１２３;\n");
    await one("w.txt", "value = ABC123;", "value = 0;");
    expect(get("w.txt")).toBe("value = 0;\n");
  });

  it("matches LF text against a CRLF file with trailing spaces and keeps CRLF", async () => {
    put("c.txt", "head\r\nfoo  \r\nbar\r\ntail\r\n");
    await one("c.txt", "foo\nbar", "FOO\nBAR");
    expect(get("c.txt")).toBe("head\r\nFOO\r\nBAR\r\ntail\r\n");
  });
});

describe("edit: errors", () => {
  it("requires a unique match and says how many there are", async () => {
    put("dup.txt", "x = 1\nx = 1\nx = 1\n");
    await expect(one("dup.txt", "x = 1", "x = 2")).rejects.toThrow(/^Found 3 occurrences of the text in dup\.txt\./);
    expect(get("dup.txt")).toBe("x = 1\nx = 1\nx = 1\n");
  });

  it("counts normalised duplicates too", async () => {
    put("dup2.txt", "a “b”\na \"b\"  \n");
    await expect(one("dup2.txt", "a 'b'", "c")).rejects.toThrow(/Could not find/);
    await expect(one("dup2.txt", "a \u201Cb\u201D\n", "c\n")).resolves.toBeDefined();
    put("dup3.txt", "say “x”\nsay \u201Ex\u201F\n");
    await expect(one("dup3.txt", 'say "x"', "y")).rejects.toThrow(/^Found 2 occurrences/);
  });

  it("names the edit that is missing, ambiguous or overlapping", async () => {
    put("e.txt", "one\ntwo\nthree\n");
    await expect(edit("e.txt", [{ oldText: "one", newText: "1" }, { oldText: "four", newText: "4" }])).rejects.toThrow(/Could not find edits\[1\]\.oldText in e\.txt/);
    await expect(edit("e.txt", [{ oldText: "one\ntwo", newText: "x" }, { oldText: "two\nthree", newText: "y" }])).rejects.toThrow(/edits\[0\] and edits\[1\] overlap in e\.txt/);
    await expect(one("e.txt", "", "x")).rejects.toThrow(/must not be empty/);
    await expect(one("e.txt", "two", "two")).rejects.toThrow(/^No changes made to e\.txt/);
    await expect(edit("e.txt", [])).rejects.toThrow(/at least one/);
    expect(get("e.txt")).toBe("one\ntwo\nthree\n");
  });

  it("reports a missing file, a folder, a binary and a non-UTF-8 file", async () => {
    await expect(one("missing.txt", "a", "b")).rejects.toThrow("Could not edit missing.txt: File not found: missing.txt");
    mkdirSync(join(dir, "folder"));
    await expect(one("folder", "a", "b")).rejects.toThrow(/folder is a directory/);
    put("bin.dat", Buffer.from([1, 2, 0, 3, 65]));
    await expect(one("bin.dat", "A", "B")).rejects.toThrow(/binary file/);
    const latin1 = Buffer.from("caf\xe9\n", "latin1");
    put("latin1.txt", latin1);
    await expect(one("latin1.txt", "caf", "tea")).rejects.toThrow(/not valid UTF-8/);
    expect(readFileSync(join(dir, "latin1.txt")).equals(latin1)).toBe(true);
  });

  it("refuses a FIFO", async () => {
    execFileSync("mkfifo", [join(dir, "pipe")]);
    await expect(one("pipe", "a", "b")).rejects.toThrow(/pipe is not a regular file/);
  });
});

describe("edit: serialisation", () => {
  it("applies concurrent edits of one file one after the other", async () => {
    put("s.txt", Array.from({ length: 20 }, (_, i) => `<v${i}>`).join("\n"));
    await Promise.all(Array.from({ length: 20 }, (_, i) => one("s.txt", `<v${i}>`, `<V${i}>`)));
    expect(get("s.txt")).toBe(Array.from({ length: 20 }, (_, i) => `<V${i}>`).join("\n"));
  });

  it("orders a write and an edit of the same file", async () => {
    put("o.txt", "first");
    const write = createWriteTool(dir);
    await Promise.all([
      write.execute("w", { path: "o.txt", content: "second version" }, undefined, undefined, undefined),
      one("o.txt", "second", "third"),
    ]);
    expect(get("o.txt")).toBe("third version");
  });
});

describe("edit: operations", () => {
  it("edits through custom operations", async () => {
    const files = new Map([["/srv/app/x.txt", "hello remote"]]);
    const ops: EditOperations = {
      readFile: async (p) => Buffer.from(files.get(p)!),
      writeFile: async (p, c) => void files.set(p, c),
      access: async (p) => {
        if (!files.has(p)) throw Object.assign(new Error("x"), { code: "ENOENT" });
      },
    };
    const tool = createEditTool("/srv/app", { operations: ops });
    await tool.execute("id", { path: "x.txt", edits: [{ oldText: "remote", newText: "there" }] }, undefined, undefined, undefined);
    expect(files.get("/srv/app/x.txt")).toBe("hello there");
  });
});
