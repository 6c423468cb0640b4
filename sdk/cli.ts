#!/usr/bin/env node
/**
 * The `pi` binary. `--version` is answered before anything else loads; every other path
 * imports the CLI runner, which builds the kernel from the built-in plugins.
 */
import { packageInfo } from "./package-info.js";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(packageInfo().version + "\n");
} else {
  const { runPiCli } = await import("./pi.js");
  const code = await runPiCli(argv);
  process.exitCode = code;
}
