/**
 * Sessions written by pi 1.6 (tests/fixtures/sessions-1.6, generated with the reference CLI
 * against the scripted server; see the README there): ours opens them without loss, builds the
 * context 1.6 builds (context_edit applied, compaction checkpoint first, usage entries left out),
 * counts usage entries in the statistics, and appends in the same format.
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { appendFileSync, copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "./session-manager.js";
import { sessionStats } from "../../engine/session-stats.js";
import { replaySystemState, systemMessageUpdate } from "../../engine/system-message.js";
import { applyContextEdit } from "./session-context.js";
import { FIXTURES_DIR, assistantMsg, makeTempDir, userMsg } from "../../../tests/fixtures/sessions/helpers.js";

const DIR = join(FIXTURES_DIR, "..", "sessions-1.6");
const rows = (file: string): any[] => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

function copy(name: string): string {
  const file = join(tmp.dir, name);
  copyFileSync(join(DIR, name), file);
  return file;
}

describe("a pi 1.6 session with a context edit and a usage entry", () => {
  it("opens every line as it is (header, entries, leaf, name), without rewriting the file", () => {
    const file = copy("context-edit-usage.jsonl");
    const before = readFileSync(file);
    const sm = SessionManager.open(file);
    const lines = rows(file);
    expect(sm.getHeader()).toEqual(lines[0]);
    expect(sm.getEntries()).toEqual(lines.slice(1));
    expect(sm.getLeafId()).toBe(lines[lines.length - 1].id);
    expect(sm.getSessionName()).toBe("fixture one");
    expect(sm.getDiagnostics()).toEqual([]);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("builds the context 1.6 sends: the edited user message, no usage entry, the system message kept", () => {
    const sm = SessionManager.open(copy("context-edit-usage.jsonl"));
    const lines = rows(join(DIR, "context-edit-usage.jsonl"));
    const edit = lines.find((e) => e.type === "context_edit");
    const ctx = sm.buildSessionContext();
    const text = JSON.stringify(ctx.messages);
    expect(text).not.toContain("apple");
    expect(text).toContain("[redacted]");
    const edited = ctx.messages.find((m: any) => m.role === "user") as any;
    expect(edited.content).toBe(edit.replacement.content);
    // The target entry itself is unchanged.
    expect(JSON.stringify((sm.getEntry(edit.targetId) as any).message.content)).toContain("apple");
    expect(ctx.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "toolResult", "assistant", "user", "assistant"]);
    expect(ctx.thinkingLevel).toBe("medium");
    expect(ctx.model).toEqual({ provider: "mock", modelId: "mock-model" });
  });

  it("counts the usage entry in the session's tokens and cost", () => {
    const sm = SessionManager.open(copy("context-edit-usage.jsonl"));
    const lines = rows(join(DIR, "context-edit-usage.jsonl"));
    const usages = lines.filter((e) => e.type === "usage" || (e.type === "message" && e.message.role === "assistant")).map((e) => e.usage ?? e.message.usage);
    const sum = (k: string) => usages.reduce((n, u) => n + u[k], 0);
    const stats = sessionStats(sm.buildSessionContext().messages, sm, undefined);
    expect(stats.tokens.cacheRead).toBe(sum("cacheRead"));
    expect(stats.tokens.cacheRead).toBeGreaterThanOrEqual(1000); // the cache_warm entry
    expect(stats.tokens.input).toBe(sum("input"));
    expect(stats.cost).toBeCloseTo(usages.reduce((n, u) => n + u.cost.total, 0), 10);
    expect(stats.userMessages).toBe(3);
  });

  it("continues it: appended entries follow the file's bytes, and it reopens with everything", () => {
    const file = copy("context-edit-usage.jsonl");
    const before = readFileSync(file);
    const sm = SessionManager.open(file);
    const leaf = sm.getLeafId();
    const u = sm.appendMessage(userMsg("next"));
    sm.appendMessage(assistantMsg("ok", "mock", "mock-model"));
    const after = readFileSync(file);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const re = SessionManager.open(file);
    expect(re.getEntries().slice(0, rows(join(DIR, "context-edit-usage.jsonl")).length - 1)).toEqual(rows(join(DIR, "context-edit-usage.jsonl")).slice(1));
    expect(re.getEntry(u)?.parentId).toBe(leaf);
    expect(JSON.stringify(re.buildSessionContext().messages)).not.toContain("apple");
  });

  it("keeps entry types it does not know, in place, through reopening and appending", () => {
    const file = copy("context-edit-usage.jsonl");
    const lines = rows(file);
    const future = { type: "future_kind", id: "f0f0f0f0", parentId: lines[lines.length - 1].id, timestamp: "2026-12-02T05:00:00.000Z", payload: { x: [1, 2] } };
    appendFileSync(file, JSON.stringify(future) + "\n");
    const before = readFileSync(file);
    const sm = SessionManager.open(file);
    expect(sm.getEntry("f0f0f0f0")).toEqual(future);
    expect(sm.getLeafId()).toBe("f0f0f0f0");
    sm.appendMessage(userMsg("after the unknown entry"));
    expect(readFileSync(file).subarray(0, before.length).equals(before)).toBe(true);
    expect(SessionManager.open(file).getEntry("f0f0f0f0")).toEqual(future);
    expect(sm.buildSessionContext().messages.map((m: any) => m.role).at(-1)).toBe("user");
  });
});

describe("a pi 1.6 session with a compaction", () => {
  it("leads the compacted context with the compaction's system checkpoint, then its summary and the kept entries", () => {
    const file = copy("compaction.jsonl");
    const sm = SessionManager.open(file);
    const lines = rows(file);
    expect(sm.getEntries()).toEqual(lines.slice(1));
    const c = lines.find((e) => e.type === "compaction");
    const ctx = sm.buildSessionContext();
    expect(ctx.messages[0]).toEqual(c.systemMessage);
    expect(ctx.messages[1]).toMatchObject({ role: "compactionSummary", summary: c.summary, tokensBefore: c.tokensBefore });
    const after = lines.slice(lines.indexOf(c) + 1).map((e) => e.message);
    expect(ctx.messages.slice(-after.length)).toEqual(after);
    expect(ctx.messages.filter((m: any) => m.role === "system")).toHaveLength(1);
  });

  it("counts the summary request's usage with the answers", () => {
    const sm = SessionManager.open(copy("compaction.jsonl"));
    const lines = rows(join(DIR, "compaction.jsonl"));
    const c = lines.find((e) => e.type === "compaction");
    expect(c.usage.output).toBeGreaterThan(0);
    const answers = lines.filter((e) => e.type === "message" && e.message.role === "assistant").reduce((n, e) => n + e.message.usage.output, 0);
    expect(sessionStats(sm.buildSessionContext().messages, sm, undefined).tokens.output).toBe(answers + c.usage.output);
  });
});

describe("system message entries", () => {
  it("after 1.6's sections, our patch removes them and declares ours; unchanged, nothing is written", () => {
    const sm = SessionManager.open(copy("context-edit-usage.jsonl"));
    const messages = sm.buildSessionContext().messages;
    const state = replaySystemState(messages);
    expect([...state.sections.keys()]).toEqual(expect.arrayContaining(["preamble", "tools"]));
    const tools = [{ name: "read", description: "Read a file", parameters: { type: "object" } }];
    const patch = systemMessageUpdate(messages, "our prompt", tools, 5)!;
    expect(patch.sections).toMatchObject({ prompt: "our prompt", preamble: null, tools: null });
    expect(patch.toolsAdded).toEqual(tools); // 1.6's read had another description
    expect(patch.toolsRemoved?.map((t) => t.name).sort()).toEqual(["bash", "edit", "write"]);
    const next = [...messages, patch];
    expect(systemMessageUpdate(next, "our prompt", tools)).toBeUndefined();
    expect(systemMessageUpdate(next, "our prompt", [])!.toolsRemoved).toEqual([{ name: "read" }]);
    expect(systemMessageUpdate([], "p", [])).toEqual({ role: "system", content: "", sections: { prompt: "p" }, timestamp: expect.any(Number) });
  });
});

describe("context edits written by us", () => {
  it("edit or omit a message of the branch; bad targets and replacements are refused with the reason", () => {
    const sm = SessionManager.inMemory("/p");
    const u = sm.appendMessage(userMsg("secret: apple"));
    const a = sm.appendMessage(assistantMsg("noted apple"));
    sm.appendContextEdit(a, { content: "noted" });
    expect((sm.buildSessionContext().messages[1] as any).content).toEqual([{ type: "text", text: "noted" }]);
    sm.appendContextEdit(u, null);
    expect(sm.buildSessionContext().messages.map((m: any) => m.role)).toEqual(["assistant"]);
    const label = sm.appendLabelChange(u, "x");
    expect(() => sm.appendContextEdit(label, null)).toThrow(/cannot be edited/);
    expect(() => sm.appendContextEdit("nope", null)).toThrow(/not found/);
    expect(() => sm.appendContextEdit(u, "text" as never)).toThrow(/replacement/);
    sm.branch(u);
    // Branch-relative: before the edits, the original contribution is back.
    expect((sm.buildSessionContext().messages[0] as any).content).toBe("secret: apple");
    expect(applyContextEdit({ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 0 }, { type: "context_edit", id: "x", parentId: null, timestamp: "", targetId: "y", replacement: null })).toMatchObject({ role: "compactionSummary" });
  });
});
