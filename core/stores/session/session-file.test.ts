import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "./session-manager.js";
import { loadEntriesFromFile, migrateSessionEntries, parseSessionData, parseSessionEntries, readSessionFile, writeFileAtomic } from "./session-file.js";
import type { SessionMessageEntry } from "./session-entries.js";
import { FIXTURES_DIR, assistantMsg, makeTempDir, toolResultMsg, userMsg } from "../../../tests/fixtures/sessions/helpers.js";

const HEX8 = /^[0-9a-f]{8}$/;

function writtenSession(dir: string): { file: string; ids: string[] } {
  const sm = SessionManager.create("/torn", dir);
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendMessage(userMsg("please list"));
  sm.appendMessage(assistantMsg("running ls"));
  sm.appendMessage(toolResultMsg("c1", "a\nb\n"));
  // Multi-byte characters so that cuts also land inside a UTF-8 sequence.
  sm.appendMessage(assistantMsg("done ✓ — ünïcödé 🚀🚀 and some more text to cut through"));
  return { file: sm.getSessionFile()!, ids: sm.getEntries().map((e) => e.id) };
}

describe("session files: torn and malformed lines", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
  });
  afterEach(() => tmp.cleanup());

  it("a torn last line is skipped with a diagnostic at every cut point, and the file is not rewritten", () => {
    const { file, ids } = writtenSession(tmp.dir);
    const full = readFileSync(file);
    const lastStart = full.lastIndexOf(0x0a, full.length - 2) + 1;
    let cuts = 0;
    for (let cut = lastStart + 1; cut < full.length - 1; cut++) {
      const torn = full.subarray(0, cut);
      writeFileSync(file, torn);
      const sm = SessionManager.open(file);
      expect(sm.getEntries().map((e) => e.id)).toEqual(ids.slice(0, -1));
      const diags = sm.getDiagnostics();
      expect(diags).toHaveLength(1);
      expect(diags[0]).toMatchObject({ level: "warning", source: file });
      expect(diags[0]!.message).toMatch(/incomplete last line/);
      expect(readFileSync(file).equals(torn)).toBe(true);
      cuts++;
    }
    expect(cuts).toBeGreaterThan(50);

    // Cut exactly before the final newline: the entry is whole and kept, without a diagnostic.
    writeFileSync(file, full.subarray(0, full.length - 1));
    const whole = SessionManager.open(file);
    expect(whole.getEntries().map((e) => e.id)).toEqual(ids);
    expect(whole.getDiagnostics()).toEqual([]);
    const extra = whole.appendMessage(userMsg("after unterminated"));
    const reopened = SessionManager.open(file);
    expect(reopened.getEntries().map((e) => e.id)).toEqual([...ids, extra]);
    expect(reopened.getDiagnostics()).toEqual([]);
  });

  it("appending after a torn last line starts a new line; the file reopens with every entry", () => {
    const { file, ids } = writtenSession(tmp.dir);
    const full = readFileSync(file);
    const lastStart = full.lastIndexOf(0x0a, full.length - 2) + 1;
    const torn = full.subarray(0, lastStart + 17);
    writeFileSync(file, torn);

    const sm = SessionManager.open(file);
    const u = sm.appendMessage(userMsg("continue"));
    const a = sm.appendMessage(assistantMsg("continued"));
    const after = readFileSync(file);
    expect(after.subarray(0, torn.length).equals(torn)).toBe(true); // nothing earlier rewritten
    expect(after[torn.length]).toBe(0x0a);

    const re = SessionManager.open(file);
    expect(re.getEntries().map((e) => e.id)).toEqual([...ids.slice(0, -1), u, a]);
    // The old fragment is now a malformed line in the middle: skipped with a diagnostic.
    const diags = re.getDiagnostics();
    expect(diags).toHaveLength(1);
    expect(diags[0]!.message).toMatch(/line 6: malformed JSON line skipped/);
    expect(re.getEntry(u)!.parentId).toBe(ids[ids.length - 2]);
    expect(re.buildSessionContext().messages.at(-1)).toEqual((sm.getEntry(a) as SessionMessageEntry).message);
  });

  it("malformed lines in the middle are skipped with diagnostics naming their line", () => {
    const { file, ids } = writtenSession(tmp.dir);
    const rows = readFileSync(file, "utf8").split("\n");
    rows.splice(2, 0, "{not json", "[1,2,3]", '{"type":"message","parentId":null,"message":{"role":"user","content":"no id"}}', "");
    const content = rows.join("\n");
    writeFileSync(file, content);
    const sm = SessionManager.open(file);
    expect(sm.getEntries().map((e) => e.id)).toEqual(ids);
    const messages = sm.getDiagnostics().map((d) => d.message);
    expect(messages).toEqual([
      "line 3: malformed JSON line skipped",
      'line 4: not a session entry (no "type"), skipped',
      'entry 3 (type "message") has no id, skipped',
    ]);
    expect(readFileSync(file, "utf8")).toBe(content);
  });

  it("a file torn inside its header starts a new session there without touching the fragment", () => {
    const file = join(tmp.dir, "torn-header.jsonl");
    const fragment = '{"type":"session","version":3,"id":"0197';
    writeFileSync(file, fragment);
    const sm = SessionManager.open(file, undefined, "/cwd");
    expect(sm.getEntries()).toEqual([]);
    expect(sm.getDiagnostics()[0]!.message).toMatch(/incomplete last line/);
    expect(readFileSync(file, "utf8")).toBe(fragment);
    sm.appendMessage(userMsg("q"));
    sm.appendMessage(assistantMsg("a"));
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(`${fragment}\n{"type":"session"`)).toBe(true);
    const re = SessionManager.open(file);
    expect(re.getSessionId()).toBe(sm.getSessionId());
    expect(re.getEntries()).toEqual(sm.getEntries());
    expect(re.getCwd()).toBe("/cwd");

    const empty = join(tmp.dir, "empty.jsonl");
    writeFileSync(empty, "");
    const e = SessionManager.open(empty);
    expect(e.getEntries()).toEqual([]);
    expect(e.getDiagnostics()).toEqual([]);
  });

  it("parseSessionData reports unterminated data and keeps a complete unterminated entry", () => {
    const header = '{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}';
    const entry = '{"type":"custom","id":"0000abcd","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","customType":"t"}';
    const p = parseSessionData(`${header}\n${entry}`, "mem");
    expect(p.needsNewline).toBe(true);
    expect(p.entries.map((e) => e.id)).toEqual(["0000abcd"]);
    expect(p.diagnostics).toEqual([]);
    const q = parseSessionData(`${header}\r\n${entry}\r\n`, "mem");
    expect(q.needsNewline).toBe(false);
    expect(q.entries).toHaveLength(1);
    expect(parseSessionData("", "mem")).toMatchObject({ header: null, needsNewline: false, parsedLines: 0 });
  });
});

describe("session files: migration of versions 1 and 2", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
  });
  afterEach(() => tmp.cleanup());

  it("v1: adds an id/parentId chain, maps firstKeptEntryIndex, stores the result atomically", () => {
    const file = join(tmp.dir, "v1.jsonl");
    copyFileSync(join(FIXTURES_DIR, "v1-linear.jsonl"), file);
    const sm = SessionManager.open(file);
    const entries = sm.getEntries();
    expect(entries).toHaveLength(8);
    let prev: string | null = null;
    for (const e of entries) {
      expect(e.id).toMatch(HEX8);
      expect(e.parentId).toBe(prev);
      prev = e.id;
    }
    const compaction = entries.find((e) => e.type === "compaction") as any;
    expect(compaction.firstKeptEntryIndex).toBeUndefined();
    const kept = sm.getEntry(compaction.firstKeptEntryId) as any;
    expect(kept.message.content).toBe("second question");
    const ctx = sm.buildSessionContext();
    expect(ctx.thinkingLevel).toBe("low");
    expect(ctx.model).toEqual({ provider: "anthropic", modelId: "claude-3-5-sonnet" });
    expect(ctx.messages.map((m: any) => (m.role === "compactionSummary" ? `summary:${m.summary}` : m.role))).toEqual([
      "summary:User said hello.",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(sm.getDiagnostics()).toEqual([{ level: "info", source: file, message: "session file migrated from version 1 to 3" }]);

    // Stored as version 3 (ids persisted), no temporary file left behind.
    const rows = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(rows[0]).toMatchObject({ type: "session", version: 3, id: "5d1f0c2e-8a4b-4c1d-9e2f-3a4b5c6d7e8f" });
    expect(readdirSync(tmp.dir)).toEqual(["v1.jsonl"]);
    const re = SessionManager.open(file);
    expect(re.getEntries()).toEqual(entries);
    expect(re.getDiagnostics()).toEqual([]);
  });

  it("v2: hookMessage becomes custom; ids and labels are kept", () => {
    const file = join(tmp.dir, "v2.jsonl");
    copyFileSync(join(FIXTURES_DIR, "v2-tree.jsonl"), file);
    const sm = SessionManager.open(file);
    expect(sm.getEntries().map((e) => e.id)).toEqual(["b2000001", "b2000002", "b2000003", "b2000004"]);
    const hook = sm.getEntry("b2000002") as any;
    expect(hook.message).toMatchObject({ role: "custom", customType: "hook-x", content: "A hook injected this.", display: true });
    expect(sm.getLabel("b2000001")).toBe("first");
    expect(sm.buildSessionContext().messages.map((m: any) => m.role)).toEqual(["user", "custom", "assistant"]);
    const header = JSON.parse(readFileSync(file, "utf8").split("\n")[0]!);
    expect(header.version).toBe(3);
    expect(readFileSync(file, "utf8")).not.toContain("hookMessage");
    // Later appends are plain appends.
    const before = readFileSync(file);
    const id = sm.appendMessage(userMsg("more"));
    expect(readFileSync(file).subarray(0, before.length).equals(before)).toBe(true);
    expect(SessionManager.open(file).getLeafId()).toBe(id);
  });

  it("reference-compatible helpers load, parse and migrate without writing", () => {
    const file = join(tmp.dir, "v1.jsonl");
    copyFileSync(join(FIXTURES_DIR, "v1-linear.jsonl"), file);
    const before = readFileSync(file);
    const loaded = loadEntriesFromFile(file);
    expect(loaded).toHaveLength(9);
    expect((loaded[0] as any).version).toBe(3);
    expect(loaded.slice(1).every((e: any) => HEX8.test(e.id))).toBe(true);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(loadEntriesFromFile(join(tmp.dir, "missing.jsonl"))).toEqual([]);

    const raw = parseSessionEntries(`${before.toString("utf8")}{broken\n`);
    expect(raw).toHaveLength(9);
    expect((raw[0] as any).version).toBeUndefined();
    migrateSessionEntries(raw);
    expect((raw[0] as any).version).toBe(3);
    expect((raw[6] as any).firstKeptEntryId).toBe((raw[4] as any).id);
  });
});

describe("session files: the atomic rewrite", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
  });
  afterEach(() => tmp.cleanup());

  it("replaces the content, keeps the file's permissions and leaves no temporary file", () => {
    const file = join(tmp.dir, "s.jsonl");
    writeFileSync(file, "old\n", { mode: 0o600 });
    chmodSync(file, 0o600);
    writeFileAtomic(file, "new\n");
    expect(readFileSync(file, "utf8")).toBe("new\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(tmp.dir)).toEqual(["s.jsonl"]);
  });
});

describe("session files: what a loaded session keeps", () => {
  it("the entries do not keep the file's decoded text alive (only its bytes, for get_messages)", async () => {
    const { setFlagsFromString } = await import("node:v8");
    const { runInNewContext } = await import("node:vm");
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // ~4 MB of ASCII message lines as pi writes them: timestamps and ids are strings of the head.
    const lines = [JSON.stringify({ type: "session", version: 3, id: "0b5c7a4e-1d2f-4a3b-8c9d-0e1f2a3b4c5d", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" })];
    let parent: string | null = null;
    for (let i = 0; i < 8000; i++) {
      const id = i.toString(16).padStart(8, "0");
      const message = i % 2 ? { role: "user", content: "x".repeat(480), timestamp: 1767225600000 + i } : { role: "assistant", content: [{ type: "text", text: "y".repeat(480) }], timestamp: 1767225600000 + i };
      lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date(1767225600000 + i).toISOString(), message }));
      parent = id;
    }
    const data = Buffer.from(lines.join("\n") + "\n", "latin1");
    // Memory outside the heap other than array buffers: external strings (a decoded file over ~1 MB is one).
    const outside = () => {
      gc();
      gc();
      const m = process.memoryUsage();
      return m.external - m.arrayBuffers;
    };
    const before = outside();
    const parsed = parseSessionData(data, "big.jsonl");
    /^x$/.exec("x"); // RegExp's last-match record (RegExp.lastMatch) holds the last subject it saw
    const after = outside();
    expect(parsed.entries).toHaveLength(8000);
    expect(parsed.entries[5]!.timestamp).toBe(new Date(1767225600005).toISOString());
    expect((parsed.entries[5] as SessionMessageEntry).parentId).toBe("00000004");
    expect(after - before).toBeLessThan(data.length / 4);
  });
});

describe("readSessionFile: a chunk at a time", () => {
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(() => tmp?.cleanup());

  it("gives what parsing the whole file gives: lines across chunk ends, a line longer than a chunk, non-ASCII, blank, CRLF and torn lines", () => {
    tmp = makeTempDir();
    const lines = [JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" })];
    let parent: string | null = null;
    for (let i = 0; i < 3000; i++) {
      const id = `m${i}`;
      // ~1 KB lines, one of ~2.5 MB (more than two chunks), some with non-ASCII text
      const text = i === 1500 ? "z".repeat(2_500_000) : `${i % 7 === 0 ? "ünï 🚀 " : ""}${"w".repeat(900 + (i % 13))}`;
      lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: "2026-01-01T00:00:01.000Z", message: { role: i % 2 ? "user" : "assistant", content: text, timestamp: i } }));
      parent = id;
      if (i === 10) lines.push("");
      if (i === 20) lines.push("{not json");
    }
    lines[40] += "\r"; // message m37
    const text = lines.join("\n") + "\n" + '{"type":"message","id":"torn"';
    const file = join(tmp.dir, "big.jsonl");
    writeFileSync(file, text);
    const read = readSessionFile(file);
    const whole = parseSessionData(readFileSync(file), file);
    expect(read.entries).toEqual(whole.entries);
    expect(read.diagnostics).toEqual(whole.diagnostics);
    expect(read.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/^line 24: malformed/), expect.stringMatching(/^line 3004: incomplete last line/)]);
    expect([read.size, read.needsNewline, read.parsedLines, read.completeLines]).toEqual([whole.size, whole.needsNewline, whole.parsedLines, whole.completeLines]);
    expect(read.size).toBe(Buffer.byteLength(text));
    // and the messages' bytes, read again from the file, are each message's JSON text
    const messages = read.entries.map((e) => (e as SessionMessageEntry).message);
    for (const i of [0, 7, 36, 37, 38, 1500, 2999]) {
      const m = messages[i]!;
      const bytes = read.rawMessages!.get(m);
      if (i === 37) expect(bytes).toBeUndefined(); // the CRLF line: no bytes
      else expect(bytes?.toString("utf8")).toBe(JSON.stringify(m));
    }
  });

  it("keeps none of the file's bytes once loaded", async () => {
    const { setFlagsFromString } = await import("node:v8");
    const { runInNewContext } = await import("node:vm");
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    tmp = makeTempDir();
    const lines = [JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" })];
    for (let i = 0; i < 8000; i++) lines.push(JSON.stringify({ type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "x".repeat(480), timestamp: i } }));
    const file = join(tmp.dir, "big.jsonl");
    writeFileSync(file, lines.join("\n") + "\n");
    const size = statSync(file).size;
    const buffers = () => {
      gc();
      gc();
      return process.memoryUsage().arrayBuffers;
    };
    const before = buffers();
    const parsed = readSessionFile(file);
    const after = buffers();
    expect(parsed.entries).toHaveLength(8000);
    expect(parsed.rawMessages!.get((parsed.entries[3] as SessionMessageEntry).message)?.toString("utf8")).toBe(JSON.stringify((parsed.entries[3] as SessionMessageEntry).message));
    expect(after - before).toBeLessThan(size / 4);
  });
});
