// @ts-check
/**
 * {{NAME}}: the same agent as `{{APP}}` (every built-in plugin: providers, tools, modes, sessions,
 * extensions, MCP, …) under its own name:
 *
 *   - project settings and extensions in `.{{NAME}}/` (not `.pi/`),
 *   - the agent dir `~/.{{NAME}}/agent`, or the folder named by the environment variable
 *     `<NAME>_CODING_AGENT_DIR` (the name upper-cased, other characters as "_"),
 *   - the team's extension (src/extension.js) built in, loaded after the discovered ones.
 *
 * Drop or add kernel plugins by editing the list: builtinPlugins() returns the list `{{APP}}` is made of.
 */
import { readFileSync } from "node:fs";
import { builtinPlugins, createCli } from "{{HOST_NAME}}";
import { app } from "./app.js";
import teamExtension from "./extension.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

export function createTeamCli() {
  return createCli({
    name: app.name,
    version: pkg.version,
    configDir: app.configDir,
    plugins: builtinPlugins(),
    extensionFactories: [teamExtension],
  });
}
