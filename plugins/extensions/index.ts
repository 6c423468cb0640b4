/**
 * The extensions plugin: pi extensions (`export default function (pi) {…}`) on the kernel.
 *
 * Provides the kernel service "extensions" (the ExtensionHost) and taps kernel_ready to load
 * every extension before the CLI parses its flags a second time (so extension flags parse);
 * registers `/reload` and `--list-tools`. See host.ts for discovery and load order, events.ts
 * for how `pi.on()` maps onto the hooks, api.ts for the `pi` object.
 */
import { definePlugin } from "../../core/kernel/index.js";
import { ExtensionHost } from "./host.js";
import { formatToolList } from "./list-tools.js";
import { setCurrentAgentDir } from "./helpers.js";

export { ExtensionHost, type LoadedExtension, type PackageResources, type ResolvePackageSource } from "./host.js";
export { formatToolList } from "./list-tools.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    /** The loaded pi extensions. */
    extensions: ExtensionHost;
  }
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

    // Extensions load once every plugin is set up, before the CLI parses its flags a second time.
    api.on("kernel_ready", async () => {
      await host.loadAll();
      // Trusting the project later (the TUI's prompt) loads its extensions at once.
      const trust = kernel.service("project-trust");
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
      action: () => formatToolList(kernel, { base: host.baseToolSources }),
    });
  },
});
