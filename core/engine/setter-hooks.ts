/**
 * Notifications of pi 1.6 fired from synchronous session setters (thinking level, session name).
 * The setters stay synchronous for their callers, so the hook runs detached; a tap's throw is
 * reported by the hooks' interceptor, and anything else is reported here.
 */
import type { Kernel } from "../kernel/kernel.js";

function detached(kernel: Kernel, hook: string, p: Promise<unknown>): void {
  p.catch((error) => kernel.diagnostics.report({ level: "error", source: "session", hook, message: `${hook} failed`, error }));
}

export function notifyThinkingLevel(kernel: Kernel, level: string, previousLevel: string): void {
  if (!kernel.hooks.thinking_level_select.taps.length) return;
  detached(kernel, "thinking_level_select", kernel.hooks.thinking_level_select.promise({ type: "thinking_level_select", level, previousLevel }));
}

export function notifySessionInfo(kernel: Kernel, name: string | undefined): void {
  if (!kernel.hooks.session_info_changed.taps.length) return;
  detached(kernel, "session_info_changed", kernel.hooks.session_info_changed.promise({ type: "session_info_changed", name }));
}
