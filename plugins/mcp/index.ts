/**
 * The MCP plugin: tools of Model Context Protocol servers as ordinary registered tools.
 *
 * Setup only registers (no file reads, no SDK): the `session_start` tap loads the manager —
 * and through it the MCP SDK — only when some server is configured, starts connecting every
 * server at once and returns; the first prompt (`input` tap) waits until the attempts have
 * settled, so the model sees the tools from its first turn. `session_shutdown` (exit) closes
 * every connection; a session switch keeps them.
 *
 * An extension's pi.registerMcpServer / unregisterMcpServer after start-up (the
 * `mcp_servers_change` hook) connects or drops that server at once.
 *
 * Registers: subcommand `pi mcp list|get|add|remove|login|logout`, slash command `/mcp [reconnect [name]]`,
 * kernel service "mcp" (McpService). See README.md in this folder for the configuration.
 */
import { definePlugin, type Kernel, type ExtensionUI } from "../../core/kernel/index.js";
import { MCP_USAGE } from "./help.js";
import type { McpManager, McpServerView } from "./manager.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    mcp: McpService;
  }
}

/** The kernel service "mcp". */
export interface McpService {
  /** Servers with status and tools (empty before the first session start). */
  list(): McpServerView[];
  /** "direct" or "search". */
  readonly mode: "direct" | "search";
  /** Resolves once every connection attempt so far has settled. */
  whenSettled(): Promise<void>;
  /** Re-read the configuration and connect what is not connected (or, with a name, that server again). */
  reconnect(name?: string): Promise<void>;
  /** Close every connection. */
  shutdown(): Promise<void>;
  /** The text /mcp shows. */
  statusText(): Promise<string>;
}

export default definePlugin({
  name: "mcp",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Model Context Protocol servers as tools",
  setup(api) {
    const kernel = api.kernel;
    let manager: McpManager | undefined;
    let loading: Promise<McpManager> | undefined;

    const getManager = (): Promise<McpManager> =>
      (loading ??= import("./manager.js").then((m) => (manager = new m.McpManager(kernel, api))));

    /** Cheap check: any server configured anywhere? (reads .mcp.json's existence and the settings objects) */
    const anyConfigured = async (): Promise<boolean> => {
      const { kernelSources, hasAnyServer } = await import("./config.js");
      return hasAnyServer(kernelSources(kernel));
    };

    // --no-mcp: no server connects this run, no MCP tools.
    api.registerFlag({ name: "no-mcp", type: "boolean", description: "No MCP servers this run (no connections, no MCP tools)", group: "Extensions and resources" });
    const disabled = () => !!kernel.service("argv")?.flags?.["no-mcp"];

    let sessionStarted = false;
    api.on("session_start", async () => {
      sessionStarted = true;
      if (disabled()) return;
      if (!manager && !(await anyConfigured())) return;
      const m = await getManager();
      // Connect in the background; the first prompt waits (below).
      void m.start().catch((error) => api.report("error", "MCP start failed", error));
    });

    // an extension registered or removed a server after start-up: connect
    // it now, or disconnect it and withdraw its tools. Registrations made while extensions load
    // are picked up by session_start.
    // The next prompt waits for it, like the first one waits for the start.
    let changing: Promise<void> = Promise.resolve();
    api.on("mcp_servers_change", async () => {
      if (!sessionStarted || disabled()) return;
      changing = changing
        .then(async () => {
          if (!manager && !(await anyConfigured())) return;
          await (await getManager()).start();
        })
        .catch((error) => api.report("error", "MCP start failed", error));
    });

    api.on("input", async () => {
      await changing;
      if (manager) await manager.whenSettled();
      return undefined;
    });

    // pi 1.6: the servers whose tools are not declared are named in an `mcp_servers` section of
    // the system prompt, so the model knows to reach them from codemode or tool_search.
    api.on("before_agent_start", (e) => {
      const section = manager && !disabled() ? manager.serversSection() : undefined;
      if (!section) return undefined;
      e.sections = { ...e.sections, mcp_servers: section };
      return e;
    });

    api.on("session_shutdown", async (event) => {
      if (!manager || event.reason === "switch" || event.reason === "reload") return;
      await manager.shutdown();
    });

    const service: McpService = {
      list: () => manager?.list() ?? [],
      get mode() {
        return manager?.mode ?? "direct";
      },
      whenSettled: async () => {
        if (loading) await (await loading).whenSettled();
      },
      reconnect: async (name) => (await getManager()).reconnect(name),
      shutdown: async () => {
        if (manager) await manager.shutdown();
      },
      statusText: async () => {
        const { formatStatus } = await import("./manager.js");
        if (manager) await manager.whenSettled();
        return formatStatus(manager?.list() ?? [], manager?.mode ?? "direct");
      },
    };
    api.provide("mcp", service);

    api.registerCommand({
      name: "mcp",
      description: "MCP servers: status and tools; /mcp reconnect [server] retries",
      source: "builtin",
      getArgumentCompletions: (prefix: string) => {
        const words = ["reconnect", ...(manager?.list().map((s) => `reconnect ${s.name}`) ?? [])];
        return words.filter((w) => w.startsWith(prefix)).map((w) => ({ value: w, label: w }));
      },
      handler: async (args: string, ctx: any) => {
        const [sub, name] = args.trim().split(/\s+/).filter(Boolean);
        if (sub && sub !== "reconnect" && sub !== "list" && sub !== "status") {
          show(kernel, ctx, `Unknown /mcp argument "${sub}". Use /mcp (status and tools) or /mcp reconnect [server].`, "warning");
          return;
        }
        if (sub === "reconnect") {
          try {
            await service.reconnect(name);
          } catch (e) {
            show(kernel, ctx, (e as Error).message, "error");
            return;
          }
        }
        show(kernel, ctx, await service.statusText(), "info");
      },
    });

    api.registerSubcommand({
      name: "mcp",
      description: "Manage MCP servers (add, remove, list, get, login, logout)",
      usage: "mcp <command>",
      help: () => MCP_USAGE,
      run: async (args, ctx) => (await import("./cli.js")).runMcpSubcommand(args, ctx),
    });
  },
});

/** Show text to the user: the UI when there is one, else an info diagnostic. */
function show(kernel: Kernel, ctx: any, text: string, level: "info" | "warning" | "error"): void {
  const ui = (ctx?.ui ?? kernel.service("ui")) as ExtensionUI | undefined;
  if (ui && ui.kind !== "none" && typeof ui.notify === "function") ui.notify(text, level);
  else kernel.diagnostics.report({ level, source: "mcp", message: text });
}

