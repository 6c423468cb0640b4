import { describe, expect, it } from "@jest/globals";
import { builtinTheme } from "./theme.js";
import { stripAnsi, visibleWidth } from "./text.js";
import { limitLines, statusBg, statusIcon, toolCallLines, toolResultLines, type ToolView } from "./tool-draw.js";

const t = builtinTheme("dark");
const env = { theme: t, cwd: "/proj", expanded: false, expandKey: "ctrl+o" };
const call = (name: string, args: Record<string, unknown>, status: ToolView["status"] = "done") => stripAnsi(toolCallLines({ name, args, status, result: undefined }, 80, env).join("\n"));
const output = (v: Partial<ToolView> & { name: string }, width = 80, e = env) =>
  toolResultLines({ args: {}, status: "done", result: undefined, ...v }, width, e).map(stripAnsi);
const textResult = (text: string, details?: unknown) => ({ content: [{ type: "text" as const, text }], details });

describe("toolCallLines", () => {
  it("titles each built-in tool by what it works on", () => {
    expect(call("bash", { command: "ls -la" }, "running")).toBe("● bash $ ls -la");
    expect(call("read", { path: "/proj/a.ts", offset: 2 })).toBe("✓ read a.ts:2");
    expect(call("write", { path: "/proj/b.md", content: "1\n2\n3" })).toBe("✓ write b.md (3 lines)");
    expect(call("write", { path: "/proj/b.md", content: "1\n2\n3\n" })).toBe("✓ write b.md (3 lines)"); // the final newline ends line 3
    expect(call("grep", { pattern: "TODO", path: "/proj/src", glob: "*.ts" })).toBe("✓ grep /TODO/ in src (*.ts)");
    expect(call("find", { pattern: "*.json" })).toBe("✓ find *.json");
    expect(call("ls", {})).toBe("✓ ls .");
    expect(call("mytool", { a: 1 }, "error")).toBe('✗ mytool {"a":1}');
    expect(call("mytool", {}, "pending")).toBe("○ mytool ");
  });
  it("cuts the title to the width, except an expanded bash command, which wraps", () => {
    const args = { command: "echo " + "x".repeat(100) };
    expect(toolCallLines({ name: "bash", args, status: "done", result: undefined }, 40, env)).toHaveLength(1);
    const open = toolCallLines({ name: "bash", args, status: "done", result: undefined }, 40, { ...env, expanded: true });
    expect(open.length).toBeGreaterThan(1);
    for (const l of open) expect(visibleWidth(l)).toBeLessThanOrEqual(40);
  });
});

describe("toolResultLines", () => {
  it("bash keeps the last lines with a note of those above", () => {
    const text = Array.from({ length: 9 }, (_, i) => `l${i + 1}`).join("\n");
    expect(output({ name: "bash", result: textResult(text) })).toEqual(["… 4 more lines above (ctrl+o to expand)", "l5", "l6", "l7", "l8", "l9"]);
    expect(output({ name: "bash", result: textResult("") })).toEqual(["(no output)"]);
    expect(output({ name: "bash", result: textResult(text) }, 80, { ...env, expanded: true })).toHaveLength(9);
  });
  it("names images and shows errors (or 'failed') in the error colour", () => {
    expect(output({ name: "mytool", result: { content: [{ type: "image", data: "", mimeType: "image/png" }] } })).toEqual(["[image: image/png]"]);
    const err = toolResultLines({ name: "read", args: {}, status: "error", result: textResult("") }, 80, env);
    expect(err.map(stripAnsi)).toEqual(["failed"]);
    expect(err[0]).toContain(t.getFgAnsi("error"));
  });
  it("a file that was read is shown only expanded (as pi 1.6)", () => {
    const read = { name: "read", args: { path: "notes.txt" }, result: textResult("alpha\nbeta\n") };
    expect(output(read)).toEqual([]);
    expect(output(read, 80, { ...env, expanded: true })).toEqual(["alpha", "beta"]);
  });
  it("write shows the file's content, and the tool's message only when it is not the usual one", () => {
    expect(output({ name: "write", args: { content: "a\nb\n", path: "x.txt" }, result: textResult("Successfully wrote 4 bytes") })).toEqual(["a", "b"]);
    expect(output({ name: "write", args: { content: "a\nb", path: "x.txt" }, result: textResult("Successfully wrote 3 bytes") })).toEqual(["a", "b"]);
    expect(output({ name: "write", args: { content: "a", path: "x.txt" }, result: textResult("created parent folders") })).toEqual(["a", "created parent folders"]);
  });
});

describe("limitLines", () => {
  it("cuts the note of left-out lines to the width", () => {
    const lines = Array.from({ length: 5 }, (_, i) => `${i}`);
    const out = limitLines(lines, 2, "head", t, t.fg("dim", "(ctrl+o to expand)"), 12);
    expect(out.slice(0, 2)).toEqual(["0", "1"]);
    expect(visibleWidth(out[2]!)).toBeLessThanOrEqual(12);
    expect(stripAnsi(out[2]!)).toMatch(/^… 3 more/);
    expect(limitLines(lines, 5, "tail", t, "", 12)).toEqual(lines);
  });
});

describe("status marks", () => {
  it("gives each status its mark and box background", () => {
    expect((["pending", "running", "done", "error"] as const).map((st) => stripAnsi(statusIcon(st, t)))).toEqual(["○", "●", "✓", "✗"]);
    expect(statusIcon("error", t)).toContain(t.getFgAnsi("error"));
    expect((["pending", "running", "done", "error"] as const).map(statusBg)).toEqual(["toolPendingBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg"]);
  });
});
