/** Settling a promise against a deadline. */

/** Thrown by withDeadline when the work did not settle in time. */
export class DeadlineError extends Error {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = "DeadlineError";
  }
}

/**
 * Resolve or reject as `work` does, or reject with a DeadlineError after `ms` milliseconds
 * (`ms` not finite or not positive: no deadline). The timer does not keep the process alive.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
    timer.unref?.();
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
