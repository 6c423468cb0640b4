/**
 * The `pi` object one extension's factory receives. Registration goes to the kernel's
 * registries through the extension's own PluginApi scope (so /reload undoes it); actions go to
 * the bound session and throw "Extension runtime not initialized" before it exists.
 */
import type { Kernel, ToolDefinition as KernelTool } from "../../core/kernel/index.js";
import type { AgentSession } from "../../core/engine/index.js";
import type { LoadedExtension } from "./loaded-extension.js";
import type { SharedEventBus } from "./event-bus.js";
import type { EventHost } from "./events.js";
import { tapExtensionEvent } from "./events.js";
import { isolateExtensionFailures, withTimeLimit } from "./isolation.js";
import { execCommand } from "./exec.js";
import { createRegistrationApi } from "./api-registrations.js";
import { NOT_INITIALIZED } from "./context.js";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext, ProviderConfig, SlashCommandInfo, ToolDefinition, ToolInfo } from "./types.js";

/** What an extension's `pi` object needs of the extension host (ExtensionHost is one). */
export interface ApiHost {
  readonly kernel: Kernel;
  readonly extensions: readonly LoadedExtension[];
  readonly bus: SharedEventBus;
  session(): AgentSession | undefined;
  context(ext: LoadedExtension | undefined): ExtensionContext;
  eventHost(ext: LoadedExtension): EventHost;
  runCommand(ext: LoadedExtension, handler: (args: string, ctx: ExtensionCommandContext) => unknown, args: string): Promise<void>;
  registerTool(ext: LoadedExtension, tool: Parameters<ExtensionAPI["registerTool"]>[0]): void;
  registerProvider(ext: LoadedExtension, name: string, config: ProviderConfig): void;
  sendMessage(...args: Parameters<ExtensionAPI["sendMessage"]>): Promise<void>;
  sendUserMessage(...args: Parameters<ExtensionAPI["sendUserMessage"]>): Promise<void>;
  allTools(): ToolInfo[];
  commandInfos(): SlashCommandInfo[];
  refreshSystemPrompt(): void;
}

export const STALE_MESSAGE =
  "This extension instance was unloaded (by /reload or ctx.reload()); its pi object can no longer be used. The reloaded instance has a new one.";

export function createExtensionApi(host: ApiHost, ext: LoadedExtension): ExtensionAPI {
  const kernel = host.kernel;
  isolateExtensionFailures(kernel, () => host.extensions.filter((e) => !e.stale)); // failures stay with the extension
  const alive = () => {
    if (ext.stale) throw new Error(STALE_MESSAGE);
  };
  const session = () => {
    alive();
    const s = host.session();
    if (!s) throw new Error(NOT_INITIALIZED);
    return s;
  };
  const fail = (what: string) => (error: unknown) =>
    kernel.diagnostics.report({ level: "error", source: ext.name, message: `${what} failed`, error });

  const api: ExtensionAPI = {
    on(event: string, handler: (e: any, ctx: any) => unknown) {
      alive();
      if (typeof event !== "string" || !event) throw new TypeError("pi.on(event, handler): event must be an event name");
      tapExtensionEvent(ext.scope, host.eventHost(ext), event, withTimeLimit(kernel, ext.name, event, handler)); // per-event time limit
    },

    registerTool(tool: ToolDefinition<any, any>) {
      alive();
      host.registerTool(ext, tool);
    },

    registerCommand(name, options) {
      alive();
      if (typeof name !== "string" || !name.trim() || /\s/.test(name.trim())) throw new TypeError(`registerCommand: invalid command name ${JSON.stringify(name)}`);
      if (!options || typeof options.handler !== "function") throw new TypeError(`registerCommand("${name}"): options.handler must be a function`);
      const cmdName = name.trim().replace(/^\//, "");
      // As in pi 1.6, an extension's command takes the name of a built-in one (a package's /mcp
      // over the built-in /mcp); unloading the extension brings the built-in back.
      const builtin = host.kernel.commands.get(cmdName)?.source === "builtin";
      ext.scope.registerCommand({
        name: cmdName,
        description: options.description,
        source: "extension",
        path: ext.path,
        getArgumentCompletions: options.getArgumentCompletions,
        handler: (args: string) => host.runCommand(ext, options.handler, args),
      }, builtin ? { override: true } : undefined);
    },

    registerShortcut(shortcut, options) {
      alive();
      if (typeof shortcut !== "string" || !shortcut) throw new TypeError("registerShortcut: the shortcut must be a key id such as \"ctrl+shift+p\"");
      if (!options || typeof options.handler !== "function") throw new TypeError(`registerShortcut("${shortcut}"): options.handler must be a function`);
      ext.scope.registerShortcut({
        key: shortcut,
        description: options.description,
        handler: () => options.handler(host.context(ext)),
      });
    },

    registerFlag(name, options) {
      alive();
      if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(name)) throw new TypeError(`registerFlag: invalid flag name ${JSON.stringify(name)}`);
      const type = options?.type ?? "boolean";
      if (type !== "boolean" && type !== "string") throw new TypeError(`registerFlag("${name}"): type must be "boolean" or "string"`);
      ext.flags.set(name, options?.default);
      ext.scope.registerFlag({
        name,
        type,
        default: options?.default,
        description: options?.description ?? `flag of extension ${ext.name}`,
      });
    },

    getFlag(name) {
      alive();
      if (!ext.flags.has(name)) return undefined;
      const argv = kernel.service("argv");
      const v = argv?.flags?.[name];
      if (typeof v === "boolean" || typeof v === "string") return v;
      return ext.flags.get(name) as boolean | string | undefined;
    },

    registerMessageRenderer(customType, renderer) {
      alive();
      if (typeof renderer !== "function") throw new TypeError(`registerMessageRenderer("${customType}"): the renderer must be a function`);
      ext.scope.registerMessageRenderer({ customType, render: renderer as (...a: any[]) => unknown });
    },

    registerProvider(name: string, config: ProviderConfig) {
      alive();
      host.registerProvider(ext, name, config);
    },

    unregisterProvider(name: string) {
      alive();
      const undo = ext.providers.get(name);
      if (undo) {
        ext.providers.delete(name);
        undo();
      }
    },

    wrapTool(name, wrapper) {
      alive();
      if (typeof wrapper !== "function") throw new TypeError(`wrapTool("${name}"): the wrapper must be a function (tool) => tool`);
      ext.scope.wrapTool(name, wrapper as unknown as (t: KernelTool) => KernelTool);
    },

    sendMessage(message, options) {
      session();
      if (!message || typeof message.customType !== "string") throw new TypeError("sendMessage: the message needs a customType");
      void host.sendMessage(message, options).catch(fail("sendMessage"));
    },

    sendUserMessage(content, options) {
      session();
      void host.sendUserMessage(content, options).catch(fail("sendUserMessage"));
    },

    appendEntry(customType, data) {
      const s = session();
      if (typeof customType !== "string" || !customType) throw new TypeError("appendEntry: customType must be a non-empty string");
      const sm = s.sessionManager as unknown as { appendCustomEntry?(t: string, d?: unknown): string };
      if (typeof sm.appendCustomEntry !== "function") throw new Error("appendEntry: this session store cannot hold custom entries");
      const id = sm.appendCustomEntry(customType, data);
      const entry = (sm as { getEntry?(id: string): unknown }).getEntry?.(id); // (pi 1.6 entry_appended)
      if (entry) void s.emit({ type: "entry_appended", entry: entry as never }).catch(fail("appendEntry"));
    },

    setSessionName(name) {
      session().setSessionName(name);
    },

    getSessionName() {
      return session().sessionName;
    },

    setLabel(entryId, label) {
      session().setLabel(entryId, label);
    },

    exec(command, args, options) {
      alive();
      return execCommand(command, args ?? [], host.session()?.cwd ?? kernel.cwd, options);
    },

    getActiveTools() {
      return session().getActiveToolNames();
    },

    getAllTools() {
      session();
      return host.allTools();
    },

    setActiveTools(toolNames) {
      const s = session();
      if (!Array.isArray(toolNames)) throw new TypeError("setActiveTools: expected an array of tool names");
      s.setActiveTools(toolNames.map(String));
      host.refreshSystemPrompt();
    },

    getCommands() {
      session();
      return host.commandInfos();
    },

    async setModel(model) {
      const s = session();
      if (!model || typeof model.provider !== "string" || typeof model.id !== "string") throw new TypeError("setModel: expected a model from ctx.modelRegistry");
      const keyless = s.models.isKeyless(model);
      if (!keyless && (await s.models.getApiKey(model)) === undefined) return false;
      await s.setModel(model);
      host.refreshSystemPrompt();
      return true;
    },

    getThinkingLevel() {
      return session().thinkingLevel;
    },

    setThinkingLevel(level) {
      session().setThinkingLevel(level);
    },

    events: host.bus.view(ext.name, (off) => ext.disposers.push(off)),
    ...createRegistrationApi(kernel, ext, alive, () => host.context(ext)),
  };
  return api;
}
