/**
 * Copying text to the clipboard from the TUI (/copy): the system tools first (pbcopy on macOS,
 * clip on Windows, wl-copy under Wayland, xclip or xsel under X11, termux-clipboard-set on
 * Termux), then OSC 52 to the terminal itself when there is no display (a container, a server)
 * or the session is remote (SSH, mosh, or PI_CLIPBOARD_OSC52=1), so the copy reaches the
 * client's clipboard. A desktop session whose tools all fail gets an error naming what to install.
 */
import { spawn } from "node:child_process";

/** Terminals commonly cap an OSC 52 payload; longer text is refused rather than cut. */
const OSC52_MAX_BASE64 = 100_000;

export interface ClipboardEnv {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Writes to the terminal (for OSC 52). */
  writeTerminal(data: string): void;
}

/** Run `command args` with `input` on stdin; true when it exits 0 within the time limit. */
function runWithInput(command: string, args: string[], input: string, env: NodeJS.ProcessEnv, timeoutMs = 5000): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    let child: ReturnType<typeof spawn>;
    try {
      // xclip and wl-copy stay in the background owning the selection: do not wait on their stdout.
      child = spawn(command, args, { env, stdio: ["pipe", "ignore", "ignore"], detached: false });
    } catch {
      return resolve(false);
    }
    const timer = setTimeout(() => {
      child.kill();
      done(false);
    }, timeoutMs);
    child.on("error", () => done(false));
    child.on("exit", (code) => done(code === 0));
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input);
  });
}

export function osc52(text: string): string | undefined {
  const b64 = Buffer.from(text, "utf8").toString("base64");
  return b64.length > OSC52_MAX_BASE64 ? undefined : `\x1b]52;c;${b64}\x07`;
}

/** The tools tried, in order, for this platform and environment. */
export function clipboardCommands(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): Array<[string, string[]]> {
  if (platform === "darwin") return [["pbcopy", []]];
  if (platform === "win32") return [["clip", []]];
  const out: Array<[string, string[]]> = [];
  if (env.TERMUX_VERSION) out.push(["termux-clipboard-set", []]);
  if (env.WAYLAND_DISPLAY) out.push(["wl-copy", []]);
  if (env.DISPLAY) out.push(["xclip", ["-selection", "clipboard"]], ["xsel", ["--clipboard", "--input"]]);
  return out;
}

/** Copy `text`; resolves with how, or throws an Error whose message says what is missing. */
export async function copyText(text: string, ce: ClipboardEnv): Promise<"tool" | "osc52"> {
  const { env, platform } = ce;
  let copied = false;
  for (const [cmd, args] of clipboardCommands(platform, env)) {
    if (await runWithInput(cmd, args, text, env)) {
      copied = true;
      break;
    }
  }
  const remote = Boolean(env.SSH_CONNECTION || env.SSH_CLIENT || env.MOSH_CONNECTION || env.PI_CLIPBOARD_OSC52 === "1");
  const headless = platform === "linux" && !env.DISPLAY && !env.WAYLAND_DISPLAY && !env.TERMUX_VERSION;
  if (remote || (!copied && headless)) {
    const seq = osc52(text);
    if (seq) {
      ce.writeTerminal(seq);
      if (!copied) return "osc52";
    } else if (!copied) throw new Error("Clipboard unavailable: the message is too long for the terminal's clipboard (OSC 52)");
  }
  if (copied) return "tool";
  if (env.TERMUX_VERSION) throw new Error("Clipboard unavailable: install the Termux:API app and the termux-api package");
  if (env.WAYLAND_DISPLAY) throw new Error("Clipboard unavailable: install wl-clipboard (wl-copy), or check access to the Wayland display");
  if (env.DISPLAY) throw new Error("Clipboard unavailable: install xclip or xsel, or check access to the X display");
  throw new Error("Clipboard unavailable");
}
