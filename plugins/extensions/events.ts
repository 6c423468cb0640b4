/**
 * `pi.on(event, handler)` → one tap on `kernel.hooks[event]`, named after the extension (so a
 * throw is reported with the extension's path and the event, and a throwing `tool_call`
 * handler blocks — both done by the kernel's interceptor). There is no second dispatcher and
 * no per-event code here: how each hook's payload and a handler's return value map onto pi's
 * conventions is declared beside the hook's kind in core/kernel/hooks.ts (PI_CONVENTIONS), and this
 * one adapter applies it. A hook added to the kernel is an event extensions can handle.
 */
import { type PluginApi, HOOK_KINDS, HOOK_NAMES, type HookName } from "../../core/kernel/index.js";
import { PI_CONVENTIONS, type PiAdapterEnv, type PiConvention } from "./pi-conventions.js";

export type PiHandler = (event: any, ctx: any) => unknown;

/** Events this host emits: every hook of the kernel except the kernel's own. */
export const EXTENSION_EVENTS: ReadonlySet<string> = new Set(HOOK_NAMES.filter((n) => n !== "kernel_mode_select"));

/** What the adapter needs from the host. */
export interface EventHost {
  /** The ctx for this extension's handlers. */
  ctx(): unknown;
  /** The kind of the session replacement in progress (for session_shutdown), set by the host's own taps. */
  pendingSwitch(): { reason: string } | undefined;
  /** Extra fields of before_agent_start (systemPromptOptions). */
  systemPromptOptions(): Record<string, unknown>;
  /** Report once: an event name this host never emits. */
  unknownEvent(name: string): void;
}

/** Tap `event` for one extension. Returns false for an event this host never emits. */
export function tapExtensionEvent(scope: PluginApi, host: EventHost, event: string, handler: PiHandler): boolean {
  if (typeof handler !== "function") throw new TypeError(`pi.on("${event}", handler): the handler must be a function`);
  if (!EXTENSION_EVENTS.has(event)) {
    host.unknownEvent(event);
    return false;
  }
  const name = event as Exclude<HookName, "kernel_mode_select">;
  const kind = HOOK_KINDS[name];
  const conv = ((PI_CONVENTIONS as Record<string, PiConvention<typeof name>>)[name] ?? {}) as PiConvention<typeof name>;
  const env: PiAdapterEnv = {
    owner: scope.name,
    pendingSwitch: () => host.pendingSwitch()?.reason,
    systemPromptOptions: () => host.systemPromptOptions(),
  };
  scope.on(name, (async (e: any) => {
    const piEvent = conv.toPi ? conv.toPi(e, env) : e;
    if (piEvent !== undefined) {
      const result = await handler(piEvent, conv.noContext ? undefined : host.ctx());
      const out = kind === "observer" ? undefined : conv.fromPi?.(result, e, env);
      if (kind === "bail") return out;
    }
    return kind === "waterfall" ? e : undefined;
  }) as never);
  return true;
}
