/**
 * End to end: commands typed while an answer streams, as pi 1.6 runs them. /compact stops the
 * answer and compacts (its compact() aborts the run first); the answer's part that came is kept
 * in the session. /fork works before the first answer is saved: the new session starts empty
 * with the message in the editor.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, sessionFilesIn, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-streaming-commands", () => e);


describe("commands while an answer streams", () => {
  beforeAll(async () => {
    server = await startLlmServer({
      script: {
        turnBy: "request",
        turns: [
          // Answered once (the summary request quotes the prompt too, and gets the default).
          { match: "LONG-ANSWER-PLEASE", turns: [{ text: "PART-ONE and the rest of a long answer", chunkSize: 9, gate: "hold" }] },
          { match: "FORK-ME-PLEASE", turns: [{ text: "FORK-PART and the rest", chunkSize: 9, gate: "fork" }] },
        ],
        default: { text: "PLAIN-ANSWER" },
      },
    });
    e = makeE2eEnv(server.url, { settings: { compaction: { enabled: false, reserveTokens: 16384, keepRecentTokens: 10 } } });
    sh.launch("");
    await sh.waitFor(/mock\/mock-model/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("/compact stops the answer and compacts the context", async () => {
    for (const p of ["first question", "second question"]) {
      const n = server.stats().requests.length;
      sh.typeText(p);
      sh.send("Enter");
      await sh.waitFor((s) => server.stats().requests.length > n && !/Working/.test(s) && s.includes(p) && s.lastIndexOf("PLAIN-ANSWER") > s.lastIndexOf(p));
    }
    sh.typeText("LONG-ANSWER-PLEASE");
    sh.send("Enter");
    await sh.waitFor(/PART-ONE/);
    expect(server.held("hold")).toBe(true);
    const before = server.stats().requests.length;
    sh.typeText("/compact");
    await sh.waitFor(/\/compact/);
    sh.send("Enter");
    const s = await sh.waitFor((x) => /Context compacted/.test(x) && !/Compacting the context|Working/.test(x));
    expect(s).not.toMatch(/Wait for the agent to finish/);
    expect(s).not.toMatch(/and the rest of a long answer/);
    // Only summary requests came after (the held answer was not asked again).
    const asked = server.stats().requests.slice(before).map((r) => JSON.stringify(r.body));
    expect(asked.length).toBeGreaterThan(0);
    for (const body of asked) expect(body).toContain("<conversation>");
    // The session keeps the part of the answer that came, marked aborted, then the compaction.
    const lines = sessionFilesIn(join(e.agentDir, "sessions")).flatMap((f) => readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l)));
    const partial = lines.findIndex((l) => l.type === "message" && l.message?.role === "assistant" && l.message.stopReason === "aborted" && JSON.stringify(l.message.content).includes("PART-ONE"));
    expect(partial).toBeGreaterThan(0);
    expect(lines.findIndex((l) => l.type === "compaction")).toBeGreaterThan(partial);
  }, 120_000);

  it("/fork from the first message before its answer is saved starts a new session with the message in the editor", async () => {
    sh.typeText("/new");
    await sh.waitFor(/\/new/);
    sh.send("Enter");
    await sh.waitFor((x) => /New session started/.test(x) && !/PLAIN-ANSWER/.test(x));
    sh.typeText("FORK-ME-PLEASE");
    sh.send("Enter");
    await sh.waitFor(/FORK-PART/);
    expect(server.held("fork")).toBe(true);
    sh.typeText("/fork");
    await sh.waitFor(/\/fork/);
    sh.send("Enter");
    await sh.waitFor(/Fork from a user message[\s\S]*FORK-ME-PLEASE/);
    sh.send("Enter");
    const s = await sh.waitFor((x) => /Forked to new session/.test(x) && !/Working/.test(x));
    expect(s).not.toMatch(/not been saved yet/);
    expect(s).not.toMatch(/FORK-PART/);
    // The message is back in the editor (above the footer's two rows), not in the conversation.
    const rows = s.trimEnd().split("\n");
    expect(rows.slice(-5).join("\n")).toMatch(/FORK-ME-PLEASE/);
  }, 120_000);
});
