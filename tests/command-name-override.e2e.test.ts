/**
 * End to end (RPC): a package's command that has a built-in command's name (pi-mcp-adapter's
 * /mcp) is listed by get_commands and runs, as in pi 1.6.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";
import { waitUntil } from "./helpers/system.js";

let server: LlmServer;
let e: E2eEnv;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "ok" } } });
  e = makeE2eEnv(server.url);
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

describe("an extension command named like a built-in one", () => {
  it("is listed by get_commands in place of the built-in and runs", async () => {
    const out = join(e.root, "mcp-cmd.json");
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: { ...e.env, MCP_CMD_OUT: out }, inheritEnv: false, args: ["--no-session", "-e", resolve("tests/fixtures/api-shapes/mcp-command.ts")] });
    await client.start();
    try {
      const mcp = (await client.getCommands()).filter((c: any) => c.name === "mcp");
      expect(mcp).toEqual([expect.objectContaining({ name: "mcp", description: "the package's MCP panel", source: "extension" })]);
      expect(await client.prompt("/mcp status")).toBe("handled");
      await waitUntil(() => existsSync(out), "the command ran");
      expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ args: "status" });
    } finally {
      await client.stop();
    }
  });
});
