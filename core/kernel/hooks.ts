/**
 * The one hook table of the kernel (architecture.md §2), built from HOOK_SPEC (core/kernel/hook-spec.ts):
 * each hook's kind picks its tapable class here, so the table, HOOK_KINDS and EVENT_HOOKS cannot
 * disagree. This is the only file that imports tapable.
 *
 * Every hook takes ONE argument, the event payload. Plugins tap through `Kernel.on()` (which
 * names the tap after the plugin) or directly on `kernel.hooks.<name>`.
 *
 * Conventions for return values:
 * - series bail hooks: return `undefined` to pass, anything else stops the chain and is the result.
 * - waterfall hooks: return the (new or changed) payload, or `undefined` to leave it as it is.
 * - `input`: a tap changes `event.text`/`event.images` in place to transform and returns
 *   `{action:"handled"}` to consume the input.
 * - `resources_discover`: taps push into `event.results`.
 * What a pi extension's handler sees and answers for each hook is in plugins/extensions/pi-conventions.ts.
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncBailHook } from "tapable";
import { HOOK_KINDS, HOOK_NAMES, type HookHandler, type HookKind, type HookName, type HookSpec, type HOOK_SPEC } from "./hook-spec.js";

export * from "./hook-events.js";
export {
  EVENT_HOOKS,
  HOOK_KINDS,
  HOOK_NAMES,
  HOOK_SPEC,
  type HookHandler,
  type HookKind,
  type HookKinds,
  type HookName,
  type HookPayload,
  type HookResult,
  type HookReturn,
  type HookSpec,
  type WaterfallHookName,
} from "./hook-spec.js";

/** The tapable class a hook of this spec is. */
type TapableOf<S> =
  S extends HookSpec<"observer" | "collect", infer P, unknown>
    ? AsyncSeriesHook<[P]>
    : S extends HookSpec<"bail", infer P, infer R>
      ? AsyncSeriesBailHook<[P], R | undefined>
      : S extends HookSpec<"waterfall", infer P, unknown>
        ? AsyncSeriesWaterfallHook<[P]>
        : S extends HookSpec<"sync-bail", infer P, infer R>
          ? SyncBailHook<[P], R | undefined>
          : never;
export type Hooks = { readonly [N in HookName]: TapableOf<(typeof HOOK_SPEC)[N]> };

const TAPABLE_CLASS: Record<HookKind, new (args: ["event"], name: string) => object> = {
  observer: AsyncSeriesHook,
  collect: AsyncSeriesHook,
  bail: AsyncSeriesBailHook,
  waterfall: AsyncSeriesWaterfallHook,
  "sync-bail": SyncBailHook,
};

export interface HookError {
  plugin: string;
  hook: string;
  error: unknown;
}

/** A tap as the interceptor sees it; `removed` is set by tapHook's remover. */
interface KernelTap {
  name: string;
  type: string;
  fn: (...a: unknown[]) => unknown;
  removed?: boolean;
  tapToken?: object;
}

/** What a removed tap answers: "no result", in the calling convention of its tap type. */
function passOf(type: string, args: unknown[]): unknown {
  if (type === "promise") return Promise.resolve(undefined);
  if (type === "async") (args[args.length - 1] as (e?: unknown, r?: unknown) => void)(null, undefined);
  return undefined;
}

/**
 * Build the frozen hook table with the error-isolating interceptor on every hook:
 * a throwing tap is reported as {plugin, hook, error} and the chain goes on, except
 * `tool_call`, where a throw blocks the tool (fail closed).
 */
export function createHooks(report: (e: HookError) => void): Readonly<Hooks> {
  const table: Record<string, object> = {};
  for (const hookName of HOOK_NAMES) {
    const hook = new TAPABLE_CLASS[HOOK_KINDS[hookName]](["event"], hookName);
    table[hookName] = hook;
    const failClosed = hookName === "tool_call";
    (hook as { intercept(i: object): void }).intercept({
      register(tap: KernelTap) {
        const inner = tap.fn;
        // a removed tap (tapHook's remover) passes: undefined continues bail and waterfall chains
        const fn = (...a: unknown[]) => (tap.removed ? passOf(tap.type, a) : inner(...a));
        const onError = (error: unknown) => {
          report({ plugin: tap.name, hook: hookName, error });
          if (failClosed) {
            const msg = error instanceof Error ? error.message : String(error);
            return { block: true, reason: `Blocked because a tool_call handler (${tap.name}) failed: ${msg}` };
          }
          return undefined;
        };
        if (tap.type === "promise") {
          tap.fn = async (...a: unknown[]) => {
            try {
              return await fn(...a);
            } catch (e) {
              return onError(e);
            }
          };
        } else if (tap.type === "sync") {
          tap.fn = (...a: unknown[]) => {
            try {
              return fn(...a);
            } catch (e) {
              return onError(e);
            }
          };
        } else {
          tap.fn = (...a: unknown[]) => {
            const cb = a.pop() as (e?: unknown, r?: unknown) => void;
            try {
              fn(...a, (e: unknown, r: unknown) => (e ? cb(null, onError(e)) : cb(null, r)));
            } catch (e) {
              cb(null, onError(e));
            }
          };
        }
        return tap;
      },
    });
  }
  return Object.freeze(table as unknown as Hooks);
}

export interface TapOptions {
  /** Who taps: a plugin name or an extension path; used in error reports. */
  name: string;
  /** Lower runs first (tapable stage). */
  stage?: number;
}

/**
 * Tap a hook with a promise-returning handler (sync handlers are fine, they are awaited).
 * Returns a function that removes the tap again (for /reload). tapable has no public way to
 * remove a tap: the tap object is marked removed (its wrapper, installed by the interceptor of
 * createHooks, then passes without calling the handler) and left out of `taps`, so the next
 * tap, which recompiles the hook through tapable's public path, drops it for good. The mark
 * lives on the tap itself, so nothing is shared between hook tables.
 */
export function tapHook<N extends HookName>(hooks: Hooks, name: N, opts: TapOptions, handler: HookHandler<N>): () => void {
  const hook = hooks[name] as unknown as {
    tap(o: object, f: unknown): void;
    tapPromise(o: object, f: unknown): void;
    taps: KernelTap[];
  };
  // tapable copies unknown tap options onto the tap object, so the token finds it again.
  const tapToken = {};
  const options = { name: opts.name, stage: opts.stage ?? 0, tapToken };
  if (HOOK_KINDS[name] === "sync-bail") hook.tap(options, handler);
  else hook.tapPromise(options, async (event: unknown) => handler(event as never));
  return () => {
    const idx = hook.taps.findIndex((t) => t.tapToken === tapToken);
    if (idx < 0) return;
    hook.taps[idx]!.removed = true;
    hook.taps.splice(idx, 1);
  };
}

/** tapable's view of an async hook: its taps, its dispatcher and the delegate that compiles it. */
interface CompilableHook {
  taps: unknown[];
  promise: unknown;
  _promise?: unknown;
  _createCall?: (type: "promise") => unknown;
}

let precompiling = false;

/**
 * Compile the dispatchers of the async hooks that have taps but were never called, one hook per
 * turn of the event loop. tapable builds a hook's dispatcher with `new Function` on its first
 * call (0.2–0.5 ms each in a fresh process); the agent loop asks for this while a request is on
 * its way, so the first tool call of a process finds its hooks (tool_call, tool_result,
 * tool_execution_*, turn_end, …) ready. It stops once `answered()` is true (the answer's own work
 * comes first; a hook not compiled yet compiles on its first call, as before). A hook tapped
 * later is compiled again by tapable itself.
 */
export function precompileHooks(hooks: Readonly<Hooks>, answered: () => boolean = () => false): void {
  if (precompiling) return;
  const pending = (Object.values(hooks) as unknown as CompilableHook[]).filter(
    (h) => h.taps.length > 0 && h._promise !== undefined && h.promise === h._promise && typeof h._createCall === "function",
  );
  if (!pending.length) return;
  precompiling = true;
  const next = (): void => {
    const h = answered() ? undefined : pending.shift();
    if (h && h.promise === h._promise) h.promise = h._createCall!("promise");
    if (h && pending.length) setImmediate(next);
    else precompiling = false;
  };
  setImmediate(next);
}
