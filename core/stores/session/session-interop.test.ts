/**
 * Interop with the reference CLI's format: tests/fixtures/sessions/reference-v3.jsonl is written
 * by hand in the reference format (and was cross-checked against the reference implementation:
 * same context at every leaf, same tree).
 */
import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "./session-manager.js";
import { FIXTURES_DIR, assistantMsg, makeTempDir, userMsg } from "../../../tests/fixtures/sessions/helpers.js";

const FIXTURE = join(FIXTURES_DIR, "reference-v3.jsonl");

function fixtureLines(): any[] {
  return readFileSync(FIXTURE, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("reference v3 fixture", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let file: string;
  beforeEach(() => {
    tmp = makeTempDir();
    file = join(tmp.dir, "reference-v3.jsonl");
    copyFileSync(FIXTURE, file);
  });
  afterEach(() => tmp.cleanup());

  it("opens with the header, entries, leaf, labels and name of the file, without rewriting it", () => {
    const before = readFileSync(file);
    const sm = SessionManager.open(file);
    const rows = fixtureLines();
    expect(sm.getHeader()).toEqual(rows[0]);
    expect(sm.getSessionId()).toBe("0197a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b");
    expect(sm.getCwd()).toBe("/home/user/project");
    expect(sm.getEntries()).toEqual(rows.slice(1));
    expect(sm.getLeafId()).toBe("a1000016");
    expect(sm.getSessionName()).toBe("Fixture session");
    expect(sm.getLabel("a1000007")).toBe("readme");
    expect(sm.getLabel("a1000003")).toBeUndefined(); // set, then cleared
    expect(sm.getDiagnostics()).toEqual([]);
    expect(readFileSync(file).equals(before)).toBe(true);

    const tree = sm.getTree();
    expect(tree.map((n) => n.entry.id)).toEqual(["a1000001"]);
    let node = tree[0]!;
    while (node.entry.id !== "a1000006") node = node.children[0]!;
    expect(node.children.map((n) => n.entry.id)).toEqual(["a1000007", "a100000d"]);
    expect(node.children[0]!.label).toBe("readme");
  });

  it("builds the same context as the reference at the current leaf", () => {
    const sm = SessionManager.open(file);
    const byId = new Map(fixtureLines().slice(1).map((e) => [e.id, e]));
    const ctx = sm.buildSessionContext();
    expect(ctx.thinkingLevel).toBe("high");
    expect(ctx.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    const msg = (id: string) => byId.get(id).message;
    const ts = (id: string) => new Date(byId.get(id).timestamp).getTime();
    expect(ctx.messages).toEqual([
      msg("a1000003"),
      msg("a1000004"),
      msg("a1000005"),
      msg("a1000006"),
      {
        role: "branchSummary",
        summary: "The abandoned branch summarized README.md and switched to gpt-4o.",
        fromId: "a100000c",
        timestamp: ts("a100000d"),
      },
      msg("a100000e"),
      msg("a100000f"),
      {
        role: "custom",
        customType: "note",
        content: "Extra context from an extension",
        display: true,
        details: { source: "fixture" },
        timestamp: ts("a1000011"),
      },
    ]);
  });

  it("builds the compacted context on the other branch", () => {
    const sm = SessionManager.open(file);
    const byId = new Map(fixtureLines().slice(1).map((e) => [e.id, e]));
    sm.branch("a100000c");
    const ctx = sm.buildSessionContext();
    expect(ctx.thinkingLevel).toBe("medium");
    expect(ctx.model).toEqual({ provider: "openai", modelId: "gpt-4o" });
    expect(ctx.messages).toEqual([
      {
        role: "compactionSummary",
        summary: "## Goal\nExplore the project files.",
        tokensBefore: 12000,
        timestamp: new Date(byId.get("a1000009").timestamp).getTime(),
      },
      byId.get("a1000007").message,
      byId.get("a1000008").message,
      byId.get("a100000a").message,
      byId.get("a100000c").message,
    ]);
    sm.branch("a1000004");
    expect(sm.buildSessionContext().messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect(sm.buildSessionContext().thinkingLevel).toBe("medium");
  });

  it("appends to a reference file in the same format", () => {
    const sm = SessionManager.open(file);
    const before = readFileSync(file);
    sm.branch("a1000006");
    const u = sm.appendMessage(userMsg("third branch"));
    const a = sm.appendMessage(assistantMsg("ok"));
    const after = readFileSync(file);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const added = after.subarray(before.length).toString("utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(added.map((e) => e.id)).toEqual([u, a]);
    expect(added[0]).toMatchObject({ type: "message", parentId: "a1000006" });
    expect(Object.keys(added[0])).toEqual(["type", "id", "parentId", "timestamp", "message"]);
    const re = SessionManager.open(file);
    expect(re.getLeafId()).toBe(a);
    expect(re.getChildren("a1000006").map((e) => e.id)).toEqual(["a1000007", "a100000d", u]);
  });
});
