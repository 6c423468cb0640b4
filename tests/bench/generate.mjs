/**
 * Generators for the benchmark: a v3 session file with N entries, and a store of many large
 * session files (kept in the temp folder between runs; regenerated when missing).
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";

const hex8 = (i) => (i + 0x10000000).toString(16).slice(-8);

function entryLines(n, cwd, id, textSize = 200) {
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(t0).toISOString(), cwd })];
  let parent = null;
  const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(textSize / 27)).slice(0, textSize);
  for (let i = 0; i < n; i++) {
    const eid = hex8(i);
    const ts = new Date(t0 + i * 1000).toISOString();
    let message;
    if (i % 2 === 0) message = { role: "user", content: `question ${i}: ${filler}`, timestamp: t0 + i * 1000 };
    else
      message = {
        role: "assistant",
        content: [{ type: "text", text: `answer ${i}: ${filler}` }],
        api: "openai-completions",
        provider: "bench",
        model: "bench-model",
        usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: t0 + i * 1000,
      };
    lines.push(JSON.stringify({ type: "message", id: eid, parentId: parent, timestamp: ts, message }));
    parent = eid;
  }
  return lines;
}

export function makeSessionFile(path, cwd, n) {
  const fd = openSync(path, "w");
  const lines = entryLines(n, cwd, randomUUID());
  writeSync(fd, lines.join("\n") + "\n");
  closeSync(fd);
  return path;
}

/** `count` session files of about `bytesEach` under <dir>/sessions/--bench-project--/. */
export function makeSessionStore(dir, count, bytesEach) {
  const folder = join(dir, "sessions", "--tmp-bench-project--");
  if (existsSync(folder) && readdirSync(folder).length >= count) return dir;
  mkdirSync(folder, { recursive: true });
  const perEntry = 700;
  const n = Math.max(2, Math.floor(bytesEach / perEntry));
  const body = entryLines(n, "/tmp/bench-project", "00000000-0000-0000-0000-000000000000", 500).slice(1).join("\n") + "\n";
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), cwd: "/tmp/bench-project" });
    const fd = openSync(join(folder, `2026-01-01T00-00-${String(i).padStart(3, "0")}-000Z_${id}.jsonl`), "w");
    writeSync(fd, header + "\n");
    writeSync(fd, body);
    closeSync(fd);
  }
  return dir;
}

/**
 * A source tree of `files` files totalling about `totalBytes` (kept in the temp folder between
 * runs). Text lines with a rare marker word every so often, a .gitignore'd folder, some binaries.
 */
export function makeSourceTree(dir, files, totalBytes) {
  const done = join(dir, ".complete");
  if (existsSync(done)) return dir;
  mkdirSync(dir, { recursive: true });
  const perFile = Math.floor(totalBytes / files);
  const line = "const value = compute(input, options); // ordinary line of generated code\n";
  const body = line.repeat(Math.ceil(perFile / line.length)).slice(0, perFile);
  const marked = body.slice(0, Math.floor(perFile / 2)) + "export const NEEDLE_MARKER = 42;\n" + body.slice(Math.floor(perFile / 2));
  writeFileSyncSafe(join(dir, ".gitignore"), "ignored/\n");
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `pkg${i % 100}`, `mod${Math.floor(i / 100) % 50}`);
    if (i < 5000 || i % 100 === 0) mkdirSync(sub, { recursive: true });
    writeFileSyncSafe(join(sub, `file${i}.ts`), i % 500 === 0 ? marked : body);
  }
  mkdirSync(join(dir, "ignored"), { recursive: true });
  writeFileSyncSafe(join(dir, "ignored", "skip.ts"), marked);
  writeFileSyncSafe(done, "");
  return dir;
}

function writeFileSyncSafe(path, text) {
  const fd = openSync(path, "w");
  writeSync(fd, text);
  closeSync(fd);
}
