import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { createReadTool, type ReadOperations } from "./read.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-read-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const read = (params: Record<string, unknown>, opts?: Parameters<typeof createReadTool>[1], signal?: AbortSignal, ctx?: unknown) =>
  createReadTool(dir, opts).execute("id", params as any, signal, undefined, ctx as never);
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => (c.type === "text" ? c.text : `<${c.type}>`)).join("");
const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n");

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a1c1d0a80000000049454e44ae426082", "hex");
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1");
const WEBP = Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x1a, 0, 0, 0]), Buffer.from("WEBPVP8 "), Buffer.alloc(14)]);

describe("read: text", () => {
  it("returns a small file as is", async () => {
    writeFileSync(join(dir, "a.txt"), "hello\nworld\n");
    const r = await read({ path: "a.txt" });
    expect(text(r)).toBe("hello\nworld\n");
    expect(r.details).toBeUndefined();
  });

  it("honours offset and limit and says how to continue", async () => {
    writeFileSync(join(dir, "a.txt"), lines(10));
    expect(text(await read({ path: "a.txt", offset: 3, limit: 2 }))).toBe("line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]");
    expect(text(await read({ path: "a.txt", offset: 9 }))).toBe("line 9\nline 10");
  });

  it("truncates at 2000 lines with a hint to continue", async () => {
    writeFileSync(join(dir, "big.txt"), lines(2500));
    const r = await read({ path: "big.txt" });
    const t = text(r);
    expect(t.startsWith("line 1\n")).toBe(true);
    expect(t).toContain("line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]");
    expect(t).not.toContain("line 2001");
    expect(r.details?.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", outputLines: 2000 });
    const next = text(await read({ path: "big.txt", offset: 2001 }));
    expect(next.startsWith("line 2001\n")).toBe(true);
    expect(next.endsWith("line 2500")).toBe(true);
  });

  it("truncates at 50 KB", async () => {
    writeFileSync(join(dir, "wide.txt"), Array.from({ length: 200 }, (_, i) => `${i + 1} ${"x".repeat(1000)}`).join("\n"));
    const r = await read({ path: "wide.txt" });
    const t = text(r);
    expect(r.details?.truncation?.truncatedBy).toBe("bytes");
    const shown = r.details!.truncation!.outputLines;
    expect(shown).toBeLessThan(200);
    expect(t).toContain(`[Showing lines 1-${shown} of 200 (50.0KB limit). Use offset=${shown + 1} to continue.]`);
  });

  it("points to bash for a single 10 MB line instead of returning it", async () => {
    writeFileSync(join(dir, "one.txt"), "q".repeat(10 * 1024 * 1024));
    const r = await read({ path: "one.txt" });
    const t = text(r);
    expect(t).toMatch(/^\[Line 1 is 10\.0MB, over the 50\.0KB limit\. .*sed -n '1p' one\.txt \| head -c 51200\]$/);
    expect(r.details?.truncation?.firstLineExceedsLimit).toBe(true);
  });

  it("reads a window of a file too big to decode whole", async () => {
    const n = 1_500_000;
    writeFileSync(join(dir, "huge.log"), Array.from({ length: n }, (_, i) => `entry ${i + 1} ${"-".repeat(8)}`).join("\n") + "\n");
    const window = await read({ path: "huge.log", offset: 1_000_000, limit: 3 });
    expect(text(window)).toBe(`entry 1000000 --------\nentry 1000001 --------\nentry 1000002 --------\n\n[${n - 1_000_001} more lines in file. Use offset=1000003 to continue.]`);
    const head = await read({ path: "huge.log" });
    expect(text(head)).toContain(`entry 2000 --------\n\n[Showing lines 1-2000 of ${n + 1}. Use offset=2001 to continue.]`);
    expect(head.details?.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", outputLines: 2000, totalLines: n + 1 });
    const tail = await read({ path: "huge.log", offset: n - 1 });
    expect(text(tail)).toBe(`entry ${n - 1} --------\nentry ${n} --------\n`);
    await expect(read({ path: "huge.log", offset: n + 5 })).rejects.toThrow(`Offset ${n + 5} is beyond end of file (${n + 1} lines total)`);
  });

  it("points to bash for a single 20 MB line", async () => {
    writeFileSync(join(dir, "wide.bin.txt"), "w".repeat(20 * 1024 * 1024));
    const t = text(await read({ path: "wide.bin.txt" }));
    expect(t).toMatch(/^\[Line 1 is 20\.0MB, over the 50\.0KB limit\./);
  });

  it("quotes a path with spaces in the bash hint", async () => {
    writeFileSync(join(dir, "my file.txt"), "z".repeat(60 * 1024));
    expect(text(await read({ path: "my file.txt" }))).toContain("sed -n '1p' 'my file.txt' | head -c 51200");
  });

  it("says an empty file is empty", async () => {
    writeFileSync(join(dir, "e.txt"), "");
    expect(text(await read({ path: "e.txt" }))).toBe("(empty file)");
  });

  it("decodes UTF-16 files with a byte order mark", async () => {
    writeFileSync(join(dir, "u16.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\nwörld", "utf16le")]));
    const t = text(await read({ path: "u16.txt" }));
    expect(t).toContain("héllo\nwörld");
    expect(t).toContain("UTF-16");
  });
});

describe("read: paths", () => {
  it("accepts @ and ~ prefixes", async () => {
    writeFileSync(join(dir, "at.txt"), "at-content");
    expect(text(await read({ path: "@at.txt" }))).toBe("at-content");
    // os.homedir() is the real home folder (jest cannot fake it): use a temp folder inside it.
    const home = mkdtempSync(join(homedir(), ".pi-read-test-"));
    try {
      const name = home.slice(homedir().length + 1);
      writeFileSync(join(home, "n.md"), "home-content");
      expect(text(await read({ path: `~/${name}/n.md` }))).toBe("home-content");
      expect(text(await read({ path: `@~/${name}/n.md` }))).toBe("home-content");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("read: images", () => {
  it.each([
    ["image/png", PNG],
    ["image/jpeg", JPEG],
    ["image/gif", GIF],
    ["image/webp", WEBP],
  ])("recognises %s by its magic bytes, whatever the file name", async (mime, bytes) => {
    writeFileSync(join(dir, "picture.dat"), bytes);
    const r = await read({ path: "picture.dat" });
    expect(r.content).toHaveLength(2);
    expect(r.content[0]).toEqual({ type: "text", text: `Read image file [${mime}]` });
    expect(r.content[1]).toEqual({ type: "image", mimeType: mime, data: bytes.toString("base64") });
  });

  it("omits an image too big to send inline, with a note", async () => {
    writeFileSync(join(dir, "huge.png"), Buffer.concat([PNG, Buffer.alloc(4 * 1024 * 1024)]));
    const r = await read({ path: "huge.png" });
    expect(r.content).toHaveLength(1);
    expect(text(r)).toMatch(/^Read image file \[image\/png\]\n\[Image omitted: 4\.0MB is over the 3\.4MB inline image limit\]$/);
  });

  it("uses a resize hook for big images when one is given", async () => {
    writeFileSync(join(dir, "huge.png"), Buffer.concat([PNG, Buffer.alloc(4 * 1024 * 1024)]));
    const r = await read({ path: "huge.png" }, { resizeImage: async () => ({ data: "c21hbGw=", mimeType: "image/jpeg" }) });
    expect(r.content[1]).toEqual({ type: "image", data: "c21hbGw=", mimeType: "image/jpeg" });
  });

  it("reads a text file named .png as text", async () => {
    writeFileSync(join(dir, "fake.png"), "not an image");
    expect(text(await read({ path: "fake.png" }))).toBe("not an image");
  });

  it("notes when the model cannot see images", async () => {
    writeFileSync(join(dir, "p.png"), PNG);
    const r = await read({ path: "p.png" }, undefined, undefined, { model: { input: ["text"] } });
    expect(text(r)).toContain("does not accept images");
  });
});

describe("read: bad input", () => {
  it("reports a missing file", async () => {
    await expect(read({ path: "nope.txt" })).rejects.toThrow("File not found: nope.txt");
  });

  it("reports an offset past the end", async () => {
    writeFileSync(join(dir, "s.txt"), "a\nb\nc");
    await expect(read({ path: "s.txt", offset: 10 })).rejects.toThrow("Offset 10 is beyond end of file (3 lines total)");
  });

  it("rejects a non-positive limit and a missing path", async () => {
    writeFileSync(join(dir, "s.txt"), "a");
    await expect(read({ path: "s.txt", limit: 0 })).rejects.toThrow(/limit must be at least 1/);
    await expect(read({})).rejects.toThrow(/needs a path/);
  });

  it("refuses a binary file with a clear message", async () => {
    writeFileSync(join(dir, "prog.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3]));
    await expect(read({ path: "prog.bin" })).rejects.toThrow(/prog\.bin is a binary file/);
  });

  it("shows a non-UTF-8 file with a note about the undecodable bytes", async () => {
    writeFileSync(join(dir, "latin1.txt"), Buffer.from("caf\xe9 cr\xe8me\n", "latin1"));
    const t = text(await read({ path: "latin1.txt" }));
    expect(t).toContain("not valid UTF-8");
    expect(t).toContain("caf\uFFFD cr\uFFFDme");
  });

  it("reports a symlink loop", async () => {
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    await expect(read({ path: "loop-a" })).rejects.toThrow(/symbolic links/);
  });

  it("reports a directory given as a file", async () => {
    mkdirSync(join(dir, "sub"));
    await expect(read({ path: "sub" })).rejects.toThrow(/sub is a directory/);
  });

  it("reports a file it may not read", async () => {
    const f = join(dir, "secret.txt");
    writeFileSync(f, "secret");
    chmodSync(f, 0o000);
    if (process.getuid?.() === 0) {
      // root reads it anyway; the tool must not fail in that case
      expect(text(await read({ path: "secret.txt" }))).toBe("secret");
    } else {
      await expect(read({ path: "secret.txt" })).rejects.toThrow("Permission denied: secret.txt");
    }
  });

  it("refuses a FIFO and a device instead of blocking or reading forever", async () => {
    execFileSync("mkfifo", [join(dir, "pipe")]);
    await expect(read({ path: "pipe" })).rejects.toThrow("pipe is not a regular file");
    await expect(read({ path: "/dev/zero" })).rejects.toThrow("/dev/zero is not a regular file");
  });

  it("stops when aborted", async () => {
    writeFileSync(join(dir, "a.txt"), "x");
    const ac = new AbortController();
    ac.abort();
    await expect(read({ path: "a.txt" }, undefined, ac.signal)).rejects.toThrow("Operation aborted");
  });
});

describe("read: operations", () => {
  it("reads through custom operations (a remote file system)", async () => {
    const files = new Map<string, Buffer>([["/remote/proj/r.txt", Buffer.from("remote text")], ["/remote/proj/i.img", GIF]]);
    const ops: ReadOperations = {
      readFile: async (p) => {
        const b = files.get(p);
        if (!b) throw Object.assign(new Error("nope"), { code: "ENOENT" });
        return b;
      },
      access: async (p) => {
        if (!files.has(p)) throw Object.assign(new Error("nope"), { code: "ENOENT" });
      },
    };
    const tool = createReadTool("/remote/proj", { operations: ops });
    const r1 = await tool.execute("1", { path: "r.txt" }, undefined, undefined, undefined);
    expect(text(r1)).toBe("remote text");
    const r2 = await tool.execute("2", { path: "i.img" }, undefined, undefined, undefined);
    expect(r2.content[1]).toMatchObject({ type: "image", mimeType: "image/gif" });
    await expect(tool.execute("3", { path: "gone.txt" }, undefined, undefined, undefined)).rejects.toThrow("File not found: gone.txt");
  });
});

describe("read streams big files", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "pi-read-stream-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a file over the window size gives the same results streamed as read whole", async () => {
    const { readFile } = await import("node:fs/promises");
    const lines: string[] = [];
    for (let i = 1; i <= 500_000; i++) lines.push(`line ${i} ${"é".repeat(i % 7)} ${"x".repeat(i % 50)}`);
    lines[1000] = "y".repeat(60 * 1024); // one line over the byte limit
    const file = join(dir, "big.txt");
    writeFileSync(file, "\ufeff" + lines.join("\n") + "\n");
    expect(statSync(file).size).toBeGreaterThan(20 * 1024 * 1024); // over the 16 MiB window: streamed
    const streamed = createReadTool(dir);
    // Custom operations take the in-memory path: the reference for the streamed one.
    const whole = createReadTool(dir, { operations: { readFile: (p) => readFile(p), access: async () => undefined } });
    const text = async (tool: ReturnType<typeof createReadTool>, args: Record<string, unknown>) => {
      try {
        const r = await tool.execute("id", { path: "big.txt", ...args } as any, undefined, undefined, undefined as any);
        return (r.content[0] as { text: string }).text;
      } catch (e) {
        return `error: ${(e as Error).message}`;
      }
    };
    for (const args of [{}, { limit: 5 }, { offset: 499_990 }, { offset: 1001, limit: 1 }, { offset: 1002, limit: 3 }, { offset: 123_456, limit: 20 }, { offset: 500_002 }, { offset: 999_999 }]) {
      expect(await text(streamed, args)).toBe(await text(whole, args));
    }
    expect(await text(streamed, { offset: 123_456, limit: 2 })).toContain("line 123456 ");
  }, 120000);
});
