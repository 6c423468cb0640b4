/**
 * `pi auth login|logout|check|print-api-key|print-bearer-token`: provider credentials from the
 * command line, without starting a session (pi 1.6's commands, same output and exit codes).
 * Setup only registers the subcommand; the work is in cli.ts, loaded when the command runs.
 */
import { definePlugin } from "../../core/kernel/index.js";
import { AUTH_HELP } from "./help.js";

export default definePlugin({
  name: "auth",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "pi auth: log in or out of model providers, print their credentials, check they are ready",
  setup(api) {
    api.registerSubcommand({
      name: "auth",
      description: "Log in or out, print credentials, or check provider readiness (login, logout, check, print-api-key, print-bearer-token)",
      usage: "auth <command>",
      help: AUTH_HELP,
      run: async (args, ctx) => (await import("./cli.js")).runAuthCommand(args, ctx),
    });
  },
});
