/**
 * pi 1.6's system message entries. A session records its system prompt and tool
 * declarations as `system` messages: the first request declares them all, later runs append a
 * patch only when something changed (sections by name, null removing one; toolsAdded with the
 * full definition, toolsRemoved by name). Replaying them in context order gives the prompt and
 * tools the model saw last; pi 1.6 replays the ones we write, and we replay its own.
 *
 * This kernel's prompt is one text (plugins may rebuild it whole), so it is one section named
 * "prompt"; sections pi 1.6 declared are removed by the first patch we write after them.
 */
import type { AgentMessage, SystemMessage, ToolDefinition } from "../kernel/types.js";

export const PROMPT_SECTION = "prompt";

export interface SystemState {
  sections: Map<string, string>;
  /** Tool name -> its declaration as JSON (compared, not parsed). */
  tools: Map<string, string>;
  /** Whether any system message was seen. */
  declared: boolean;
}

/** Replay the system messages of a context in order. */
export function replaySystemState(messages: readonly AgentMessage[]): SystemState {
  const state: SystemState = { sections: new Map(), tools: new Map(), declared: false };
  for (const m of messages) {
    if ((m as { role?: string }).role !== "system") continue;
    const sm = m as SystemMessage;
    state.declared = true;
    for (const [name, text] of Object.entries(sm.sections ?? {})) {
      if (text === null) state.sections.delete(name);
      else if (typeof text === "string") state.sections.set(name, text);
    }
    for (const t of sm.toolsRemoved ?? []) if (t && typeof t.name === "string") state.tools.delete(t.name);
    for (const t of sm.toolsAdded ?? []) if (t && typeof t.name === "string") state.tools.set(t.name, declaration(t));
  }
  return state;
}

function declaration(t: { name: string; description?: string; parameters?: unknown }): string {
  return JSON.stringify({ name: t.name, description: t.description ?? "", parameters: t.parameters ?? {} });
}

/**
 * The system message to record before a run whose request uses `systemPrompt` and `tools`:
 * everything when the context declares nothing yet, else what changed; undefined when nothing did.
 */
export function systemMessageUpdate(
  messages: readonly AgentMessage[],
  systemPrompt: string,
  tools: readonly Pick<ToolDefinition, "name" | "description" | "parameters">[],
  now: number = Date.now(),
): SystemMessage | undefined {
  const state = replaySystemState(messages);
  const sections: Record<string, string | null> = {};
  if (state.sections.get(PROMPT_SECTION) !== systemPrompt) sections[PROMPT_SECTION] = systemPrompt;
  for (const name of state.sections.keys()) if (name !== PROMPT_SECTION) sections[name] = null;
  const added: SystemMessage["toolsAdded"] = [];
  const names = new Set<string>();
  for (const t of tools) {
    names.add(t.name);
    const decl = { name: t.name, description: t.description ?? "", parameters: t.parameters ?? {} };
    if (state.tools.get(t.name) !== declaration(decl)) added.push(decl);
  }
  const removed = [...state.tools.keys()].filter((n) => !names.has(n)).map((name) => ({ name }));
  if (state.declared && !Object.keys(sections).length && !added.length && !removed.length) return undefined;
  const msg: SystemMessage = { role: "system", content: "", sections, timestamp: now };
  if (added.length) msg.toolsAdded = added;
  if (removed.length) msg.toolsRemoved = removed;
  return msg;
}
