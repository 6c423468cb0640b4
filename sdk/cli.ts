#!/usr/bin/env node
/**
 * The `pi` binary: the shared start-up path (sdk/binary.ts, the same one every custom CLI's bin
 * calls), then the CLI built with createCli() from the built-in plugins (sdk/pi.ts).
 */
import { packageInfo } from "./package-info.js";
import { runBinary } from "./binary.js";

await runBinary({
  name: "pi",
  configDir: ".pi",
  version: () => packageInfo().version,
  load: async () => (await import("./pi.js")).piCli(),
});
