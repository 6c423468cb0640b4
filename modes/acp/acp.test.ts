import { describe, it, expect } from "@jest/globals";
import { promptToMessage } from "./prompt.js";
import { toSettingsServer } from "./mcp.js";
import { replayUpdates, toolKind, toolTitle } from "./updates.js";

const invalid = (field: string): never => {
  throw new Error(`bad ${field}`);
};

describe("ACP prompt blocks", () => {
  it("text, resource_link, embedded resource and image become one message", () => {
    const m = promptToMessage(
      [
        { type: "text", text: "hi" },
        { type: "resource_link", uri: "file:///p/a%20b.md", name: "a b.md" },
        { type: "resource", resource: { uri: "file:///p/x.ts", text: "let x = 1;" } },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      invalid,
    );
    expect(m.text).toBe('hi\n\n@/p/a b.md\n\n<context path="/p/x.ts">\nlet x = 1;\n</context>');
    expect(m.images).toEqual([{ type: "image", data: "AAAA", mimeType: "image/png" }]);
  });
  it("names the bad field", () => {
    expect(() => promptToMessage([{ type: "text", text: "ok" }, { type: "text" }], invalid)).toThrow("bad prompt[1].text");
    expect(() => promptToMessage([{ type: "video" }], invalid)).toThrow("bad prompt[0].type");
    expect(() => promptToMessage("hello", invalid)).toThrow("bad prompt");
  });
});

describe("ACP MCP servers in settings format", () => {
  it("stdio, http and sse", () => {
    expect(toSettingsServer({ name: "fs", command: "/bin/srv", args: ["-v"], env: [{ name: "K", value: "v" }] }, 0)).toEqual(["fs", { command: "/bin/srv", args: ["-v"], env: { K: "v" } }]);
    expect(toSettingsServer({ type: "http", name: "web api", url: "http://h/mcp", headers: [{ name: "A", value: "b" }] }, 1)).toEqual(["web_api", { type: "http", url: "http://h/mcp", headers: { A: "b" } }]);
    expect(toSettingsServer({ type: "sse", name: "s", url: "http://h/sse", headers: [] }, 2)[1]).toMatchObject({ type: "sse" });
  });
  it("names the bad field", () => {
    expect(() => toSettingsServer({ name: "x" }, 3)).toThrow("mcpServers[3].command");
    expect(() => toSettingsServer({ type: "http", name: "x" }, 0)).toThrow("mcpServers[0].url");
    expect(() => toSettingsServer({ type: "ws", name: "x", url: "u" }, 0)).toThrow("mcpServers[0].type");
  });
});

describe("ACP tool calls and replay", () => {
  it("kinds and titles", () => {
    expect([toolKind("read"), toolKind("write"), toolKind("edit"), toolKind("bash"), toolKind("grep"), toolKind("mcp__x__y")]).toEqual(["read", "edit", "edit", "execute", "search", "other"]);
    expect(toolTitle("bash", { command: "ls -la\necho 2" })).toBe("bash: ls -la");
    expect(toolTitle("read", { path: "a.ts" })).toBe("read a.ts");
  });
  it("replays user, thinking, answer, tool call and result in order", () => {
    const u = replayUpdates(
      [
        { role: "user", content: "do it", timestamp: 0 },
        { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "ok" }, { type: "toolCall", id: "t1", name: "read", arguments: { path: "a.ts" } }], timestamp: 0 },
        { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "x" }], isError: false, timestamp: 0 },
      ] as never,
      "/p",
    );
    expect(u.map((x) => x.sessionUpdate)).toEqual(["user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]);
    expect(u[3]).toMatchObject({ toolCallId: "t1", kind: "read", locations: [{ path: "/p/a.ts" }] });
    expect(u[4]).toMatchObject({ toolCallId: "t1", status: "completed", rawOutput: { content: "x" } });
  });
});
