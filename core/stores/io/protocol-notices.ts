/**
 * Protocol records of pi 1.6 (json and RPC output) that are not agent-session events:
 * `thinking_level_changed {level}` and `session_info_changed {name?}`, written when the session's
 * thinking level or name changes. Returns the function that stops writing them.
 */
import { tapHook, type Hooks } from "../../kernel/hooks.js";

export function writeProtocolNotices(hooks: Hooks, write: (record: Record<string, unknown>) => unknown): () => void {
  const offs = [
    tapHook(hooks, "thinking_level_select", { name: "protocol" }, async (e) => {
      await write({ type: "thinking_level_changed", level: e.level });
    }),
    tapHook(hooks, "session_info_changed", { name: "protocol" }, async (e) => {
      await write(e.name === undefined ? { type: "session_info_changed" } : { type: "session_info_changed", name: e.name });
    }),
  ];
  return () => offs.forEach((off) => off());
}
