#!/usr/bin/env node
// The {{NAME}} binary. `--version` answers before the agent loads; everything else runs the CLI
// that src/cli.js builds.
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { createTeamCli } = await import("../src/cli.js");
  process.exitCode = await createTeamCli().run(argv);
}
