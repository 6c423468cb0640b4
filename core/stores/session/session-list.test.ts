import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "./session-manager.js";
import { SESSION_LIST_WINDOW_BYTES, listSessionFiles, listSessionsInDir, readSessionInfo } from "./session-list.js";
import { makeTempDir } from "../../../tests/fixtures/sessions/helpers.js";

const BIG_BYTES = 20 * 1024 * 1024;

function line(obj: unknown): string {
  return `${JSON.stringify(obj)}\n`;
}

/** A ~20 MB session: header, first user message, many large tool results and answers, a late name. */
function bigSession(path: string, n: number, opts: { firstText?: string } = {}): { messages: number; lastTs: number } {
  const header = line({ type: "session", version: 3, id: `big-${n}`, timestamp: "2025-03-01T00:00:00.000Z", cwd: "/big" });
  const parts: string[] = [header];
  let size = header.length;
  let messages = 0;
  let prev: string | null = null;
  let ts = 1_740_000_000_000 + n * 1000;
  const push = (entry: Record<string, unknown>): void => {
    const id = (messages + 1).toString(16).padStart(8, "0");
    const l = line({ ...entry, id, parentId: prev, timestamp: new Date(ts).toISOString() });
    prev = id;
    parts.push(l);
    size += l.length;
    messages++;
  };
  push({ type: "message", message: { role: "user", content: opts.firstText ?? `first question ${n}`, timestamp: ts } });
  const blob = "x".repeat(8000);
  while (size < BIG_BYTES) {
    ts += 10;
    push({
      type: "message",
      message: { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text: blob }], isError: false, timestamp: ts },
    });
    ts += 10;
    push({
      type: "message",
      message: { role: "assistant", content: [{ type: "text", text: `answer ${messages}` }], provider: "p", model: "m", timestamp: ts },
    });
  }
  const info = line({ type: "session_info", id: "ffff0000", parentId: prev, timestamp: new Date(ts).toISOString(), name: `Big ${n}` });
  parts.push(info);
  writeFileSync(path, parts.join(""));
  return { messages, lastTs: ts };
}

describe("session listing", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let dir: string;
  const truth: Record<string, { messages: number; lastTs: number }> = {};
  beforeAll(() => {
    tmp = makeTempDir();
    dir = join(tmp.dir, "--big--");
    mkdirSync(dir);
    for (let i = 0; i < 3; i++) truth[`big-${i}`] = bigSession(join(dir, `big-${i}.jsonl`), i);
    // A small session written by SessionManager, non-sessions, and a non-jsonl file.
    const sm = SessionManager.create("/big", dir);
    sm.appendMessage({ role: "user", content: [{ type: "text", text: "small one" }], timestamp: 5 });
    sm.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "reply" }],
      provider: "p",
      model: "m",
      timestamp: 6,
    } as any);
    writeFileSync(join(dir, "junk.jsonl"), "hello\n");
    writeFileSync(join(dir, "empty.jsonl"), "");
    writeFileSync(join(dir, "notes.txt"), "x");
  });
  afterAll(() => tmp.cleanup());

  it("reads only a bounded prefix and suffix of each large file", async () => {
    const reads = new Map<string, number>();
    const infos = await listSessionsInDir(dir, {
      onRead: (path, _pos, bytes) => reads.set(path, (reads.get(path) ?? 0) + bytes),
    });
    expect(infos.map((i) => i.id).filter((id) => id.startsWith("big-")).sort()).toEqual(["big-0", "big-1", "big-2"]);
    for (const info of infos.filter((i) => i.id.startsWith("big-"))) {
      expect(reads.get(info.path)).toBeLessThanOrEqual(2 * SESSION_LIST_WINDOW_BYTES + 1);
      const t = truth[info.id]!;
      expect(info.firstMessage).toBe(`first question ${info.id.slice(4)}`);
      expect(info.name).toBe(`Big ${info.id.slice(4)}`);
      expect(info.modified.getTime()).toBe(t.lastTs);
      expect(info.cwd).toBe("/big");
      // An estimate for large files: within 10% of the real count.
      expect(Math.abs(info.messageCount - t.messages) / t.messages).toBeLessThan(0.1);
    }
    const total = [...reads.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeLessThan(3 * BIG_BYTES * 0.01);
  });

  it("lists sessions newest first and skips files that are not sessions", async () => {
    const infos = await SessionManager.list("/big", dir);
    expect(infos).toHaveLength(4);
    expect(infos.map((i) => i.id).slice(0, 3)).toEqual(["big-2", "big-1", "big-0"]);
    const small = infos[3]!;
    expect(small).toMatchObject({ messageCount: 2, firstMessage: "small one", allMessagesText: "small one reply" });
    expect(small.modified.getTime()).toBe(6);
  });

  it("gets the first message from a first line longer than the window", async () => {
    const path = join(tmp.dir, "long-first.jsonl");
    const long = `Start of a very long paste "quoted" \\ ${"y".repeat(3 * SESSION_LIST_WINDOW_BYTES)}`;
    bigSession(path, 9, { firstText: long });
    const info = await readSessionInfo(path);
    expect(info).not.toBeNull();
    expect(info!.firstMessage.startsWith('Start of a very long paste "quoted" \\ yyy')).toBe(true);
    expect(info!.firstMessage.length).toBeLessThan(SESSION_LIST_WINDOW_BYTES);
  });

  it("reports progress and handles an empty file list", async () => {
    const seen: Array<[number, number]> = [];
    await listSessionFiles([join(dir, "junk.jsonl"), join(dir, "missing.jsonl")], { onProgress: (a, b) => seen.push([a, b]) });
    expect(seen).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(await listSessionFiles([])).toEqual([]);
    expect(await listSessionsInDir(join(tmp.dir, "no-such-dir"))).toEqual([]);
  });
});
