/**
 * End to end: a third-party plugin imports `pi-kernel/plugin` — the kernel's face, the module the
 * built-in plugins import as core/kernel/index.ts — and gets the host's very instances (its
 * `Kernel` class is the one that runs), against the real CLI.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "fine" } } });
  e = makeE2eEnv(server.url);
  const plugin = join(e.root, "face-plugin.ts");
  writeFileSync(
    plugin,
    [
      'import { definePlugin, Kernel, HOOK_NAMES, KERNEL_API_VERSION } from "pi-kernel/plugin";',
      "export default definePlugin({",
      '  name: "face-check", version: "1.0.0", kernel: "^1.0.0",',
      "  setup(api) {",
      "    api.registerFlag({",
      '      name: "face-check", type: "boolean", description: "reports what the plugin face gave",',
      "      action: (_value, ctx) => `same kernel class: ${ctx.kernel instanceof Kernel}; hooks: ${HOOK_NAMES.includes(\"tool_call\")}; api ${KERNEL_API_VERSION}`,",
      "    });",
      "  },",
      "});",
      "",
    ].join("\n"),
  );
  const settingsFile = join(e.agentDir, "settings.json");
  const { readFileSync } = await import("node:fs");
  const settings = JSON.parse(readFileSync(settingsFile, "utf8")) as Record<string, unknown>;
  writeFileSync(settingsFile, JSON.stringify({ ...settings, plugins: [plugin] }));
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

describe("pi-kernel/plugin", () => {
  it("gives a user plugin the kernel's face with the host's instances", async () => {
    const r = await runCli(["--face-check"], e);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^same kernel class: true; hooks: true; api \d+\.\d+\.\d+/);
  });
});
