import { describe, it, expect } from "@jest/globals";
import { createTestKernel, echoTool } from "../../../tests/helpers/test-kernel.js";
import { SKIPPED_FOR_STEERING } from "./loop.js";

const until = async (cond: () => boolean, ms = 60_000) => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** The conversation without pi 1.6's system message entries (recorded at a run's start). */
const conv = (messages: readonly unknown[]): any[] => messages.filter((m: any) => m.role !== "system");
/** A user message's text (pi 1.6 records it as a text block). */
const textOf = (m: any): string => (typeof m.content === "string" ? m.content : m.content.map((c: any) => c.text ?? "").join(""));

describe("agent loop", () => {
  it("runs a two-turn conversation with a tool call, events in order", async () => {
    const t = await createTestKernel({
      tools: [echoTool("echo")],
      steps: [{ text: "calling", toolCalls: [{ name: "echo", arguments: { text: "hi" } }] }, { text: "done: echoed" }],
    });
    await t.session.prompt("go");
    const types = t.types().filter((x) => x !== "message_update" && x !== "queue_update");
    expect(types).toEqual([
      "agent_start", "turn_start", "message_start", "message_end", // system (pi 1.6: prompt and tools)
      "message_start", "message_end", // user
      "message_start", "message_end", // assistant with tool call
      "tool_execution_start", "tool_execution_end", "message_start", "message_end", // tool result
      "turn_end", "turn_start", "message_start", "message_end", "turn_end", "agent_end", "agent_settled",
    ]);
    const roles = conv(t.session.messages).map((m: any) => m.role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect((conv(t.session.messages)[2] as any).content[0].text).toBe("echo:hi");
    expect(t.session.getLastAssistantText()).toBe("done: echoed");
    t.cleanup();
  });

  it("validates arguments against the schema: invalid → an error result the model reads", async () => {
    const t = await createTestKernel({
      tools: [echoTool("echo")],
      steps: [{ toolCalls: [{ name: "echo", arguments: { wrong: 1 } }] }, { text: "ok" }],
    });
    await t.session.prompt("go");
    const result = conv(t.session.messages)[2] as any;
    expect(result.role).toBe("toolResult");
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/Validation failed for tool "echo"/);
    t.cleanup();
  });

  it("unknown tools get an error result", async () => {
    const t = await createTestKernel({ steps: [{ toolCalls: [{ name: "nope", arguments: {} }] }, { text: "ok" }] });
    await t.session.prompt("go");
    expect((conv(t.session.messages)[2] as any).content[0].text).toBe("Tool nope not found");
    t.cleanup();
  });

  it("executes in parallel but emits results in source order; preflight one at a time", async () => {
    const log: string[] = [];
    const t = await createTestKernel({
      tools: [echoTool("slow", 60, log), echoTool("fast", 0, log)],
      steps: [
        { toolCalls: [{ name: "slow", arguments: { text: "1" } }, { name: "fast", arguments: { text: "2" } }] },
        { text: "done" },
      ],
    });
    const preflight: string[] = [];
    t.kernel.scope("spy").on("tool_call", (e) => void preflight.push(e.toolName));
    await t.session.prompt("go");
    expect(preflight).toEqual(["slow", "fast"]);
    // fast finished before slow: they ran concurrently
    expect(log.indexOf("end fast:2")).toBeLessThan(log.indexOf("end slow:1"));
    const ends = t.events.filter((e) => e.type === "tool_execution_end").map((e: any) => e.toolName);
    expect(ends).toEqual(["slow", "fast"]);
    t.cleanup();
  });

  it("tool_call can block; tool_result can rewrite", async () => {
    const t = await createTestKernel({
      tools: [echoTool("echo")],
      steps: [{ toolCalls: [{ name: "echo", arguments: { text: "a" } }, { name: "echo", arguments: { text: "b" } }] }, { text: "ok" }],
    });
    t.kernel.scope("gate").on("tool_call", (e) => (e.input.text === "a" ? { block: true, reason: "no a" } : undefined));
    t.kernel.scope("rewriter").on("tool_result", (e) => ({ ...e, content: [{ type: "text", text: "rewritten " + (e.content[0] as any).text }] }));
    await t.session.prompt("go");
    const results = conv(t.session.messages).filter((m: any) => m.role === "toolResult") as any[];
    expect(results[0].isError).toBe(true);
    expect(results[0].content[0].text).toBe("no a");
    expect(results[1].content[0].text).toBe("rewritten echo:b");
    t.cleanup();
  });

  it("steering: delivered after the batch; remaining calls are skipped", async () => {
    const t = await createTestKernel({
      tools: [echoTool("echo", 30)],
      steps: [
        { toolCalls: [{ name: "echo", arguments: { text: "1" } }, { name: "echo", arguments: { text: "2" } }] },
        { text: "saw steering" },
      ],
    });
    // Steer as soon as the first preflight happens.
    let steered = false;
    t.kernel.scope("steerer").on("tool_call", async () => {
      if (!steered) {
        steered = true;
        await t.session.steer("change of plan");
      }
    });
    await t.session.prompt("go");
    const msgs = conv(t.session.messages) as any[];
    expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "user", "assistant"]);
    expect(msgs[2].isError).toBe(false);
    expect(msgs[3].content[0].text).toBe(SKIPPED_FOR_STEERING);
    expect(textOf(msgs[4])).toBe("change of plan");
    const qu = t.events.filter((e) => e.type === "queue_update") as any[];
    expect(qu[0].steering).toEqual(["change of plan"]);
    expect(qu.at(-1).steering).toEqual([]);
    t.cleanup();
  });

  it("follow-up: delivered when the agent would stop; prompt while busy needs streamingBehavior", async () => {
    const t = await createTestKernel({ steps: [{ text: "first answer", delayMs: 5 }, { text: "second answer" }] });
    const p = t.session.prompt("one");
    await until(() => t.session.isStreaming);
    await expect(t.session.prompt("two")).rejects.toThrow(/busy/);
    await expect(t.session.prompt("two", { streamingBehavior: "followUp" })).resolves.toBe("queued");
    await p;
    await t.session.waitForIdle();
    const texts = (conv(t.session.messages) as any[]).map((m) => (typeof m.content === "string" ? m.content : m.content.map((c: any) => c.text).join("")));
    expect(texts).toEqual(["one", "first answer", "two", "second answer"]);
    expect(t.types().filter((x) => x === "agent_settled")).toHaveLength(1);
    t.cleanup();
  });

  it("abort mid-stream leaves a transcript ending in stopReason aborted", async () => {
    const t = await createTestKernel({ steps: [{ text: "a b c d e f g h i j k l m n o p", delayMs: 20 }] });
    const p = t.session.prompt("go");
    await until(() => t.events.some((e) => e.type === "message_update"));
    await t.session.abort();
    await p;
    const last = conv(t.session.messages).at(-1) as any;
    expect(last.role).toBe("assistant");
    expect(last.stopReason).toBe("aborted");
    expect(t.events.at(-1)).toEqual({ type: "agent_settled", aborted: true });
    t.cleanup();
  });

  it("abort mid-tool: every tool call has a result, the run ends aborted", async () => {
    const t = await createTestKernel({
      tools: [echoTool("slow", 5000)],
      steps: [{ toolCalls: [{ name: "slow", arguments: { text: "x" } }] }, { text: "never" }],
    });
    const p = t.session.prompt("go");
    await until(() => t.events.some((e) => e.type === "tool_execution_start"));
    await t.session.abort();
    await p;
    const msgs = conv(t.session.messages) as any[];
    expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(msgs[2].isError).toBe(true);
    expect(msgs[3].stopReason).toBe("aborted");
    t.cleanup();
  });

  it("input hook transforms or consumes; slash commands run at once", async () => {
    const t = await createTestKernel({ steps: [{ text: "answer" }] });
    const ran: string[] = [];
    t.kernel.scope("cmds").registerCommand({ name: "hello", source: "extension", handler: (args) => void ran.push(`hello ${args}`) });
    t.kernel.scope("input").on("input", (e) => {
      if (e.text === "secret") return { action: "handled" };
      e.text = e.text.toUpperCase();
      return undefined;
    });
    expect(await t.session.prompt("/hello world")).toBe("handled");
    expect(ran).toEqual(["hello world"]);
    expect(await t.session.prompt("secret")).toBe("handled");
    expect(await t.session.prompt("shout")).toBe("started");
    expect(textOf(conv(t.session.messages)[0])).toBe("SHOUT");
    t.cleanup();
  });

  it("before_agent_start adds messages and changes the system prompt for one run", async () => {
    const seen: string[] = [];
    const t = await createTestKernel({
      steps: [
        (ctx: any) => {
          seen.push(ctx.systemPrompt);
          return "one";
        },
        (ctx: any) => {
          seen.push(ctx.systemPrompt);
          return "two";
        },
      ],
    });
    let first = true;
    t.kernel.scope("bas").on("before_agent_start", (e) => {
      if (!first) return undefined;
      first = false;
      return { ...e, systemPrompt: "PIRATE", messages: [{ customType: "note", content: "injected", display: false }] };
    });
    await t.session.prompt("a");
    await t.session.prompt("b");
    expect(seen[0]).toBe("PIRATE");
    expect(seen[1]).not.toBe("PIRATE");
    expect((conv(t.session.messages)[1] as any).customType).toBe("note");
    t.cleanup();
  });
});
