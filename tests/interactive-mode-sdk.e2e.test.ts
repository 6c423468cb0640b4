/**
 * End to end in a terminal (tmux): pi 1.6's InteractiveMode from the package. A small host
 * program (tests/fixtures/interactive-mode-host.mjs) imports the bundle, opens a session with
 * createAgentSession against the loopback LLM server, and runs InteractiveMode on its runtime:
 * our TUI comes up, a typed prompt gets the scripted answer on screen, the initial message is
 * sent, quitting (or the host's stop()) ends run() with the exit code, and the session is saved.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, jest } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { ROOT, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { waitUntil } from "./helpers/system.js";
import { tmuxDriver } from "./helpers/tmux.js";

jest.setTimeout(240_000);

const SOCKET = `pi-imode-${process.pid}`;
const HOST = join(ROOT, "tests", "fixtures", "interactive-mode-host.mjs");
const ENTRY = join(ROOT, "dist", "bundle", "index.js");
let server: LlmServer;
let e: E2eEnv | undefined;
const { tmux, send, typeText, waitFor, kill, capture } = tmuxDriver(SOCKET, () => e!.env, () => join(e!.root, "err.log"));

beforeAll(async () => {
  server = await startLlmServer({
    script: {
      turns: [
        { match: "capital of France", text: "The capital is PARIS-42." },
        { match: "opening words", text: "Welcome answer OPENING-7." },
        { match: "stop now", text: "Stopping with STOP-9." },
      ],
      default: { text: "default answer" },
    },
  });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  kill();
  e?.cleanup();
  e = undefined;
});

function startHost(env: Record<string, string> = {}) {
  e = makeE2eEnv(server.url);
  delete e.env.TMUX;
  e.env.LANG = "C.UTF-8";
  Object.assign(e.env, { HOST_DONE: join(e.root, "done.json"), ...env });
  const cmd = `cd '${e.cwd}' && '${process.execPath}' '${HOST}' '${ENTRY}' 2>'${join(e.root, "err.log")}'; echo HOST-EXIT=$?; sleep 60`;
  tmux("-u", "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "32", "-e", "NCURSES_NO_UTF8_ACS=1", cmd);
}
const done = () => JSON.parse(readFileSync(join(e!.root, "done.json"), "utf8"));
const sessionFiles = () => {
  const dir = join(e!.agentDir, "sessions");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
};

describe("InteractiveMode (pi 1.6 export) runs our TUI for the runtime it is given", () => {
  it("a typed prompt gets the model's answer on screen; /quit ends run() with exit code 0 and the session is saved", async () => {
    startHost();
    // the TUI is up: the footer names the session's model
    await waitFor(/mock-model/, 120_000);
    typeText("What is the capital of France?");
    send("Enter");
    const s = await waitFor(/PARIS-42/, 120_000);
    expect(s).toContain("What is the capital of France?");
    const asked = server.stats().requests.filter((r) => r.method === "POST");
    expect(JSON.stringify(asked.at(-1)!.body.messages)).toContain("capital of France");
    typeText("/quit");
    send("Enter");
    await waitFor(/HOST-EXIT=0/, 120_000);
    expect(done()).toEqual({ exitCode: 0 });
    const files = sessionFiles();
    expect(files.length).toBe(1);
    const saved = readFileSync(join(e!.agentDir, "sessions", files[0]!), "utf8");
    expect(saved).toContain("PARIS-42");
  });

  it("sends initialMessage when the UI is up, and the host's stop() ends run()", async () => {
    startHost({ HOST_OPTIONS: JSON.stringify({ initialMessage: "Say your opening words" }), HOST_STOP_ON: "STOP-9" });
    const s = await waitFor(/OPENING-7/, 120_000);
    expect(s).toContain("Say your opening words");
    typeText("please stop now");
    send("Enter");
    // the host calls mode.stop() once it has seen that answer
    await waitFor(/HOST-EXIT=0/, 120_000);
    expect(done()).toEqual({ exitCode: 0 });
    await waitUntil(() => sessionFiles().length === 1, "the saved session file", 30_000);
    const saved = readFileSync(join(e!.agentDir, "sessions", sessionFiles()[0]!), "utf8");
    expect(saved).toContain("OPENING-7");
    expect(saved).toContain("STOP-9");
    expect(capture()).toContain("HOST-EXIT=0");
  });
});
