/**
 * End to end in a terminal (tmux): a pi 1.6 extension (tests/fixtures/extensions/selectors.ts)
 * opens the package's selector components with ctx.ui.custom() in the real CLI's interactive
 * mode, on the session's own data (its model registry and model, its session tree); keys typed
 * in the terminal reach the selectors and their callbacks answer the extension.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from "@jest/globals";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

jest.setTimeout(240_000);

const SOCKET = `pi-sel-tui-${process.pid}`;
const EXTENSION = join(ROOT, "tests", "fixtures", "extensions", "selectors.ts");
let server: LlmServer;
let e: E2eEnv;
const { tmux, send, typeText, waitFor, kill } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [{ match: "first words", text: "ANSWER-ONE" }, { match: "second words", text: "ANSWER-TWO" }], default: { text: "other" } } });
  e = makeE2eEnv(server.url);
  delete e.env.TMUX;
  e.env.LANG = "C.UTF-8";
  const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' -e '${EXTENSION}' 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
  tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "110", "-y", "40", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
  await waitFor(/mock-model/, 120_000);
});
afterAll(async () => {
  kill();
  await server?.close();
  e?.cleanup();
});

async function command(text: string) {
  typeText(text);
  await waitFor((s) => s.includes(text));
  send("Enter");
}

describe("pi 1.6 selectors in our TUI (ctx.ui.custom)", () => {
  it("ModelSelectorComponent lists the registry's models with the session's model ticked; typing filters, Enter picks", async () => {
    await command("/pick-model");
    const s = await waitFor(/mock-claude/, 60_000);
    expect(s).toMatch(/→ ✓ mock-model .*\[mock\]/);
    expect(s).toMatch(/mock-claude .*\[mock-anthropic\]/);
    typeText("claude");
    await waitFor(/> claude/);
    send("Enter");
    await waitFor(/MODEL-PICKED=mock-anthropic\/mock-claude/);
  });

  it("ThinkingSelectorComponent: Escape cancels; Down/Enter picks the level after the current one", async () => {
    await command("/pick-thinking");
    await waitFor(/Thinking Level/);
    send("Escape");
    await waitFor(/THINKING-CANCELLED/);
    await command("/pick-thinking");
    const s = await waitFor(/Thinking Level/);
    const levels = ["off", "low", "medium", "high"];
    const current = /→ ✓ (off|low|medium|high)/.exec(s)?.[1];
    expect(levels).toContain(current);
    const next = levels[(levels.indexOf(current!) + 1) % levels.length];
    send("Down");
    send("Enter");
    await waitFor(new RegExp(`THINKING-PICKED=${next}\\b`));
  });

  it("TreeSelectorComponent shows the session's entries, the last answer selected; Up ×3/Enter picks the first question", async () => {
    typeText("first words");
    send("Enter");
    await waitFor(/ANSWER-ONE/, 120_000);
    typeText("second words");
    send("Enter");
    await waitFor(/ANSWER-TWO/, 120_000);
    await command("/pick-entry");
    const s = await waitFor(/Session Tree/);
    expect(s).toMatch(/user: first words/);
    expect(s).toMatch(/› +• assistant: ANSWER-TWO/);
    send("Up");
    send("Up");
    send("Up");
    send("Enter");
    await waitFor(/ENTRY-PICKED=[0-9a-f]+:.*first words/);
  });
});
