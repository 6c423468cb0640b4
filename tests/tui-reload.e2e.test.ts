/**
 * End to end in the terminal UI: /reload loads the extensions again from disk (their
 * session_start has reason "reload") besides keybindings and themes, and says so in pi 1.6's
 * words; while an answer streams it waits, as pi 1.6 does.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { tuiShell } from "./helpers/tui-shell.js";

let server: LlmServer;
let e: E2eEnv;
const sh = tuiShell("pi-tui-reload", () => e);
const extension = (version: string) => `export default function (pi: any) {
  pi.on("session_start", (event: any, ctx: any) => { ctx.ui.notify("EXTENSION-${version} " + event.reason, "info"); });
}
`;

describe("/reload in the terminal UI", () => {
  let file: string;
  beforeAll(async () => {
    server = await startLlmServer({ script: { turns: [{ match: "hold on", text: "HELD-PART and the rest", chunkSize: 9, gate: "reload" }], default: { text: "ok" } } });
    e = makeE2eEnv(server.url);
    file = join(e.root, "reload-ext.ts");
    writeFileSync(file, extension("ONE"));
    sh.launch(`-e '${file}'`);
    await sh.waitFor(/EXTENSION-ONE startup/);
  });

  afterAll(async () => {
    sh.kill();
    await server?.close();
    e?.cleanup();
  });

  it("loads the extensions again from disk", async () => {
    writeFileSync(file, extension("TWO"));
    sh.typeText("/reload");
    await sh.waitFor(/\/reload/);
    sh.send("Enter");
    const s = await sh.waitFor((x) => /EXTENSION-TWO reload/.test(x) && /Reloaded keybindings, extensions, skills, prompts, themes, and context files/.test(x));
    expect(s).not.toMatch(/EXTENSION-ONE reload/);
  }, 120_000);

  it("waits while an answer streams", async () => {
    sh.typeText("hold on");
    sh.send("Enter");
    await sh.waitFor(/HELD-PART/);
    writeFileSync(file, extension("THREE"));
    sh.typeText("/reload");
    await sh.waitFor(/\/reload/);
    sh.send("Enter");
    await sh.waitFor(/Wait for the current response to finish before reloading/);
    server.release("reload");
    const s = await sh.waitFor((x) => /and the rest/.test(x) && !/Working/.test(x));
    expect(s).not.toMatch(/EXTENSION-THREE/);
  }, 120_000);
});
