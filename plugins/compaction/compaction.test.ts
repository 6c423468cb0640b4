/**
 * Compaction through the kernel with the faux model: manual, after a turn (mid-run), on a
 * context overflow (compact and retry once), hooks, split turns, the setting that turns the
 * automatic paths off; plus the pure planning functions.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import type { Context } from "@mariozechner/pi-ai";
import { readFileSync } from "node:fs";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import { waitUntil } from "../../tests/helpers/system.js";
import type { FauxStep, FauxStepValue } from "../faux/index.js";
import compaction, { estimateTokens, findCutPoint, prepareCompaction } from "./index.js";
import { SUMMARIZER_SYSTEM_PROMPT } from "./summarize.js";
import { SessionManager } from "../../core/stores/index.js";
import type { AgentSession } from "../../core/engine/index.js";
import type { ToolDefinition } from "../../core/kernel/index.js";

type TK = Awaited<ReturnType<typeof createTestKernel>>;
let tk: TK | undefined;
afterEach(() => {
  tk?.cleanup();
  tk = undefined;
});

const user = (text: string) => ({ role: "user" as const, content: text, timestamp: Date.now() });
const answer = (text: string, extra: Record<string, unknown> = {}) =>
  ({
    role: "assistant",
    content: [{ type: "text", text }],
    api: "faux",
    provider: "faux",
    model: "faux-1",
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
    ...extra,
  }) as any;
const callTool = (name: string, args: Record<string, unknown>) =>
  answer("", { content: [{ type: "toolCall", id: `c_${Math.random().toString(16).slice(2)}`, name, arguments: args }], stopReason: "toolUse" });
const toolResult = (text: string) => ({ role: "toolResult" as const, toolCallId: "c", toolName: "bash", content: [{ type: "text" as const, text }], isError: false, timestamp: Date.now() });

/** A faux script that answers summary requests itself and takes the other answers in order. */
function scripted(t: TK, normal: FauxStepValue[], summaries: string[] = []) {
  const summaryRequests: Context[] = [];
  const requests: Context[] = [];
  const step: FauxStep = (ctx) => {
    if (ctx.systemPrompt === SUMMARIZER_SYSTEM_PROMPT) {
      summaryRequests.push(ctx);
      return summaries.shift() ?? `SUMMARY ${summaryRequests.length}`;
    }
    requests.push(ctx);
    const next = normal.shift();
    if (next === undefined) throw new Error("test script has no more answers");
    return next;
  };
  t.faux.setScript([step], { loop: true });
  return { summaryRequests, requests };
}

const bodyOf = (ctx: Context) => JSON.stringify(ctx.messages);
const fileLines = (f: string) => readFileSync(f, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

function fakeTool(name: string, output: string): ToolDefinition {
  return {
    name,
    description: name,
    parameters: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } } },
    execute: async () => ({ content: [{ type: "text", text: output }] }),
  };
}

/** Hook taps and subscriber both see compaction events. */
function watch(t: TK, session: AgentSession = t.session) {
  const hooked: any[] = [];
  const api = t.kernel.scope("watch");
  api.on("compaction_start", (e) => void hooked.push(e));
  api.on("compaction_end", (e) => void hooked.push(e));
  const compacted: any[] = [];
  api.on("session_compact", (e) => void compacted.push(e));
  const seen: any[] = [];
  session.subscribe((e) => {
    if (e.type === "compaction_start" || e.type === "compaction_end") seen.push(e);
  });
  return { hooked, seen, compacted };
}

describe("planning (pure)", () => {
  it("estimates tokens as characters / 4", () => {
    expect(estimateTokens(user("x".repeat(400)))).toBe(100);
    expect(estimateTokens(answer("y".repeat(401)))).toBe(101);
    expect(estimateTokens({ role: "bashExecution", command: "ls", output: "ab", exitCode: 0, cancelled: false, truncated: false, timestamp: 0 } as any)).toBe(1);
  });

  it("cuts at a user message on a turn boundary and mid-turn at an assistant (split turn), never at a tool result", () => {
    const sm = SessionManager.inMemory("/p");
    const t = "t".repeat(400); // 100 tokens each
    sm.appendMessage(user(t));
    sm.appendMessage(answer(t));
    sm.appendMessage(user(t));
    sm.appendMessage(callTool("bash", { command: t }));
    sm.appendMessage(toolResult(t));
    sm.appendMessage(answer(t));
    const path = sm.getBranch();
    // 250 tokens: back from the end a3 (100) + result (100) + a2 (≥100) → cut at a2, inside the turn started at u2.
    expect(findCutPoint(path, 0, path.length, 250)).toEqual({ firstKeptIndex: 3, turnStartIndex: 2, isSplitTurn: true });
    // 150: a3 + result reach it at the tool result, which is no cut point: the next one is a3.
    expect(findCutPoint(path, 0, path.length, 150)).toEqual({ firstKeptIndex: 5, turnStartIndex: 2, isSplitTurn: true });
    // 320: reaches back into u2 → a clean cut at the user message.
    expect(findCutPoint(path, 0, path.length, 320)).toEqual({ firstKeptIndex: 2, turnStartIndex: -1, isSplitTurn: false });
  });

  it("a later compaction summarises from the previous kept boundary, with the previous summary and file lists", () => {
    const sm = SessionManager.inMemory("/p");
    const t = "t".repeat(400);
    sm.appendMessage(user(t));
    const a1 = sm.appendMessage(answer(t));
    const u2 = sm.appendMessage(user(t));
    sm.appendMessage(answer(t));
    sm.appendCompaction("previous summary", u2, 999, { readFiles: ["old.ts"], modifiedFiles: [] });
    sm.appendMessage(user(t));
    sm.appendMessage(callTool("edit", { path: "new.ts", oldText: "a", newText: "b" }));
    sm.appendMessage(toolResult("edited"));
    sm.appendMessage(answer(t));
    const prep = prepareCompaction(sm.getBranch(), { enabled: true, reserveTokens: 1000, keepRecentTokens: 90 })!;
    expect(prep.previousSummary).toBe("previous summary");
    // Starts at u2 (kept by the previous compaction), not at the first entry.
    expect(prep.messagesToSummarize[0]).toMatchObject({ role: "user" });
    expect(prep.messagesToSummarize.some((m: any) => m === sm.getEntry(a1))).toBe(false);
    expect([...prep.fileOps.read]).toEqual(["old.ts"]);
    expect([...prep.fileOps.modified]).toEqual(["new.ts"]);
    expect(prep.isSplitTurn).toBe(true);
    // Nothing to do right after a compaction.
    sm.appendCompaction("again", u2, 1);
    expect(prepareCompaction(sm.getBranch(), { enabled: true, reserveTokens: 1000, keepRecentTokens: 90 })).toBeUndefined();
  });
});

describe("manual compaction", () => {
  it("summarises the old part with the model, appends a compaction entry, keeps the history in the file", async () => {
    tk = await createTestKernel({ plugins: [compaction], persist: true, settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 66 } } as any });
    // answers are 65 tokens each: keeping 66 cuts at "question three", a clean turn boundary
    const { summaryRequests } = scripted(tk, ["first answer ".repeat(20), "second answer ".repeat(20), "third answer ".repeat(20)], ["## Goal\nThe summary text"]);
    const w = watch(tk);
    for (const q of ["question one", "question two", "question three"]) await tk.session.prompt(q);
    const before = tk.session.sessionManager as SessionManager;
    const messagesBefore = before.getEntries().filter((e) => e.type === "message").length;

    const result = await tk.session.compact("keep the numbers");
    expect(result.summary).toBe("## Goal\nThe summary text");
    expect(result.tokensBefore).toBeGreaterThan(0);
    const entries = before.getEntries();
    const c = entries[entries.length - 1] as any;
    expect(c).toMatchObject({ type: "compaction", summary: result.summary, firstKeptEntryId: result.firstKeptEntryId, tokensBefore: result.tokensBefore, fromHook: false });
    expect(entries.filter((e) => e.type === "message")).toHaveLength(messagesBefore);
    expect(fileLines(tk.session.sessionFile!).filter((l) => l.type === "message")).toHaveLength(messagesBefore);
    // The context: the summary, then what was kept.
    expect(tk.session.messages[0]).toMatchObject({ role: "compactionSummary", summary: result.summary });
    expect(tk.session.messages.length).toBeLessThan(messagesBefore);
    // The request: our prompt, the old conversation as text, the focus.
    expect(summaryRequests).toHaveLength(1);
    const body = bodyOf(summaryRequests[0]!);
    expect(body).toContain("[User]: question one");
    expect(body).toContain("keep the numbers");
    expect(body).not.toContain("[User]: question three");
    // Events through the hooks and to subscribers; session_compact with the entry.
    const expected = [
      { type: "compaction_start", reason: "manual" },
      { type: "compaction_end", reason: "manual", result, aborted: false, willRetry: false },
    ];
    expect(w.hooked).toEqual(expected);
    expect(w.seen).toEqual(expected);
    expect(w.compacted).toEqual([{ type: "session_compact", compactionEntry: c, fromExtension: false, reason: "manual", willRetry: false }]);
    // The next turn sees the summary.
    scripted(tk, ["after"]);
    await tk.session.prompt("question four");
    expect(tk.session.getLastAssistantText()).toBe("after");
    // Compacting twice in a row has nothing to do.
    const again = tk.session.compact();
    await expect(again).resolves.toBeDefined(); // the new turn makes it possible again
    await expect(tk.session.compact()).rejects.toThrow(/Already compacted/);
  });

  it("session_before_compact may cancel or supply the summary (no model request)", async () => {
    tk = await createTestKernel({ plugins: [compaction], settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 } } as any });
    const { summaryRequests } = scripted(tk, ["a ".repeat(50), "b ".repeat(50)]);
    const w = watch(tk);
    await tk.session.prompt("one");
    await tk.session.prompt("two");
    const store = tk.session.sessionManager as SessionManager;
    let prep: any;
    const off = tk.kernel.scope("guard").on("session_before_compact", (e) => {
      prep = e.preparation;
      return { cancel: true };
    });
    await expect(tk.session.compact("why")).rejects.toThrow("Compaction cancelled");
    expect(w.seen[1]).toEqual({ type: "compaction_end", reason: "manual", aborted: true, willRetry: false, errorMessage: undefined });
    expect(prep.firstKeptEntryId).toBeTruthy();
    expect(store.getEntries().some((e) => e.type === "compaction")).toBe(false);
    off();
    tk.kernel.scope("custom").on("session_before_compact", (e: any) => ({
      compaction: { summary: "extension summary", firstKeptEntryId: e.preparation.firstKeptEntryId, tokensBefore: 42, details: { mine: true } },
    }));
    const r = await tk.session.compact();
    expect(r).toEqual({ summary: "extension summary", firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: 42, details: { mine: true }, estimatedTokensAfter: expect.any(Number) });
    expect(summaryRequests).toHaveLength(0);
    expect(store.getEntries().at(-1)).toMatchObject({ type: "compaction", fromHook: true, details: { mine: true } });
  });

  it("a split turn gets its beginning summarised separately; file lists are appended", async () => {
    tk = await createTestKernel({
      plugins: [compaction],
      tools: [fakeTool("read", "R".repeat(800)), fakeTool("write", "W".repeat(800))],
      settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 150 } } as any,
    });
    const { summaryRequests } = scripted(
      tk,
      [
        "r1",
        { toolCalls: [{ name: "read", arguments: { path: "src/a.ts" } }] },
        { toolCalls: [{ name: "write", arguments: { path: "src/b.ts", text: "x" } }] },
        "done",
      ],
      [],
    );
    await tk.session.prompt("q1");
    await tk.session.prompt("q2: read then write");
    const r = await tk.session.compact();
    expect(summaryRequests).toHaveLength(2);
    const bodies = summaryRequests.map(bodyOf);
    const history = bodies.find((b) => b.includes("[User]: q1"))!;
    const prefix = bodies.find((b) => b.includes("[User]: q2"))!;
    expect(history).not.toContain("q2");
    expect(prefix).toContain("only the beginning of one long turn");
    expect(prefix).toContain('read(path=\\"src/a.ts\\")');
    expect(r.summary).toMatch(/^SUMMARY \d[\s\S]*Earlier part of the current turn[\s\S]*SUMMARY \d/);
    expect(r.summary).toContain("<read-files>\nsrc/a.ts\n</read-files>");
    expect(r.summary).toContain("<modified-files>\nsrc/b.ts\n</modified-files>");
    expect(r.details).toEqual({ readFiles: ["src/a.ts"], modifiedFiles: ["src/b.ts"] });
    // The kept part starts inside the turn: its last answer.
    const kept = (tk.session.sessionManager as SessionManager).getEntry(r.firstKeptEntryId) as any;
    expect(kept.message.role).toBe("assistant");
  });

  it("abortCompaction stops a summary in progress", async () => {
    tk = await createTestKernel({ plugins: [compaction], settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 } } as any });
    scripted(tk, ["a ".repeat(50), "b ".repeat(50)]);
    await tk.session.prompt("one");
    await tk.session.prompt("two");
    tk.faux.setScript([{ text: "slow summary words here", delayMs: 50 }]);
    const w = watch(tk);
    const p = tk.session.compact();
    await waitUntil(() => tk!.session.isCompacting, "the summary to start");
    tk.session.abortCompaction();
    await expect(p).rejects.toThrow("Compaction cancelled");
    expect(w.seen.at(-1)).toMatchObject({ type: "compaction_end", aborted: true });
    expect(tk.session.isCompacting).toBe(false);
  });

  it("without the plugin, compact() says so", async () => {
    tk = await createTestKernel({ steps: ["x"] });
    await expect(tk.session.compact()).rejects.toThrow(/compaction plugin is not installed/);
  });
});

describe("automatic compaction", () => {
  const echo = fakeTool("echo", "echoed");

  it("after a turn over the threshold, mid-run: the run continues on the compacted context", async () => {
    tk = await createTestKernel({ plugins: [compaction], tools: [echo], persist: true, settings: { compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 5 } } as any });
    const { summaryRequests, requests } = scripted(
      tk,
      [{ toolCalls: [{ name: "echo", arguments: { text: "x" } }], usage: { input: 120000, output: 10 } }, "final answer"],
      ["the turn so far"],
    );
    const order: string[] = [];
    tk.session.subscribe((e) => {
      if (["turn_start", "turn_end", "compaction_start", "compaction_end", "agent_end"].includes(e.type)) order.push(e.type === "compaction_start" ? `compaction_start:${e.reason}` : e.type);
    });
    await tk.session.prompt("do the thing");
    expect(order).toEqual(["turn_start", "turn_end", "compaction_start:threshold", "compaction_end", "turn_start", "turn_end", "agent_end"]);
    expect(summaryRequests).toHaveLength(1);
    // Nothing before the turn: the summary is the turn's beginning (the user request).
    expect(bodyOf(summaryRequests[0]!)).toContain("[User]: do the thing");
    // The second model request starts with the summary and keeps the tool call and its result.
    const second = requests[1]!;
    expect(JSON.stringify(second.messages[0])).toContain("the turn so far");
    expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(tk.session.getLastAssistantText()).toBe("final answer");
    const lines = fileLines(tk.session.sessionFile!);
    const comp = lines.find((l) => l.type === "compaction");
    expect(lines.at(-1).parentId).toBe(comp.id);
    expect(lines.filter((l) => l.type === "message").map((l) => l.message.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
  });

  it("a context overflow: compact, then retry the turn once (willRetry)", async () => {
    tk = await createTestKernel({ plugins: [compaction], persist: true, settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 } } as any });
    const { requests } = scripted(tk, ["early answer ".repeat(10), { error: "prompt is too long: 200000 tokens > 128000 maximum" }, "recovered"]);
    await tk.session.prompt("early");
    const w = watch(tk);
    await tk.session.prompt("now too big");
    expect(w.seen).toEqual([
      { type: "compaction_start", reason: "overflow" },
      expect.objectContaining({ type: "compaction_end", reason: "overflow", aborted: false, willRetry: true }),
    ]);
    expect(tk.session.getLastAssistantText()).toBe("recovered");
    // The retry did not send the failed answer; the file keeps it.
    const retry = requests.at(-1)!;
    expect(retry.messages.some((m: any) => m.role === "assistant" && m.stopReason === "error")).toBe(false);
    expect(tk.session.messages.some((m: any) => m.stopReason === "error")).toBe(false);
    expect(fileLines(tk.session.sessionFile!).some((l) => l.message?.stopReason === "error")).toBe(true);
  });

  it("abort() during the overflow compaction ends the run as aborted, without a retry", async () => {
    tk = await createTestKernel({ plugins: [compaction], settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 } } as any });
    scripted(tk, ["early answer ".repeat(10)]);
    await tk.session.prompt("early");
    let n = 0;
    tk.faux.setScript(
      [(ctx) => (ctx.systemPrompt === SUMMARIZER_SYSTEM_PROMPT ? { text: "slow summary words", delayMs: 40 } : ++n === 1 ? { error: "context length exceeded" } : "should not happen")],
      { loop: true },
    );
    const settled: any[] = [];
    tk.session.subscribe((e) => {
      if (e.type === "compaction_start") void tk!.session.abort();
      if (e.type === "agent_settled") settled.push(e);
    });
    await tk.session.prompt("too big");
    expect(settled).toEqual([{ type: "agent_settled", aborted: true }]);
    expect(n).toBe(1);
  });

  it("a second overflow after the retry gives up with a message", async () => {
    tk = await createTestKernel({ plugins: [compaction], settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 } } as any });
    scripted(tk, ["early answer ".repeat(10), { error: "context length exceeded" }, "more ".repeat(10), { error: "context length exceeded" }]);
    await tk.session.prompt("early");
    await tk.session.prompt("middle");
    const w = watch(tk);
    // Only one compact-and-retry per prompt: the first overflow is compacted and retried, the retry overflows again.
    tk.faux.setScript([
      (ctx) => (ctx.systemPrompt === SUMMARIZER_SYSTEM_PROMPT ? "S" : { error: "context length exceeded" }),
    ], { loop: true });
    await tk.session.prompt("too big");
    expect(w.seen.map((e) => `${e.type}:${e.willRetry ?? ""}`)).toEqual(["compaction_start:", "compaction_end:true", "compaction_end:false"]);
    expect(w.seen.at(-1).errorMessage).toMatch(/still too long/);
    const last: any = tk.session.messages.at(-1);
    expect(last.stopReason).toBe("error");
  });

  it("compaction.enabled: false turns off the threshold and the overflow paths (manual still works)", async () => {
    tk = await createTestKernel({ plugins: [compaction], tools: [echo], settings: { compaction: { enabled: false, reserveTokens: 16384, keepRecentTokens: 5 } } as any });
    const { summaryRequests } = scripted(tk, [
      { toolCalls: [{ name: "echo", arguments: { text: "x" } }], usage: { input: 127000, output: 10 } },
      { text: "big", usage: { input: 127500, output: 10 } },
      { error: "prompt is too long" },
    ]);
    const w = watch(tk);
    expect(tk.session.autoCompactionEnabled).toBe(false);
    await tk.session.prompt("one");
    await tk.session.prompt("two");
    expect(w.seen).toEqual([]);
    expect(summaryRequests).toHaveLength(0);
    expect((tk.session.messages.at(-1) as any).stopReason).toBe("error");
    await tk.session.compact();
    expect(summaryRequests).toHaveLength(1);
  });

  it("usage measured before the latest compaction does not trigger another one", async () => {
    tk = await createTestKernel({ plugins: [compaction], settings: { compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 5 } } as any });
    scripted(tk, ["z".repeat(40), { text: "huge", usage: { input: 125000, output: 10 } }, { error: "invalid request: something else went wrong" }], ["S1", "S2"]);
    const w = watch(tk);
    await tk.session.prompt("zero");
    await tk.session.prompt("one"); // over the threshold → compaction; the "huge" answer is kept
    expect(w.seen.map((e) => `${e.type}:${e.errorMessage ?? ""}`)).toEqual(["compaction_start:", "compaction_end:"]);
    expect(tk.session.messages.some((m: any) => m.usage?.input === 125000)).toBe(true);
    // An error answer has no usage: the estimate would rest on "huge", measured before the compaction.
    await tk.session.prompt("two");
    expect((tk.session.messages.at(-1) as any).stopReason).toBe("error");
    expect(w.seen).toHaveLength(2);
  });
});
