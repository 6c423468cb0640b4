/**
 * The identity of the CLI being run: `pi` itself or a team's custom CLI built with createCli().
 * It decides the config folder names and the agent-dir environment variable.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { expandHome } from "./fs-utils.js";

export interface AppConfig {
  /** Binary name, e.g. "pi" or "mycli". */
  name: string;
  version: string;
  /** Project config folder, e.g. ".pi" or ".mycli". */
  configDir: string;
  /** Environment variable naming the agent dir, e.g. PI_CODING_AGENT_DIR. */
  agentDirEnv: string;
  /** Package names an extension may import to reach this host (aliased by the loader). */
  hostPackageNames: string[];
}

export function defineApp(name: string, version: string, configDir?: string): AppConfig {
  return {
    name,
    version,
    configDir: configDir ?? `.${name}`,
    agentDirEnv: `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_CODING_AGENT_DIR`,
    hostPackageNames: ["pi-kernel", "@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent"],
  };
}

/** `$<NAME>_CODING_AGENT_DIR` or `~/<configDir>/agent`. A leading ~ in the variable is expanded. */
export function resolveAgentDir(app: Pick<AppConfig, "agentDirEnv" | "configDir">, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[app.agentDirEnv];
  if (fromEnv && fromEnv.trim()) return resolve(expandHome(fromEnv.trim()));
  return join(homedir(), app.configDir, "agent");
}

export { expandHome } from "./fs-utils.js";
