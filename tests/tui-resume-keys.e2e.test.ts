/**
 * End to end: the session picker's keys as pi 1.6 binds them, through tmux — Ctrl+N named
 * sessions only, Ctrl+P each file's path, Ctrl+R rename (written to that session's file), Ctrl+D
 * delete after Enter confirms (Esc keeps it), Ctrl+S the order (threaded: a fork under its session;
 * recent: newest first, a search keeps it; fuzzy: a search ranks a name match first). The sessions are files written here into the
 * folder given by --session-dir.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
let dir: string;
const sh = tuiShell("pi-tui-resume-keys", () => e);
const file = (name: string) => join(dir, `${name}.jsonl`);

function writeSession(name: string, question: string, minute: number, title?: string, parentSession?: string): void {
  const at = new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString();
  const lines: object[] = [
    { type: "session", version: 3, id: `0000000${minute}-1111-4222-8333-444444444444`, timestamp: at, cwd: e.cwd, ...(parentSession ? { parentSession } : {}) },
    { type: "message", id: "aaaa0001", parentId: null, timestamp: at, message: { role: "user", content: question, timestamp: Date.parse(at) } },
  ];
  if (title) lines.push({ type: "session_info", id: "aaaa0002", parentId: "aaaa0001", timestamp: at, name: title });
  writeFileSync(file(name), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

/** The selected row (marked ❯). */
const selected = (screen: string) => /❯\s+(.*?)\s*$/m.exec(screen)?.[1] ?? "";
/** The list's rows that name one of `marks`, in screen order, each given by its mark. */
const order = (screen: string, marks: string[]) =>
  screen
    .split("\n")
    .map((l) => marks.find((m) => l.includes(m)))
    .filter((m): m is string => m !== undefined);

describe("/resume keys of pi 1.6: named, path, rename, delete", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [], default: { text: "unused" } } });
    e = makeE2eEnv(server.url);
    dir = join(e.root, "sessions");
    mkdirSync(dir);
    writeSession("alpha", "Q-ALPHA", 1);
    writeSession("beta", "Q-BETA", 2, "NAMED-ONE");
    writeSession("gamma", "Q-GAMMA", 3);
    writeSession("delta", "Q-DELTA-FORK named", 4, undefined, file("beta"));
    sh.launch(`--session-dir '${dir}'`);
    await sh.waitFor(/mock\/mock-model/);
    sh.typeText("/resume");
    sh.send("Enter");
    await sh.waitFor((s) => /Resume a session/.test(s) && /Q-ALPHA/.test(s) && /NAMED-ONE/.test(s) && /Q-GAMMA/.test(s));
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("Ctrl+N shows only named sessions, and all again", async () => {
    sh.send("C-n");
    const s = await sh.waitFor((x) => /named only/.test(x) && !/Q-ALPHA/.test(x));
    expect(s).toMatch(/NAMED-ONE/);
    expect(s).not.toMatch(/Q-GAMMA/);
    sh.send("C-n");
    await sh.waitFor((x) => !/named only/.test(x) && /Q-ALPHA/.test(x) && /Q-GAMMA/.test(x));
  });

  it("Ctrl+P shows each session file's path, and hides it again", async () => {
    expect(await sh.waitFor(/Q-ALPHA/)).not.toMatch(/alpha\.jsonl/);
    sh.send("C-p");
    const s = await sh.waitFor(/alpha\.jsonl/);
    expect(s).toMatch(/gamma\.jsonl/);
    sh.send("C-p");
    await sh.waitFor((x) => !/alpha\.jsonl/.test(x));
  });

  it("Ctrl+R renames the selected session in its file", async () => {
    sh.typeText("gamma");
    await sh.waitFor((x) => /Q-GAMMA/.test(selected(x)) && !/Q-ALPHA/.test(x));
    sh.send("C-r");
    await sh.waitFor(/Session name/);
    sh.typeText("RENAMED-GAMMA");
    sh.send("Enter");
    await sh.waitFor((x) => /RENAMED-GAMMA/.test(x) && !/Q-GAMMA/.test(x));
    const entries = readFileSync(file("gamma"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(entries.filter((x) => x.type === "session_info").at(-1)?.name).toBe("RENAMED-GAMMA");
    for (let i = 0; i < 5; i++) sh.send("BSpace");
    await sh.waitFor(/Q-ALPHA/);
  });

  it('the search takes re:<pattern> and "quoted phrases"', async () => {
    sh.typeText("re:q-(beta|gamma)");
    let s = await sh.waitFor((x) => /NAMED-ONE/.test(x) && !/Q-ALPHA/.test(x));
    expect(s).toMatch(/RENAMED-GAMMA/);
    sh.send("C-u");
    await sh.waitFor(/Q-ALPHA/);
    sh.typeText('"q-alpha"');
    s = await sh.waitFor((x) => /Q-ALPHA/.test(x) && !/RENAMED-GAMMA/.test(x));
    expect(s).not.toMatch(/NAMED-ONE/);
    sh.send("C-u");
    await sh.waitFor((x) => /Q-ALPHA/.test(x) && /RENAMED-GAMMA/.test(x));
  });

  it("Ctrl+S cycles the order: threaded (a fork under its session), recent (a search keeps it), fuzzy (a search ranks)", async () => {
    const marks = ["NAMED-ONE", "Q-DELTA-FORK", "RENAMED-GAMMA", "Q-ALPHA"];
    let s = await sh.waitFor((x) => /Sort: Threaded/.test(x) && order(x, marks).length === 4);
    expect(s).toMatch(/Ctrl\+S sort/);
    // The fork hangs under the session it came from, which its newer activity brings to the top.
    expect(order(s, marks)).toEqual(["NAMED-ONE", "Q-DELTA-FORK", "RENAMED-GAMMA", "Q-ALPHA"]);
    expect(s).toMatch(/└─ Q-DELTA-FORK/);
    sh.send("C-s");
    s = await sh.waitFor((x) => /Sort: Recent/.test(x) && order(x, marks)[0] === "Q-DELTA-FORK");
    expect(order(s, marks)).toEqual(["Q-DELTA-FORK", "RENAMED-GAMMA", "NAMED-ONE", "Q-ALPHA"]);
    expect(s).not.toMatch(/└─/);
    sh.typeText("named");
    s = await sh.waitFor((x) => /› named/.test(x) && !/Q-ALPHA/.test(x) && order(x, marks).length === 3);
    expect(order(s, marks)).toEqual(["Q-DELTA-FORK", "RENAMED-GAMMA", "NAMED-ONE"]);
    sh.send("C-s");
    s = await sh.waitFor((x) => /Sort: Fuzzy/.test(x) && order(x, marks)[0] === "NAMED-ONE");
    expect(order(s, marks)).toEqual(["NAMED-ONE", "RENAMED-GAMMA", "Q-DELTA-FORK"]);
    sh.send("C-s"); // threaded with a search: ranked, flat
    s = await sh.waitFor((x) => /Sort: Threaded/.test(x));
    expect(order(s, marks)).toEqual(["NAMED-ONE", "RENAMED-GAMMA", "Q-DELTA-FORK"]);
    expect(s).not.toMatch(/└─/);
    sh.send("C-u");
    await sh.waitFor((x) => order(x, marks).length === 4 && /└─ Q-DELTA-FORK/.test(x));
  });

  it("Ctrl+D asks first: Esc keeps the session, Enter deletes it", async () => {
    sh.typeText("alpha");
    await sh.waitFor((x) => /Q-ALPHA/.test(selected(x)) && !/RENAMED-GAMMA/.test(x));
    sh.send("C-d");
    await sh.waitFor(/Delete session\? Enter delete · Esc keep/);
    sh.send("Escape");
    const kept = await sh.waitFor((x) => !/Delete session\?/.test(x));
    expect(kept).toMatch(/Resume a session/);
    expect(existsSync(file("alpha"))).toBe(true);
    sh.send("C-d");
    await sh.waitFor(/Delete session\?/);
    sh.send("Enter");
    await sh.waitFor(/session moved to the trash|session deleted/);
    expect(existsSync(file("alpha"))).toBe(false);
    expect(existsSync(file("gamma"))).toBe(true);
    sh.send("Escape");
    await sh.waitFor((x) => !/Resume a session/.test(x));
  });
});
