/**
 * Turning the coding-agent message roles into what an LLM API accepts (user / assistant /
 * toolResult), and small constructors for those roles.
 */
import type {
  AgentMessage,
  AssistantMessage,
  BashExecutionMessage,
  CustomMessage,
  ImageContent,
  Message,
  TextContent,
  Usage,
} from "../../kernel/types.js";

export function emptyUsage(): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/** A shell command the user ran, as the model reads it (pi's documented form: "Ran `cmd`" and a fenced block). */
export function bashExecutionText(m: BashExecutionMessage): string {
  let text = `Ran \`${m.command}\`\n` + (m.output ? "```\n" + m.output + "\n```" : "(no output)");
  if (m.cancelled) text += "\n\n(the command was cancelled)";
  else if (m.exitCode !== undefined && m.exitCode !== null && m.exitCode !== 0) text += `\n\nExit code: ${m.exitCode}`;
  if (m.truncated && m.fullOutputPath) text += `\n\n[output truncated; the full output is in ${m.fullOutputPath}]`;
  return text;
}

export const compactionSummaryText = (summary: string) =>
  `Earlier parts of this conversation were summarised to save space. Summary:\n\n<summary>\n${summary}\n</summary>`;
export const branchSummaryText = (summary: string) =>
  `This conversation returned from another branch of work. Summary of that branch:\n\n<summary>\n${summary}\n</summary>`;

function userText(text: string, timestamp: number): Message {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

/** Map the agent's messages onto the three LLM roles; `!!` bash output stays out. */
export function convertToLlm(messages: AgentMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      case "custom":
        out.push({
          role: "user",
          content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
          timestamp: m.timestamp,
        });
        break;
      case "bashExecution":
        if (!m.excludeFromContext) out.push(userText(bashExecutionText(m), m.timestamp));
        break;
      case "compactionSummary":
        out.push(userText(compactionSummaryText(m.summary), m.timestamp));
        break;
      case "branchSummary":
        out.push(userText(branchSummaryText(m.summary), m.timestamp));
        break;
      default:
        break;
    }
  }
  return out;
}

/** A user message as pi 1.6 records it: the text as a text block, then the images. */
export function createUserMessage(text: string, images?: ImageContent[]): Message {
  const content: (TextContent | ImageContent)[] = [{ type: "text", text }];
  if (images?.length) content.push(...images);
  return { role: "user", content, timestamp: Date.now() } as Message;
}

export function createCustomMessage<T>(
  customType: string,
  content: CustomMessage["content"],
  display: boolean,
  details?: T,
): CustomMessage<T> {
  return { role: "custom", customType, content, display, details, timestamp: Date.now() };
}

/** An assistant message that stands for a run that ended without a provider answer. */
export function syntheticAssistant(
  model: { api: string; provider: string; id: string },
  stopReason: "aborted" | "error",
  errorMessage: string,
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

/** The plain text of a message's content (text blocks joined). */
export function messageText(m: AgentMessage | undefined): string {
  if (!m) return "";
  const c = (m as { content?: unknown }).content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c
    .filter((b): b is TextContent => !!b && (b as TextContent).type === "text")
    .map((b) => b.text)
    .join("");
}
