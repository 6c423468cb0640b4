/**
 * Run hooks of pi 1.6 that the session calls at two points (kept here so the session only calls in):
 * - before_agent_start for a run an extension's custom message starts (`messageType: "custom"`);
 * - agent_before_settle: before a run settles, taps may append entries (custom entries, custom
 *   messages) and ask for one more provider request (`continue: true`).
 */
import type { Kernel } from "../kernel.js";
import type { AgentMessage, CustomMessage } from "../types.js";
import { createCustomMessage } from "../agent/messages.js";

export async function beforeCustomRun(
  kernel: Kernel,
  message: CustomMessage,
  systemPrompt: string,
): Promise<{ messages: AgentMessage[]; systemPrompt?: string }> {
  if (!kernel.hooks.before_agent_start.taps.length) return { messages: [] };
  const ev = await kernel.hooks.before_agent_start.promise({
    type: "before_agent_start",
    messageType: "custom",
    message,
    prompt: "",
    systemPrompt,
    messages: [],
  });
  return {
    messages: (ev?.messages ?? []).map((m) => createCustomMessage(m.customType, m.content, m.display, m.details)),
    systemPrompt: ev && withSections(ev.systemPrompt, ev.sections) !== systemPrompt ? withSections(ev.systemPrompt, ev.sections) : undefined,
  };
}

export interface SettleIo {
  appendCustomEntry(customType: string, data?: unknown): void;
  addMessage(m: AgentMessage): Promise<void>;
  queueFollowUp(m: AgentMessage): void;
}

/** Returns true when a tap asked for one more provider request. */
export async function beforeSettle(kernel: Kernel, outcome: "completed" | "aborted" | "error", io: SettleIo): Promise<boolean> {
  if (!kernel.hooks.agent_before_settle.taps.length) return false;
  const ev = await kernel.hooks.agent_before_settle.promise({ type: "agent_before_settle", outcome, entries: [], continue: false });
  for (const d of ev.entries) {
    if (d.type === "custom" && typeof d.customType === "string") io.appendCustomEntry(d.customType, d.data);
    else if (d.type === "custom_message" && typeof d.customType === "string")
      await io.addMessage(createCustomMessage(d.customType, d.content as CustomMessage["content"], d.display !== false, d.details));
    else kernel.diagnostics.report({ level: "warning", source: "session", hook: "agent_before_settle", message: `entries of type "${d.type}" cannot be appended at settle time here` });
  }
  if (ev.followUp && outcome !== "aborted") {
    io.queueFollowUp(createCustomMessage(ev.followUp.customType, ev.followUp.content, ev.followUp.display ?? false));
    return true;
  }
  return ev.continue === true && outcome !== "aborted";
}

/** The system prompt with pi 1.6's prompt sections appended, each as an XML-tagged block. */
export function withSections(systemPrompt: string, sections: Record<string, string> | undefined): string {
  const blocks = Object.entries(sections ?? {})
    .filter(([, text]) => typeof text === "string" && text.trim())
    .map(([name, text]) => `<${name}>\n${text}\n</${name}>`);
  return blocks.length ? `${systemPrompt}\n\n${blocks.join("\n\n")}` : systemPrompt;
}
