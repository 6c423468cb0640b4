/**
 * Tool names for MCP tools: `mcp__<server>__<tool>`.
 *
 * Providers accept tool names matching ^[a-zA-Z0-9_-]{1,64}$ (OpenAI, Anthropic), so every
 * other character becomes "_". A name longer than 64 characters is cut and ends with "_" and
 * 8 hex digits of a hash of the original server and tool names; two tools whose sanitised
 * names collide get the same treatment, so every name stays unique and stable between runs.
 */

export const MCP_TOOL_PREFIX = "mcp__";
export const MAX_TOOL_NAME = 64;

/** Replace every character outside [a-zA-Z0-9_-] with "_". */
export function sanitizeName(s: string): string {
  const out = s.replace(/[^a-zA-Z0-9_-]/g, "_");
  return out || "_";
}

/** FNV-1a, 32 bits, as 8 hex digits: short, stable, no crypto import. */
export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The plain name of an MCP tool (may be longer than 64; see `mcpToolName`). */
export function rawToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${sanitizeName(server)}__${sanitizeName(tool)}`;
}

/**
 * The registered name of `tool` on `server`, unique within `taken` (which it is added to).
 */
export function mcpToolName(server: string, tool: string, taken?: Set<string>): string {
  let name = rawToolName(server, tool);
  const hashed = () => {
    const suffix = `_${shortHash(`${server}\u0000${tool}`)}`;
    return name.slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
  };
  if (name.length > MAX_TOOL_NAME || taken?.has(name)) name = hashed();
  // A hash collision on top of a collision: count up (practically never).
  const base = name;
  for (let n = 2; taken?.has(name); n++) {
    const suffix = `_${n}`;
    name = base.slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
  }
  taken?.add(name);
  return name;
}
