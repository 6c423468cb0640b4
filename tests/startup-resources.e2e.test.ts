/**
 * End to end in a terminal (tmux): the start-up list of loaded resources (context files, skills,
 * prompt templates, extensions) as pi 1.6 shows it, quietStartup hiding it, and the footer's
 * context use on a fresh session — the real CLI, the loopback model server, a throwaway agent dir.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tmuxDriver } from "./helpers/tmux.js";

jest.setTimeout(180_000);

const SOCKET = `pi-startup-res-${process.pid}`;
let server: LlmServer;
let e: E2eEnv;
const { tmux, waitFor, kill, capture, send } = tmuxDriver(SOCKET, () => e.env, () => join(e.root, "err.log"));

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

function start(settings: Record<string, unknown> = {}) {
  e = makeE2eEnv(server.url, { settings });
  delete e.env.TMUX;
  e.env.LANG = "C.UTF-8";
  mkdirSync(join(e.agentDir, "skills", "demo-skill"), { recursive: true });
  writeFileSync(join(e.agentDir, "skills", "demo-skill", "SKILL.md"), "---\nname: demo-skill\ndescription: A demo skill\n---\nDo the demo.\n");
  mkdirSync(join(e.agentDir, "prompts"), { recursive: true });
  writeFileSync(join(e.agentDir, "prompts", "review.md"), "---\ndescription: Review code\n---\nReview $@\n");
  mkdirSync(join(e.agentDir, "extensions", "greeter"), { recursive: true });
  writeFileSync(join(e.agentDir, "extensions", "greeter", "index.ts"), "export default function () {}\n");
  writeFileSync(join(e.agentDir, "AGENTS.md"), "# global rules\n");
  const cmd = `cd '${e.cwd}' && '${process.execPath}' '${CLI}' 2>'${join(e.root, "err.log")}'; echo EXIT=$?; sleep 60`;
  tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", cmd);
}

describe("start-up resources", () => {
  it("lists context files, skills, prompts and extensions under the header; the footer reads 0.0%", async () => {
    start();
    const s = await waitFor(/\[Extensions\][\s\S]*greeter[\s\S]*mock\/mock-model/, 120_000);
    expect(s).toMatch(/\[Context\]\n\s+AGENTS\.md\n\n\[Skills\]\n\s+demo-skill\n\n\[Prompts\]\n\s+\/review\n\n\[Extensions\]\n\s+greeter/);
    expect(s).toMatch(/0\.0%\/128k/i);
    expect(s).not.toMatch(/\?\/128k/i);

    // Ctrl+O (as 1.6): full paths under their scope.
    send("C-o");
    const full = await waitFor(/\[Skills\]\n\s+user\n\s+\S*skills\/demo-skill\/SKILL\.md/);
    expect(full).toMatch(/\[Extensions\]\n\s+user\n\s+\S*extensions\/greeter\/index\.ts/);
    expect(full).toContain(join(e.agentDir, "AGENTS.md").slice(-40));
  });

  it("quietStartup true or \"header\" hides the list", async () => {
    for (const quietStartup of [true, "header"]) {
      start({ quietStartup });
      await waitFor(/mock\/mock-model/, 120_000);
      // The model is in the footer once start-up is done; extensions load before it shows.
      expect(capture()).not.toMatch(/\[Skills\]|\[Extensions\]|demo-skill/);
      kill();
      e.cleanup();
    }
  });
});
