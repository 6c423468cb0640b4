/**
 * The mode runners with an SDK runtime, in a child process (they own stdin/stdout): a host
 * script builds a runtime with an inline extension and hands it to runRpcMode; an RpcClient
 * drives it. The extension's session_start notice reaches the client (the RPC output opens
 * before the runner binds) and reports the "rpc" mode. Needs a fresh build.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { RpcClient, type RpcEvent } from "../sdk/rpc-client.js";
import { ROOT } from "./helpers/e2e.js";

const root = mkdtempSync(join(tmpdir(), "pi-sdk-modes-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const HOST = `
import { createAgentSessionRuntime, runRpcMode, SessionManager } from ${JSON.stringify(pathToFileURL(join(ROOT, "dist", "bundle", "index.js")).href)};
const runtime = await createAgentSessionRuntime({
  sessionManager: SessionManager.inMemory(),
  extensionFactories: [(pi) => pi.on("session_start", (_e, ctx) => ctx.ui.notify("host extension started in " + ctx.mode + " mode", "info"))],
});
process.exitCode = await runRpcMode(runtime);
`;

describe("runRpcMode with an SDK runtime", () => {
  it("serves the RPC protocol; session_start runs once the output is open", async () => {
    const agentDir = join(root, "agent");
    const cwd = join(root, "project");
    mkdirSync(agentDir, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1" }));
    writeFileSync(join(root, "script.json"), JSON.stringify(["Hello from the host."]));
    const host = join(root, "host.mjs");
    writeFileSync(host, HOST);
    const seen: RpcEvent[] = [];
    const client = new RpcClient({ cliPath: host, cwd, env: { PI_CODING_AGENT_DIR: agentDir, PI_FAUX_SCRIPT: join(root, "script.json"), PI_OFFLINE: "1" } });
    client.onEvent((e) => void seen.push(e));
    try {
      await client.start();
      await client.promptAndWait("hi");
      expect(await client.getLastAssistantText()).toBe("Hello from the host.");
      const notices = seen.filter((e: any) => e.type === "extension_ui_request" && e.method === "notify").map((e: any) => e.message);
      expect(notices).toEqual(["host extension started in rpc mode"]);
    } finally {
      await client.stop();
    }
    expect(client.exitStatus).toEqual({ code: 0, signal: null });
  });
});
