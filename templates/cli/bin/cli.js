#!/usr/bin/env node
// The {{NAME}} binary. runBinary() is the start-up path `{{APP}}` itself uses: `--version` answers
// before the agent loads; in `--mode json` / `--mode rpc` stdout carries only the protocol from the
// first byte (anything else written to stdout goes to stderr); a reader that goes away (`| head`)
// is a normal end; the exit code is the CLI's. Then it runs the CLI that src/cli.js builds.
import { readFileSync } from "node:fs";
import { runBinary } from "{{HOST_NAME}}/binary";
import { app } from "../src/app.js";

await runBinary({
  ...app,
  version: () => JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version,
  load: async () => (await import("../src/cli.js")).createTeamCli(),
});
