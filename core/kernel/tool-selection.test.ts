import { describe, it, expect } from "@jest/globals";
import { filterLateTools, selectTools, ToolSelectionError } from "./tool-selection.js";

const tools = [
  ...["read", "bash", "edit", "write", "grep", "ls"].map((name) => ({ name, source: "tools" })),
  { name: "stamp", source: "ext" },
  { name: "mcp__gh__search", source: "mcp" },
  { name: "mcp__db__query", source: "mcp" },
];
const base = { tools, builtinDefaults: ["read", "bash", "edit", "write"] };

describe("selectTools (pi 1.6 rules)", () => {
  it("defaults plus added tools; -nbt keeps the added ones; -nt drops all", () => {
    expect(selectTools(base).active).toEqual(["read", "bash", "edit", "write", "stamp", "mcp__gh__search", "mcp__db__query"]);
    expect(selectTools({ ...base, noBuiltinTools: true }).active).toEqual(["stamp", "mcp__gh__search", "mcp__db__query"]);
    expect(selectTools({ ...base, noTools: true }).active).toEqual([]);
  });

  it("plain --tools with patterns keeps MCP tools unless an entry starts with mcp__", () => {
    expect(selectTools({ ...base, allow: ["r*", "grep"] }).active.sort()).toEqual(["grep", "mcp__db__query", "mcp__gh__search", "read"]);
    expect(selectTools({ ...base, allow: ["read", "mcp__gh__*"] }).active.sort()).toEqual(["mcp__gh__search", "read"]);
  });

  it("+/- entries change the defaults; unknown names warn; mixing is an error", () => {
    const r = selectTools({ ...base, allow: ["+ls", "-bash", "+nope"] });
    expect(r.active).toEqual(["read", "edit", "write", "stamp", "mcp__gh__search", "mcp__db__query", "ls"]);
    expect(r.warnings.join()).toMatch(/"nope"/);
    expect(() => selectTools({ ...base, allow: ["read", "+ls"] })).toThrow(ToolSelectionError);
  });

  it("defaultTools plain or +/-; --exclude-tools applies last", () => {
    expect(selectTools({ ...base, defaultTools: ["read"], exclude: ["mcp__*"] }).active).toEqual(["read", "stamp"]);
    expect(selectTools({ ...base, defaultTools: ["-write", "+grep"], exclude: ["stamp"] }).active).toEqual(["read", "bash", "edit", "grep", "mcp__gh__search", "mcp__db__query"]);
  });

  it("late (MCP) tools follow the same flags", () => {
    const names = ["mcp__gh__search", "mcp__db__query"];
    expect(filterLateTools(names, { tools: "read,bash" })).toEqual(names);
    expect(filterLateTools(names, { tools: "read,mcp__db__*" })).toEqual(["mcp__db__query"]);
    expect(filterLateTools(names, { "no-tools": true })).toEqual([]);
    expect(filterLateTools(names, { "exclude-tools": "mcp__gh*" })).toEqual(["mcp__db__query"]);
  });
});
