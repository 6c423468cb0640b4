/**
 * The terminal modes the TUI turns on and must turn off on every way out: raw input, bracketed
 * paste, the kitty keyboard protocol or xterm's modifyOtherKeys, and (fullscreen) mouse reports.
 *
 * Keyboard negotiation, as pi 1.6 does it: `CSI > 7 u` pushes the kitty flags we want
 * (disambiguate, event types, alternate keys), `CSI ? u` asks for the flags in force, and a
 * device-attributes query (`CSI c`) follows as a sentinel every terminal answers. A terminal with
 * the protocol answers `CSI ? flags u` before the DA reply. modifyOtherKeys level 2
 * (`CSI > 4 ; 2 m`, what tmux with `extended-keys on` and xterm forward) is requested with the
 * queries rather than after the DA reply as pi 1.6 does, so a key pressed in the moment before
 * the reply is already extended; it is withdrawn (`CSI > 4 ; 0 m`) when the kitty answer comes.
 * The OSC 7501 program-status query rides on the same sentinel. Every reply is taken out of the
 * input before it is read as keys.
 *
 * Leaving (quit, SIGTERM, Ctrl+Z): the protocols are switched off first, then the input is read
 * until the replies still owed have come and the line has been quiet a moment (bounded), so no
 * answer is left on the shell's command line; then the rest is restored.
 */
import { writeSync } from "node:fs";
import type { ProgramStatusReporter } from "./program-status.js";

/** Kitty flags pushed at start: 1 disambiguate + 2 event types + 4 alternate keys. */
const KITTY_FLAGS = 7;
const KITTY_PUSH_AND_QUERY = `\x1b[>${KITTY_FLAGS}u\x1b[?u`;
const KITTY_POP = "\x1b[<u";
const MODIFY_OTHER_KEYS_ON = "\x1b[>4;2m";
const MODIFY_OTHER_KEYS_OFF = "\x1b[>4;0m";
const DEVICE_ATTRIBUTES = "\x1b[c";
const PASTE_ON = "\x1b[?2004h";
const PASTE_OFF = "\x1b[?2004l";
/** Button presses, drags with a button held, SGR coordinates (wheel included). */
export const MOUSE_ON = "\x1b[?1000h\x1b[?1002h\x1b[?1006h";
export const MOUSE_OFF = "\x1b[?1006l\x1b[?1002l\x1b[?1000l";

const KITTY_REPLY = /\x1b\[\?(\d+)u/g;
const DA_REPLY = /\x1b\[\?[\d;]*c/g;

interface TerminalIo {
  write(seq: string): void;
  input: NodeJS.ReadableStream & { isTTY?: boolean; isRaw?: boolean; setRawMode?: (on: boolean) => unknown };
  status: ProgramStatusReporter;
  /** The file descriptor to write to synchronously when the process exits (stdout), if any. */
  fd?: number;
}

export class TerminalModes {
  /** The terminal confirmed the kitty keyboard protocol. */
  kitty = false;
  /** modifyOtherKeys is requested (from the start until a kitty answer comes). */
  modifyOtherKeys = false;
  /** Mouse reports are on (fullscreen). */
  mouse = false;
  /** DA replies still owed to our queries. */
  owedReplies = 0;
  private pushed = false;
  private pasteOn = false;
  private lastInput = 0;
  /** The start of a reply cut at the end of a read (slow links), joined to the next read. */
  private partial = "";
  private partialTimer: NodeJS.Timeout | undefined;
  /** Where a held fragment goes when no rest follows in time (it was a key after all: Esc). */
  onLateInput: ((data: string) => void) | undefined;
  /** Called when the kitty protocol turns on or off (pi-tui's key parser is told). */
  onKitty: ((on: boolean) => void) | undefined;

  constructor(private readonly io: TerminalIo) {}

  /** Raw input first (replies must never be echoed by the line discipline), then the queries and modes. */
  enter(opts: { mouse: boolean }): void {
    try {
      if (this.io.input.isTTY && this.io.input.setRawMode && !this.io.input.isRaw) this.io.input.setRawMode(true);
    } catch {
      /* not a TTY */
    }
    this.pushed = true;
    this.pasteOn = true;
    this.owedReplies++;
    let seq = PASTE_ON + KITTY_PUSH_AND_QUERY + this.io.status.probeQuery() + DEVICE_ATTRIBUTES;
    if (!this.kitty) {
      seq += MODIFY_OTHER_KEYS_ON;
      this.modifyOtherKeys = true;
    }
    if (opts.mouse) {
      seq += MOUSE_ON;
      this.mouse = true;
    }
    this.write(seq);
  }

  /** Take the terminal's replies out of a chunk of input; returns what is left for the keyboard. */
  takeReplies(chunk: string, hold = true): string {
    this.lastInput = Date.now();
    const data = this.partial + chunk;
    this.partial = "";
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.partialTimer = undefined;
    if (!data.includes("\x1b")) return data;
    let rest = this.io.status.takeReplies(data);
    // A reply still owed may arrive in pieces: keep a trailing `CSI ?…` fragment for the next read.
    if (hold && this.owedReplies > 0) {
      const cut = /\x1b(?:\[(?:\?[\d;]*)?)?$/.exec(rest);
      if (cut) {
        this.partial = cut[0];
        rest = rest.slice(0, cut.index);
        this.partialTimer = setTimeout(() => {
          const held = this.partial;
          this.partial = "";
          this.partialTimer = undefined;
          if (held) this.onLateInput?.(held);
        }, 150);
        this.partialTimer.unref?.();
      }
    }
    if (rest.includes("\x1b[?")) {
      rest = rest.replace(KITTY_REPLY, (_m, flags: string) => {
        this.onKittyFlags(Number(flags));
        return "";
      });
      if (this.owedReplies > 0) {
        rest = rest.replace(DA_REPLY, () => {
          if (this.owedReplies > 0) this.onDeviceAttributes();
          return "";
        });
      }
    }
    return rest;
  }

  private onKittyFlags(flags: number): void {
    if (flags === 0) return; // no kitty protocol: modifyOtherKeys stays
    if (this.modifyOtherKeys) {
      this.write(MODIFY_OTHER_KEYS_OFF);
      this.modifyOtherKeys = false;
    }
    if (!this.kitty) {
      this.kitty = true;
      this.onKitty?.(true);
    }
  }

  private onDeviceAttributes(): void {
    this.owedReplies--;
    if (this.owedReplies > 0) return;
    this.io.status.endProbe();
  }

  /** The sequence that turns every mode we turned on off again. */
  restoreSequence(): string {
    let seq = "";
    if (this.mouse) seq += MOUSE_OFF;
    if (this.pushed || this.kitty) seq += KITTY_POP;
    if (this.modifyOtherKeys) seq += MODIFY_OTHER_KEYS_OFF;
    if (this.pasteOn) seq += PASTE_OFF;
    return seq;
  }

  /** Turn the modes off (idempotent). */
  leave(): void {
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.partialTimer = undefined;
    this.partial = "";
    const seq = this.restoreSequence();
    this.pushed = this.pasteOn = this.mouse = this.modifyOtherKeys = false;
    if (this.kitty) {
      this.kitty = false;
      this.onKitty?.(false);
    }
    if (seq) this.write(seq);
  }

  /**
   * Turn the keyboard protocols and the mouse off, then keep reading until the replies still owed
   * have come and the input has been quiet for `idleMs` (at most `maxMs`): what arrives meanwhile
   * is taken by the caller's input handler, never left for the shell.
   */
  async drain(maxMs = 1000, idleMs = 50): Promise<void> {
    let seq = "";
    if (this.mouse) seq += MOUSE_OFF;
    if (this.pushed || this.kitty) seq += KITTY_POP;
    if (this.modifyOtherKeys) seq += MODIFY_OTHER_KEYS_OFF;
    this.pushed = this.mouse = this.modifyOtherKeys = false;
    if (this.kitty) {
      this.kitty = false;
      this.onKitty?.(false);
    }
    if (seq) this.write(seq);
    const end = Date.now() + maxMs;
    const start = Date.now();
    for (;;) {
      const now = Date.now();
      if (now >= end) return;
      const quiet = now - Math.max(this.lastInput, start) >= idleMs;
      if (quiet && this.owedReplies === 0) return;
      await new Promise((r) => setTimeout(r, Math.min(idleMs, end - now)));
    }
  }

  /** Process exit without the normal path (a crash): write the restore sequence synchronously. */
  restoreSync(extra = ""): void {
    const seq = this.restoreSequence() + extra;
    this.pushed = this.pasteOn = this.mouse = this.modifyOtherKeys = this.kitty = false;
    if (!seq) return;
    try {
      if (this.io.fd !== undefined) writeSync(this.io.fd, seq);
      else this.io.write(seq);
    } catch {
      /* the terminal is gone */
    }
  }

  private write(seq: string): void {
    try {
      this.io.write(seq);
    } catch {
      /* output gone */
    }
  }
}
