/**
 * The real CLI's TUI run from an interactive shell inside tmux, as a user runs it: tmux with
 * `extended-keys on` (so the TUI's modifyOtherKeys request is honoured and Shift+Enter arrives
 * as its own key) and `set-clipboard on` (OSC 52 copies land in a tmux buffer), 120x40, job
 * control (Ctrl+Z, `fg`) and the shell's line after the TUI exits.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, type E2eEnv } from "./e2e.js";
import { tmuxDriver, type TmuxDriver } from "./tmux.js";

export interface TuiShell extends TmuxDriver {
  /** Start the CLI with `args` at the shell prompt (the line ends with `; echo EXIT=$?`). */
  launch(args?: string): void;
  /** A fresh terminal for the next launch (the tmux server is ended and started again). */
  reset(): void;
  /** A tmux format for the pane ("#{cursor_x}", "#{alternate_on}"). */
  pane(format: string): string;
  /** Screen plus the scrollback above it. */
  history(lines?: number): string;
}

export function tuiShell(name: string, e: () => E2eEnv): TuiShell {
  const driver = tmuxDriver(`${name}-${process.pid}`, () => e().env, () => join(e().root, "err.log"));
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    const conf = join(e().root, "tmux.conf");
    writeFileSync(conf, "set -g extended-keys on\nset -g set-clipboard on\nset -g history-limit 5000\n");
    driver.tmux("-u", "-f", conf, "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-e", "NCURSES_NO_UTF8_ACS=1", "-e", "LANG=C.UTF-8", "bash --norc --noprofile -i");
  };
  return {
    ...driver,
    launch(args = "") {
      start();
      driver.typeText(`PS1='$ '; cd '${e().cwd}' && '${process.execPath}' '${CLI}' ${args} 2>'${join(e().root, "err.log")}'; echo EXIT=$?`);
      driver.send("Enter");
    },
    reset() {
      driver.kill();
      started = false;
    },
    pane: (format) => driver.tmux("display", "-p", "-t", "t", format).trim(),
    history: (lines = 300) => driver.tmux("capture-pane", "-p", "-t", "t", "-S", `-${lines}`),
  };
}
