/**
 * End to end: /tree decides "already there" by the session's leaf when Enter is pressed, not when
 * the tree opened. A tree opened while an answer streams holds the leaf of that moment (the
 * prompt); once the answer lands, jumping to the prompt is a real move and asks about a summary.
 * Enter on the entry the session is at says so, as pi 1.6 does.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-tree-live-leaf", () => e);
/** The selected row's text (the list marks it with ›), after the active path's •. */
const selected = (screen: string) => /^› [\s│├└─⊟⊞]*(?:• )?(.*?)\s*$/m.exec(screen)?.[1] ?? "";

describe("/tree: the leaf is read when Enter is pressed", () => {
  beforeAll(async () => {
    server = await startLlmServer({
      script: {
        turns: [
          { match: "first question", text: "FIRST-ANSWER" },
          // Two chunks with a gate between: the tree opens while the answer is half streamed.
          { match: "second question", text: "SECOND-PART and the rest", chunkSize: 11, gate: "rest" },
        ],
      },
    });
    e = makeE2eEnv(server.url);
    sh.launch("");
    await sh.waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("a tree opened while the answer streams asks about the jump once the answer has landed", async () => {
    sh.typeText("first question");
    sh.send("Enter");
    await sh.waitFor((s) => /FIRST-ANSWER/.test(s) && !/Working/.test(s));
    sh.typeText("second question");
    sh.send("Enter");
    await sh.waitFor(/SECOND-PART/);
    expect(server.held("rest")).toBe(true);
    // The answer is not in the session yet: the leaf is the prompt, and the tree selects it.
    sh.typeText("/tree");
    sh.send("Enter");
    await sh.waitFor((s) => /Session Tree/.test(s) && selected(s) === "user: second question");
    server.release("rest");
    await sh.waitFor((s) => /and the rest/.test(s) && !/Working/.test(s));
    sh.send("Enter");
    await sh.waitFor(/Summarize the branch you leave\?/);
    sh.send("Enter"); // No summary
    // Jumping to a prompt goes to its parent, says so, and gives its text back to the editor.
    await sh.waitFor((s) => !/Session Tree|Summarize/.test(s) && /Navigated to selected point/.test(s) && /^.*second question\s*$/m.test(s.split("\n").slice(-6).join("\n")));
  }, 120_000);

  it("Enter on the entry the session is at says it is already there", async () => {
    sh.send("C-u");
    sh.typeText("/tree");
    sh.send("Enter");
    await sh.waitFor((s) => /Session Tree/.test(s) && selected(s) === "assistant: FIRST-ANSWER");
    sh.send("Enter");
    const s = await sh.waitFor((x) => !/Session Tree/.test(x) && /Already at this point/.test(x));
    expect(s).not.toMatch(/Summarize the branch you leave\?/);
  }, 120_000);
});
