/**
 * /llama's progress view for a download or a load, drawn in the terminal UI as a component
 * (`ui.custom`): a title, the model, what is happening, a 40-cell bar with the percent and, for a
 * download, the bytes done of the total. Esc asks whether to stop; yes runs the caller's `cancel`
 * (the router's unload) and closes the view.
 */
import type { ExtensionUI } from "../../core/kernel/index.js";
import type { Progress } from "./client.js";

const BAR_CELLS = 40;

interface Painter {
  fg?(color: string, text: string): string;
  bold?(text: string): string;
}

interface Keys {
  matches?(data: string, id: string): boolean;
}

class ProgressView {
  theme: Painter | undefined;
  keys: Keys | undefined;
  tui: { requestRender?(): void } | undefined;
  onEscape: () => void = () => {};

  constructor(
    private readonly title: string,
    readonly model: string,
    public state: Progress,
  ) {}

  update(p: Progress): void {
    this.state = { ...this.state, ...p };
    this.tui?.requestRender?.();
  }

  private paint(color: string, text: string): string {
    return this.theme?.fg ? this.theme.fg(color, text) : text;
  }

  render(width: number): string[] {
    const { message, ratio, detail } = this.state;
    // A title rule like the TUI's own dialogs: "── Downloading model ─────…".
    const title = this.theme?.bold ? this.theme.bold(this.title) : this.title;
    const rest = Math.max(0, width - this.title.length - 4);
    const lines = [`${this.paint("borderAccent", "── ")}${title}${this.paint("borderAccent", ` ${"─".repeat(rest)}`)}`, "", ` ${this.model}`, "", ` ${this.paint("muted", message)}`];
    if (ratio !== undefined) {
      const share = Math.max(0, Math.min(1, ratio));
      const filled = Math.round(share * BAR_CELLS);
      lines.push(` ${this.paint("accent", "█".repeat(filled) + "─".repeat(BAR_CELLS - filled))} ${Math.round(share * 100)}%`);
    }
    if (detail) lines.push(` ${this.paint("dim", detail)}`);
    lines.push("", ` ${this.paint("dim", "esc stop")}`);
    return lines;
  }

  handleInput(data: string): void {
    const escape = this.keys?.matches ? this.keys.matches(data, "tui.select.cancel") : data === "\x1b";
    if (escape) this.onEscape();
  }

  invalidate(): void {}
}

export interface ProgressRun<T> {
  /** "Downloading model", "Loading model". */
  title: string;
  model: string;
  /** The confirmation Esc asks: "Stop download?", "Stop loading?". */
  stopTitle: string;
  run(signal: AbortSignal, update: (p: Progress) => void): Promise<T>;
  /** What stopping does at the router (before the wait is abandoned). */
  cancel(): Promise<void>;
}

/**
 * Show the progress view while `run` works. Resolves `{ cancelled: true }` when the person
 * stopped it (after `cancel`), else `run`'s value; `run`'s error is thrown after the view closes.
 */
export async function runWithProgress<T>(ui: ExtensionUI, o: ProgressRun<T>): Promise<{ cancelled: true } | { cancelled: false; value: T }> {
  const controller = new AbortController();
  const view = new ProgressView(o.title, o.model, { message: "Starting…" });
  let close: () => void = () => {};
  let settled = false;
  const work = o.run(controller.signal, (p) => view.update(p)).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  void work.finally(() => (settled = true));
  const shown = ui.custom((tui: ProgressView["tui"], theme: Painter, keys: Keys, done: () => void) => {
    view.tui = tui;
    view.theme = theme;
    view.keys = keys;
    close = done;
    return view;
  });
  // The host closed the view (the app is quitting): stop waiting, leave the router as it is.
  void shown.then(() => {
    if (!settled) controller.abort(new Error("closed"));
  });
  try {
    for (;;) {
      const escaped = new Promise<"stop">((r) => (view.onEscape = () => r("stop")));
      if ((await Promise.race([work.then(() => "done" as const), escaped])) === "done") break;
      view.onEscape = () => {};
      const stop = await ui.confirm(o.stopTitle, o.model);
      if (!stop || settled) continue;
      try {
        await o.cancel();
      } finally {
        controller.abort(new Error("stopped"));
      }
      await work;
      return { cancelled: true };
    }
  } finally {
    close();
  }
  const result = await work;
  if (!result.ok) throw result.error;
  return { cancelled: false, value: result.value };
}
