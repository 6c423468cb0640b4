/**
 * End to end in tmux: the thinking level `max` in the TUI as pi 1.6 shows it. On a model whose
 * thinkingLevelMap maps max, Shift+Tab cycles high → xhigh → max → off (the footer reads
 * `thinking off` at off), the next prompt's request carries the mapped value, and cycling picks
 * for this session only (settings.json keeps its defaultThinkingLevel); /thinking lists max, and
 * Ctrl+S there saves the level as the default.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-thinking-max", () => e);

const footer = (screen: string) => screen.split("\n").filter((l) => /mock\/deep/.test(l)).at(-1) ?? "";
const settings = () => JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8")) as Record<string, unknown>;

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [], default: { text: "MAX-ANSWER-MARK" } } });
  e = makeE2eEnv(server.url, { settings: { defaultModel: "deep", defaultThinkingLevel: "high" } });
  const model = { id: "deep", name: "deep", reasoning: true, input: ["text"], contextWindow: 128000, maxTokens: 4096, thinkingLevelMap: { xhigh: "xhigh", max: "max" } };
  writeFileSync(
    join(e.agentDir, "models.json"),
    JSON.stringify({ providers: { mock: { baseUrl: `${server.url}/v1`, api: "openai-completions", apiKey: "MOCK_KEY", compat: { supportsReasoningEffort: true }, models: [model] } } }),
  );
  sh.launch("--no-session");
  await sh.waitFor((s) => /mock\/deep • high\s*$/m.test(footer(s)));
});

afterAll(async () => {
  sh.kill();
  await server?.close();
  e?.cleanup();
});

describe("TUI: thinking level max", () => {
  it("Shift+Tab cycles up to max and on to off; the request carries max; settings.json is left alone", async () => {
    sh.send("BTab");
    await sh.waitFor((s) => /• xhigh\s*$/.test(footer(s)));
    sh.send("BTab");
    await sh.waitFor((s) => /• max\s*$/.test(footer(s)));
    server.reset();
    sh.typeText("hello");
    sh.send("Enter");
    await sh.waitFor(/MAX-ANSWER-MARK/);
    const chat = server.stats().requests.find((q: { path: string }) => q.path.endsWith("/chat/completions"));
    expect((chat?.body as { reasoning_effort?: unknown }).reasoning_effort).toBe("max");
    sh.send("BTab");
    await sh.waitFor((s) => /• thinking off\s*$/.test(footer(s)));
    expect(settings().defaultThinkingLevel).toBe("high");
  });

  it("/thinking lists max; Enter picks it for the session, Ctrl+S also saves it as the default", async () => {
    sh.typeText("/thinking");
    sh.send("Enter");
    const list = await sh.waitFor(/Ctrl\+S set as default/);
    expect(list).toMatch(/^\s*\S?\s*max\b/m);
    expect(list).toMatch(/high\s+· default/);
    sh.send("Up"); // from off (the current level, listed first) to max, the last
    sh.send("C-s");
    await sh.waitFor((s) => /• max\s*$/.test(footer(s)));
    await waitUntil(() => settings().defaultThinkingLevel === "max", "defaultThinkingLevel max in settings.json");
  });
});
