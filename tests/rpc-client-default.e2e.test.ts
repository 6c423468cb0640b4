/**
 * The RpcClient exported by the package entry (the bundle) finds the `pi` binary by itself.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, ROOT, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
let e: E2eEnv;
beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "from the default binary" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  e.cleanup();
  await server.close();
});

describe("RpcClient from the package entry", () => {
  it("spawns the package's own binary when no cliPath is given", async () => {
    const { RpcClient } = (await import(pathToFileURL(join(ROOT, "dist", "bundle", "index.js")).href)) as typeof import("../sdk/index.js");
    const client = new RpcClient({ cwd: e.cwd, env: e.env, args: ["--no-session"] });
    await client.start();
    try {
      const state = await client.getState();
      expect(state.model?.id).toBe("mock-model");
      await client.promptAndWait("hi");
      expect(await client.getLastAssistantText()).toBe("from the default binary");
    } finally {
      await client.stop();
    }
  });
});
