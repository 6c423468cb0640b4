/**
 * RPC mode (`pi --mode rpc`, protocol.md §5) and the `pi rpc-schema` subcommand.
 *
 * Cheap to import: the server and the schemas load only when the mode or the subcommand runs.
 * The output side (stdout guard, "ui" and "shutdown" services, extension_error records) opens
 * when the mode is chosen, before the session is built, so session_start handlers already reach
 * the client.
 */
import { definePlugin } from "../../core/kernel/index.js";
import { openRpcOutput } from "./output.js";

export default definePlugin({
  name: "mode-rpc",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "rpc run mode: JSON commands on stdin, events and responses on stdout",
  setup(api) {
    api.registerMode({
      name: "rpc",
      description: "JSON-lines protocol over stdin/stdout for other programs",
      modeFlag: ["rpc"],
      input: "rpc",
      ownsStdin: true,
      // The output side ("ui", "shutdown", the stdout guard) opens before the session starts.
      prepare: (kernel) => void openRpcOutput(kernel),
      run: async (ctx) => (await import("./server.js")).runRpc(ctx),
    });
    api.registerSubcommand({
      name: "rpc-schema",
      description: "Print the JSON Schema of the RPC protocol (commands, responses, events)",
      usage: "rpc-schema",
      async run(args, ctx) {
        if (args.length) {
          ctx.stderr(`rpc-schema takes no arguments (got ${args.join(" ")})`);
          return 1;
        }
        const { buildRpcSchema } = await import("./commands.js");
        ctx.stdout(JSON.stringify(buildRpcSchema(), null, 2) + "\n");
        return 0;
      },
    });
  },
});
