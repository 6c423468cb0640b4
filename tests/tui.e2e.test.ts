/**
 * End to end: the real CLI's interactive mode in tmux against the loopback LLM server. Keys go
 * in with send-keys, the screen comes back with capture-pane; every wait is for a marker on
 * screen, never a fixed sleep.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { visibleWidth } from "../modes/tui/text.js";
import { tmuxDriver } from "./helpers/tmux.js";


const SOCKET = `pi-tui-e2e-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;

const { tmux, send, typeText, waitFor, readErr } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

const FIXTURE_PLUGIN = `
export default {
  name: "ask-fixture",
  version: "1.0.0",
  kernel: "^1.0.0",
  setup(api) {
    api.registerCommand({
      name: "ask",
      description: "asks through the ui service",
      handler: async () => {
        const ui = api.kernel.service("ui");
        const answer = await ui.select("Fixture question?", ["Red", "Blue"], { timeout: 120_000 });
        ui.notify("fixture picked " + answer, "info");
      },
    });
  },
};
`;

/** A pi extension that draws at session_start, before the screen exists. */
const STARTUP_EXTENSION = `
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setStatus("demo", ctx.ui.theme.fg("accent", "EXT-STATUS-READY"));
    ctx.ui.setWidget("demo-widget", ["EXT-WIDGET-LINE"]);
  });
}
`;

const SCRIPT = {
  turns: [
    { match: "run the tool", turns: [{ text: "Running it.", toolCalls: [{ name: "bash", arguments: { command: "echo hello-from-bash" } }] }, { text: "Tool said **hello-from-bash**." }] },
    { match: "try sudo", turns: [{ text: "Trying sudo.", toolCalls: [{ name: "bash", arguments: { command: "sudo ls" } }] }, { text: "SUDO-DONE" }] },
    { match: "go slow", text: "slow ", repeat: 250, gate: "steer", gateAfterChunks: 5 },
    { match: "steer-marker", text: "STEERED-OK" },
  ],
  default: { text: "# Answer\n\nPlain *markdown* reply with `code`, 你好 and 🎉.\n\n- item one\n- item two\n\nEND-OF-ANSWER" },
};

describe("interactive mode in tmux", () => {
  beforeAll(async () => {
    server = await startLlmServer({ script: SCRIPT });
    e = makeE2eEnv(server.url, { settings: { compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 10 } } });
    const plugin = join(e.root, "ask-fixture.mjs");
    writeFileSync(plugin, FIXTURE_PLUGIN);
    const extension = join(e.root, "startup-ext.mjs");
    writeFileSync(extension, STARTUP_EXTENSION);
    const settingsFile = join(e.agentDir, "settings.json");
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(readFileSync(settingsFile, "utf8")), plugins: [plugin] }));
    delete e.env.TMUX;
    e.env.LANG = "C.UTF-8";
    const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' -e '${extension}' 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
    tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
    await waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    try {
      tmux("kill-server");
    } catch {
      /* already gone */
    }
    await server?.close();
    e?.cleanup();
  });

  it("shows what an extension set up at session start", async () => {
    const s = await waitFor(/EXT-STATUS-READY/);
    expect(s).toContain("EXT-WIDGET-LINE");
  });

  it("types a prompt and shows the streamed markdown answer", async () => {
    typeText("hello there");
    send("Enter");
    const s = await waitFor(/END-OF-ANSWER/);
    expect(s).toContain(" hello there");
    expect(s).toContain("Answer");
    expect(s).toContain("• item one");
    expect(s).toContain("你好 and 🎉.");
    expect(s).not.toContain("*markdown*");
  });

  it("shows a tool call and its output", async () => {
    typeText("run the tool");
    send("Enter");
    const s = await waitFor(/Tool said hello-from-bash\./);
    expect(s).toMatch(/✓ bash \$ echo hello-from-bash/);
    expect(s).toMatch(/^ +hello-from-bash *$/m);
  });

  it("runs !cmd in the user's shell", async () => {
    typeText("!echo bang-$((40+2))");
    send("Enter");
    // The output streams in before the command's exit flips the mark to ✓; wait for the mark.
    const s = await waitFor(/✓ ! echo bang-\$\(\(40\+2\)\)/);
    expect(s).toMatch(/^ +bang-42 *$/m);
  });

  it("asks the permission gate's question in a dialog and takes the answer", async () => {
    typeText("try sudo");
    send("Enter");
    let s = await waitFor(/Allow bash: sudo ls\?/);
    expect(s).toMatch(/❯ Yes/);
    expect(s).toMatch(/in \d+s/);
    send("Down");
    send("Enter");
    s = await waitFor(/SUDO-DONE/);
    expect(s).toMatch(/✗ bash \$ sudo ls/);
    expect(s).toContain("the user did not allow");
  });

  it("shows a dialog a plugin's slash command opens through the ui service", async () => {
    typeText("/ask");
    send("Enter");
    await waitFor(/Fixture question\?/);
    send("Down");
    send("Enter");
    await waitFor(/fixture picked Blue/);
  });

  it("steers while the answer streams", async () => {
    typeText("go slow");
    send("Enter");
    await waitFor(/Working/);
    // The answer waits at the server's gate until the steering message is queued, so the test
    // does not race the stream on a busy machine.
    await waitFor(() => server.held("steer"));
    typeText("steer-marker please");
    send("Enter");
    const queued = await waitFor(/↳ steer: steer-marker please/);
    expect(queued).toMatch(/1 queued/);
    server.release("steer");
    const s = await waitFor(/STEERED-OK/);
    expect(s).toContain(" steer-marker please");
    const last = server.stats().requests.at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain("steer-marker please");
  });

  it("switches the model with /model", async () => {
    typeText("/model");
    send("Enter");
    await waitFor(/Select a model/);
    typeText("claude");
    await waitFor(/→ {3}mock-claude \[mock-anthropic\]/);
    send("Enter");
    await waitFor(/Model: mock-anthropic\/mock-claude/);
    typeText("which model");
    send("Enter");
    await waitFor((s) => (s.match(/END-OF-ANSWER/g) ?? []).length >= 1 && /mock-anthropic\/mock-claude\s*$/m.test(s) && !/Working/.test(s));
    expect(server.stats().requests.at(-1)!.path).toBe("/v1/messages");
  });

  it("navigates the session tree back to an earlier prompt", async () => {
    typeText("/tree");
    send("Enter");
    let s = await waitFor(/Session Tree/);
    expect(s).toMatch(/user: hello there/);
    expect(s).toMatch(/• assistant: # Answer/);
    typeText("run the tool");
    await waitFor(/^› .*user: run the tool/m);
    send("Enter");
    const landed = (x: string) => !/Session Tree/.test(x) && !/Tool said/.test(x) && !/Summarize the branch/.test(x);
    s = await waitFor((x) => /Summarize the branch you leave\?/.test(x) || landed(x));
    if (/Summarize the branch you leave\?/.test(s)) send("Enter"); // the first choice, no summary: leave the branch as it is
    // The chat now ends at the first answer, and the prompt is back in the editor (once the move is done).
    s = await waitFor((x) => landed(x) && /^run the tool\s*$/m.test(x));
    expect(s).toContain("END-OF-ANSWER");
    send("C-u");
  });

  it("exports the session with /export and compacts it with /compact", async () => {
    typeText("/export chat.html");
    send("Enter");
    await waitFor(/Exported to .*chat\.html/);
    expect(readFileSync(join(e.cwd, "chat.html"), "utf8")).toContain("hello there");
    typeText("/compact");
    send("Enter");
    const s = await waitFor(/Context compacted/);
    expect(s).not.toMatch(/Compaction failed/);
  });

  it("re-wraps on resize without lines wider than the window", async () => {
    tmux("resize-window", "-t", "t", "-x", "60", "-y", "20");
    const s = await waitFor((x) => x.split("\n").length <= 21 && /─{60}/.test(x) && !/─{61}/.test(x));
    for (const line of s.split("\n")) expect(visibleWidth(line)).toBeLessThanOrEqual(60);
    tmux("resize-window", "-t", "t", "-x", "120", "-y", "40");
    await waitFor(/─{120}/);
  });

  it("quits on Ctrl+D with exit code 0 and nothing on stderr", async () => {
    send("C-d");
    await waitFor(/EXIT=0/);
    expect(readErr()).toBe("");
  });
});
