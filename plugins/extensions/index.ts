/**
 * The extensions plugin: pi extensions (`export default function (pi) {…}`) on the kernel.
 *
 * Provides the kernel services "extensions" (the ExtensionHost) and a "ready" step that loads
 * every extension before the CLI parses its flags a second time (so extension flags parse);
 * registers `/reload` and `--list-tools`. See host.ts for discovery and load order, events.ts
 * for how `pi.on()` maps onto the hooks, api.ts for the `pi` object.
 */
import { definePlugin } from "../../core/plugin.js";
import type { PluginApi } from "../../core/kernel.js";
import { ExtensionHost } from "./host.js";
import { formatToolList } from "./list-tools.js";
import { setCurrentAgentDir } from "./helpers.js";

export { ExtensionHost, type LoadedExtension, type PackageResources, type ResolvePackageSource } from "./host.js";
export { formatToolList } from "./list-tools.js";

/** Add an async step to the kernel service "ready" (a list the CLI awaits after plugin setup). */
export function addReadyStep(api: PluginApi, step: () => Promise<void>): void {
  const current = api.kernel.service<unknown>("ready");
  if (Array.isArray(current)) current.push(step);
  else if (typeof current === "function") api.provide("ready", [current, step]);
  else api.provide("ready", [step]);
}

/** Answer a flag and exit (kernel service "flag-actions": flag name → action printing its output). */
export function addFlagAction(api: PluginApi, flag: string, action: (value: unknown) => string | Promise<string>): void {
  const current = api.kernel.service<Record<string, unknown>>("flag-actions");
  if (current && typeof current === "object") current[flag] = action;
  else api.provide("flag-actions", { [flag]: action });
}

export default definePlugin({
  name: "extensions",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "pi extensions: discovery, loading (jiti), the ExtensionAPI on the kernel's hooks and registries, /reload, --list-tools",
  setup(api) {
    const kernel = api.kernel;
    setCurrentAgentDir(kernel.agentDir);
    const host = new ExtensionHost(kernel, api);
    api.provide("extensions", host);

    addReadyStep(api, async () => {
      await host.loadAll();
      // Trusting the project later (the TUI's prompt) loads its extensions at once.
      const trust = kernel.service<{ onTrust(fn: (cwd: string) => unknown): () => void }>("project-trust");
      trust?.onTrust(async () => {
        if (kernel.isBound) await host.reload();
      });
    });

    api.registerCommand({
      name: "reload",
      description: "Reload extensions from disk",
      source: "builtin",
      handler: () => host.reload(),
    });

    api.registerFlag({
      name: "list-tools",
      type: "boolean",
      description: "List every tool, where it came from and what wraps it, then exit",
      group: "Prompt and tools",
    });
    addFlagAction(api, "list-tools", () => formatToolList(kernel, { base: host.baseToolSources }));
  },
});
