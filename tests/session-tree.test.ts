/**
 * Tree operations on AgentSession through the kernel: navigateTree (in place, with and without
 * a branch summary, hooks), labels, names, the fork list and session stats.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import type { Context } from "@mariozechner/pi-ai";
import { createTestKernel } from "./helpers/test-kernel.js";
import { waitUntil } from "./helpers/system.js";
import compaction from "../plugins/compaction/index.js";
import { SUMMARIZER_SYSTEM_PROMPT } from "../plugins/compaction/summarize.js";
import type { AgentSession } from "../core/engine/agent-session.js";
import type { SessionManager } from "../core/stores/session/session-manager.js";
import { collectEntriesForBranchSummary } from "../core/engine/tree.js";

type TK = Awaited<ReturnType<typeof createTestKernel>>;
let tk: TK | undefined;
afterEach(() => {
  tk?.cleanup();
  tk = undefined;
});

const sm = (s: AgentSession) => s.sessionManager as SessionManager;
/** The conversation's texts (pi 1.6 system message entries, which carry the prompt, left out). */
const texts = (s: AgentSession) =>
  s.messages.filter((m: any) => m.role !== "system").map((m: any) => (m.role === "branchSummary" ? `summary:${m.summary}` : typeof m.content === "string" ? m.content : m.content.map((b: any) => b.text).join("")));

/** q1/r1 → q2/r2 → q3/r3; returns the entries by text. */
async function threeTurns(t: TK) {
  const s = t.session;
  for (const q of ["q1", "q2", "q3"]) await s.prompt(q);
  const byText = new Map<string, string>();
  for (const e of sm(s).getEntries()) {
    if (e.type !== "message") continue;
    const m: any = e.message;
    byText.set(typeof m.content === "string" ? m.content : m.content.map((b: any) => b.text).join(""), e.id);
  }
  return byText;
}

describe("navigateTree", () => {
  it("to an assistant entry: that entry becomes the leaf; the next prompt starts a branch; session_tree reports it", async () => {
    tk = await createTestKernel({ steps: ["r1", "r2", "r3", "r2b"] });
    const ids = await threeTurns(tk);
    const trees: any[] = [];
    tk.kernel.scope("probe").on("session_tree", (e) => void trees.push(e));
    const oldLeaf = sm(tk.session).getLeafId();
    const r = await tk.session.navigateTree(ids.get("r1")!);
    expect(r).toEqual({ editorText: undefined, cancelled: false, summaryEntry: undefined });
    expect(sm(tk.session).getLeafId()).toBe(ids.get("r1"));
    expect(texts(tk.session)).toEqual(["q1", "r1"]);
    expect(trees).toEqual([{ type: "session_tree", newLeafId: ids.get("r1"), oldLeafId: oldLeaf, summaryEntry: undefined, fromExtension: undefined }]);
    await tk.session.prompt("q2b");
    expect(texts(tk.session)).toEqual(["q1", "r1", "q2b", "r2b"]);
    // The old branch is still in the tree: r1 has two user children now.
    expect(sm(tk.session).getChildren(ids.get("r1")!).map((e: any) => e.message.content[0].text)).toEqual(["q2", "q2b"]);
  });

  it("to a user message: the leaf goes to its parent and the text comes back for the editor; the root message empties the context", async () => {
    tk = await createTestKernel({ steps: ["r1", "r2", "r3"] });
    const ids = await threeTurns(tk);
    const r = await tk.session.navigateTree(ids.get("q2")!);
    expect(r.editorText).toBe("q2");
    expect(sm(tk.session).getLeafId()).toBe(ids.get("r1"));
    expect(texts(tk.session)).toEqual(["q1", "r1"]);
    const root = await tk.session.navigateTree(ids.get("q1")!);
    expect(root.editorText).toBe("q1");
    // The first user message's parent is the system message (pi 1.6) that opened the run: no conversation is left.
    expect(sm(tk.session).getLeafId()).toBe((sm(tk.session).getEntry(ids.get("q1")!) as any).parentId);
    expect(texts(tk.session)).toEqual([]);
    // navigating to the current leaf is a no-op
    await tk.session.navigateTree(ids.get("r3")!);
    expect(await tk.session.navigateTree(ids.get("r3")!)).toEqual({ cancelled: false });
  });

  it("with summarize: the branch left behind is summarised by the model into a labelled branch_summary at the new position", async () => {
    let summaryRequest: Context | undefined;
    tk = await createTestKernel({
      plugins: [compaction],
      steps: [
        "r1",
        "r2",
        "r3",
        (ctx) => {
          summaryRequest = ctx;
          return "## Goal\nTried approach B";
        },
      ],
    });
    const ids = await threeTurns(tk);
    const r = await tk.session.navigateTree(ids.get("r1")!, { summarize: true, customInstructions: "mention q3", label: "after-b" });
    expect(r.cancelled).toBe(false);
    expect(r.summaryEntry?.type).toBe("branch_summary");
    expect(r.summaryEntry!.parentId).toBe(ids.get("r1"));
    expect(r.summaryEntry!.fromId).toBe(ids.get("r1"));
    expect(r.summaryEntry!.summary).toContain("Tried approach B");
    expect(r.summaryEntry!.fromHook).toBe(false);
    expect(sm(tk.session).getLabel(r.summaryEntry!.id)).toBe("after-b");
    // The summary request: our system prompt, the abandoned branch (q2..r3) as text, the focus.
    expect(summaryRequest!.systemPrompt).toBe(SUMMARIZER_SYSTEM_PROMPT);
    const body = JSON.stringify(summaryRequest!.messages);
    expect(body).toContain("[User]: q2");
    expect(body).toContain("[Assistant]: r3");
    expect(body).not.toContain("[User]: q1");
    expect(body).toContain("mention q3");
    expect(summaryRequest!.tools ?? []).toHaveLength(0);
    // The context now carries the summary after r1.
    expect(texts(tk.session)).toEqual(["q1", "r1", expect.stringContaining("summary:## Goal")]);
  });

  it("session_before_tree may cancel, or supply the summary and change the label", async () => {
    tk = await createTestKernel({ plugins: [compaction], steps: ["r1", "r2", "r3"] });
    const ids = await threeTurns(tk);
    const leaf = sm(tk.session).getLeafId();
    let prep: any;
    const off = tk.kernel.scope("guard").on("session_before_tree", (e) => {
      prep = e.preparation;
      return { cancel: true };
    });
    expect(await tk.session.navigateTree(ids.get("r1")!, { summarize: true })).toEqual({ cancelled: true });
    expect(sm(tk.session).getLeafId()).toBe(leaf);
    expect(prep).toMatchObject({ targetId: ids.get("r1"), oldLeafId: leaf, commonAncestorId: ids.get("r1"), userWantsSummary: true });
    expect(prep.entriesToSummarize.map((e: any) => e.id)).toEqual([ids.get("q2"), ids.get("r2"), ids.get("q3"), ids.get("r3")]);
    off();
    tk.kernel.scope("custom").on("session_before_tree", () => ({ summary: { summary: "from the extension", details: { k: 1 } }, label: "ext-label" }));
    const calls = tk.faux.callCount;
    const r = await tk.session.navigateTree(ids.get("r1")!, { summarize: true });
    expect(tk.faux.callCount).toBe(calls); // no model request
    expect(r.summaryEntry).toMatchObject({ summary: "from the extension", details: { k: 1 }, fromHook: true });
    expect(sm(tk.session).getLabel(r.summaryEntry!.id)).toBe("ext-label");
  });

  it("refuses while running, an unknown id, and summarize without the compaction plugin", async () => {
    tk = await createTestKernel({ steps: ["r1", "r2", "r3", { text: "slow answer here", delayMs: 20 }] });
    const ids = await threeTurns(tk);
    await expect(tk.session.navigateTree("nothere")).rejects.toThrow(/no entry "nothere"/);
    await expect(tk.session.navigateTree(ids.get("r1")!, { summarize: true })).rejects.toThrow(/compaction plugin/);
    const run = tk.session.prompt("q4");
    await waitUntil(() => tk!.session.isStreaming, "the run to start");
    await expect(tk.session.navigateTree(ids.get("r1")!)).rejects.toThrow(/agent is running/);
    await run;
  });

  it("collectEntriesForBranchSummary stops at the common ancestor", async () => {
    tk = await createTestKernel({ steps: ["r1", "r2", "r3"] });
    const ids = await threeTurns(tk);
    const store = sm(tk.session);
    const r = collectEntriesForBranchSummary(store, store.getLeafId(), ids.get("q2")!);
    expect(r.commonAncestorId).toBe(ids.get("q2"));
    expect(r.entries.map((e) => e.id)).toEqual([ids.get("r2"), ids.get("q3"), ids.get("r3")]);
    expect(collectEntriesForBranchSummary(store, null, ids.get("q2")!)).toEqual({ entries: [], commonAncestorId: null });
  });
});

describe("labels, names, fork list, stats", () => {
  it("labels set and clear; names; the fork list covers every branch", async () => {
    tk = await createTestKernel({ steps: ["r1", "r2", "r3", "r2b"] });
    const ids = await threeTurns(tk);
    tk.session.setLabel(ids.get("q2")!, "  checkpoint ");
    expect(sm(tk.session).getLabel(ids.get("q2")!)).toBe("checkpoint");
    tk.session.setLabel(ids.get("q2")!, undefined);
    expect(sm(tk.session).getLabel(ids.get("q2")!)).toBeUndefined();
    expect(() => tk!.session.setLabel("missing1", "x")).toThrow(/no entry "missing1"/);
    tk.session.setSessionName("My session");
    expect(tk.session.sessionName).toBe("My session");
    expect(() => tk!.session.setSessionName("  ")).toThrow(/must not be empty/);
    await tk.session.navigateTree(ids.get("r1")!);
    await tk.session.prompt("q2b");
    expect(tk.session.getUserMessagesForForking().map((f) => f.text)).toEqual(["q1", "q2", "q3", "q2b"]);
  });

  it("stats: counts of the current context, tokens and cost of every answer in the session", async () => {
    tk = await createTestKernel({
      steps: [
        { text: "r1", usage: { input: 100, output: 10 } },
        { text: "r2", usage: { input: 200, output: 20 } },
        { text: "r2b", usage: { input: 300, output: 30 }, toolCalls: [{ name: "echo", arguments: { text: "x" } }] },
        { text: "done", usage: { input: 400, output: 40 } },
      ],
      tools: [
        {
          name: "echo",
          description: "echo",
          parameters: { type: "object", properties: { text: { type: "string" } } },
          execute: async () => ({ content: [{ type: "text", text: "x" }] }),
        },
      ],
    });
    tk.faux.addModel({ id: "faux-1", cost: { input: 1, output: 10, cacheRead: 0, cacheWrite: 0 } });
    await tk.session.setModel(tk.registry.find("faux", "faux-1")!);
    await tk.session.prompt("q1");
    await tk.session.prompt("q2");
    const firstAnswer = sm(tk.session).getEntries().find((e) => e.type === "message" && e.message.role === "assistant")!;
    await tk.session.navigateTree(firstAnswer.id);
    await tk.session.prompt("q2b");
    const st = tk.session.getSessionStats();
    expect(st.userMessages).toBe(2);
    expect(st.assistantMessages).toBe(3);
    expect(st.toolCalls).toBe(1);
    expect(st.toolResults).toBe(1);
    expect(st.totalMessages).toBe(7); // with the system message (pi 1.6) that opened the first run
    expect(st.tokens).toEqual({ input: 1000, output: 100, cacheRead: 0, cacheWrite: 0, total: 1100 });
    expect(st.cost).toBeCloseTo((1000 * 1 + 100 * 10) / 1e6, 12);
    expect(st.contextUsage.tokens).toBe(440);
  });
});
