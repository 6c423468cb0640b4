/**
 * Plugin teardown: what plugins asked to run when the kernel is disposed (a manifest's
 * `teardown`, handlers registered with `api.onClose`). They run once, in reverse order of
 * registration (so a plugin is torn down before the plugins it depends on), each against a
 * deadline; a failure is reported as a diagnostic naming the plugin and the next one still runs.
 */
import { withDeadline } from "./deadline.js";
import type { Diagnostic } from "./types.js";

/** How long one teardown step may take before it is reported as failed (milliseconds). */
export const DEFAULT_TEARDOWN_TIMEOUT_MS = 5_000;

interface Closer {
  source: string;
  fn: () => void | Promise<void>;
}

export class PluginTeardowns {
  private readonly closers: Closer[] = [];
  private disposing: Promise<Diagnostic[]> | undefined;

  constructor(private readonly report: (d: Diagnostic) => void) {}

  /** Run `fn` at disposal, attributed to `source`; returns a function that drops it again. */
  add(source: string, fn: () => void | Promise<void>): () => void {
    const closer = { source, fn };
    this.closers.push(closer);
    return () => {
      const i = this.closers.indexOf(closer);
      if (i >= 0) this.closers.splice(i, 1);
    };
  }

  get size(): number {
    return this.closers.length;
  }

  /** Run every step in reverse order (once; later calls wait for the first). Resolves with the failures. */
  run(timeoutMs = DEFAULT_TEARDOWN_TIMEOUT_MS): Promise<Diagnostic[]> {
    this.disposing ??= (async () => {
      const failures: Diagnostic[] = [];
      while (this.closers.length) {
        const { source, fn } = this.closers.pop()!;
        try {
          await withDeadline(Promise.resolve().then(fn), timeoutMs, `plugin ${source} teardown`);
        } catch (error) {
          const d: Diagnostic = { level: "error", source, message: `plugin ${source} teardown failed`, error };
          failures.push(d);
          this.report(d);
        }
      }
      return failures;
    })();
    return this.disposing;
  }
}
