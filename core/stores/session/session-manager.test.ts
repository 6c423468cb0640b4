import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { SessionManager } from "./session-manager.js";
import { encodeCwdForSessionDir, getDefaultSessionDir, sessionDirForCwd } from "./session-entries.js";
import { assistantMsg, makeTempDir, toolResultMsg, userMsg } from "../../../tests/fixtures/sessions/helpers.js";

const HEX8 = /^[0-9a-f]{8}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function lines(file: string): any[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

describe("SessionManager", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
    SessionManager.setDefaultRoot(undefined);
  });
  afterEach(() => {
    SessionManager.setDefaultRoot(undefined);
    tmp.cleanup();
  });

  describe("locations", () => {
    it("encodes the cwd like the reference", () => {
      expect(encodeCwdForSessionDir("/home/u/my proj")).toBe("--home-u-my proj--");
      expect(encodeCwdForSessionDir("C:\\Users\\u\\p")).toBe("--C--Users-u-p--");
      expect(encodeCwdForSessionDir("\\\\server\\share")).toBe("---server-share--"); // only one leading separator is dropped, as in the reference
      expect(sessionDirForCwd("/a/b", "/root/sessions")).toBe("/root/sessions/--a-b--");
      expect(getDefaultSessionDir("/a/b", "/agent")).toBe("/agent/sessions/--a-b--");
      expect(SessionManager.resolveSessionDir("/a/b", "/explicit")).toBe("/explicit");
    });

    it("create() without sessionDir uses the configured root and fails clearly without one", () => {
      expect(() => SessionManager.create("/x/y")).toThrow(/setDefaultRoot/);
      const root = join(tmp.dir, "sessions");
      SessionManager.setDefaultRoot(root);
      const sm = SessionManager.create("/x/y");
      expect(sm.getSessionDir()).toBe(join(root, "--x-y--"));
      const file = sm.getSessionFile()!;
      expect(dirname(file)).toBe(join(root, "--x-y--"));
      const name = basename(file);
      const m = /^(.+)_(.+)\.jsonl$/.exec(name)!;
      expect(m).not.toBeNull();
      expect(m[2]).toBe(sm.getSessionId());
      expect(m[2]).toMatch(UUID);
      expect(m[1]).toBe(sm.getHeader()!.timestamp.replace(/[:.]/g, "-"));
      // Nothing is created before the first assistant message, not even the folder.
      expect(existsSync(root)).toBe(false);
    });
  });

  describe("lazy first write and line format", () => {
    it("writes nothing before the first user message, then everything, then one line per entry", () => {
      const sm = SessionManager.create("/proj", tmp.dir);
      const file = sm.getSessionFile()!;
      sm.appendModelChange("anthropic", "claude-sonnet-4-5");
      sm.appendThinkingLevelChange("high");
      expect(existsSync(file)).toBe(false);
      // The prompt is kept even if its answer never comes (pi 1.6).
      const u = sm.appendMessage(userMsg("hello"));
      expect(existsSync(file)).toBe(true);
      expect(lines(file).map((e) => e.type)).toEqual(["session", "model_change", "thinking_level_change", "message"]);
      const a = sm.appendMessage(assistantMsg("hi"));
      let content = lines(file);
      expect(content).toHaveLength(5);
      expect(content.map((e) => e.type)).toEqual(["session", "model_change", "thinking_level_change", "message", "message"]);
      expect(content[3].id).toBe(u);
      expect(content[4].id).toBe(a);

      const before = readFileSync(file);
      const t = sm.appendMessage(toolResultMsg("c1", "out"));
      const after = readFileSync(file);
      // Appended, nothing earlier touched.
      expect(after.subarray(0, before.length).equals(before)).toBe(true);
      const added = after.subarray(before.length).toString("utf8");
      expect(added.endsWith("\n")).toBe(true);
      expect(added.split("\n").filter(Boolean)).toHaveLength(1);
      expect(JSON.parse(added).id).toBe(t);
      content = lines(file);
      expect(content).toHaveLength(6);
    });

    it("writes exactly the reference field names, header and id scheme", () => {
      const sm = SessionManager.create("/proj", tmp.dir);
      const u = sm.appendMessage(userMsg("q"));
      sm.appendMessage(assistantMsg("a"));
      sm.appendModelChange("openai", "gpt-4o");
      sm.appendThinkingLevelChange("low");
      sm.appendCompaction("sum", u, 1234, { readFiles: ["a"], modifiedFiles: [] }, true);
      sm.appendCustomEntry("ext", { n: 1 });
      sm.appendCustomMessageEntry("ext", "text", false, { d: 2 });
      sm.appendLabelChange(u, "mark");
      sm.appendLabelChange(u, undefined);
      sm.appendSessionInfo("  My name  ");
      sm.branchWithSummary(u, "branch sum", { x: 1 }, false);
      const all = lines(sm.getSessionFile()!);
      const header = all[0];
      expect(Object.keys(header)).toEqual(["type", "version", "id", "timestamp", "cwd"]);
      expect(header).toMatchObject({ type: "session", version: 3, cwd: "/proj" });
      expect(header.id).toMatch(UUID);
      expect(new Date(header.timestamp).toISOString()).toBe(header.timestamp);

      const keys: Record<string, string[]> = {
        message: ["message"],
        model_change: ["provider", "modelId"],
        thinking_level_change: ["thinkingLevel"],
        compaction: ["summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"],
        custom: ["customType", "data"],
        custom_message: ["customType", "content", "display", "details"],
        label: ["targetId", "label"],
        session_info: ["name"],
        branch_summary: ["fromId", "summary", "details", "fromHook"],
      };
      const seenTypes = new Set<string>();
      let prev: string | null = null;
      const ids = new Set<string>();
      for (const e of all.slice(1)) {
        seenTypes.add(e.type);
        expect(e.id).toMatch(HEX8);
        expect(ids.has(e.id)).toBe(false);
        ids.add(e.id);
        expect(new Date(e.timestamp).toISOString()).toBe(e.timestamp);
        const base = ["type", "id", "parentId", "timestamp"];
        const expected = [...base, ...keys[e.type]!];
        // A cleared label has no label field.
        const actual = Object.keys(e);
        expect(actual.every((k) => expected.includes(k))).toBe(true);
        expect(base.every((k) => actual.includes(k))).toBe(true);
        if (e.type !== "branch_summary") expect(e.parentId).toBe(prev);
        prev = e.id;
      }
      expect([...seenTypes].sort()).toEqual(Object.keys(keys).sort());
      expect(all.find((e) => e.type === "session_info").name).toBe("My name");
      expect(all.find((e) => e.type === "branch_summary")).toMatchObject({ parentId: u, fromId: u, summary: "branch sum" });
      expect(all.filter((e) => e.type === "label")[1].label).toBeUndefined();
    });

    it("in-memory sessions never write", () => {
      const sm = SessionManager.inMemory("/mem");
      sm.appendMessage(userMsg("q"));
      sm.appendMessage(assistantMsg("a"));
      expect(sm.getSessionFile()).toBeUndefined();
      expect(sm.isPersisted()).toBe(false);
      expect(sm.getSessionDir()).toBe("");
      expect(sm.getCwd()).toBe("/mem");
      expect(sm.buildSessionContext().messages).toHaveLength(2);
      expect(readdirSync(tmp.dir)).toHaveLength(0);
      expect(SessionManager.inMemory().getCwd()).toBe(process.cwd());
    });
  });

  describe("constructors", () => {
    it.each([
      ["a missing parent", (ids: string[]) => ({ [ids[2]!]: "deadbeef" }), "not in the file"],
      ["a parent that is itself", (ids: string[]) => ({ [ids[3]!]: ids[3]! }), "loops"],
      ["a loop through earlier entries", (ids: string[]) => ({ [ids[1]!]: ids[3]! }), "loops at entry"],
    ])("open() reports a leaf with %s and what was recovered", (_name, rewire, why) => {
      const sm = SessionManager.create("/orig", tmp.dir);
      sm.appendMessage(userMsg("q1"));
      sm.appendMessage(assistantMsg("a1"));
      sm.appendMessage(userMsg("q2"));
      sm.appendMessage(assistantMsg("a2"));
      const file = sm.getSessionFile()!;
      const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const ids = lines.slice(1).map((e) => e.id as string);
      const change = rewire(ids) as Record<string, string>;
      for (const e of lines) if (change[e.id] !== undefined) e.parentId = change[e.id];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      const re = SessionManager.open(file);
      const warning = re.getDiagnostics().find((d) => /session tree damaged/.test(d.message));
      expect(warning?.message).toContain(why);
      expect(warning?.message).toMatch(/recovered the \d+ entries \(\d+ messages\)/);
      expect(warning?.message).toContain(`of ${ids.length} entries`);
    });

    it("open() restores entries, leaf, cwd; sessionDir defaults to the file's folder; cwdOverride wins", () => {
      const sm = SessionManager.create("/orig", tmp.dir);
      sm.appendMessage(userMsg("q"));
      const a = sm.appendMessage(assistantMsg("a"));
      const file = sm.getSessionFile()!;
      const re = SessionManager.open(file);
      expect(re.getSessionId()).toBe(sm.getSessionId());
      expect(re.getLeafId()).toBe(a);
      expect(re.getCwd()).toBe("/orig");
      expect(re.getSessionDir()).toBe(tmp.dir);
      expect(re.getEntries()).toEqual(sm.getEntries());
      expect(re.getDiagnostics()).toEqual([]);
      const other = join(tmp.dir, "other");
      const re2 = SessionManager.open(file, other, "/override");
      expect(re2.getCwd()).toBe("/override");
      expect(re2.getSessionDir()).toBe(other);
      re2.newSession();
      expect(dirname(re2.getSessionFile()!)).toBe(other);
    });

    it("open() of a missing path starts a new session stored at that path", () => {
      const file = join(tmp.dir, "sub", "named.jsonl");
      const sm = SessionManager.open(file, undefined, "/c");
      expect(sm.getSessionFile()).toBe(file);
      expect(sm.getEntries()).toEqual([]);
      sm.appendMessage(userMsg("q"));
      expect(lines(file)).toHaveLength(2);
      sm.appendMessage(assistantMsg("a"));
      expect(lines(file)).toHaveLength(3);
      expect(lines(file)[0]).toMatchObject({ type: "session", cwd: "/c" });
    });

    it("open() refuses a file that is not a session without touching it", () => {
      const file = join(tmp.dir, "notes.jsonl");
      writeFileSync(file, '{"type":"note","text":"hi"}\n');
      expect(() => SessionManager.open(file)).toThrow(/not a session header.*notes\.jsonl/);
      expect(readFileSync(file, "utf8")).toBe('{"type":"note","text":"hi"}\n');
      const dirPath = join(tmp.dir, "adir.jsonl");
      mkdirSync(dirPath);
      expect(() => SessionManager.open(dirPath)).toThrow(/Cannot read session file .*adir\.jsonl/);
    });

    it("continueRecent() picks the newest valid file by mtime, else creates", () => {
      const dir = join(tmp.dir, "proj");
      const fresh = SessionManager.continueRecent("/p", dir);
      expect(fresh.getEntries()).toEqual([]);
      expect(existsSync(fresh.getSessionFile()!)).toBe(false);

      const mk = (text: string, mtime: number): string => {
        const sm = SessionManager.create("/p", dir);
        sm.appendMessage(userMsg(text));
        sm.appendMessage(assistantMsg(text));
        const f = sm.getSessionFile()!;
        utimesSync(f, mtime, mtime);
        return f;
      };
      mk("old", 1_000_000);
      const newer = mk("newer", 2_000_000);
      // A newer file without a header is ignored.
      const junk = join(dir, "junk.jsonl");
      writeFileSync(junk, "not json\n");
      utimesSync(junk, 3_000_000, 3_000_000);
      const sm = SessionManager.continueRecent("/p", dir);
      expect(sm.getSessionFile()).toBe(newer);
      expect(sm.getCwd()).toBe("/p");
      expect(sm.buildSessionContext().messages.map((m) => (m as any).role)).toEqual(["user", "assistant"]);
    });

    it("forkFrom() copies all entries into a new file for the target cwd with parentSession", () => {
      const src = SessionManager.create("/src", join(tmp.dir, "a"));
      const u = src.appendMessage(userMsg("q"));
      src.appendMessage(assistantMsg("a"));
      src.branch(u);
      src.appendMessage(assistantMsg("a2"));
      const target = join(tmp.dir, "b");
      const fork = SessionManager.forkFrom(src.getSessionFile()!, "/dst", target);
      const file = fork.getSessionFile()!;
      expect(dirname(file)).toBe(target);
      const written = lines(file);
      expect(written[0]).toMatchObject({ type: "session", version: 3, cwd: "/dst", parentSession: src.getSessionFile() });
      expect(written[0].id).not.toBe(src.getSessionId());
      expect(written.slice(1)).toEqual(src.getEntries());
      expect(fork.getCwd()).toBe("/dst");
      expect(fork.buildSessionContext()).toEqual(src.buildSessionContext());
      // Appends go to the fork only.
      const srcBytes = readFileSync(src.getSessionFile()!);
      fork.appendMessage(userMsg("more"));
      expect(lines(file)).toHaveLength(written.length + 1);
      expect(readFileSync(src.getSessionFile()!).equals(srcBytes)).toBe(true);

      expect(() => SessionManager.forkFrom(join(tmp.dir, "missing.jsonl"), "/x", target)).toThrow(/Cannot fork.*missing\.jsonl/);
      const empty = join(tmp.dir, "empty.jsonl");
      writeFileSync(empty, "");
      expect(() => SessionManager.forkFrom(empty, "/x", target)).toThrow(/empty or invalid/);
    });

    it("list() and listAll() find sessions (newest first) with names and first messages", async () => {
      const root = join(tmp.dir, "sessions");
      SessionManager.setDefaultRoot(root);
      const a = SessionManager.create("/p1");
      a.appendMessage(userMsg("first in p1", 1000));
      a.appendMessage(assistantMsg("reply", "anthropic", "m", 2000));
      a.appendSessionInfo("Named one");
      const b = SessionManager.create("/p1");
      b.appendMessage(userMsg("second in p1", 5000));
      b.appendMessage(assistantMsg("reply2", "anthropic", "m", 6000));
      const c = SessionManager.create("/p2");
      c.appendMessage(userMsg("in p2", 3000));
      c.appendMessage(assistantMsg("reply3", "anthropic", "m", 4000));
      // No message at all: no file, not listed.
      SessionManager.create("/p1").appendModelChange("anthropic", "m");

      const p1 = await SessionManager.list("/p1");
      expect(p1.map((s) => s.id)).toEqual([b.getSessionId(), a.getSessionId()]);
      expect(p1[1]).toMatchObject({
        path: a.getSessionFile(),
        cwd: "/p1",
        name: "Named one",
        messageCount: 2,
        firstMessage: "first in p1",
        allMessagesText: "first in p1 reply",
      });
      expect(p1[1].modified.getTime()).toBe(2000);
      expect(p1[1].created.toISOString()).toBe(a.getHeader()!.timestamp);

      const progress: number[] = [];
      const all = await SessionManager.listAll(root, (n) => progress.push(n));
      expect(all.map((s) => s.id)).toEqual([b.getSessionId(), c.getSessionId(), a.getSessionId()]);
      expect(progress.sort()).toEqual([1, 2, 3]);
      // The reference's listAll(onProgress) form, using the configured root.
      expect((await SessionManager.listAll(() => {})).length).toBe(3);
      SessionManager.setDefaultRoot(undefined);
      await expect(SessionManager.listAll()).rejects.toThrow(/no sessions root/);
      expect(await SessionManager.listAll(join(tmp.dir, "nothing-here"))).toEqual([]);
    });
  });

  describe("tree, branches, labels, names", () => {
    it("branches, getChildren, getBranch, getTree with labels", () => {
      const sm = SessionManager.inMemory("/t");
      const u1 = sm.appendMessage(userMsg("u1"));
      const a1 = sm.appendMessage(assistantMsg("a1"));
      const u2 = sm.appendMessage(userMsg("u2"));
      const a2 = sm.appendMessage(assistantMsg("a2"));
      sm.branch(a1);
      expect(sm.getLeafId()).toBe(a1);
      const u3 = sm.appendMessage(userMsg("u3"));
      expect(sm.getEntry(u3)!.parentId).toBe(a1);
      expect(sm.getChildren(a1).map((e) => e.id)).toEqual([u2, u3]);
      expect(sm.getBranch().map((e) => e.id)).toEqual([u1, a1, u3]);
      expect(sm.getBranch(a2).map((e) => e.id)).toEqual([u1, a1, u2, a2]);
      expect(sm.getLeafEntry()!.id).toBe(u3);

      sm.appendLabelChange(u2, "alt");
      sm.appendLabelChange(u1, "start");
      sm.appendLabelChange(u1, undefined);
      expect(sm.getLabel(u2)).toBe("alt");
      expect(sm.getLabel(u1)).toBeUndefined();
      expect(() => sm.appendLabelChange("ffffffff", "x")).toThrow(/ffffffff not found/);
      expect(() => sm.branch("ffffffff")).toThrow(/not found/);

      const tree = sm.getTree();
      expect(tree).toHaveLength(1);
      expect(tree[0]!.entry.id).toBe(u1);
      const a1Node = tree[0]!.children[0]!;
      expect(a1Node.entry.id).toBe(a1);
      expect(a1Node.children.map((n) => n.entry.id)).toEqual([u2, u3]);
      expect(a1Node.children[0]!.label).toBe("alt");
      expect(a1Node.children[0]!.labelTimestamp).toBeDefined();
      expect(tree[0]!.label).toBeUndefined();

      sm.resetLeaf();
      expect(sm.getLeafId()).toBeNull();
      expect(sm.buildSessionContext().messages).toEqual([]);
      const root2 = sm.appendMessage(userMsg("new root"));
      expect(sm.getEntry(root2)!.parentId).toBeNull();
      expect(sm.getTree()).toHaveLength(2);
    });

    it("session names: latest session_info wins, empty clears", () => {
      const sm = SessionManager.inMemory();
      expect(sm.getSessionName()).toBeUndefined();
      sm.appendSessionInfo("First");
      sm.appendSessionInfo(" Second ");
      expect(sm.getSessionName()).toBe("Second");
      sm.appendSessionInfo("   ");
      expect(sm.getSessionName()).toBeUndefined();
    });

    it("createBranchedSession() writes a new file with only the root→leaf path and its labels", () => {
      const sm = SessionManager.create("/b", tmp.dir);
      const u1 = sm.appendMessage(userMsg("u1"));
      const a1 = sm.appendMessage(assistantMsg("a1"));
      const u2 = sm.appendMessage(userMsg("u2"));
      sm.appendMessage(assistantMsg("a2"));
      sm.appendLabelChange(u1, "keep");
      sm.appendLabelChange(u2, "dropped");
      sm.branch(a1);
      const u3 = sm.appendMessage(userMsg("u3"));
      const oldFile = sm.getSessionFile()!;
      const oldBytes = readFileSync(oldFile);

      const newFile = sm.createBranchedSession(u3)!;
      expect(newFile).not.toBe(oldFile);
      expect(sm.getSessionFile()).toBe(newFile);
      expect(readFileSync(oldFile).equals(oldBytes)).toBe(true);
      const written = lines(newFile);
      expect(written[0]).toMatchObject({ type: "session", parentSession: oldFile, cwd: "/b" });
      const ids = written.slice(1).map((e) => e.id);
      expect(ids.slice(0, 3)).toEqual([u1, a1, u3]);
      const labels = written.filter((e) => e.type === "label");
      expect(labels).toHaveLength(1);
      expect(labels[0]).toMatchObject({ targetId: u1, label: "keep", parentId: u3 });
      expect(sm.getLabel(u1)).toBe("keep");
      expect(sm.getLabel(u2)).toBeUndefined();
      expect(() => sm.createBranchedSession("ffffffff")).toThrow(/not found/);

      // A path with a user message only is written at once; one without a message, lazily.
      const sm2 = SessionManager.create("/b", join(tmp.dir, "two"));
      const change = sm2.appendModelChange("anthropic", "m");
      const only = sm2.appendMessage(userMsg("lonely"));
      const f2 = sm2.createBranchedSession(only)!;
      expect(lines(f2).map((e) => e.type)).toEqual(["session", "model_change", "message"]);
      const f3 = sm2.createBranchedSession(change)!;
      expect(existsSync(f3)).toBe(false);
      sm2.appendMessage(assistantMsg("now"));
      expect(lines(f3).map((e) => e.type)).toEqual(["session", "model_change", "message"]);

      const mem = SessionManager.inMemory();
      const m1 = mem.appendMessage(userMsg("x"));
      mem.appendMessage(userMsg("y"));
      expect(mem.createBranchedSession(m1)).toBeUndefined();
      expect(mem.getEntries().map((e) => e.id)).toEqual([m1]);
    });

    it("newSession() resets the tree and honours id and parentSession", () => {
      const sm = SessionManager.create("/n", tmp.dir);
      sm.appendMessage(userMsg("q"));
      sm.appendMessage(assistantMsg("a"));
      const first = sm.getSessionFile()!;
      const path = sm.newSession({ id: "my-session-id", parentSession: first });
      expect(path).toBe(sm.getSessionFile());
      expect(basename(path!)).toMatch(/_my-session-id\.jsonl$/);
      expect(sm.getEntries()).toEqual([]);
      expect(sm.getLeafId()).toBeNull();
      expect(sm.getHeader()).toMatchObject({ id: "my-session-id", parentSession: first, version: 3 });
      sm.appendMessage(assistantMsg("hello"));
      expect(lines(path!)[0]).toMatchObject({ id: "my-session-id", parentSession: first });
    });

    it("rejects bad messages with a clear error", () => {
      const sm = SessionManager.inMemory();
      expect(() => sm.appendMessage(undefined as any)).toThrow(/appendMessage: message must be an object/);
      expect(() => sm.appendMessage({ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 0 } as any)).toThrow(
        /appendCompaction/,
      );
      expect(sm.getEntries()).toEqual([]);
    });
  });

  describe("buildSessionContext", () => {
    it("latest thinking level and model (model_change or assistant) on the path win", () => {
      const sm = SessionManager.inMemory();
      expect(sm.buildSessionContext()).toEqual({ messages: [], thinkingLevel: "off", model: null });
      sm.appendThinkingLevelChange("low");
      sm.appendModelChange("openai", "gpt-4o");
      const u = sm.appendMessage(userMsg("q"));
      expect(sm.buildSessionContext()).toMatchObject({ thinkingLevel: "low", model: { provider: "openai", modelId: "gpt-4o" } });
      sm.appendMessage(assistantMsg("a", "anthropic", "claude-x"));
      sm.appendThinkingLevelChange("high");
      expect(sm.buildSessionContext()).toMatchObject({ thinkingLevel: "high", model: { provider: "anthropic", modelId: "claude-x" } });
      sm.branch(u);
      expect(sm.buildSessionContext()).toMatchObject({ thinkingLevel: "low", model: { provider: "openai", modelId: "gpt-4o" } });
    });

    it("compaction: summary, kept entries from firstKeptEntryId, then entries after it", () => {
      const sm = SessionManager.inMemory();
      sm.appendMessage(userMsg("u1"));
      sm.appendMessage(assistantMsg("a1"));
      const u2 = sm.appendMessage(userMsg("u2"));
      sm.appendMessage(assistantMsg("a2"));
      const cid = sm.appendCompaction("summary of u1/a1", u2, 999, { readFiles: [] });
      sm.appendMessage(userMsg("u3"));
      sm.appendCustomMessageEntry("ext", [{ type: "text", text: "injected" }], true, { k: 1 });
      sm.appendCustomEntry("state-only", { n: 1 });
      const ctx = sm.buildSessionContext();
      const c = sm.getEntry(cid)!;
      expect(ctx.messages[0]).toEqual({
        role: "compactionSummary",
        summary: "summary of u1/a1",
        tokensBefore: 999,
        timestamp: new Date(c.timestamp).getTime(),
      });
      const describe = (m: any): string =>
        m.role === "custom" ? `custom:${m.customType}` : m.role === "compactionSummary" ? "summary" : `${m.role}:${typeof m.content === "string" ? m.content : m.content[0].text}`;
      expect(ctx.messages.map(describe)).toEqual(["summary", "user:u2", "assistant:a2", "user:u3", "custom:ext"]);
      expect(ctx.messages[4]).toMatchObject({ role: "custom", display: true, details: { k: 1 }, content: [{ type: "text", text: "injected" }] });

      // A second compaction replaces the first.
      const u4 = sm.appendMessage(userMsg("u4"));
      sm.appendCompaction("second", u4, 50);
      expect(sm.buildSessionContext().messages.map(describe)).toEqual(["summary", "user:u4"]);
      expect((sm.buildSessionContext().messages[0] as any).summary).toBe("second");
    });

    it("branch summaries become branchSummary messages; root branch summary uses fromId 'root'", () => {
      const sm = SessionManager.inMemory();
      const u1 = sm.appendMessage(userMsg("u1"));
      sm.appendMessage(assistantMsg("a1"));
      const bs = sm.branchWithSummary(u1, "what happened there", { readFiles: [] }, true);
      sm.appendMessage(userMsg("u2"));
      const ctx = sm.buildSessionContext();
      expect(ctx.messages.map((m: any) => m.role)).toEqual(["user", "branchSummary", "user"]);
      expect(ctx.messages[1]).toEqual({
        role: "branchSummary",
        summary: "what happened there",
        fromId: u1,
        timestamp: new Date(sm.getEntry(bs)!.timestamp).getTime(),
      });
      const rootBs = sm.branchWithSummary(null, "from the top");
      expect(sm.getEntry(rootBs)).toMatchObject({ parentId: null, fromId: "root" });
      expect(sm.buildSessionContext().messages).toEqual([
        { role: "branchSummary", summary: "from the top", fromId: "root", timestamp: expect.any(Number) },
      ]);
      expect(() => sm.branchWithSummary("ffffffff", "x")).toThrow(/not found/);
    });
  });

  describe("write failures", () => {
    it("keeps entries in memory, reports a diagnostic, and writes them on a later append", () => {
      const sm = SessionManager.create("/w", tmp.dir);
      const seen: string[] = [];
      sm.onDiagnostic((d) => seen.push(d.level));
      const file = sm.getSessionFile()!;
      // A folder where the file should be makes every write fail (works as root too).
      mkdirSync(file);
      sm.appendMessage(userMsg("q"));
      const a = sm.appendMessage(assistantMsg("a"));
      const u2 = sm.appendMessage(userMsg("q2"));
      expect(sm.hasPendingWrites()).toBe(true);
      const errors = sm.getDiagnostics().filter((d) => d.level === "error");
      expect(errors).toHaveLength(1); // repeated identical failures are reported once
      expect(errors[0]!.source).toBe(file);
      expect(errors[0]!.message).toMatch(/could not write the session/);
      expect(sm.getLeafId()).toBe(u2);
      expect(sm.getEntry(a)).toBeDefined();

      rmSync(file, { recursive: true });
      const a2 = sm.appendMessage(assistantMsg("a2"));
      expect(sm.hasPendingWrites()).toBe(false);
      const written = lines(file);
      expect(written.map((e) => (e.type === "session" ? "header" : e.id))).toEqual(["header", ...sm.getEntries().map((e) => e.id)]);
      expect(written[written.length - 1].id).toBe(a2);
      expect(sm.getDiagnostics().some((d) => d.level === "info" && /resumed/.test(d.message))).toBe(true);
      expect(seen).toEqual(["error", "info"]);
      const re = SessionManager.open(file);
      expect(re.getEntries()).toEqual(sm.getEntries());
    });

    it("flushPendingWrites() retries without an append and respects the lazy rule", () => {
      const sm = SessionManager.create("/w", join(tmp.dir, "d"));
      sm.appendModelChange("anthropic", "m");
      expect(sm.flushPendingWrites()).toBe(true);
      expect(existsSync(sm.getSessionFile()!)).toBe(false);
      const file = sm.getSessionFile()!;
      mkdirSync(file, { recursive: true });
      sm.appendMessage(userMsg("q"));
      expect(sm.flushPendingWrites()).toBe(false);
      rmSync(file, { recursive: true });
      expect(sm.flushPendingWrites()).toBe(true);
      expect(lines(file)).toHaveLength(3);
      expect(statSync(file).isFile()).toBe(true);
    });
  });
});
