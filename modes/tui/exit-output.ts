/**
 * What the terminal keeps after the TUI quits, as pi 1.6 leaves it:
 *
 * - fullscreen (`fullscreenExitOutput`: "transcript", the default): once the alternate screen is
 *   left, the conversation (then the editor and the footer) is printed into the normal screen,
 *   so it stays in the scrollback;
 *   "resume-hint" prints only the hint below;
 * - regular mode: the scrollback already holds it (scrollback.ts);
 * - both: "To resume this session:" and, on a line of its own (a triple-click selects it), the
 *   command — `pi --session <id>`, with `--session-dir <dir>` when the session lives outside
 *   the default folder. Shown when stdout is a terminal and the session file exists (a session
 *   not saved, or one without an answer yet, has nothing to resume).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { getDefaultSessionDir } from "../../core/stores/index.js";
import type { AppView } from "./app-view.js";
import { CURSOR_MARK } from "./text.js";

/** The command that resumes the app's session, or undefined when there is nothing to resume. */
export function resumeCommand(app: AppView): string | undefined {
  const sm = app.runtime?.sessionManager as
    | { isPersisted(): boolean; getSessionFile(): string | undefined; getSessionId(): string; getSessionDir(): string; getCwd(): string }
    | undefined;
  if (!sm || !sm.isPersisted()) return undefined;
  const file = sm.getSessionFile();
  if (!file || !existsSync(file)) return undefined;
  const args = [app.kernel.app.name];
  const dir = sm.getSessionDir();
  if (resolve(dir) !== resolve(getDefaultSessionDir(sm.getCwd(), app.kernel.agentDir))) args.push("--session-dir", quote(dir));
  args.push("--session", sm.getSessionId());
  return args.join(" ");
}

function quote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The last frame for the normal screen after fullscreen mode, as pi 1.6 leaves it: the whole
 * conversation, then the editor (its text, no cursor) and the footer; ends with a blank line.
 */
export function transcriptText(app: AppView, width: number): string {
  const W = Math.max(10, width);
  const lines = app.chat.allLines(W, app.chatContext());
  while (lines.length && lines.at(-1) === "") lines.pop();
  if (!lines.length) return "";
  lines.push("", ...editorAndFooter(app, W));
  return lines.map((l) => l.replaceAll(CURSOR_MARK, "") + "\x1b[0m").join("\r\n") + "\r\n\r\n";
}

/** The editor (its text, no cursor) between its rules, then the footer: the bottom of the last frame. */
export function editorAndFooter(app: AppView, width: number): string[] {
  const rule = app.theme.fg("border", "─".repeat(width));
  const editor = app.editor.render(width, 12, false).lines;
  return [rule, ...editor, rule, ...app.renderer.footerLines(width)].map((l) => l.replaceAll(CURSOR_MARK, ""));
}

/** The resume hint's two lines (dim label, plain command), or "". */
export function resumeHint(app: AppView, isTTY: boolean): string {
  if (!isTTY) return "";
  const cmd = resumeCommand(app);
  return cmd ? `\x1b[2mTo resume this session:\x1b[22m\n${cmd}\n` : "";
}
