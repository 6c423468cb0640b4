/**
 * Runs one settings screen outside the TUI (`pi config` in a terminal): the alternate screen,
 * raw keys from stdin, the screen redrawn after every key, the terminal restored on Esc,
 * Ctrl+C, SIGTERM or an error. No blessed.
 */
import { keyFromData, Keybindings, type KeyPress } from "./keys.js";
import { SettingsLayer, type ScreenEntry } from "./settings-screen.js";
import { builtinTheme } from "./theme.js";

export interface StandaloneScreenOptions {
  title: string;
  entries: ScreenEntry[];
  change(entry: ScreenEntry, value: string): void;
  /** Tab: another set of entries (1.6's switch between global and project settings). */
  switchTab?(): { title: string; entries: ScreenEntry[] };
  hint?: string;
  input?: NodeJS.ReadStream;
  output?: NodeJS.WriteStream;
}

/** Split a chunk of terminal input into key sequences (escape sequences kept whole). */
export function splitKeys(data: string): string[] {
  const out: string[] = [];
  const re = /\x1b\[[0-9;?<>]*[A-Za-z~]|\x1bO[A-Za-z]|\x1b[^\x1b]?|[\s\S]/gu;
  for (const m of data.matchAll(re)) out.push(m[0]);
  return out;
}

export function runStandaloneScreen(opts: StandaloneScreenOptions): Promise<void> {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const env = { theme: builtinTheme("dark"), keys: new Keybindings(), requestRender: () => draw() };
  let done = false;
  let resolve!: () => void;
  const finished = new Promise<void>((r) => (resolve = r));
  const makeLayer = (title: string, entries: ScreenEntry[]) =>
    new SettingsLayer({
      title,
      entries,
      hint: opts.hint,
      change: (e, v) => {
        opts.change(e, v);
        draw();
      },
      close: () => finish(),
    });
  let layer = makeLayer(opts.title, opts.entries);
  function draw(): void {
    if (done) return;
    const rows = output.rows || 24;
    const cols = output.columns || 80;
    const lines = layer.render(cols, rows, env).slice(0, rows);
    output.write("\x1b[H\x1b[2J" + lines.join("\r\n"));
  }
  const onData = (chunk: Buffer | string) => {
    for (const seq of splitKeys(chunk.toString())) {
      const id = keyFromData(seq);
      if (!id) continue;
      if (id === "ctrl+c" || id === "ctrl+d") return finish();
      if (id === "tab" && opts.switchTab) {
        const next = opts.switchTab();
        layer = makeLayer(next.title, next.entries);
        continue;
      }
      const k: KeyPress = { id, sequence: seq, ...(seq.length === 1 && seq >= " " && seq !== "\x7f" ? { text: seq } : /^[^\x00-\x1f\x7f]+$/u.test(seq) ? { text: seq } : {}) };
      layer.handleKey(k, env);
      if (done) return;
    }
    draw();
  };
  const onResize = () => draw();
  const onSignal = () => finish();
  function finish(): void {
    if (done) return;
    done = true;
    input.off("data", onData);
    output.off("resize", onResize);
    process.off("SIGTERM", onSignal);
    if (input.isTTY) input.setRawMode(false);
    input.pause();
    output.write("\x1b[?25h\x1b[?1049l");
    resolve();
  }
  output.write("\x1b[?1049h\x1b[?25l");
  if (input.isTTY) input.setRawMode(true);
  input.setEncoding("utf8");
  input.on("data", onData);
  input.resume();
  output.on("resize", onResize);
  process.on("SIGTERM", onSignal);
  draw();
  return finished;
}
