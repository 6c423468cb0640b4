import { describe, it, expect } from "@jest/globals";
import type { SessionInfo } from "../../core/stores/index.js";
import { drawSessionRow, listSessions, searchSessions, sessionAge, threadSessions } from "./session-search.js";
import type { Painter } from "./tree-model.js";

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute));
function session(path: string, minute: number, text: string, extra: Partial<SessionInfo> = {}): SessionInfo {
  return { path, id: `id-${path}`, cwd: "/srv/app", created: at(minute), modified: at(minute), messageCount: 2, firstMessage: text, allMessagesText: text, ...extra };
}
// Newest first, as the listing gives them.
const list = [
  session("c", 3, "write docs"),
  session("b", 2, "the bug in login\nlater"),
  session("a", 1, "fix the login bug\nin auth.ts", { name: "auth work" }),
];
const paths = (q: string, sort: "threaded" | "recent" | "relevance" = "relevance") => searchSessions(list, q, sort).map((s) => s.path);

describe("session search", () => {
  it("every word must appear, in any order; case aside", () => {
    expect(paths("login bug", "recent")).toEqual(["b", "a"]);
    expect(paths("DOCS")).toEqual(["c"]);
  });

  it('"a phrase" in quotes must appear as written (spaces and case aside); an unclosed quote gives words', () => {
    expect(paths('"login bug"')).toEqual(["a"]);
    expect(paths('"bug in login" the')).toEqual(["b"]);
    expect(paths('"login bug', "recent")).toEqual(["b", "a"]);
  });

  it("re:<pattern> is a regular expression (case-insensitive); an invalid one matches nothing", () => {
    expect(paths("re:login\\s+bug")).toEqual(["a"]);
    expect(paths("re:^WRITE")).toEqual(["c"]);
    expect(paths("re:(unclosed")).toEqual([]);
  });

  it("recent keeps the newest first; relevance and threaded rank a name match first, scattered letters in the name last", () => {
    expect(paths("auth", "recent")).toEqual(["a"]);
    expect(paths("bug", "recent")).toEqual(["b", "a"]);
    expect(paths("auth bug")).toEqual(["a"]);
    const withName = [session("x", 5, "login"), session("y", 4, "other", { name: "login page" })];
    expect(searchSessions(withName, "login", "recent").map((s) => s.path)).toEqual(["x", "y"]);
    expect(searchSessions(withName, "login", "relevance").map((s) => s.path)).toEqual(["y", "x"]);
    expect(searchSessions(withName, "login", "threaded").map((s) => s.path)).toEqual(["y", "x"]);
    expect(searchSessions(withName, "lgpg", "relevance").map((s) => s.path)).toEqual(["y"]);
  });

  it("threads forks under their session, each level by its latest activity", () => {
    const sessions = [
      session("/s/old", 1, "old"),
      session("/s/root", 2, "root"),
      session("/s/fork-1", 3, "fork one", { parentSessionPath: "/s/root" }),
      session("/s/fork-2", 4, "fork two", { parentSessionPath: "/s/root" }),
      session("/s/fork-2-a", 5, "fork of fork", { parentSessionPath: "/s/fork-2" }),
      session("/s/orphan", 0, "orphan", { parentSessionPath: "/s/gone" }),
    ];
    expect(threadSessions(sessions).map((t) => `${t.prefix}${t.session.firstMessage}`)).toEqual([
      "root",
      "   ├─ fork two",
      "   │  └─ fork of fork",
      "   └─ fork one",
      "old",
      "orphan",
    ]);
  });
});

describe("the pickers' list", () => {
  const forks = [
    session("child", 5, "a fork", { parentSessionPath: "root", name: "  " }),
    session("other", 4, "unrelated", { name: "kept" }),
    session("root", 1, "the start"),
  ];
  const rows = (query: string, sort: "threaded" | "recent" | "relevance", namedOnly = false) => listSessions(forks, { query, sort, namedOnly }).map((r) => r.prefix + r.session.path);

  it("threaded without a search draws forks under their parent; a search, or another order, gives a flat list", () => {
    expect(rows("", "threaded")).toEqual(["root", "   └─ child", "other"]);
    expect(rows("", "recent")).toEqual(["child", "other", "root"]);
    expect(rows("start fork", "threaded")).toEqual([]);
    expect(rows("start", "threaded")).toEqual(["root"]);
  });

  it("named only keeps sessions whose name is more than blanks", () => {
    expect(rows("", "threaded", true)).toEqual(["other"]);
    expect(rows("", "recent", true)).toEqual(["other"]);
  });
});


describe("session rows", () => {
  const plain: Painter = { fg: (_t, x) => x, bold: (x) => x, italic: (x) => x };
  /** Colours as [token:text] marks, to see which part gets which. */
  const marked: Painter = { fg: (tok, x) => `[${tok}:${x}]`, bold: (x) => `*${x}*`, italic: (x) => x };
  const now = at(0).getTime();
  const ago = (ms: number) => new Date(now - ms);

  it("ages in one short word", () => {
    const min = 60_000;
    expect([30_000, 5 * min, 3 * 60 * min, 2 * 1440 * min, 10 * 1440 * min, 45 * 1440 * min, 400 * 1440 * min].map((ms) => sessionAge(ago(ms), now))).toEqual(["now", "5m", "3h", "2d", "1w", "1mo", "1y"]);
  });

  it("the name or first message on the left, the count and age at the right edge", () => {
    const s = session("/home/u/s/a.jsonl", 0, "fix the\nlogin bug", { messageCount: 3, modified: ago(5 * 60_000) });
    const row = drawSessionRow(s, { prefix: "", width: 40, now }, plain);
    expect(row).toBe("fix the login bug" + " ".repeat(40 - 17 - 4) + "3 5m");
    expect(drawSessionRow({ ...s, name: "auth work" }, { prefix: "└─ ", width: 30, now }, plain)).toMatch(/^└─ auth work +3 5m$/);
  });

  it("a long text is cut to leave room for the right side; the folder and the path go before the count when asked", () => {
    const s = session("/srv/s/b.jsonl", 0, "x".repeat(80), { messageCount: 12, modified: ago(2 * 3600_000) });
    const row = drawSessionRow(s, { prefix: "", width: 40, showCwd: true, showPath: true, now }, plain);
    expect(row).toMatch(/^x+… \/srv\/s\/b\.jsonl \/srv\/app 12 2h$/);
    expect(row.length).toBe(40);
  });

  it("colours: named warning, open session accent, being deleted error (the right side too), selected bold", () => {
    const s = session("p", 0, "text", { modified: ago(0) });
    expect(drawSessionRow({ ...s, name: "n" }, { prefix: "", width: 20, now }, marked)).toMatch(/^\[dim:\]\[warning:n\] +\[dim:2 now\]$/);
    expect(drawSessionRow(s, { prefix: "", width: 20, current: true, selected: true, now }, marked)).toMatch(/^\[dim:\]\*\[accent:text\]\* +\[dim:2 now\]$/);
    expect(drawSessionRow(s, { prefix: "", width: 20, deleting: true, now }, marked)).toMatch(/^\[dim:\]\[error:text\] +\[error:2 now\]$/);
  });
});
