/**
 * Regular tuiMode: finished output goes into the terminal's own scrollback turn by turn, and only
 * the live part is redrawn by blessed.
 *
 * When a run settles, the chat blocks that are finished and not yet printed are written from the
 * top of the normal buffer (each line overwriting what blessed drew there), then enough blank
 * lines follow to scroll exactly those lines off the top into the terminal's history (the scroll
 * region is reset to the whole screen first, as terminals keep only lines scrolled off a
 * full-screen region). The screen is then blank and blessed redraws its frame in full. The chat
 * viewport keeps showing the recent blocks, so nothing disappears from view; the terminal's
 * history holds every finished turn once, in order. On exit what was not printed yet is written
 * in place with the editor and the footer below it, and the shell's prompt follows.
 */
import type { AppView } from "./app-view.js";
import type { Block } from "./chat.js";
import { program } from "./blessed-setup.js";
import { editorAndFooter } from "./exit-output.js";

export class ScrollbackWriter {
  private readonly printed = new WeakSet<Block>();

  constructor(private readonly app: AppView) {}

  get enabled(): boolean {
    return this.app.tuiMode === "regular";
  }

  /** The blocks not printed yet, from the first unprinted one up to (not including) the first live one. */
  private finishedBlocks(): Block[] {
    const out: Block[] = [];
    for (const b of this.app.chat.blocks) {
      if (this.printed.has(b)) continue;
      if (this.isLive(b)) break;
      out.push(b);
    }
    return out;
  }

  private isLive(b: Block): boolean {
    const app = this.app;
    if (b === app.currentAssistant || (app.liveBash as Block[]).includes(b)) return true;
    for (const t of app.tools.values()) if (t === b) return t.status === "pending" || t.status === "running";
    return false;
  }

  private linesOf(blocks: Block[], width: number): string[] {
    const ctx = this.app.chatContext();
    const out: string[] = [];
    for (const b of blocks) {
      const l = b.lines(width, ctx, this.app.chat.uiVersion);
      if (!l.length) continue;
      for (const x of l) out.push(x);
      out.push("");
    }
    return out;
  }

  /** Everything on screen now counts as printed (the chat was rebuilt from what was printed before). */
  markAllPrinted(): void {
    for (const b of this.app.chat.blocks) this.printed.add(b);
  }

  /** Print the finished blocks into the terminal's history (a run settled). */
  commit(): void {
    const app = this.app;
    if (!this.enabled || app.destroyed || !app.screen) return;
    const blocks = this.finishedBlocks();
    if (!blocks.length) return;
    const W = Math.max(10, (app.screen as any).width as number);
    const H = Math.max(4, (app.screen as any).height as number);
    const lines = this.linesOf(blocks, W);
    for (const b of blocks) this.printed.add(b);
    if (!lines.length) return;
    const prog = program(app.screen);
    try {
      prog.flush?.();
      // N lines, then H-1 line feeds more: exactly the N lines scroll off the top, the screen is left blank.
      let seq = "\x1b[r\x1b[H\x1b[0m";
      for (const l of lines) seq += l + "\x1b[0m\x1b[K\r\n";
      seq += "\x1b[K\r\n".repeat(H - 1) + "\x1b[K\x1b[H";
      prog.output.write(seq);
    } catch {
      return; // output gone
    }
    this.redrawAll();
  }

  /** blessed's idea of the screen is stale: mark every cell changed and draw the frame again. */
  private redrawAll(): void {
    const screen = this.app.screen as any;
    const prog = program(this.app.screen);
    const clear = prog.clear;
    prog.clear = () => {}; // the screen is already blank; a clear here could push it into history again
    try {
      screen.alloc(true);
    } finally {
      prog.clear = clear;
    }
    this.app.renderNow();
  }

  /**
   * On exit: blessed leaves without clearing (a clear would push its last frame into the
   * terminal's history, as tmux and VTE do), then what was never printed is written in place
   * row by row, stale rows below erased line by line, and the cursor left after it for the shell.
   */
  leave(destroyScreen: () => void): void {
    const app = this.app;
    let rest: string[] = [];
    const W = Math.max(10, (app.screen as any).width as number);
    const H = Math.max(1, (app.screen as any).height as number);
    try {
      rest = this.linesOf(app.chat.blocks.filter((b) => !this.printed.has(b)), W);
    } catch {
      /* a block failing to render: it stays unprinted */
    }
    while (rest.length && rest.at(-1) === "") rest.pop();
    // The editor and the footer stay below, as the last frame (pi 1.6 leaves them too).
    try {
      rest.push(...(rest.length ? [""] : []), ...editorAndFooter(app, W));
    } catch {
      /* the footer failing: the conversation is what matters */
    }
    const prog = program(app.screen);
    const clear = prog.clear;
    prog.clear = () => {};
    try {
      destroyScreen();
    } finally {
      prog.clear = clear;
    }
    let seq = "\x1b[r\x1b[0m\x1b[H";
    for (const l of rest) seq += l + "\x1b[0m\x1b[K\r\n";
    const used = Math.min(rest.length, H - 1);
    for (let r = used; r < H; r++) seq += `\x1b[${r + 1};1H\x1b[K`;
    seq += `\x1b[${used + 1};1H`;
    try {
      // blessed buffers its last writes: they go first, or they would land over ours.
      prog.flush?.();
      prog.output.write(seq);
    } catch {
      /* output gone */
    }
  }
}
