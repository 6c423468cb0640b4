/**
 * End to end: what the terminal keeps after the TUI quits, in tmux from an interactive shell —
 * fullscreen prints the conversation into the normal screen and then "To resume this session:"
 * with the command (pi 1.6's wording); regular mode keeps the conversation in the scrollback and
 * shows the same hint; the resume command opens the session again; no terminal reply is left on
 * the shell's line; SIGTERM leaves the terminal restored (normal screen, no mouse reports).
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

/** A plugin whose /crash throws outside any handler: the process dies of an uncaught exception. */
const CRASH_PLUGIN = `
export default {
  name: "crash-fixture",
  version: "1.0.0",
  kernel: "^1.0.0",
  setup(api) {
    api.registerCommand({ name: "crash", description: "throws later", handler: async () => { setTimeout(() => { throw new Error("CRASH-BOOM"); }, 5); } });
  },
};
`;

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-exit", () => e);

/** The session ids saved so far. */
function sessionIds(): string[] {
  const root = join(e.agentDir, "sessions");
  const out: string[] = [];
  try {
    for (const d of readdirSync(root)) for (const f of readdirSync(join(root, d))) out.push(f.replace(/^.*_|\.jsonl$/g, ""));
  } catch {
    /* none yet */
  }
  return out;
}

/** Run the TUI, send one prompt, wait for its answer. */
async function chat(args: string, prompt: string, answerMark: RegExp): Promise<void> {
  sh.reset();
  sh.launch(args);
  await sh.waitFor(/mock\/mock-model/);
  sh.typeText(prompt);
  sh.send("Enter");
  await sh.waitFor(answerMark);
}

describe("quitting the TUI in tmux", () => {
  beforeAll(async () => {
    server = await startLlmServer({
      script: { turns: [{ match: "first", text: "FIRST-ANSWER here" }, { match: "second", text: "SECOND-ANSWER here" }, { match: "third", text: "THIRD-ANSWER here" }], default: { text: "OTHER-ANSWER" } },
    });
    e = makeE2eEnv(server.url);
    delete e.env.TMUX;
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("fullscreen: Ctrl+D leaves the conversation on the normal screen, then the resume command", async () => {
    await chat("", "first question", /FIRST-ANSWER here/);
    sh.send("C-d");
    const s = await sh.waitFor(/EXIT=0/);
    const [id] = sessionIds();
    expect(id).toBeTruthy();
    expect(sh.pane("#{alternate_on}")).toBe("0");
    const lines = s.split("\n").map((l) => l.trimEnd());
    const q = lines.findIndex((l) => l === " first question");
    const a = lines.findIndex((l) => l.includes("FIRST-ANSWER here"));
    const hint = lines.indexOf("To resume this session:");
    expect(q).toBeGreaterThan(-1);
    expect(a).toBeGreaterThan(q);
    expect(hint).toBeGreaterThan(a);
    expect(lines[hint + 1]).toBe(`pi --session ${id}`);
    expect(lines[hint + 2]).toBe("EXIT=0");
    // Nothing the terminal answered to our queries was left for the shell.
    expect(s).not.toMatch(/\^\[|\x1b|\[\?[\d;]*[cu]/);
  });

  it("the resume command opens that session again", async () => {
    const [id] = sessionIds();
    sh.reset();
    sh.launch(`--session ${id}`);
    await sh.waitFor(/mock\/mock-model/);
    await sh.waitFor(/FIRST-ANSWER here/);
    sh.send("C-d");
    await sh.waitFor(/EXIT=0/);
    expect(sessionIds()).toEqual([id]);
  });

  it("regular mode: the conversation stays in the scrollback and the resume command follows", async () => {
    await chat("--tui-mode regular", "second question", /SECOND-ANSWER here/);
    sh.send("C-d");
    await sh.waitFor(/EXIT=0/);
    const all = sh.history().split("\n").map((l) => l.trimEnd());
    const a = all.lastIndexOf(all.find((l) => l.includes("SECOND-ANSWER here")) ?? "\u0000");
    const hint = all.lastIndexOf("To resume this session:");
    expect(a).toBeGreaterThan(-1);
    expect(hint).toBeGreaterThan(a);
    expect(all[hint + 1]).toMatch(/^pi --session [0-9a-f-]{36}$/);
    expect(sessionIds()).toContain(all[hint + 1]!.split(" ").pop());
    expect(all.join("\n")).not.toMatch(/\^\[/);
  });

  it("a session with nothing saved shows no resume hint", async () => {
    sh.reset();
    sh.launch("--no-session");
    await sh.waitFor(/mock\/mock-model/);
    sh.send("C-d");
    const s = await sh.waitFor(/EXIT=0/);
    expect(s).not.toMatch(/To resume this session/);
  });

  it("fullscreenExitOutput \"resume-hint\" prints only the hint", async () => {
    const settingsFile = join(e.agentDir, "settings.json");
    const before = readFileSync(settingsFile, "utf8");
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(before), fullscreenExitOutput: "resume-hint" }));
    try {
      await chat("", "fourth question", /OTHER-ANSWER/);
      sh.send("C-d");
      const s = await sh.waitFor(/EXIT=0/);
      expect(s).toMatch(/To resume this session:\npi --session [0-9a-f-]{36}\nEXIT=0/);
      expect(s).not.toMatch(/fourth question|OTHER-ANSWER/);
    } finally {
      writeFileSync(settingsFile, before);
    }
  });

  it("a crash (uncaught exception) restores the terminal: normal screen, mouse off, cursor shown", async () => {
    const plugin = join(e.root, "crash-plugin.mjs");
    writeFileSync(plugin, CRASH_PLUGIN);
    const settingsFile = join(e.agentDir, "settings.json");
    const before = readFileSync(settingsFile, "utf8");
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(before), plugins: [plugin] }));
    try {
      sh.reset();
      sh.launch();
      await sh.waitFor(/mock\/mock-model/);
      expect(sh.pane("#{alternate_on} #{mouse_sgr_flag}")).toBe("1 1");
      sh.typeText("/crash");
      sh.send("Enter");
      await sh.waitFor(/EXIT=1/);
      expect(sh.pane("#{alternate_on} #{mouse_sgr_flag} #{mouse_button_flag} #{cursor_flag}")).toBe("0 0 0 1");
      expect(readFileSync(join(e.root, "err.log"), "utf8")).toContain("CRASH-BOOM");
    } finally {
      writeFileSync(settingsFile, before);
    }
  });

  it("SIGTERM restores the terminal: normal screen, mouse reports off, no resume hint, exit code 0 (as pi 1.6)", async () => {
    await chat("", "third question", /THIRD-ANSWER here/);
    expect(sh.pane("#{alternate_on} #{mouse_sgr_flag}")).toBe("1 1");
    const shellPid = sh.pane("#{pane_pid}");
    const pid = execFileSync("pgrep", ["-P", shellPid], { encoding: "utf8" }).trim().split("\n")[0]!;
    process.kill(Number(pid), "SIGTERM");
    const s = await sh.waitFor(/EXIT=0/);
    expect(sh.pane("#{alternate_on} #{mouse_sgr_flag} #{mouse_button_flag}")).toBe("0 0 0");
    expect(s.split("To resume this session:").length).toBe(1);
  });
});
