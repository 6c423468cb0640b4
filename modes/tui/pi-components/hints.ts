/**
 * What the pi-tui components share with the package's helpers: key hints from the TUI's default
 * keybindings, text cut to a number of wrapped lines, the clipboard, the parts of a skill block.
 */
import { DEFAULT_BINDINGS } from "../keys.js";
import { getActiveTheme } from "../pi-theme.js";
import { wrapText } from "../text.js";

/** "ctrl+c" style text for a key or a "/"-separated list of keys (pi writes keys lower-case). */
function formatKeys(keys: readonly string[]): string {
  return keys.join("/");
}

/** The keys of an app or editor action (`"app.interrupt"` → `"escape"`); empty when unbound. */
export function keyText(keybinding: string): string {
  return formatKeys(DEFAULT_BINDINGS[keybinding] ?? []);
}

/** A dim key followed by a muted description, for a component's hint line. */
export function keyHint(keybinding: string, description: string): string {
  const t = getActiveTheme();
  return t.fg("dim", keyText(keybinding)) + t.fg("muted", ` ${description}`);
}

/** keyHint for a literal key string instead of an action id. */
export function rawKeyHint(key: string, description: string): string {
  const t = getActiveTheme();
  return t.fg("dim", key) + t.fg("muted", ` ${description}`);
}

export interface VisualTruncateResult {
  visualLines: readonly string[];
  skippedCount: number;
}

/** `text` wrapped at `width` (less 2 × paddingX) and cut to `maxVisualLines`, keeping the end (default) or the start. */
export function truncateToVisualLines(text: string, maxVisualLines: number, width: number, paddingX = 0, keep: "start" | "end" = "end"): VisualTruncateResult {
  if (!text) return { visualLines: [], skippedCount: 0 };
  const lines = wrapText(text, Math.max(1, width - 2 * paddingX));
  if (lines.length <= maxVisualLines) return { visualLines: lines, skippedCount: 0 };
  const kept = keep === "start" ? lines.slice(0, Math.max(0, maxVisualLines)) : lines.slice(lines.length - Math.max(0, maxVisualLines));
  return { visualLines: kept, skippedCount: lines.length - kept.length };
}

export interface ParsedSkillBlock {
  name: string;
  location: string;
  content: string;
  userMessage: string | undefined;
}

/** Copy text to the system clipboard (OSC 52 on the terminal; also pbcopy/wl-copy/xclip/xsel when present). */
export async function copyToClipboard(text: string): Promise<void> {
  const { spawn } = await import("node:child_process");
  if (process.stdout.isTTY) process.stdout.write(`\x1b]52;c;${Buffer.from(text).toString("base64")}\x07`);
  const tools: Array<[string, string[]]> =
    process.platform === "darwin" ? [["pbcopy", []]] : process.platform === "win32" ? [["clip", []]] : [["wl-copy", []], ["xclip", ["-selection", "clipboard"]], ["xsel", ["--clipboard", "--input"]]];
  for (const [cmd, args] of tools) {
    const ok = await new Promise<boolean>((done) => {
      const child = spawn(cmd, args, { stdio: ["pipe", "ignore", "ignore"] });
      child.on("error", () => done(false));
      child.on("close", (code) => done(code === 0));
      child.stdin.end(text);
    });
    if (ok) return;
  }
}
