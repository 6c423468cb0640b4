/**
 * Tool names, result conversion and the search tool's ranking (no servers involved).
 */
import { describe, it, expect } from "@jest/globals";
import { MAX_TOOL_NAME, mcpToolName, sanitizeName } from "./names.js";
import { convertContent, limitText, toToolResult } from "./content.js";
import { createSearchTool, searchEntries, type SearchEntry } from "./search-tool.js";

describe("tool names", () => {
  it("mcp__<server>__<tool>, sanitised to [a-zA-Z0-9_-]", () => {
    expect(mcpToolName("github", "create_issue")).toBe("mcp__github__create_issue");
    expect(mcpToolName("my.server", "read file/v2")).toBe("mcp__my_server__read_file_v2");
    expect(sanitizeName("ünï code")).toBe("_n__code");
  });

  it("long names are cut to 64 characters with a stable hash; collisions stay unique", () => {
    const long = mcpToolName("a-very-long-server-name-for-testing", "an_extremely_long_tool_name_that_goes_on_and_on");
    expect(long.length).toBe(MAX_TOOL_NAME);
    expect(long).toMatch(/^mcp__a-very-long-server-name-for-testing__an_extr.*_[0-9a-f]{8}$/);
    expect(mcpToolName("a-very-long-server-name-for-testing", "an_extremely_long_tool_name_that_goes_on_and_on")).toBe(long);
    const taken = new Set<string>();
    const one = mcpToolName("s", "a.b", taken);
    const two = mcpToolName("s", "a_b", taken);
    expect(one).toBe("mcp__s__a_b");
    expect(two).not.toBe(one);
    expect(two).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/);
    for (const n of [one, two, long]) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });
});

describe("results", () => {
  it("text, images, embedded resources, links and structured content", () => {
    const c = convertContent({
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "AAAA", mimeType: "image/jpeg" },
        { type: "resource", resource: { uri: "file:///a.md", mimeType: "text/markdown", text: "# A" } },
        { type: "resource", resource: { uri: "file:///p.png", mimeType: "image/png", blob: "BBBB" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAAAAAA" } },
        { type: "resource_link", uri: "file:///c", name: "c", description: "the c" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      ],
    });
    expect(c).toEqual([
      { type: "text", text: "hello" },
      { type: "image", data: "AAAA", mimeType: "image/jpeg" },
      { type: "text", text: "[resource file:///a.md (text/markdown)]\n# A" },
      { type: "image", data: "BBBB", mimeType: "image/png" },
      { type: "text", text: "[resource file:///b.bin (binary, 6 bytes): binary content not shown]" },
      { type: "text", text: "[resource link c: file:///c — the c]" },
      { type: "text", text: "[audio audio/wav, 3 bytes: not shown]" },
    ]);
    expect(convertContent({ content: [], structuredContent: { a: 1 } })).toEqual([{ type: "text", text: '{\n  "a": 1\n}' }]);
  });

  it("isError results throw with the server's text", () => {
    expect(() => toToolResult("s", "t", { isError: true, content: [{ type: "text", text: "boom" }] })).toThrow("boom");
    expect(() => toToolResult("s", "t", { isError: true, content: [] })).toThrow(/"t" on server "s" reported an error/);
  });

  it("long text is cut with a note; empty results say so", () => {
    const r = limitText([{ type: "text", text: "a".repeat(150) }, { type: "text", text: "b".repeat(50) }], 100);
    expect(r.truncated).toBe(true);
    expect(r.content[0]).toEqual({ type: "text", text: "a".repeat(100) });
    expect((r.content.at(-1) as { text: string }).text).toMatch(/100 more characters/);
    expect(toToolResult("s", "t", { content: [] }).content).toEqual([{ type: "text", text: "(no output)" }]);
    expect(toToolResult("s", "t", { content: [{ type: "text", text: "x" }], structuredContent: { k: 1 } }).details).toEqual({ server: "s", tool: "t", structuredContent: { k: 1 } });
  });
});

describe("search tool", () => {
  const entries: SearchEntry[] = [
    { name: "mcp__gh__create_issue", server: "gh", tool: "create_issue", description: "Create a GitHub issue", inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] } },
    { name: "mcp__gh__list_pulls", server: "gh", tool: "list_pulls", description: "List pull requests", inputSchema: { type: "object" } },
    { name: "mcp__db__query", server: "db", tool: "query", description: "Run a SQL query against the issue tracker database", inputSchema: { type: "object" } },
  ];

  it("ranks name matches above description matches and filters by server", () => {
    expect(searchEntries(entries, "issue").map((e) => e.name)).toEqual(["mcp__gh__create_issue", "mcp__db__query"]);
    expect(searchEntries(entries, "", "gh").map((e) => e.name)).toEqual(["mcp__gh__create_issue", "mcp__gh__list_pulls"]);
    expect(searchEntries(entries, "nothing-like-this")).toEqual([]);
  });

  it("search, describe and call", async () => {
    const calls: unknown[] = [];
    const tool = createSearchTool({
      entries: () => entries,
      servers: () => [{ name: "gh", tools: 2, status: "connected" }, { name: "db", tools: 1, status: "failed" }],
      call: async (e, args) => {
        calls.push([e.name, args]);
        return { content: [{ type: "text", text: "called" }] };
      },
    });
    expect(tool.description).toContain("gh (2 tools), db (1 tool, failed)");
    const s = await tool.execute("1", { action: "search", query: "create issue" }, undefined, undefined, undefined);
    expect((s.content[0] as { text: string }).text).toMatch(/^mcp__gh__create_issue \(title: string\): Create a GitHub issue/);
    const d = await tool.execute("2", { action: "describe", tool: "gh/create_issue" }, undefined, undefined, undefined);
    expect((d.content[0] as { text: string }).text).toContain('"required": [');
    await tool.execute("3", { action: "call", tool: "mcp__db__query", arguments: { sql: "select 1" } }, undefined, undefined, undefined);
    expect(calls).toEqual([["mcp__db__query", { sql: "select 1" }]]);
    await expect(tool.execute("4", { action: "call", tool: "create_isue" }, undefined, undefined, undefined)).rejects.toThrow(/no MCP tool "create_isue"/);
    await expect(tool.execute("5", { action: "call" }, undefined, undefined, undefined)).rejects.toThrow(/"tool" is required/);
    await expect(tool.execute("6", { action: "explode" } as never, undefined, undefined, undefined)).rejects.toThrow(/unknown action/);
  });
});
