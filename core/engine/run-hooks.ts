/**
 * Run hooks of pi 1.6 that the session calls at two points (kept here so the session only calls in):
 * - before_agent_start for a run an extension's custom message starts (`messageType: "custom"`);
 * - agent_before_settle: before a run settles, taps may append entries (custom entries, custom
 *   messages) and ask for one more provider request (`continue: true`).
 */
import type { Kernel } from "../kernel/kernel.js";
import type { AgentMessage, CustomMessage } from "../kernel/types.js";
import { createCustomMessage } from "./agent/messages.js";

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

type SystemMsg = {
  role: "system";
  content: string | Array<{ type: string; text?: string }>;
  sections?: Record<string, string | null>;
  toolsAdded?: Array<{ name: string; description: string; parameters: unknown }>;
  toolsRemoved?: Array<{ name: string } | string>;
  timestamp?: number;
};

const systemText = (c: SystemMsg["content"]): string =>
  typeof c === "string" ? c : Array.isArray(c) ? c.map((b) => (b && b.type === "text" ? (b.text ?? "") : "")).join("") : "";

/**
 * pi 1.6 context_with_system: after the context hook, taps see the whole request as one
 * transcript — the system prompt and the tool declarations as a leading `{role: "system"}`
 * message (content, toolsAdded), then the conversation — and what they return is sent as it is:
 * the leading system message's content (and sections) is the system prompt, its toolsAdded the
 * tools declared to the model; later system messages add instructions (appended to the prompt)
 * and declare or remove tools. Returns undefined when no one taps.
 */
export async function contextWithSystem(
  kernel: Kernel,
  base: { systemPrompt: string; tools: Array<{ name: string; description: string; parameters: unknown }> },
  messages: AgentMessage[],
): Promise<{ systemPrompt: string; tools: Array<{ name: string; description: string; parameters: unknown }>; messages: AgentMessage[] } | undefined> {
  if (!kernel.hooks.context_with_system.taps.length) return undefined;
  const lead: SystemMsg = { role: "system", content: base.systemPrompt, toolsAdded: base.tools.map((t) => ({ ...t })), timestamp: Date.now() };
  // The session's stored system messages (pi 1.6 system entries recording prompt/tool changes)
  // are already folded into the lead: the lead is the request's whole system state.
  const conversation = messages.filter((m) => (m as { role?: string }).role !== "system");
  const ev = await kernel.hooks.context_with_system.promise({ type: "context_with_system", messages: [lead as unknown as AgentMessage, ...structuredClone(conversation)] });
  const out = Array.isArray(ev?.messages) ? ev.messages : [];
  let systemPrompt: string | undefined;
  const sections: Record<string, string> = {};
  const extra: string[] = [];
  const tools = new Map<string, { name: string; description: string; parameters: unknown }>();
  const rest: AgentMessage[] = [];
  for (const m of out) {
    const s = m as unknown as SystemMsg;
    if (!s || s.role !== "system") {
      rest.push(m);
      continue;
    }
    const text = systemText(s.content);
    if (systemPrompt === undefined) systemPrompt = text;
    else if (text.trim()) extra.push(text);
    for (const [k, v] of Object.entries(s.sections ?? {})) {
      if (v === null) delete sections[k];
      else if (typeof v === "string") sections[k] = v;
    }
    for (const t of s.toolsAdded ?? []) if (t && typeof t.name === "string") tools.set(t.name, { name: t.name, description: t.description ?? "", parameters: t.parameters });
    for (const r of s.toolsRemoved ?? []) tools.delete(typeof r === "string" ? r : r?.name);
  }
  const prompt = [withSections(systemPrompt ?? "", sections), ...extra].filter((x) => x).join("\n\n");
  return { systemPrompt: prompt, tools: [...tools.values()], messages: rest };
}
