/**
 * The registration methods pi 1.6 added to the extension API. Each registration belongs to the
 * extension and is undone by /reload: the renderers and markdown transformers go to the kernel's
 * registries through the extension's PluginApi scope (the TUI draws with them); the MCP servers
 * are kept in the kernel service "extension-mcp-servers", which the MCP plugin connects.
 */
import type { Kernel } from "../../core/kernel/index.js";
import type { LoadedExtension } from "./loaded-extension.js";
import { VirtualModels, type VirtualModelDefinition } from "../../core/stores/index.js";

export interface RegisteredMcpServer {
  name: string;
  config: Record<string, unknown>;
  /** The extension that registered it. */
  extensionPath: string;
}

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    "extension-mcp-servers": ExtensionMcpServers;
  }
}

/** Kernel service "extension-mcp-servers". */
export interface ExtensionMcpServers {
  list(): RegisteredMcpServer[];
}

export interface RegistrationApi {
  registerToolRenderer(resolver: (...a: any[]) => unknown): void;
  registerEntryRenderer(customType: string, renderer: (...a: any[]) => unknown): void;
  registerMarkdownTransformer(transformer: (...a: any[]) => unknown, options?: unknown): void;
  registerMcpServer(name: string, config: Record<string, unknown>): void;
  unregisterMcpServer(name: string): void;
  getMcpServers(): RegisteredMcpServer[];
  getSettings(): Record<string, unknown>;
  registerVirtualModel(model: Record<string, unknown>): void;
  unregisterVirtualModel(provider: string, id: string): void;
}

interface Shared {
  mcp: Map<string, RegisteredMcpServer>;
}
const shared = new WeakMap<Kernel, Shared>();

function sharedOf(kernel: Kernel): Shared {
  let s = shared.get(kernel);
  if (!s) {
    s = { mcp: new Map() };
    shared.set(kernel, s);
    const mcp = s.mcp;
    kernel.provide("extension-mcp-servers", { list: () => [...mcp.values()].map((v) => ({ ...v })) }, "extensions");
  }
  return s;
}

export function createRegistrationApi(kernel: Kernel, ext: LoadedExtension, alive: () => void, ctx: () => unknown): RegistrationApi {
  const fn = (what: string, v: unknown) => {
    if (typeof v !== "function") throw new TypeError(`${what}: expected a function`);
  };
  const mcpChanged = () => {
    const servers = [...sharedOf(kernel).mcp.values()].map((v) => ({ name: v.name, ...v.config, extensionPath: v.extensionPath }));
    void kernel.hooks.mcp_servers_change
      .promise({ type: "mcp_servers_change", servers })
      .catch((error) => kernel.diagnostics.report({ level: "error", source: ext.name, message: "mcp_servers_change failed", error }));
  };
  let removeMarkdownTransformer: (() => void) | undefined;
  return {
    registerToolRenderer(resolver) {
      alive();
      fn("registerToolRenderer", resolver);
      ext.scope.registerToolRenderer(resolver);
    },
    registerEntryRenderer(customType, renderer) {
      alive();
      if (typeof customType !== "string" || !customType) throw new TypeError("registerEntryRenderer: customType must be a non-empty string");
      fn(`registerEntryRenderer("${customType}")`, renderer);
      ext.scope.registerEntryRenderer({ customType, render: renderer });
    },
    registerMarkdownTransformer(transformer, options) {
      alive();
      fn("registerMarkdownTransformer", transformer);
      // One transformer an extension: registering again replaces it.
      removeMarkdownTransformer?.();
      removeMarkdownTransformer = ext.scope.registerMarkdownTransformer({ transform: transformer, options });
    },
    registerMcpServer(name, config) {
      alive();
      if (typeof name !== "string" || !/^[A-Za-z0-9_.-]+$/.test(name)) throw new TypeError(`registerMcpServer: invalid server name ${JSON.stringify(name)}`);
      if (!config || typeof config !== "object" || (typeof config.command !== "string" && typeof config.url !== "string"))
        throw new TypeError(`registerMcpServer("${name}"): the config needs a command or a url`);
      const mcp = sharedOf(kernel).mcp;
      const entry = { name, config: { ...config }, extensionPath: ext.path };
      mcp.set(name, entry);
      ext.disposers.push(() => {
        if (mcp.get(name) === entry) mcp.delete(name);
      });
      mcpChanged();
    },
    unregisterMcpServer(name) {
      alive();
      const mcp = sharedOf(kernel).mcp;
      if (mcp.get(name)?.extensionPath === ext.path && mcp.delete(name)) mcpChanged();
    },
    getMcpServers() {
      alive();
      return [...sharedOf(kernel).mcp.values()].map((v) => ({ ...v, config: { ...v.config } }));
    },
    getSettings() {
      alive();
      return structuredClone(kernel.settings.get()) as unknown as Record<string, unknown>;
    },
    registerVirtualModel(model) {
      alive();
      if (!model || typeof model.provider !== "string" || typeof model.id !== "string" || typeof model.route !== "function")
        throw new TypeError("registerVirtualModel: the model needs a provider, an id and a route() function");
      const route = model.route as (req: unknown, ctx: unknown) => unknown;
      const def = { ...(model as unknown as VirtualModelDefinition), name: typeof model.name === "string" ? model.name : model.id, route: (req: unknown) => route.call(model, req, ctx()) };
      ext.disposers.push(VirtualModels.of(kernel).register(def as VirtualModelDefinition, ext.name));
    },
    unregisterVirtualModel(provider, id) {
      alive();
      kernel.service("virtual-models")?.unregister(provider, id);
    },
  };
}
