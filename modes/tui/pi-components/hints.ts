/**
 * What the pi-tui components share with the package's helpers: key hints from the TUI's default
 * keybindings, the clipboard.
 */
import { copyText } from "../clipboard.js";
import { DEFAULT_BINDINGS } from "../keys.js";
import { getActiveTheme } from "../pi-theme.js";
import { formatKeyHint, formatKeyText } from "../format.js";

/** pi 1.6's bindings of the selector actions the TUI's own table does not have. */
const SELECTOR_BINDINGS: Record<string, string[]> = {
  "app.models.save": ["ctrl+s"],
  "app.thinking.save": ["ctrl+s"],
  "app.session.toggleSort": ["ctrl+s"],
};

/** The keys bound to an action id. */
export function keysOf(id: string): string[] {
  return SELECTOR_BINDINGS[id] ?? DEFAULT_BINDINGS[id] ?? [];
}

/** The keys of an app or editor action for a hint (`"app.interrupt"` → `"escape"`, pi writes keys lower-case, "/" between); empty when unbound. */
export function keyText(keybinding: string): string {
  return formatKeyText(keysOf(keybinding));
}

/** A dim key followed by a muted description, for a component's hint line. */
export function keyHint(keybinding: string, description: string): string {
  return formatKeyHint(getActiveTheme(), keyText(keybinding), description);
}

/** keyHint for a literal key string instead of an action id. */
export function rawKeyHint(key: string, description: string): string {
  return formatKeyHint(getActiveTheme(), key, description);
}

/** Copy text to the system clipboard as /copy does (clipboard.ts; OSC 52 only to a terminal); throws an Error naming what is missing. */
export async function copyToClipboard(text: string): Promise<void> {
  await copyText(text, { env: process.env, platform: process.platform, writeTerminal: (d) => void (process.stdout.isTTY && process.stdout.write(d)) });
}
