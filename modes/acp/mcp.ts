/**
 * An ACP client's `mcpServers` (session/new, load, resume) connected through our MCP plugin:
 * they are offered as the kernel service "mcp-extra-servers" (settings format), which the MCP
 * plugin reads beside the settings, and the plugin is asked to sync (connect what is new).
 * ACP shapes: stdio `{name, command, args, env:[{name,value}]}` (no type), `{type:"http"|"sse",
 * name, url, headers:[{name,value}]}`. Values go through the
 * same ${VAR} expansion as settings (the client is the process that launched us).
 */
import type { Kernel } from "../../core/kernel/index.js";

type Pair = { name?: unknown; value?: unknown };
const pairs = (v: unknown): Record<string, string> =>
  Object.fromEntries((Array.isArray(v) ? (v as Pair[]) : []).filter((p) => typeof p?.name === "string" && typeof p.value === "string").map((p) => [p.name as string, p.value as string]));

/** One ACP McpServer in our settings format; throws a message naming the field when malformed. */
export function toSettingsServer(raw: unknown, i: number): [string, Record<string, unknown>] {
  const s = (raw ?? {}) as Record<string, unknown>;
  const at = `mcpServers[${i}]`;
  if (typeof s.name !== "string" || !s.name.trim()) throw new Error(`${at}.name must be a non-empty string`);
  const name = s.name.trim().replace(/[^A-Za-z0-9_-]/g, "_");
  if (s.type === "http" || s.type === "sse") {
    if (typeof s.url !== "string" || !s.url) throw new Error(`${at}.url must be a URL`);
    return [name, { type: s.type, url: s.url, headers: pairs(s.headers) }];
  }
  if (s.type !== undefined && s.type !== "stdio") throw new Error(`${at}.type must be "http", "sse" or absent (stdio)`);
  if (typeof s.command !== "string" || !s.command) throw new Error(`${at}.command must be a non-empty string`);
  const args = Array.isArray(s.args) ? s.args.map((a) => String(a)) : [];
  return [name, { command: s.command, args, env: pairs(s.env) }];
}

export class ClientMcpServers {
  private servers: Record<string, Record<string, unknown>> = {};
  private readonly remove: () => void;

  constructor(private readonly kernel: Kernel) {
    this.remove = kernel.provide("mcp-extra-servers", () => this.servers, "mode-acp");
  }

  /** Sets the client's servers for the session being opened and connects them (errors name the field). */
  async use(list: unknown): Promise<void> {
    const next: Record<string, Record<string, unknown>> = {};
    (Array.isArray(list) ? list : []).forEach((raw, i) => {
      const [name, spec] = toSettingsServer(raw, i);
      next[name] = spec;
    });
    const changed = JSON.stringify(next) !== JSON.stringify(this.servers);
    this.servers = next;
    if (!changed) return;
    const mcp = this.kernel.service("mcp");
    if (!mcp) {
      if (Object.keys(next).length) process.stderr.write(`${this.kernel.app.name}: the MCP plugin is not installed; the client's MCP servers are not connected\n`);
      return;
    }
    await mcp.reconnect();
  }

  dispose(): void {
    this.remove();
  }
}
