/**
 * End to end in tmux: an extension's markdown transformer (pi.registerMarkdownTransformer) rewrites
 * what the TUI's chat draws, as pi 1.6's interactive mode does: user and assistant text by default,
 * display only (the session file keeps the original), told the surface and, for messages drawn
 * from the session file (`-c`), the entry's id; registering again replaces the extension's
 * transformer; one that throws leaves the text as it was; one for summaries only leaves
 * messages alone; escape sequences a transformer adds never reach the terminal.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-md-transform", () => e);

const EXTENSION = `
export default function (pi: any) {
  pi.registerMarkdownTransformer((md: string) => md + " REPLACED-ONE");
  pi.registerMarkdownTransformer((md: string, c: any) => {
    if (c.isStreaming) return md;
    return md.replaceAll("-->", "→") + " [" + c.messageType + (c.messageId ? ":stored" : "") + "]";
  });
}
`;
const FAILING = `
export default function (pi: any) {
  pi.registerMarkdownTransformer(() => { throw new Error("a failing transformer"); });
}
`;
// An extension whose transformer tries to reach the terminal: a window title (OSC 2), a clipboard
// write (OSC 52, which tmux's set-clipboard would turn into a buffer), a C1 CSI.
const INJECTING = `
export default function (pi: any) {
  pi.registerMarkdownTransformer((md: string) => md + " I1\\x1b]2;INJECTED-TITLE\\x07I2\\x1b]52;c;ZXZpbA==\\x07I3\\u009b2JI4");
}
`;
const SUMMARY_ONLY = `
export default function (pi: any) {
  pi.registerMarkdownTransformer(() => "SUMMARY ONLY", { messageTypes: ["summary"] });
}
`;

function sessionText(): string {
  const dir = join(e.agentDir, "sessions");
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d, { withFileTypes: true })) f.isDirectory() ? walk(join(d, f.name)) : f.name.endsWith(".jsonl") && files.push(join(d, f.name));
  };
  walk(dir);
  return files.map((f) => readFileSync(f, "utf8")).join("\n");
}

beforeAll(async () => {
  server = await startLlmServer({ script: { turns: [], default: { text: "answer c --> d" } } });
  e = makeE2eEnv(server.url, { settings: { quietStartup: true } });
  mkdirSync(join(e.agentDir, "extensions"), { recursive: true });
  writeFileSync(join(e.agentDir, "extensions", "arrows.ts"), EXTENSION);
  writeFileSync(join(e.agentDir, "extensions", "failing.ts"), FAILING);
  writeFileSync(join(e.agentDir, "extensions", "summary-only.ts"), SUMMARY_ONLY);
  writeFileSync(join(e.agentDir, "extensions", "zz-injecting.ts"), INJECTING);
  sh.launch();
  await sh.waitFor(/mock\/mock-model/);
});

afterAll(async () => {
  sh.kill();
  await server?.close();
  e?.cleanup();
});

describe("TUI: markdown transformers", () => {
  it("rewrite the user's and the model's text on screen, not in the session", async () => {
    sh.typeText("question a --> b");
    sh.send("Enter");
    const s = await sh.waitFor(/answer c → d \[assistant\]/);
    expect(s).toMatch(/question a → b \[user\]/);
    expect(s).not.toContain("REPLACED-ONE");
    expect(s).not.toContain("SUMMARY ONLY");
    const stored = sessionText();
    expect(stored).toContain("question a --> b");
    expect(stored).toContain("answer c --> d");
    expect(stored).not.toContain("→");
  });

  it("cannot reach the terminal: a transformer's escape sequences set no title and write no clipboard", async () => {
    const s = await sh.waitFor(/answer c → d \[assistant\] I1.*I2.*I3.*I4/);
    expect(s).toMatch(/question a → b \[user\] I1.*I2.*I3.*I4/);
    expect(sh.pane("#{pane_title}")).not.toContain("INJECTED-TITLE");
    expect(sh.tmux("list-buffers")).not.toContain("evil");
  });

  it("are told the entry's id for messages drawn from the session file", async () => {
    sh.send("C-d");
    await sh.waitFor(/EXIT=0/);
    sh.reset();
    sh.launch("-c");
    const s = await sh.waitFor(/answer c → d \[assistant:stored\]/);
    expect(s).toMatch(/question a → b \[user:stored\]/);
  });
});
