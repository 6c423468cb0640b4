/**
 * AgentSessionRuntime through the kernel: the replacement steps for new, resume, fork, clone
 * and import; cancellation; teardown saving the running turn; failures leaving the old session
 * working; rebind callbacks.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import { SessionManager } from "../stores/session/session-manager.js";
import type { AgentSession } from "./agent-session.js";

type TK = Awaited<ReturnType<typeof createTestKernel>>;
let tk: TK | undefined;
afterEach(() => {
  tk?.cleanup();
  tk = undefined;
});

function lines(file: string): any[] {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** Record the session life-cycle hooks in order. */
function recordLifecycle(t: TK): string[] {
  const log: string[] = [];
  const api = t.kernel.scope("recorder");
  api.on("session_before_switch", (e) => void log.push(`before_switch:${e.reason}`));
  api.on("session_before_fork", (e) => void log.push(`before_fork:${(e as { position?: string }).position}`));
  api.on("session_shutdown", (e) => void log.push(`shutdown:${e.reason}`));
  api.on("session_start", (e) => void log.push(`start:${e.reason}`));
  api.on("session_switch", (e) => void log.push(`switch:${e.reason}`));
  api.on("session_fork", () => void log.push("fork"));
  return log;
}

async function conversation(t: TK, ...prompts: string[]): Promise<AgentSession> {
  const s = t.runtime!.session;
  for (const p of prompts) await s.prompt(p);
  return s;
}

/** The conversation without pi 1.6's system message entries (the prompt and tools a run opened with). */
const conv = (messages: readonly unknown[]): any[] => messages.filter((m: any) => m.role !== "system");

describe("AgentSessionRuntime", () => {
  it("new session: before_switch → shutdown → start{new} → rebind; the model carries over, the old session is gone", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["first answer"] });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    const rebound: AgentSession[] = [];
    rt.onRebind((s) => {
      log.push("rebind");
      rebound.push(s);
    });
    let startEvent: any;
    tk.kernel.scope("probe").on("session_start", (e) => void (startEvent = e));
    const old = await conversation(tk, "hello");
    const oldFile = old.sessionFile!;
    expect(existsSync(oldFile)).toBe(true);

    const r = await rt.newSession();
    expect(r).toEqual({ cancelled: false });
    expect(log).toEqual(["before_switch:new", "shutdown:switch", "start:new", "switch:new", "rebind"]);
    expect(rebound).toEqual([rt.session]);
    expect(rt.session).not.toBe(old);
    expect(conv(rt.session.messages)).toHaveLength(0);
    expect(rt.session.sessionFile).not.toBe(oldFile);
    expect(dirname(rt.session.sessionFile!)).toBe(dirname(oldFile));
    expect(rt.session.model?.id).toBe(old.model?.id);
    expect(startEvent).toEqual({ type: "session_start", reason: "new", previousSessionFile: oldFile });
    expect(old.isDisposed).toBe(true);
    await expect(old.prompt("x")).rejects.toThrow(/disposed/);
    expect(tk.kernel.bound("test")).toBe(rt);
  });

  it("new session with a parent session and a setup callback", async () => {
    tk = await createTestKernel({ runtime: true, persist: true });
    const rt = tk.runtime!;
    await rt.newSession({ parentSession: "/elsewhere/parent.jsonl", setup: (sm) => void sm.appendSessionInfo("prepared") });
    const sm = rt.sessionManager;
    expect(sm.getHeader()!.parentSession).toBe("/elsewhere/parent.jsonl");
    expect(rt.session.sessionName).toBe("prepared");
  });

  it("session_before_switch may cancel: nothing changes and the session keeps working", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["a1", "a2"] });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    tk.kernel.scope("guard").on("session_before_switch", (e) => (e.reason === "new" ? { cancel: true } : undefined));
    const s = await conversation(tk, "one");
    expect(await rt.newSession()).toEqual({ cancelled: true });
    expect(rt.session).toBe(s);
    expect(log).toEqual(["before_switch:new"]);
    await s.prompt("two");
    expect(s.getLastAssistantText()).toBe("a2");
  });

  it("teardown aborts the running turn and it is saved in the old file", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["warm up", { text: "a b c d e f g h i j k l m n o p", delayMs: 30 }] });
    const rt = tk.runtime!;
    const s = await conversation(tk, "first");
    const file = s.sessionFile!;
    let streaming!: () => void;
    const started = new Promise<void>((r) => (streaming = r));
    s.subscribe((e) => {
      if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") streaming();
    });
    const run = s.prompt("second, slow");
    await started;
    await rt.newSession();
    await run;
    const msgs = conv(lines(file).filter((l) => l.type === "message").map((l) => l.message));
    expect(msgs.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(msgs[2].content).toEqual([{ type: "text", text: "second, slow" }]);
    expect(msgs[3].stopReason).toBe("aborted");
    expect(msgs[3].content[0].text.length).toBeGreaterThan(0);
  });

  it("resume restores the messages; session_before_switch sees the target file", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["answer one", "answer two"] });
    const rt = tk.runtime!;
    const targets: Array<string | undefined> = [];
    tk.kernel.scope("probe").on("session_before_switch", (e) => void targets.push(e.targetSessionFile));
    const first = await conversation(tk, "remember me");
    const firstFile = first.sessionFile!;
    await rt.newSession();
    await rt.session.prompt("in the second session");
    expect(await rt.switchSession(firstFile)).toEqual({ cancelled: false });
    expect(targets).toEqual([undefined, firstFile]);
    expect(rt.session.sessionFile).toBe(firstFile);
    expect(conv(rt.session.messages).map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect((conv(rt.session.messages)[0] as any).content[0].text).toBe("remember me");
  });

  it("resume of a missing or invalid file throws and the old session still works", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["ok one", "ok two"] });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    const s = await conversation(tk, "hi");
    await expect(rt.switchSession(join(tk.cwd, "nope.jsonl"))).rejects.toThrow(/session file not found: .*nope\.jsonl/);
    const bad = join(tk.cwd, "bad.jsonl");
    writeFileSync(bad, '{"type":"message","id":"x"}\n');
    await expect(rt.switchSession(bad)).rejects.toThrow(/Not a session file/);
    expect(rt.session).toBe(s);
    expect(log.filter((l) => !l.startsWith("before_switch"))).toEqual([]);
    await s.prompt("still here?");
    expect(s.getLastAssistantText()).toBe("ok two");
  });

  it("a failing build: the error reaches the caller, the old session is not torn down and still works", async () => {
    let fail = false;
    tk = await createTestKernel({
      runtime: async (input, build) => {
        if (fail) throw new Error("factory exploded");
        return build(input);
      },
      persist: true,
      steps: ["before", "after"],
    });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    const s = await conversation(tk, "one");
    fail = true;
    await expect(rt.newSession()).rejects.toThrow("factory exploded");
    await expect(rt.clone()).rejects.toThrow("factory exploded");
    expect(rt.session).toBe(s);
    expect(s.isDisposed).toBe(false);
    expect(log).toEqual(["before_switch:new", "before_fork:at"]);
    fail = false;
    await s.prompt("two");
    expect(s.getLastAssistantText()).toBe("after");
    expect(rt.isSwitching).toBe(false);
  });

  it("fork from a user message: a new file up to its parent, the text returned; the source is unchanged", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["r1", "r2", "r3"] });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    const s = await conversation(tk, "q1", "q2", "q3");
    const sourceFile = s.sessionFile!;
    const before = readFileSync(sourceFile, "utf8");
    const forks = s.getUserMessagesForForking();
    expect(forks.map((f) => f.text)).toEqual(["q1", "q2", "q3"]);
    const r = await rt.fork(forks[1]!.entryId);
    expect(r).toEqual({ cancelled: false, selectedText: "q2" });
    expect(log).toEqual(["before_fork:before", "shutdown:switch", "start:fork", "fork"]);
    const fs = rt.session;
    expect(fs.sessionFile).not.toBe(sourceFile);
    expect(conv(fs.messages).map((m: any) => m.content?.[0]?.text ?? m.content)).toEqual(["q1", "r1"]);
    expect(rt.sessionManager.getHeader()!.parentSession).toBe(sourceFile);
    // entry ids are kept in the fork
    const sourceIds = lines(sourceFile).map((l) => l.id);
    for (const e of rt.sessionManager.getEntries()) expect(sourceIds).toContain(e.id);
    expect(readFileSync(sourceFile, "utf8")).toBe(before);
    // the fork goes on on its own
    await fs.prompt("q2 again");
    expect(conv(fs.messages)).toHaveLength(4);
  });

  it("fork: session_before_fork may cancel; a non-user entry or unknown id is refused without side effects", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["r1", "r2"] });
    const rt = tk.runtime!;
    const s = await conversation(tk, "q1", "q2");
    const entries = rt.sessionManager.getEntries();
    const user = entries.find((e) => e.type === "message" && e.message.role === "user")!;
    const assistant = entries.find((e) => e.type === "message" && e.message.role === "assistant")!;
    await expect(rt.fork(assistant.id)).rejects.toThrow(/not a user message/);
    await expect(rt.fork("deadbeef")).rejects.toThrow(/no entry "deadbeef"/);
    const off = tk.kernel.scope("guard").on("session_before_fork", () => ({ cancel: true }));
    expect(await rt.fork(user.id)).toEqual({ cancelled: true });
    off();
    expect(rt.session).toBe(s);
    // position "at" keeps the entry itself
    await rt.fork(assistant.id, { position: "at" });
    expect(conv(rt.session.messages).map((m: any) => m.role)).toEqual(["user", "assistant"]);
  });

  it("forking the first user message starts an empty session whose parent is the source", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["r1"] });
    const rt = tk.runtime!;
    const s = await conversation(tk, "only");
    const src = s.sessionFile!;
    const r = await rt.fork(s.getUserMessagesForForking()[0]!.entryId);
    expect(r.selectedText).toBe("only");
    expect(conv(rt.session.messages)).toHaveLength(0);
    expect(rt.sessionManager.getHeader()!.parentSession).toBe(src);
  });

  it("clone duplicates the current branch into a new file (start reason clone)", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["r1", "r2"] });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    const s = await conversation(tk, "q1", "q2");
    s.setSessionName("named");
    const src = s.sessionFile!;
    expect(await rt.clone()).toEqual({ cancelled: false });
    expect(log).toEqual(["before_fork:at", "shutdown:switch", "start:clone", "fork"]);
    expect(rt.session.sessionFile).not.toBe(src);
    expect(conv(rt.session.messages)).toHaveLength(4);
    expect(rt.session.sessionName).toBe("named");
    expect(existsSync(rt.session.sessionFile!)).toBe(true);
    expect(lines(rt.session.sessionFile!)[0].parentSession).toBe(src);
  });

  it("clone of an empty session is a clear error", async () => {
    tk = await createTestKernel({ runtime: true, persist: true });
    await expect(tk.runtime!.clone()).rejects.toThrow(/nothing to clone/);
  });

  it("in-memory sessions fork and clone in memory", async () => {
    tk = await createTestKernel({ runtime: true, steps: ["r1", "r2"] });
    const rt = tk.runtime!;
    const s = await conversation(tk, "q1", "q2");
    const id = s.getUserMessagesForForking()[1]!.entryId;
    s.setLabel(id, "second question");
    await rt.clone();
    expect(rt.session.sessionFile).toBeUndefined();
    expect(conv(rt.session.messages)).toHaveLength(4);
    const copied = rt.session.getUserMessagesForForking()[1]!.entryId;
    expect(rt.sessionManager.getLabel(copied)).toBe("second question");
    await rt.fork(rt.session.getUserMessagesForForking()[1]!.entryId);
    expect(conv(rt.session.messages)).toHaveLength(2);
    expect(rt.sessionManager.isPersisted()).toBe(false);
    await rt.newSession();
    expect(rt.sessionManager.isPersisted()).toBe(false);
    const file = join(tk.cwd, "some.jsonl");
    writeFileSync(file, JSON.stringify({ type: "session", version: 3, id: "x", timestamp: new Date().toISOString(), cwd: tk.cwd }) + "\n");
    await expect(rt.importSession(file)).rejects.toThrow(/not being saved \(--no-session\)/);
  });

  it("import copies the file into the session folder and resumes it (start reason import)", async () => {
    tk = await createTestKernel({ runtime: true, persist: true, steps: ["r1"] });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    // A session written elsewhere.
    const outside = SessionManager.create("/other/project", join(tk.cwd, "outside"));
    outside.appendMessage({ role: "user", content: "imported question", timestamp: Date.now() });
    outside.appendMessage({ role: "assistant", content: [{ type: "text", text: "imported answer" }], api: "faux", provider: "faux", model: "faux-1", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() } as any);
    const src = outside.getSessionFile()!;
    await expect(rt.importSession(join(tk.cwd, "missing.jsonl"))).rejects.toThrow(/file not found/);
    expect(await rt.importSession(src)).toEqual({ cancelled: false });
    expect(log).toEqual(["before_switch:import", "shutdown:switch", "start:import"]);
    const dest = rt.session.sessionFile!;
    expect(basename(dest)).toBe(basename(src));
    expect(dirname(dest)).not.toBe(dirname(src));
    expect(existsSync(src)).toBe(true);
    expect(conv(rt.session.messages).map((m: any) => m.role)).toEqual(["user", "assistant"]);
  });

  it("one switch at a time; rebind callbacks are awaited and a failing one is reported", async () => {
    tk = await createTestKernel({ runtime: true, persist: true });
    const rt = tk.runtime!;
    const order: string[] = [];
    rt.onRebind(async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push("slow rebind done");
    });
    rt.onRebind(() => {
      throw new Error("rebind broke");
    });
    const a = rt.newSession();
    await expect(rt.newSession()).rejects.toThrow(/already in progress/);
    await a;
    order.push("newSession resolved");
    expect(order).toEqual(["slow rebind done", "newSession resolved"]);
    expect(tk.kernel.diagnostics.list().some((d) => d.message === "rebind callback failed")).toBe(true);
  });

  it("dispose emits session_shutdown {reason: exit} once; later switches are refused", async () => {
    tk = await createTestKernel({ runtime: true, persist: true });
    const rt = tk.runtime!;
    const log = recordLifecycle(tk);
    await rt.dispose();
    await rt.dispose();
    expect(log).toEqual(["shutdown:exit"]);
    await expect(rt.newSession()).rejects.toThrow(/disposed/);
  });
});
