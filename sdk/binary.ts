/**
 * The start-up path every binary shares: `pi` (sdk/cli.ts) and every CLI a team builds with
 * createCli() call runBinary() first thing, so they keep the same promises:
 *
 * - `--version` (or `-v`) alone is answered before anything else loads;
 * - in the protocol modes (`--mode json`, `--mode rpc`) stdout carries only the protocol from the
 *   first byte: every other stdout write (an extension at load or in a handler, a dependency) goes
 *   to stderr — the CLI's own modules are imported only after that;
 * - a reader that goes away (EPIPE, `| head`) is a normal end, not a crash;
 * - V8 runs with the binary's flags (baseline compiler only, a young generation that does not
 *   grow: sdk/v8-flags.ts), set before the CLI's modules are compiled;
 * - Node's module compile cache is turned on (Node ≥ 22.1; a per-user folder shared by every
 *   agent dir, sdk/compile-cache.ts);
 * - the exit code is the one the runner returns.
 *
 * This module is a package entry of its own (`pi-kernel/binary`) that loads almost nothing, so a
 * custom CLI's bin imports it before its own code (which imports the whole SDK).
 */
import { protectProtocolStdout } from "../core/stores/io/stdout-guard.js";
import { enableModuleCompileCache } from "./compile-cache.js";
import { applyBinaryV8Flags } from "./v8-flags.js";

export interface BinaryOptions {
  /** The CLI's name (as given to createCli). */
  name: string;
  /** The project folder (default `.<name>`), as given to createCli. */
  configDir?: string;
  /** The environment variable naming the agent dir, when createCli got one. */
  agentDirEnv?: string;
  /** The version `--version` prints (a function: read only when asked). */
  version: string | (() => string);
  /** Builds the CLI; imported only after stdout is protected. Usually `() => import("./cli.js").then((m) => m.createMyCli())`. */
  load: () => Promise<{ run(argv: string[]): Promise<number> }> | { run(argv: string[]): Promise<number> };
  /** The command line (default `process.argv.slice(2)`). */
  argv?: string[];
}

/** Run a CLI binary the way `pi` runs (see the module comment); sets `process.exitCode`. */
export async function runBinary(opts: BinaryOptions): Promise<void> {
  const argv = opts.argv ?? process.argv.slice(2);
  // Modes that own stdout (the guard of print/json/rpc) attach their own handler and decide themselves.
  const onStdoutError = (e: NodeJS.ErrnoException) => {
    if (process.stdout.listenerCount("error") > 1) return;
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  };
  process.stdout.on("error", onStdoutError);
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write((typeof opts.version === "function" ? opts.version() : opts.version) + "\n");
    return;
  }
  protectProtocolStdout(argv);
  enableModuleCompileCache(applyBinaryV8Flags());
  const cli = await opts.load();
  process.exitCode = await cli.run(argv);
}
