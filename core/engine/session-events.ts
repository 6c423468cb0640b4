/**
 * The one event path of a session: every event goes to the kernel hook of its name (plugins,
 * extensions), is persisted when it ends a message, then goes to `subscribe()` listeners
 * (modes, SDK hosts), each awaited in order. Nothing else broadcasts session events.
 */
import type { Kernel } from "../kernel/kernel.js";
import type { AgentMessage, AgentSessionEvent } from "../kernel/types.js";

export type SessionListener = (event: AgentSessionEvent) => void | Promise<void>;

type EventHook = { promise(e: unknown): Promise<unknown>; isUsed(): boolean };

const PERSISTED_ROLES = new Set(["system", "user", "assistant", "toolResult", "custom", "bashExecution"]);

export class SessionEvents {
  private readonly listeners = new Set<SessionListener>();

  constructor(
    private readonly kernel: Kernel,
    /** Stores a finished message (the session redacts and appends it to its store). */
    private readonly persist: (message: AgentMessage) => void,
  ) {}

  subscribe(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  clear(): void {
    this.listeners.clear();
  }

  /** Broadcast one event: the kernel hook first, then subscribers, each awaited in order. */
  async emit(event: AgentSessionEvent): Promise<void> {
    const hook = (this.kernel.hooks as unknown as Record<string, EventHook>)[event.type];
    if (hook && hook.isUsed()) await hook.promise(event);
    if (event.type === "message_end" && PERSISTED_ROLES.has((event.message as { role: string }).role)) {
      try {
        this.persist(event.message);
      } catch (error) {
        this.kernel.diagnostics.report({ level: "error", source: "session", message: "could not save a message", error });
      }
    }
    for (const l of this.listeners) {
      try {
        await l(event);
      } catch (error) {
        this.kernel.diagnostics.report({ level: "error", source: "subscriber", hook: event.type, message: "session listener failed", error });
      }
    }
  }
}
