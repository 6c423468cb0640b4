/**
 * `pi` itself: a CLI built with createCli() from the built-in plugins, exactly as a team
 * would build its own.
 */
import { createCli, type Cli } from "./main.js";
import { builtinPlugins } from "./builtins.js";
import { packageInfo } from "./package-info.js";
import { builtinToolExtensions } from "./builtin-tool-extensions.js";

export function piVersion(): string {
  return packageInfo().version;
}

export function piCli(): Cli {
  return createCli({ name: "pi", version: piVersion(), configDir: ".pi", plugins: builtinPlugins(), extensionFactories: builtinToolExtensions() });
}
