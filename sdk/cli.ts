#!/usr/bin/env node
/**
 * The `pi` binary. `--version` is answered before anything else loads; every other path
 * imports the CLI runner, which builds the kernel from the built-in plugins.
 */
import { packageInfo } from "./package-info.js";
import { protectProtocolStdout } from "../core/io/stdout-guard.js";
import { enableModuleCompileCache } from "./compile-cache.js";
import { defineApp } from "../core/config.js";

const argv = process.argv.slice(2);
// A reader that goes away (`pi rpc-schema | head`) is a normal end, not a crash. Modes that own
// stdout (the guard of print/json/rpc) attach their own handler and decide themselves.
const onStdoutError = (e: NodeJS.ErrnoException) => {
  if (process.stdout.listenerCount("error") > 1) return;
  if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw e;
};
process.stdout.on("error", onStdoutError);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(packageInfo().version + "\n");
} else {
  // json/rpc: stdout carries the protocol only, from the first byte; stray writes (extensions,
  // dependencies, even while modules load) go to stderr (issue 21).
  protectProtocolStdout(argv);
  // (issue 20) compiled code of the modules below is reused from the previous run (Node ≥ 22.1).
  enableModuleCompileCache(defineApp("pi", ""));
  const { runPiCli } = await import("./pi.js");
  const code = await runPiCli(argv);
  process.exitCode = code;
}
