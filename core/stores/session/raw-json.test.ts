/**
 * Issue 20: get_messages copies a loaded message's JSON text out of the session file's bytes.
 * The bytes must be exactly the text the message object was parsed from (or nothing).
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageValueRange, messagesRecord, type RawMessageJson } from "./raw-json.js";
import { parseSessionData } from "./session-file.js";
import { SessionManager } from "./session-manager.js";
import { makeTempDir } from "../../../tests/fixtures/sessions/helpers.js";

const header = JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" });
let n = 0;
const entry = (message: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "message", id: `e${++n}`, parentId: n > 1 ? `e${n - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", ...extra, message });

/** The range as text, or undefined. */
function rangeText(line: string): string | undefined {
  const b = Buffer.from(line, "utf8");
  const r = messageValueRange(b, 0, b.length);
  return r ? b.subarray(r[0], r[1]).toString("utf8") : undefined;
}

describe("messageValueRange", () => {
  it("finds the value of the literal top-level key, whatever the strings and nesting hold", () => {
    const message = {
      role: "assistant",
      content: [
        { type: "toolCall", id: "c1", name: "commit", arguments: { message: "fix: a \"quoted\" }] brace", path: "C:\\dir\\" } },
        { type: "text", text: 'he said "message": {not a key} \\" and ünïcödé 🚀 — 漢字' },
      ],
      details: { message: { nested: [1, 2, { message: null }] } },
      timestamp: 5,
    };
    const line = entry(message);
    const text = rangeText(line);
    expect(text).toBe(JSON.stringify(message));
    expect(JSON.parse(text!)).toEqual(message);
  });

  it("accepts whitespace around the members (the text still parses to the message)", () => {
    expect(rangeText('{ "type" : "message" , "id":"a", "message" : {"role":"user","content":"x"}}')).toBe('{"role":"user","content":"x"}');
  });

  it("gives nothing when the key is not the last member, is escaped, repeated, or the line has more after it", () => {
    const m = '{"role":"user","content":"x"}';
    // a later member: the object's own text is not the line's end
    expect(rangeText(`{"type":"message","message":${m},"id":"a"}`)).toBeUndefined();
    // a duplicate spelt with an escape wins in JSON.parse: the literal one is not the value
    expect(rangeText(`{"type":"message","message":${m},"m\\u0065ssage":{"role":"user","content":"y"}}`)).toBeUndefined();
    // the escaped spelling alone is never taken
    expect(rangeText(`{"type":"message","m\\u0065ssage":${m}}`)).toBeUndefined();
    // trailing whitespace or CR after the object
    expect(rangeText(`{"type":"message","message":${m}} `)).toBeUndefined();
    expect(rangeText(`{"type":"message","message":${m}}\r`)).toBeUndefined();
    // not an object
    expect(rangeText(`{"type":"message","message":[1,2]}`)).toBeUndefined();
    expect(rangeText(`{"type":"message","message":"text"}`)).toBeUndefined();
    expect(rangeText(`{"type":"message"}`)).toBeUndefined();
  });

  it("with duplicates, takes the last literal key when it ends the line (JSON.parse keeps that one)", () => {
    const line = '{"type":"message","message":{"role":"user","content":"old"},"message":{"role":"user","content":"new"}}';
    expect(rangeText(line)).toBe('{"role":"user","content":"new"}');
    expect(JSON.parse(line).message).toEqual(JSON.parse(rangeText(line)!));
  });
});

describe("loaded messages keep their file bytes", () => {
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(() => tmp?.cleanup());

  const messages = [
    { role: "user", content: "question — ünïcödé 🚀", timestamp: 1 },
    { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "say", arguments: { message: "hi" } }], stopReason: "toolUse", timestamp: 2 },
    { role: "toolResult", toolCallId: "c1", toolName: "say", content: [{ type: "text", text: 'a "b" \\ c\u2028d' }], isError: false, timestamp: 3 },
    { role: "assistant", content: [{ type: "text", text: "漢字 done" }], stopReason: "stop", timestamp: 4 },
  ];

  function parse(lines: string[]) {
    const p = parseSessionData(lines.join("\n") + "\n", "test.jsonl");
    const raw = p.rawMessages as RawMessageJson;
    return { p, raw, get: (m: object) => raw?.get(m)?.toString("utf8") };
  }

  it("every message's bytes are its JSON text, also after non-ASCII lines (byte and character offsets differ)", () => {
    n = 0;
    const { p, get } = parse([header, ...messages.map((m) => entry(m))]);
    const loaded = p.entries.map((e) => (e as { message: object }).message);
    expect(loaded).toEqual(messages);
    for (const m of loaded) expect(get(m)).toBe(JSON.stringify(m));
  });

  it("a CRLF line, a line with more after the message and a torn last line fall back (no bytes), the others keep theirs", () => {
    n = 0;
    const lines = [header, entry(messages[0]) + "\r", entry(messages[1]), entry(messages[2]).replace(/}$/, ',"extra":1}'), entry(messages[3])];
    const p = parseSessionData(lines.join("\n"), "test.jsonl"); // the last line has no newline: still whole JSON
    const loaded = p.entries.map((e) => (e as { message: object }).message);
    const got = loaded.map((m) => p.rawMessages!.get(m)?.toString("utf8"));
    expect(got).toEqual([undefined, JSON.stringify(messages[1]), undefined, JSON.stringify(messages[3])]);
  });

  it("copies of a loaded message, and messages of another file, get no bytes", () => {
    n = 0;
    const a = parse([header, entry(messages[0])]);
    const b = parse([header, entry(messages[0])]);
    const m = (a.p.entries[0] as { message: object }).message;
    expect(a.get(m)).toBeDefined();
    expect(a.get({ ...m })).toBeUndefined();
    expect(a.get(structuredClone(m))).toBeUndefined();
    expect(b.get(m)).toBeUndefined();
    // the tag is invisible to JSON, keys and equality
    expect(Object.keys(m)).toEqual(Object.keys(messages[0]!));
    expect(JSON.stringify(m)).toBe(JSON.stringify(messages[0]));
  });

  it("a message line is parsed in two parts only when that gives JSON.parse's entry; any other line is parsed whole", () => {
    const m = { role: "user", content: "x", timestamp: 1 };
    const mj = JSON.stringify(m);
    const lines = [
      header,
      `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":${mj}}`, // split
      `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"y \\\" }} z","timestamp":2}}`, // split; braces inside a string
      `{"type":"message","id":"c\\"q","parentId":"b","timestamp":"t","message":${mj}}`, // an escape in the head: whole
      `{"type":"message","id":"d","parentId":"c\\"q","timestamp":"t","message":${mj} }`, // a space before the last brace: whole, no bytes
      `{"type":"message","id":"e","parentId":"d","timestamp":"t","message":${mj},"message":{"role":"user","content":"later"}}`, // duplicate: whole
      `{"type":"message","id":"f","parentId":"e","timestamp":"t","message":${mj},"extra":{"a":1}}`, // a member after it: whole, no bytes
      `{"type":"message","id":"g","parentId":"f","timestamp":"t","message":[1]}`, // not an object: whole
    ];
    const p = parseSessionData(lines.join("\n") + "\n", "t.jsonl");
    expect(p.diagnostics).toEqual([]);
    const expected = lines.slice(1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(p.entries).toEqual(expected);
    for (const [i, e] of p.entries.entries()) expect(Object.keys(e)).toEqual(Object.keys(expected[i]!));
    const bytes = p.entries.map((e) => {
      const msg = (e as { message: unknown }).message;
      return msg && typeof msg === "object" && !Array.isArray(msg) ? p.rawMessages!.get(msg)?.toString("utf8") : undefined;
    });
    expect(bytes).toEqual([
      mj,
      JSON.stringify(expected[1]!.message),
      mj,
      undefined,
      '{"role":"user","content":"later"}',
      undefined,
      undefined,
    ]);
  });

  it("a version 2 file (migrated in memory) keeps no bytes", () => {
    const v2 = JSON.stringify({ type: "session", version: 2, id: "s2", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" });
    const line = JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "hookMessage", customType: "x", content: "c", display: true, timestamp: 1 } });
    const p = parseSessionData(`${v2}\n${line}\n`, "v2.jsonl");
    expect(p.migratedFrom).toBe(2);
    expect(p.rawMessages).toBeUndefined();
  });

  it("SessionManager: the loaded messages have bytes; appended ones, and those after /new, do not", () => {
    tmp = makeTempDir();
    n = 0;
    const file = join(tmp.dir, "s.jsonl");
    writeFileSync(file, [header, ...messages.map((m) => entry(m))].join("\n") + "\n");
    const sm = SessionManager.open(file);
    const ctx = sm.buildSessionContext();
    for (const m of ctx.messages) expect(Buffer.from(sm.rawMessageJson(m)!).toString("utf8")).toBe(JSON.stringify(m));
    sm.appendMessage({ role: "user", content: "later", timestamp: 9 });
    expect(sm.rawMessageJson(sm.buildSessionContext().messages.at(-1)!)).toBeUndefined();
    sm.newSession();
    expect(sm.rawMessageJson(ctx.messages[0]!)).toBeUndefined();
  });
});

describe("messagesRecord", () => {
  it("is the same bytes as JSON.stringify of the record, with and without file bytes, in any mix", () => {
    n = 0;
    const ms = [
      { role: "user", content: "one ü", timestamp: 1 },
      { role: "assistant", content: [{ type: "text", text: "two 🚀" }], timestamp: 2 },
      { role: "user", content: "three", timestamp: 3 },
    ];
    const p = parseSessionData([header, ...ms.map((m) => entry(m))].join("\n") + "\n", "t.jsonl");
    const loaded = p.entries.map((e) => (e as { message: object }).message);
    const record = (id: unknown, list: unknown[]) => JSON.stringify({ id, type: "response", command: "get_messages", success: true, data: { messages: list } }) + "\n";
    const head = (id: unknown) => record(id, []).slice(0, -"]}}\n".length);
    const cases: unknown[][] = [
      [],
      loaded,
      [{ role: "custom", content: "new" }, ...loaded, { role: "user", content: "x" }],
      [loaded[0], { role: "user", content: "between" }, { role: "user", content: "and" }, loaded[2]],
      [undefined, loaded[1], undefined],
      [...loaded].reverse(), // out of file order: found by identity
      [loaded[1], loaded[1], { role: "user", content: "x" }, loaded[0]], // repeated
      [{ role: "user", content: "only new ü" }, { role: "user", content: "no bytes" }],
    ];
    for (const [i, list] of cases.entries()) {
      const id = i % 2 ? `req_${i}` : i;
      const out = messagesRecord(head(id), list, (m) => p.rawMessages!.get(m), "]}}\n").toString("utf8");
      expect(out).toBe(record(id, list));
      // the store's own builder (one buffer, each message copied into place) gives the same bytes
      expect(Buffer.from(p.rawMessages!.record(head(id), list, "]}}\n")).toString("utf8")).toBe(record(id, list));
    }
  });
});

describe("a loaded file's bytes are read again from it, while it is the file that was loaded", () => {
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(() => tmp?.cleanup());
  const ms = [
    { role: "user", content: "one ü", timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "two 🚀" }], timestamp: 2 },
  ];
  const record = (list: unknown[]) => JSON.stringify({ id: 1, type: "response", command: "get_messages", success: true, data: { messages: list } }) + "\n";
  const head = record([]).slice(0, -"]}}\n".length);
  /** A session file opened by a SessionManager; its loaded messages; a check that get_messages' record is right. */
  function opened() {
    tmp = makeTempDir();
    n = 0;
    const file = join(tmp.dir, "s.jsonl");
    writeFileSync(file, [header, ...ms.map((m) => entry(m))].join("\n") + "\n");
    const sm = SessionManager.open(file);
    const loaded = sm.buildSessionContext().messages as object[];
    const check = () => {
      const list = sm.buildSessionContext().messages;
      expect(Buffer.from(sm.messagesRecord(head, list, "]}}\n")).toString("utf8")).toBe(record(list));
    };
    return { file, sm, loaded, check };
  }

  it("across the session's own appends", () => {
    const { sm, loaded, check } = opened();
    expect(Buffer.from(sm.rawMessageJson(loaded[1]!)!).toString("utf8")).toBe(JSON.stringify(ms[1]));
    sm.appendMessage({ role: "user", content: "three", timestamp: 3 });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "four" }], timestamp: 4 } as never);
    expect(Buffer.from(sm.rawMessageJson(loaded[0]!)!).toString("utf8")).toBe(JSON.stringify(ms[0]));
    check();
  });

  it("not after another process appended to the file, or rewrote it in place: every message is serialised", () => {
    for (const change of ["append", "same size", "replace"] as const) {
      const { file, sm, loaded, check } = opened();
      expect(sm.rawMessageJson(loaded[0]!)).toBeDefined();
      const text = readFileSync(file, "utf8");
      if (change === "append") appendFileSync(file, entry({ role: "user", content: "elsewhere", timestamp: 5 }) + "\n");
      // the same length, other text: a message's bytes would now be wrong
      else if (change === "same size") {
        // written until the file system's clock shows it (its timestamps are coarser than a write)
        const loadedAt = statSync(file, { bigint: true }).mtimeNs;
        do writeFileSync(file, text.replace("one ü", "ONE Ü"));
        while (statSync(file, { bigint: true }).mtimeNs === loadedAt);
      }
      else writeFileSync(file, "");
      expect(sm.rawMessageJson(loaded[0]!)).toBeUndefined();
      check();
      // and it stays untrusted after the session's own next append
      sm.appendMessage({ role: "user", content: "later", timestamp: 6 });
      expect(sm.rawMessageJson(loaded[0]!)).toBeUndefined();
      check();
      tmp!.cleanup();
      tmp = undefined;
    }
  });
});
