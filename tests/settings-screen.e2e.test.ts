/**
 * End to end: the settings screen (/settings in the TUI, `pi config` in a terminal and as a
 * list) and pi 1.6's settings keys accepted silently, through the real CLI against the loopback
 * model server and a throwaway agent dir (tmux for the terminal parts).
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";
import { RawRpc } from "./helpers/rpc.js";

jest.setTimeout(180_000);

const SOCKET = `pi-settings-screen-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;
const { tmux, waitFor, send, typeText, kill } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

/** pi 1.6 keys: some with no effect in this build (cacheWarming, collapseChangelog, …), some honoured (markdown.mermaid, fullscreen*). */
const PI16_KEYS = {
  enableInstallTelemetry: false,
  warnings: { anthropicExtraUsage: false },
  collapseChangelog: true,
  fullscreenScrollbar: "always",
  fullscreenCopyOnSelect: false,
  fullscreenExitOutput: "resume-hint",
  fullscreenWheelScrollLines: 3,
  cacheWarming: "off",
  lastChangelogVersion: "1.6.0",
  deviceId: "0000",
  markdown: { mermaid: "final" },
};

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  kill();
  e?.cleanup();
});

function start(args: string[], settings: Record<string, unknown> = {}) {
  e = makeE2eEnv(server.url, { settings });
  delete e.env.TMUX;
  e.env.LANG = "C.UTF-8";
  const quoted = args.map((a) => `'${a}'`).join(" ");
  const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' ${quoted} 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
  tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd);
}
const saved = () => JSON.parse(readFileSync(join(e.agentDir, "settings.json"), "utf8"));
const errLog = () => readFileSync(join(e.root, "err.log"), "utf8");

describe("/settings", () => {
  it("lists 1.6's entries with descriptions, filters as you type, and Enter cycles and saves a value", async () => {
    start([], PI16_KEYS);
    await waitFor(/mock\/mock-model/, 120_000);
    typeText("/settings");
    send("Enter");
    const first = await waitFor(/── Settings/);
    // Searchable, counted, described: 1.6's 33 entries and this build's two.
    expect(first).toMatch(/\(1\/35\)/);
    expect(first).toContain("Auto-compact");
    expect(first).toMatch(/Summarize older messages automatically/);
    // The screen is about settings; no start-up warning about 1.6 keys anywhere.
    expect(first).not.toMatch(/not supported/);

    typeText("mermaid");
    const filtered = await waitFor(/› mermaid[\s\S]*→ Mermaid diagrams\s+final/);
    expect(filtered).toMatch(/Draw ```mermaid blocks/);
    // Honoured here: not marked as having no effect.
    expect(filtered).not.toMatch(/Mermaid diagrams\s+final\s+· no effect here/);
    send("Enter");
    await waitFor(/→ Mermaid diagrams\s+streaming/);
    expect(saved().markdown.mermaid).toBe("streaming");

    // A key with no effect here is listed, and marked.
    send("C-u");
    typeText("warming");
    await waitFor(/→ Cache warming\s+off\s+· no effect here/);

    // Esc clears the search, a second Esc closes the screen.
    send("Escape");
    await waitFor(/› \S*\s*type to search/);
    send("Escape");
    await waitFor((s) => !s.includes("── Settings"));
    expect(errLog()).not.toMatch(/not supported|enableInstallTelemetry|collapseChangelog/);
  });

  it("a live entry applies to the running session (hide thinking off → on is saved as hideThinkingBlock)", async () => {
    start([]);
    await waitFor(/mock\/mock-model/, 120_000);
    typeText("/settings");
    send("Enter");
    await waitFor(/── Settings/);
    typeText("hidethinking");
    await waitFor(/→ Hide thinking\s+false/);
    send("Space");
    await waitFor(/→ Hide thinking\s+true/);
    expect(saved().hideThinkingBlock).toBe(true);
  });

  it("the per-model thinking level entry picks a model, then a level, and comes back to the screen", async () => {
    start([]);
    await waitFor(/mock\/mock-model/, 120_000);
    typeText("/settings");
    send("Enter");
    await waitFor(/── Settings/);
    typeText("permodel");
    await waitFor(/→ Default thinking level per model\s+none/);
    send("Enter");
    await waitFor(/── Default thinking level for which model\?/);
    typeText("mock-model");
    await waitFor(/❯ mock\/mock-model/);
    send("Enter");
    // mock-model does not reason: the levels it offers are "off" only (as pi 1.6 lists them), then "(clear)"
    const levels = await waitFor(/── Thinking level mock\/mock-model starts with[\s\S]*\(clear\)/);
    expect(levels).not.toMatch(/^\s*\S?\s*medium\b/m);
    typeText("1");
    await waitFor(/→ Default thinking level per model\s+1 model/);
    expect(saved().modelThinkingLevels).toEqual({ "mock/mock-model": "off" });
  });
});

describe("pi config", () => {
  it("in a terminal opens the toggle screen; Space turns a built-in extension off and it is saved; Tab switches to the project", async () => {
    start(["config"]);
    await waitFor(/── Global configuration/, 120_000);
    typeText("mcp");
    await waitFor(/→ Built-in: mcp\s+true/);
    send("Space");
    await waitFor(/→ Built-in: mcp\s+false/);
    // Tab: the project's settings (1.6's global/project switch).
    send("Tab");
    await waitFor(/── Project configuration: \.pi\/settings\.json/);
    typeText("codemode");
    await waitFor(/→ Built-in: codemode\s+true/);
    send("Enter");
    await waitFor(/→ Built-in: codemode\s+false/);
    send("Escape");
    send("Escape");
    const after = await waitFor(/EXIT=0/);
    expect(after).toContain("1 change saved to the global settings.");
    expect(after).toContain("1 change saved to the project settings.");
    expect(saved().extensions).toEqual(["-builtin:mcp"]);
    expect(JSON.parse(readFileSync(join(e.cwd, ".pi", "settings.json"), "utf8")).extensions).toEqual(["-builtin:codemode"]);
  });

  it("without a terminal prints the list, with every setting and the no-effect marks", async () => {
    e = makeE2eEnv(server.url, { settings: PI16_KEYS });
    const r = await runCli(["config"], e);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/\[x\] mcp/);
    expect(r.stdout).toMatch(/\* markdown\.mermaid\s+final\s+Mermaid diagrams\n/);
    expect(r.stdout).toMatch(/\* cacheWarming\s+off\s+Cache warming\s+\(no effect here\)/);
    expect(r.stdout).toMatch(/\* fullscreenScrollbar\s+always\s+Fullscreen scrollbar\n/);
    expect(r.stdout).toMatch(/\* enableInstallTelemetry\s+false\s+Install telemetry\s+\(no effect here\)/);
    expect(r.stdout).toMatch(/accepted without effect here: .*deviceId/);
  });
});

describe("pi 1.6 settings keys", () => {
  it("are accepted silently by -p, --mode json and --help", async () => {
    e = makeE2eEnv(server.url, { settings: PI16_KEYS });
    for (const args of [["-p", "hi"], ["--mode", "json", "hi"], ["--help"]]) {
      const r = await runCli(args, e);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
    }
  });

  it("are accepted silently by --mode rpc", async () => {
    e = makeE2eEnv(server.url, { settings: PI16_KEYS });
    const rpc = new RawRpc(e);
    try {
      rpc.send({ id: "s", type: "get_state" });
      const r = await rpc.response("s");
      expect(r.success).toBe(true);
      rpc.end();
      await rpc.closed;
      expect(rpc.stderr).toBe("");
    } finally {
      await rpc.kill();
    }
  });
});
