/**
 * `pi.events`: one bus shared by every extension of a kernel. Channels are free-form strings;
 * a handler that throws (or rejects) is reported and never reaches the emitter. Each
 * extension's subscriptions are dropped when that extension is unloaded (/reload).
 */
import type { EventBus } from "./types.js";

type Handler = (data: unknown) => unknown;

export class SharedEventBus {
  private readonly channels = new Map<string, Set<Handler>>();

  constructor(private readonly onError: (channel: string, owner: string, error: unknown) => void) {}

  emit(channel: string, data?: unknown): void {
    const set = this.channels.get(channel);
    if (!set) return;
    for (const h of [...set]) {
      try {
        const r = h(data);
        if (r && typeof (r as Promise<unknown>).then === "function") {
          (r as Promise<unknown>).then(undefined, (e) => this.onError(channel, ownerOf(h), e));
        }
      } catch (e) {
        this.onError(channel, ownerOf(h), e);
      }
    }
  }

  on(channel: string, handler: Handler, owner: string): () => void {
    const h: Handler = (d) => handler(d);
    (h as { owner?: string }).owner = owner;
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(h);
    return () => {
      set!.delete(h);
      if (!set!.size) this.channels.delete(channel);
    };
  }

  /** The view one extension gets: its subscriptions are tracked for removal. */
  view(owner: string, track: (off: () => void) => void): EventBus {
    return {
      emit: (channel, data) => this.emit(channel, data),
      on: (channel, handler) => {
        const off = this.on(channel, handler, owner);
        track(off);
        return off;
      },
    };
  }

  listenerCount(channel: string): number {
    return this.channels.get(channel)?.size ?? 0;
  }
}

function ownerOf(h: Handler): string {
  return (h as { owner?: string }).owner ?? "extension";
}
