/**
 * pi 1.6's turn boundary: what a turn_end handler sees beside the turn (the entries other
 * handlers drafted, whether one more request is asked, a preview of the context, how the turn
 * ended, the session entry ids of its messages) and what it may ask (entries to append, one more
 * provider request). The session opens it for a turn_end payload before emitting it and reads
 * it after; the payload itself (which modes and subscribers get) stays as it is. PI_CONVENTIONS
 * (plugins/extensions/pi-conventions.ts) reads and fills it for pi handlers.
 */
export interface TurnBoundary {
  entries: Array<Record<string, unknown> & { type: string }>;
  continue: boolean;
  outcome: "completed" | "aborted" | "error";
  messageEntryId?: string;
  toolResultEntryIds: string[];
  /** The context preview (built when a handler asks). */
  context(): Record<string, unknown>;
}
const turnBoundaries = new WeakMap<object, TurnBoundary>();
export function openTurnBoundary(event: object, boundary: TurnBoundary): void {
  turnBoundaries.set(event, boundary);
}
export function turnBoundaryOf(event: object): TurnBoundary | undefined {
  return turnBoundaries.get(event);
}
