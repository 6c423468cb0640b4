/**
 * ACP agent mode (`pi --mode acp`): the Agent Client Protocol v1 (JSON-RPC 2.0, one JSON object
 * per line on stdin/stdout) for editors such as Zed and headless clients such as acpx. See
 * docs/acp.md.
 *
 * Cheap to import: the official SDK (`@agentclientprotocol/sdk`) and the server load only when the
 * mode runs. When the mode is chosen (its registry entry's prepare(), before the session is built) stdout is
 * taken over by the stdout guard and the "ui" service is provided, so what extensions do in
 * session_start already goes through the ACP permission dialogs (answered by defaults until the
 * client is connected).
 */
import { definePlugin } from "../../core/kernel/index.js";
import { openAcpOutput } from "./output.js";

export default definePlugin({
  name: "mode-acp",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "acp run mode: Agent Client Protocol v1 over stdin/stdout for editors (Zed, JetBrains, acpx)",
  setup(api) {
    api.registerMode({
      name: "acp",
      description: "Agent Client Protocol (ACP v1) agent over stdin/stdout, for editors",
      modeFlag: ["acp"],
      input: "rpc",
      ownsStdin: true,
      // The output side (stdout guard, "ui") opens before the session starts.
      prepare: (kernel) => void openAcpOutput(kernel),
      run: async (ctx) => (await import("./server.js")).runAcp(ctx),
    });
  },
});
