/** Shared shapes of the streaming fast path (see fast-path.ts). */
import type { AssistantMessageEvent } from "@mariozechner/pi-ai";
import type { SseDialect } from "./sse.js";

/** Where an assembler puts the events it makes. */
export interface FastSink {
  push(event: AssistantMessageEvent): void;
}

/**
 * One API's reproduction of pi-ai's handling of a successful streaming body. Each method may
 * throw; the driver then ends the message exactly as pi-ai's catch block does.
 */
export interface FastAssembler {
  readonly dialect: SseDialect;
  /** The `openai` SDK ends the data quietly when a read fails with an AbortError. */
  readonly swallowAbortOnRead: boolean;
  /** pi-ai's Anthropic reader throws "Request was aborted" before a read once the signal fired. */
  readonly checkAbortBeforeRead: boolean;
  /** One SSE event (the single place raw provider stream events pass through). */
  onEvent(event: string | null, data: string, raw: readonly string[]): void;
  /** The body ended: close blocks, throw when pi-ai would end in an error. */
  finish(aborted: boolean): void;
  /** pi-ai's catch block: what it does to the blocks before the error event. */
  cleanUp(): void;
  /** The errorMessage pi-ai's catch block gives `error`. */
  errorMessage(error: unknown): string;
}
