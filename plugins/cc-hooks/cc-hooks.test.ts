import { describe, it, expect } from "@jest/globals";
import { matches, parseHooksBlock } from "./config.js";
import { ccToolName, fromCcInput, matchNames, toCcInput } from "./tools.js";

describe("matchers (Claude Code's rules)", () => {
  const bash = matchNames("bash", { command: "ls" });
  it("compares with both the Claude Code name and ours", () => {
    expect(bash).toEqual(["Bash", "bash"]);
    expect(matches("Bash", bash)).toBe(true);
    expect(matches("bash", bash)).toBe(true);
    expect(matches("Read", bash)).toBe(false);
  });
  it("exact names and | or , lists; * / empty match all; other characters make an unanchored regex", () => {
    const write = matchNames("write", { path: "a", content: "" });
    expect(matches("Edit|Write", write)).toBe(true);
    expect(matches("Edit, Write", write)).toBe(true);
    expect(matches("Edit", write)).toBe(false);
    expect(matches("Writ", write)).toBe(false); // plain = exact, not a substring
    expect(matches("*", write)).toBe(true);
    expect(matches("", write)).toBe(true);
    expect(matches("^Ba", bash)).toBe(true);
    expect(matches("^Ba", write)).toBe(false);
    const mcp = matchNames("mcp__memory__store", {});
    expect(matches("mcp__.*", mcp)).toBe(true);
    expect(matches("mcp__memory__.*", mcp)).toBe(true);
    expect(matches("mcp__memory", mcp)).toBe(false);
  });
});

describe("tool names and inputs, both ways", () => {
  const cwd = "/proj";
  it("edit with one edit is Edit, with several MultiEdit; paths become absolute file_path", () => {
    const one = { path: "src/a.ts", edits: [{ oldText: "a", newText: "b" }] };
    expect(ccToolName("edit", one)).toBe("Edit");
    expect(toCcInput("edit", one, cwd)).toEqual({ file_path: "/proj/src/a.ts", old_string: "a", new_string: "b" });
    const two = { path: "a.ts", edits: [{ oldText: "a", newText: "b" }, { oldText: "c", newText: "d" }] };
    expect(ccToolName("edit", two)).toBe("MultiEdit");
    expect(toCcInput("edit", two, cwd)).toEqual({ file_path: "/proj/a.ts", edits: [{ old_string: "a", new_string: "b" }, { old_string: "c", new_string: "d" }] });
  });
  it("maps the other built-in tools", () => {
    expect(ccToolName("find", {})).toBe("Glob");
    expect(ccToolName("ls", {})).toBe("LS");
    expect(ccToolName("grep", {})).toBe("Grep");
    expect(toCcInput("bash", { command: "x", timeout: 5 }, cwd)).toEqual({ command: "x", timeout: 5000 });
    expect(toCcInput("read", { path: "/abs/f" }, cwd)).toEqual({ file_path: "/abs/f" });
    expect(toCcInput("grep", { pattern: "p", ignoreCase: true }, cwd)).toEqual({ pattern: "p", "-i": true });
    expect(toCcInput("mcp__s__t", { any: 1 }, cwd)).toEqual({ any: 1 });
  });
  it("translates updatedInput back, and refuses what our tools cannot do", () => {
    expect(fromCcInput("bash", { command: "y", timeout: 2000, description: "d" })).toEqual({ command: "y", timeout: 2 });
    expect(fromCcInput("write", { file_path: "/p/f", content: "c" })).toEqual({ path: "/p/f", content: "c" });
    expect(fromCcInput("edit", { file_path: "/p/f", old_string: "a", new_string: "b" })).toEqual({ path: "/p/f", edits: [{ oldText: "a", newText: "b" }] });
    expect(fromCcInput("edit", { file_path: "/p/f", edits: [{ old_string: "a", new_string: "b" }] })).toEqual({ path: "/p/f", edits: [{ oldText: "a", newText: "b" }] });
    expect(() => fromCcInput("edit", { file_path: "/p/f", old_string: "a", new_string: "b", replace_all: true })).toThrow(/replace_all/);
    expect(fromCcInput("grep", { pattern: "p", "-i": true, head_limit: 3 })).toEqual({ pattern: "p", ignoreCase: true, limit: 3 });
  });
});

describe("hooks blocks", () => {
  it("reads command handlers with their source and JSON path", () => {
    const r = parseHooksBlock({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "guard.sh", timeout: 5 }] }] }, "/s.json", "global");
    expect(r.problems).toEqual([]);
    expect(r.hooks).toEqual([{ event: "PreToolUse", matcher: "Bash", command: "guard.sh", timeout: 5, source: "/s.json", sourceKind: "global", where: "hooks.PreToolUse[0].hooks[0]" }]);
  });
  it("names the position of every malformed part and keeps the rest", () => {
    const r = parseHooksBlock(
      {
        PreToolUse: [{ matcher: "(", hooks: [] }, { hooks: [{ command: "" }, { command: "ok" }, { command: "t", timeout: -1 }] }],
        Stop: "nope",
        Bogus: [],
        SubagentStop: [{ hooks: [{ command: "x" }] }],
        PostToolUse: [{ hooks: [{ type: "http", url: "http://x" }] }],
      },
      "/f.json",
      "claude",
    );
    expect(r.hooks.map((h) => h.command)).toEqual(["ok"]);
    const msgs = r.problems.map((p) => p.message).join("\n");
    expect(msgs).toContain("hooks.PreToolUse[0].matcher");
    expect(msgs).toContain("hooks.PreToolUse[1].hooks[0].command");
    expect(msgs).toContain("hooks.PreToolUse[1].hooks[2].timeout");
    expect(msgs).toContain("hooks.Stop: must be a list");
    expect(msgs).toContain('unknown hook event "Bogus"');
    expect(msgs).toContain("SubagentStop event is not supported");
    expect(msgs).toContain('handler type "http" is not supported');
    expect(r.problems.every((p) => p.file === "/f.json")).toBe(true);
  });
});
