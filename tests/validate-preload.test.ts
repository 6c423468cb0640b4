/**
 * Tool-argument validation after the validators were preloaded (the agent loop preloads and
 * compiles them while a request with tools is in flight): the preloaded validator gives the same
 * verdicts, a schema that refuses empty arguments does not break the preload, and a tool without
 * an object schema is passed through.
 */
import { describe, it, expect } from "@jest/globals";
import { preloadValidator, validateToolArguments } from "../core/engine/agent/validate.js";
import type { ToolCall, ToolDefinition } from "../core/kernel/types.js";

const schema = {
  type: "object",
  properties: { path: { type: "string" }, limit: { type: "number" } },
  required: ["path"],
  additionalProperties: false,
};
const tool = { name: "read", description: "read a file", parameters: schema } as unknown as ToolDefinition;
const call = (args: Record<string, unknown>): ToolCall => ({ type: "toolCall", id: "c1", name: "read", arguments: args }) as ToolCall;

async function settle(): Promise<void> {
  // the preload compiles one tool per turn of the event loop
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

describe("tool-argument validation, preloaded", () => {
  it("gives the same verdicts after the preload compiled the schema", async () => {
    preloadValidator([{ name: "read", parameters: schema }, { name: "odd", parameters: "not a schema" }]);
    await settle();
    const ok = await validateToolArguments(tool, call({ path: "a.txt", limit: "5" }));
    expect(ok).toEqual({ ok: true, args: { path: "a.txt", limit: 5 } });
    const missing = await validateToolArguments(tool, call({}));
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toMatch(/Validation failed for tool "read"[\s\S]*path/);
    const extra = await validateToolArguments(tool, call({ path: "a", nope: true }));
    expect(extra.ok).toBe(false);
  });

  it("passes the arguments of a tool without an object schema through", async () => {
    const loose = { name: "free", description: "", parameters: undefined } as unknown as ToolDefinition;
    expect(await validateToolArguments(loose, call({ any: 1 }))).toEqual({ ok: true, args: { any: 1 } });
  });
});
