/**
 * End to end: extensions loaded by the real CLI (`-e`, json print mode, the loopback LLM server)
 * import the interactive mode's components from the host package — a pi 1.6 extension through
 * @earendil-works/pi-coding-agent, a pi 0.73.1 one through @mariozechner/pi-coding-agent — build
 * them with the run's own data and report their rendered lines as tool results.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from "@jest/globals";
import { resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { jsonLines, makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

const NEW = resolve("tests/fixtures/extensions/ui-components.ts");
const OLD = resolve("tests/fixtures/extensions/old-scope-ui-components.ts");

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({
    script: {
      turns: [
        { text: "Drawing **now**.", toolCalls: [{ name: "render_ui", arguments: { label: "x" } }, { name: "render_old", arguments: {} }], usage: { input: 1500, output: 40 } },
      ],
      default: { text: "done" },
    },
  });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  e = makeE2eEnv(server.url);
  server.reset();
});
afterEach(() => e.cleanup());

describe("components through the package aliases", () => {
  it("a 1.6 and a 0.73.1 extension build, drive and render them in a real run", async () => {
    const r = await runCli(["--no-session", "--mode", "json", "-e", NEW, "-e", OLD, "draw the components"], e, { timeoutMs: 180_000 });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const ends = jsonLines(r.stdout).filter((l) => l.type === "tool_execution_end");
    const result = (name: string) => {
      const end = ends.find((x) => x.toolName === name);
      expect(end?.isError).toBe(false);
      return JSON.parse(end.result.content.map((c: any) => c.text).join(""));
    };

    const ui = result("render_ui");
    expect(ui.sameTui).toBe(true);
    expect(ui.user).toEqual(["", " render this", ""]);
    // the session's own assistant message (the one that called the tool)
    expect(ui.assistant).toEqual(["", " Drawing now."]);
    expect(ui.tool).toEqual(["", "", ' render_ui', "", " {", '   "label": "x"', " }", " rendered", ""]);
    expect(ui.selected).toBe("green");
    // the footer over the run's session and model: usage of the first reply, the model id, the status
    expect(ui.footer[1]).toMatch(/^↑1\.5k ↓40 .*\/128k \(auto\) +mock-model$/);
    expect(ui.footer[2]).toBe("ready");

    const old: string[] = result("render_old");
    expect(old.slice(0, 4)).toEqual(["", " Thought hidden", "", " old style"]);
    expect(old).toContain(" $ echo hi");
    expect(old).toContain(" hi");
    expect(old).toContain(" Login to acme");
    expect(old).toContain(" step two");
    expect(old.every((l) => l.length <= 40)).toBe(true);
  });
});
