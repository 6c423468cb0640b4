/**
 * pi 1.6's dialog components, as pi-tui components an extension can show with ctx.ui.custom():
 * ExtensionEditorComponent (multi-line editor with an external-editor key), ExtensionInputComponent
 * (one-line input), ExtensionSelectorComponent (pick one string), LoginDialogComponent (the steps
 * of an OAuth sign-in) and ArminComponent (the easter egg: an animated picture that says hi).
 * Keys are the TUI's default keybindings (tui.select.*, app.*), matched on raw terminal input;
 * colours come from the active theme. Constructor signatures are 1.6's; 0.73.1's are the same
 * or their prefixes (LoginDialogComponent.showInfo also takes 0.73.1's list of lines).
 *
 * pi-tui loads on first use (see components.ts, lazyClass).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Component, Container, EditorOptions, Input, TUI } from "@earendil-works/pi-tui";
import { Keybindings, keyFromData } from "../keys.js";
import { DynamicBorder, getActiveTheme, getEditorTheme } from "../pi-theme.js";
import { lazyClass, piTui, type KeybindingsLike } from "./components.js";
import { copyToClipboard, keyHint, keyText, rawKeyHint } from "./hints.js";

let defaults: Keybindings | undefined;
/** Does raw terminal input `data` trigger action `id` under the default keybindings? */
function matches(data: string, id: string): boolean {
  defaults ??= new Keybindings();
  return defaults.matches(keyFromData(data) ?? data, id);
}

/** Calls `onTick(seconds left)` every second and `onExpire` at zero (a dialog's timeout). */
class Countdown {
  private timer?: ReturnType<typeof setInterval>;
  constructor(ms: number, tui: TUI | undefined, onTick: (s: number) => void, onExpire: () => void) {
    let left = Math.ceil(ms / 1000);
    onTick(left);
    this.timer = setInterval(() => {
      left--;
      onTick(left);
      tui?.requestRender?.();
      if (left <= 0) {
        this.dispose();
        onExpire();
      }
    }, 1000);
  }
  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

// ---- ExtensionEditorComponent -------------------------------------------------------------------------

export interface ExtensionEditorOptions extends EditorOptions {
  description?: string;
}
export interface ExtensionEditorComponent extends Container {
  focused: boolean;
  handleInput(keyData: string): void;
}

/** `content` edited in `command` (run through the shell with a temp file), or an error message. */
function editExternally(command: string, content: string): { content?: string; error?: string } {
  const dir = mkdtempSync(join(tmpdir(), "pi-edit-"));
  const file = join(dir, "message.md");
  try {
    writeFileSync(file, content);
    const r = spawnSync(`${command} '${file.replace(/'/g, `'\\''`)}'`, { shell: true, stdio: "inherit" });
    if (r.error) return { error: `external editor "${command}" failed: ${r.error.message}` };
    if (r.status !== 0) return { error: `external editor "${command}" exited with ${r.status ?? r.signal}` };
    return { content: readFileSync(file, "utf8").replace(/\n$/, "") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const ExtensionEditorComponent: new (
  tui: TUI,
  keybindings: KeybindingsLike | undefined,
  title: string,
  prefill: string | undefined,
  onSubmit: (value: string) => void,
  onCancel: () => void,
  options?: ExtensionEditorOptions,
  externalEditorCommand?: string,
) => ExtensionEditorComponent = lazyClass("ExtensionEditorComponent", () => {
  const { Container: PiContainer, Editor, Spacer, Text } = piTui();
  class ExtensionEditorImpl extends PiContainer {
    private readonly editor: InstanceType<typeof Editor>;
    /** An external editor's failure; empty (no line) otherwise. */
    private readonly status = new Text("", 1, 0);
    private readonly command: string;
    private isFocused = false;

    constructor(
      private readonly tui: TUI,
      private readonly keybindings: KeybindingsLike | undefined,
      title: string,
      prefill: string | undefined,
      private readonly onSubmit: (value: string) => void,
      private readonly onCancel: () => void,
      options?: ExtensionEditorOptions,
      externalEditorCommand?: string,
    ) {
      super();
      const t = getActiveTheme();
      this.command = externalEditorCommand || process.env.VISUAL || process.env.EDITOR || (process.platform === "win32" ? "notepad" : "nano");
      const { description, ...editorOptions } = options ?? {};
      this.addChild(new DynamicBorder());
      this.addChild(new Spacer(1));
      this.addChild(new Text(t.fg("accent", title), 1, 0));
      if (description) {
        this.addChild(new Spacer(1));
        this.addChild(new Text(t.fg("text", description), 1, 0));
      }
      this.addChild(new Spacer(1));
      this.editor = new Editor(tui, getEditorTheme(), editorOptions);
      if (prefill) this.editor.setText(prefill);
      // enter submits, shift+enter is a new line (as in the main editor)
      this.editor.onSubmit = (text: string) => this.onSubmit(text);
      this.addChild(this.editor);
      this.addChild(this.status);
      this.addChild(new Spacer(1));
      this.addChild(
        new Text(
          [keyHint("tui.select.confirm", "submit"), keyHint("tui.input.newLine", "newline"), keyHint("tui.select.cancel", "cancel"), keyHint("app.editor.external", "external editor")].join("  "),
          1,
          0,
        ),
      );
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder());
    }

    get focused(): boolean {
      return this.isFocused;
    }
    set focused(value: boolean) {
      this.isFocused = value;
      this.editor.focused = value;
    }

    handleInput(keyData: string): void {
      if (matches(keyData, "tui.select.cancel")) return this.onCancel();
      // the caller's keybindings (1.6 passes the app's) decide the external-editor key; else the defaults
      const external = typeof this.keybindings?.matches === "function" ? this.keybindings.matches(keyData, "app.editor.external") : matches(keyData, "app.editor.external");
      if (external) return this.openExternal();
      this.editor.handleInput(keyData);
    }

    private openExternal(): void {
      const tui = this.tui as Partial<TUI> | undefined;
      tui?.stop?.();
      try {
        const r = editExternally(this.command, this.editor.getText());
        this.status.setText(r.error ? getActiveTheme().fg("warning", r.error) : "");
        if (r.content !== undefined) this.editor.setText(r.content);
      } finally {
        tui?.start?.();
        tui?.requestRender?.(true);
      }
    }
  }
  return ExtensionEditorImpl as never;
});

// ---- ExtensionInputComponent --------------------------------------------------------------------------

export interface ExtensionInputOptions {
  tui?: TUI;
  timeout?: number;
  initialValue?: string;
  description?: string;
}
export interface ExtensionInputComponent extends Container {
  focused: boolean;
  handleInput(keyData: string): void;
  dispose(): void;
}

/** A dialog's frame: border, title (kept for the countdown), description, `body`, hint line, border. */
function frame(self: Container, title: (suffix: string) => string, description: string | undefined, body: Component, hint: string, opts: { timeout?: number; tui?: TUI } | undefined, onExpire: () => void): Countdown | undefined {
  const { Spacer, Text } = piTui();
  const t = getActiveTheme();
  self.addChild(new DynamicBorder());
  self.addChild(new Spacer(1));
  const titleText = new Text(title(""), 1, 0);
  self.addChild(titleText);
  if (description) {
    self.addChild(new Spacer(1));
    self.addChild(new Text(t.fg("text", description), 1, 0));
  }
  self.addChild(new Spacer(1));
  // the title counts down the seconds left; at zero the dialog cancels
  const countdown = opts?.timeout && opts.timeout > 0 && opts.tui ? new Countdown(opts.timeout, opts.tui, (s) => titleText.setText(title(` (${s}s)`)), onExpire) : undefined;
  self.addChild(body);
  self.addChild(new Spacer(1));
  self.addChild(new Text(hint, 1, 0));
  self.addChild(new Spacer(1));
  self.addChild(new DynamicBorder());
  return countdown;
}

export const ExtensionInputComponent: new (title: string, placeholder: string | undefined, onSubmit: (value: string) => void, onCancel: () => void, opts?: ExtensionInputOptions) => ExtensionInputComponent =
  lazyClass("ExtensionInputComponent", () => {
    const { Container: PiContainer, Input: PiInput } = piTui();
    class ExtensionInputImpl extends PiContainer {
      private readonly input: Input = new PiInput();
      private readonly countdown?: Countdown;
      private isFocused = false;
      constructor(
        title: string,
        _placeholder: string | undefined,
        private readonly onSubmit: (value: string) => void,
        private readonly onCancel: () => void,
        opts?: ExtensionInputOptions,
      ) {
        super();
        if (opts?.initialValue) this.input.setValue(opts.initialValue);
        const hint = `${keyHint("tui.select.confirm", "submit")}  ${keyHint("tui.select.cancel", "cancel")}`;
        this.countdown = frame(this, (s) => getActiveTheme().fg("accent", title + s), opts?.description, this.input, hint, opts, () => this.onCancel());
      }
      get focused(): boolean {
        return this.isFocused;
      }
      set focused(value: boolean) {
        this.isFocused = value;
        this.input.focused = value;
      }
      handleInput(keyData: string): void {
        if (matches(keyData, "tui.select.confirm") || keyData === "\n") this.onSubmit(this.input.getValue());
        else if (matches(keyData, "tui.select.cancel")) this.onCancel();
        else this.input.handleInput(keyData);
      }
      dispose(): void {
        this.countdown?.dispose();
      }
    }
    return ExtensionInputImpl as never;
  });

// ---- ExtensionSelectorComponent -----------------------------------------------------------------------

export interface ExtensionSelectorOptions {
  tui?: TUI;
  timeout?: number;
  onToggleToolsExpanded?: () => void;
  description?: string;
}
export interface ExtensionSelectorComponent extends Container {
  handleInput(keyData: string): void;
  dispose(): void;
}

/** Options shown at once; the window follows the selection. */
const SELECTOR_VISIBLE = 10;

export const ExtensionSelectorComponent: new (title: string, options: string[], onSelect: (option: string) => void, onCancel: () => void, opts?: ExtensionSelectorOptions) => ExtensionSelectorComponent =
  lazyClass("ExtensionSelectorComponent", () => {
    const { Container: PiContainer, Text } = piTui();
    class ExtensionSelectorImpl extends PiContainer {
      private selected = 0;
      private readonly list = new PiContainer();
      private readonly countdown?: Countdown;
      constructor(
        title: string,
        private readonly options: string[],
        private readonly onSelect: (option: string) => void,
        private readonly onCancel: () => void,
        private readonly opts?: ExtensionSelectorOptions,
      ) {
        super();
        const hint = [rawKeyHint("↑↓", "navigate"), keyHint("tui.select.confirm", "select"), keyHint("tui.select.cancel", "cancel")].join("  ");
        this.countdown = frame(this, (s) => getActiveTheme().fg("accent", getActiveTheme().bold(title + s)), opts?.description, this.list, hint, opts, () => this.onCancel());
        this.fill();
      }
      private fill(): void {
        const t = getActiveTheme();
        const n = this.options.length;
        this.list.clear();
        const start = Math.max(0, Math.min(this.selected - Math.floor(SELECTOR_VISIBLE / 2), n - SELECTOR_VISIBLE));
        const end = Math.min(start + SELECTOR_VISIBLE, n);
        for (let i = start; i < end; i++) {
          const text = i === this.selected ? t.fg("accent", "→ ") + t.fg("accent", this.options[i]!) : `  ${t.fg("text", this.options[i]!)}`;
          this.list.addChild(new Text(text, 1, 0));
        }
        if (start > 0 || end < n) this.list.addChild(new Text(t.fg("muted", `  (${this.selected + 1}/${n})`), 0, 0));
      }
      handleInput(keyData: string): void {
        if (matches(keyData, "app.tools.expand")) this.opts?.onToggleToolsExpanded?.();
        else if (matches(keyData, "tui.select.up") || keyData === "k") {
          this.selected = Math.max(0, this.selected - 1);
          this.fill();
        } else if (matches(keyData, "tui.select.down") || keyData === "j") {
          this.selected = Math.min(this.options.length - 1, this.selected + 1);
          this.fill();
        } else if (matches(keyData, "tui.select.confirm") || keyData === "\n") {
          const choice = this.options[this.selected];
          if (choice !== undefined) this.onSelect(choice);
        } else if (matches(keyData, "tui.select.cancel")) this.onCancel();
      }
      dispose(): void {
        this.countdown?.dispose();
      }
    }
    return ExtensionSelectorImpl as never;
  });

// ---- LoginDialogComponent -----------------------------------------------------------------------------

/** pi-ai's device-code step (OAuthDeviceCodeInfo). */
export interface OAuthDeviceCodeInfoLike {
  userCode: string;
  verificationUri: string;
  openBrowserOnConfirm?: boolean;
  copyCodeOnConfirm?: boolean;
  [k: string]: unknown;
}
export interface AuthInfoLinkLike {
  url: string;
  label?: string;
}
export interface LoginDialogComponent extends Container {
  focused: boolean;
  readonly signal: AbortSignal;
  showAuth(url: string, instructions?: string): void;
  showDeviceCode(info: OAuthDeviceCodeInfoLike): void;
  showManualInput(prompt: string): Promise<string>;
  showPrompt(message: string, placeholder?: string): Promise<string>;
  showDetails(lines: string[]): void;
  showInfo(message: string | string[], links?: readonly AuthInfoLinkLike[], showCloseHint?: boolean): void;
  showWaiting(message: string): void;
  showProgress(message: string): void;
  handleInput(data: string): void;
}

/** The http(s) URL `value` names, normalised, or undefined (only web addresses are opened or linked). */
function webUrl(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Open `url` in the browser: $BROWSER when set, else the platform's opener. Failures are silent (the URL is shown). */
function openBrowser(url: string): void {
  const cmd = process.env.BROWSER || (process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open");
  try {
    const child = spawn(cmd, [url], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    /* no browser */
  }
}

/** The copy key (app.message.copy; pi's default ctrl+x when the TUI's bindings have none). */
const copyKey = () => keyText("app.message.copy") || "ctrl+x";
const isCopy = (data: string) => matches(data, "app.message.copy") || (!keyText("app.message.copy") && keyFromData(data) === "ctrl+x");

const CLICK_HINT = process.platform === "darwin" ? "Cmd+click to open" : "Ctrl+click to open";

export const LoginDialogComponent: new (tui: TUI, providerId: string, onComplete: (success: boolean, message?: string) => void, providerNameOverride?: string, titleOverride?: string) => LoginDialogComponent =
  lazyClass("LoginDialogComponent", () => {
    const { Container: PiContainer, Input: PiInput, Spacer, Text, TruncatedText, hyperlink, replaceControlCharacters } = piTui();
    const link = (text: string, url: string) => {
      const target = webUrl(url);
      return target === undefined ? text : hyperlink(text, target);
    };
    const shownUrl = (url: string) => webUrl(url) ?? replaceControlCharacters(url);
    class LoginDialogImpl extends PiContainer {
      private readonly content = new PiContainer();
      private readonly input: Input = new PiInput();
      private readonly abort = new AbortController();
      /** The sign-in URL on screen, which app.message.copy copies. */
      private authUrl?: { url: string; hint: InstanceType<typeof Text> };
      private pending?: { resolve: (v: string) => void; reject: (e: Error) => void };
      private device?: { info: OAuthDeviceCodeInfoLike; hint: Container };
      private isFocused = false;

      constructor(
        private readonly tui: TUI,
        providerId: string,
        private readonly onComplete: (success: boolean, message?: string) => void,
        providerNameOverride?: string,
        titleOverride?: string,
      ) {
        super();
        const t = getActiveTheme();
        this.addChild(new DynamicBorder());
        this.addChild(new Text(t.fg("accent", t.bold(titleOverride ?? `Login to ${providerNameOverride || providerId}`)), 1, 0));
        this.addChild(this.content);
        this.input.onSubmit = () => {
          if (!this.pending) return;
          const value = this.input.getValue();
          // the answered input becomes a plain line
          this.content.children = this.content.children.map((c) => (c === this.input ? new Text(`> ${value}`, 0, 0) : c));
          const p = this.pending;
          this.pending = undefined;
          p.resolve(value);
        };
        this.input.onEscape = () => this.cancel();
        this.addChild(new DynamicBorder());
      }

      get focused(): boolean {
        return this.isFocused;
      }
      set focused(value: boolean) {
        this.isFocused = value;
        this.input.focused = value;
      }
      get signal(): AbortSignal {
        return this.abort.signal;
      }

      private redraw(): void {
        this.tui?.requestRender?.();
      }
      private dropDeviceHint(): void {
        if (this.device) this.content.removeChild(this.device.hint);
        this.device = undefined;
      }
      private cancel(): void {
        this.dropDeviceHint();
        this.abort.abort();
        const p = this.pending;
        this.pending = undefined;
        p?.reject(new Error("Login cancelled"));
        this.onComplete(false, "Login cancelled");
      }
      private ask(): Promise<string> {
        this.redraw();
        return new Promise((resolve, reject) => (this.pending = { resolve, reject }));
      }

      showAuth(url: string, instructions?: string): void {
        const t = getActiveTheme();
        this.dropDeviceHint();
        this.content.clear();
        this.content.addChild(new Spacer(1));
        const target = webUrl(url);
        const shown = target ?? replaceControlCharacters(url);
        this.content.addChild(new Text(t.fg("accent", hyperlink(shown, shown)), 1, 0));
        const hint = new Text("", 1, 0);
        this.authUrl = { url: shown, hint };
        this.setUrlHint(rawKeyHint(copyKey(), "to copy"));
        this.content.addChild(hint);
        if (instructions) {
          this.content.addChild(new Spacer(1));
          this.content.addChild(new Text(t.fg("warning", instructions), 1, 0));
        }
        if (target !== undefined) openBrowser(target);
        this.redraw();
      }
      private setUrlHint(suffix: string): void {
        const t = getActiveTheme();
        if (!this.authUrl) return;
        this.authUrl.hint.setText(`${t.fg("dim", hyperlink(CLICK_HINT, this.authUrl.url))} ${t.fg("dim", "•")} ${suffix}`);
        this.redraw();
      }

      showDeviceCode(given: OAuthDeviceCodeInfoLike): void {
        const t = getActiveTheme();
        const info = { ...given, openBrowserOnConfirm: given.openBrowserOnConfirm ?? true, copyCodeOnConfirm: given.copyCodeOnConfirm ?? true };
        this.authUrl = undefined;
        this.dropDeviceHint();
        this.content.clear();
        this.content.addChild(new Spacer(1));
        const url = shownUrl(info.verificationUri);
        this.content.addChild(new Text(t.fg("accent", link(url, url)), 1, 0));
        this.content.addChild(new Text(t.fg("dim", link(CLICK_HINT, info.verificationUri)), 1, 0));
        this.content.addChild(new Spacer(1));
        this.content.addChild(new Text(t.fg("warning", `Enter code: ${info.userCode}`), 1, 0));
        if (!this.signal.aborted && (info.openBrowserOnConfirm || info.copyCodeOnConfirm)) {
          const what = info.openBrowserOnConfirm ? (info.copyCodeOnConfirm ? "to open browser and copy code" : "to open browser") : "to copy code";
          // one row, reused for the progress of the action
          const hint = new PiContainer();
          hint.addChild(new TruncatedText(`(${keyHint("tui.select.confirm", what)})`, 1, 0));
          this.content.addChild(hint);
          this.device = { info, hint };
        }
        this.redraw();
      }
      private deviceStatus(hint: Container, message: string): void {
        if (this.signal.aborted || !this.isFocused || !this.content.children.includes(hint)) return;
        hint.children = [new TruncatedText(getActiveTheme().fg("dim", message), 1, 0)];
        this.redraw();
      }
      private runDeviceAction(info: OAuthDeviceCodeInfoLike, hint: Container): void {
        this.deviceStatus(hint, info.copyCodeOnConfirm ? "Copying code..." : "Browser open requested");
        if (info.copyCodeOnConfirm) {
          void copyToClipboard(info.userCode).then(
            () => this.deviceStatus(hint, "Code copied to clipboard"),
            () => this.deviceStatus(hint, "Copy code manually"),
          );
        }
        const target = webUrl(info.verificationUri);
        if (info.openBrowserOnConfirm && target !== undefined) openBrowser(target);
      }

      showManualInput(prompt: string): Promise<string> {
        this.dropDeviceHint();
        this.input.setValue("");
        this.content.addChild(new Spacer(1));
        this.content.addChild(new Text(getActiveTheme().fg("dim", prompt), 1, 0));
        this.content.addChild(this.input);
        this.content.addChild(new Text(`(${keyHint("tui.select.cancel", "to cancel")})`, 1, 0));
        return this.ask();
      }
      showPrompt(message: string, placeholder?: string): Promise<string> {
        const t = getActiveTheme();
        this.dropDeviceHint();
        // added below what is shown (the URL of showAuth stays)
        this.content.addChild(new Spacer(1));
        this.content.addChild(new Text(t.fg("text", message), 1, 0));
        if (placeholder) this.content.addChild(new Text(t.fg("dim", `e.g., ${placeholder}`), 1, 0));
        this.content.addChild(this.input);
        this.content.addChild(new Text(`(${keyHint("tui.select.cancel", "to cancel,")} ${keyHint("tui.select.confirm", "to submit")})`, 1, 0));
        this.input.setValue("");
        return this.ask();
      }
      showDetails(lines: string[]): void {
        this.authUrl = undefined;
        this.dropDeviceHint();
        this.content.clear();
        this.content.addChild(new Spacer(1));
        for (const line of lines) this.content.addChild(new Text(line, 1, 0));
        this.redraw();
      }
      showInfo(message: string | string[], links: readonly AuthInfoLinkLike[] = [], showCloseHint = false): void {
        // 0.73.1: showInfo(lines) replaces the content with the lines
        if (Array.isArray(message)) return this.showDetails(message);
        const t = getActiveTheme();
        this.content.addChild(new Spacer(1));
        this.content.addChild(new Text(t.fg("text", message), 1, 0));
        for (const l of links) {
          const url = shownUrl(l.url);
          const text = l.label ? `${l.label}: ${url}` : url;
          this.content.addChild(new Text(t.fg("accent", link(text, url)), 1, 0));
        }
        if (showCloseHint) {
          this.content.addChild(new Spacer(1));
          this.content.addChild(new Text(`(${keyHint("tui.select.cancel", "to close")})`, 1, 0));
        }
        this.redraw();
      }
      showWaiting(message: string): void {
        this.content.addChild(new Spacer(1));
        this.content.addChild(new Text(getActiveTheme().fg("dim", message), 1, 0));
        this.content.addChild(new Text(`(${keyHint("tui.select.cancel", "to cancel")})`, 1, 0));
        this.redraw();
      }
      showProgress(message: string): void {
        this.content.addChild(new Text(getActiveTheme().fg("dim", message), 1, 0));
        this.redraw();
      }

      handleInput(data: string): void {
        if (matches(data, "tui.select.cancel")) return this.cancel();
        if (this.authUrl && isCopy(data)) {
          const t = getActiveTheme();
          void copyToClipboard(this.authUrl.url).then(
            () => this.setUrlHint(t.fg("success", "Copied URL to clipboard")),
            (e: unknown) => this.setUrlHint(t.fg("error", e instanceof Error ? e.message : String(e))),
          );
          return;
        }
        if (this.device && !this.pending && !this.signal.aborted && this.isFocused && matches(data, "tui.select.confirm")) {
          // once: a second enter must not open a second browser
          const d = this.device;
          this.device = undefined;
          this.runDeviceAction(d.info, d.hint);
          this.redraw();
          return;
        }
        this.input.handleInput(data);
      }
    }
    return LoginDialogImpl as never;
  });

// ---- ArminComponent -----------------------------------------------------------------------------------

/**
 * The picture, in half-block cells (each character is two pixels high): a waving figure drawn for
 * this project. `#` is ink, anything else is background.
 */
const PICTURE = [
  "        ######          ##  ",
  "      ##########       ###  ",
  "     ###  ##  ###     ###   ",
  "     ############    ###    ",
  "     ###      ###   ###     ",
  "      ###    ###   ###      ",
  "        ######    ###       ",
  "     ##############         ",
  "   ###  ######              ",
  "  ###   ######              ",
  "  ##    ######              ",
  "        ##  ##              ",
  "       ###  ###             ",
  "      ###    ###            ",
];
export const ARMIN_MESSAGE = "ARMIN SAYS HI";
const FRAME_MS = 40;

export interface ArminComponent extends Component {
  invalidate(): void;
  render(width: number): string[];
  dispose(): void;
}

/** Rows of the picture: ink rows pair up into half blocks (▀ ▄ █). */
function pictureCells(): string[][] {
  const rows: string[][] = [];
  const ink = (y: number, x: number) => PICTURE[y]?.[x] === "#";
  const w = Math.max(...PICTURE.map((r) => r.length));
  for (let y = 0; y < PICTURE.length; y += 2) {
    const row: string[] = [];
    for (let x = 0; x < w; x++) {
      const up = ink(y, x), down = ink(y + 1, x);
      row.push(up && down ? "█" : up ? "▀" : down ? "▄" : " ");
    }
    rows.push(row);
  }
  return rows;
}

export const ArminComponent: new (ui: TUI) => ArminComponent = lazyClass("ArminComponent", () => {
  class ArminImpl {
    private readonly target = pictureCells();
    private readonly shown = this.target.map((r) => r.map(() => " "));
    /** Cells still to reveal, in the order of the chosen effect. */
    private readonly queue: Array<[number, number]> = [];
    private timer?: ReturnType<typeof setInterval>;
    private cache?: { width: number; lines: string[] };

    constructor(private readonly ui: TUI) {
      const cells: Array<[number, number]> = [];
      this.target.forEach((row, y) => row.forEach((_c, x) => cells.push([y, x])));
      const effect = Math.floor(Math.random() * 3);
      if (effect === 0) cells.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // row by row
      else if (effect === 1) cells.sort((a, b) => a[1] - b[1] || a[0] - b[0]); // column by column
      else
        for (let i = cells.length - 1; i > 0; i--) {
          // scattered
          const j = Math.floor(Math.random() * (i + 1));
          [cells[i], cells[j]] = [cells[j]!, cells[i]!];
        }
      this.queue = cells;
      this.timer = setInterval(() => this.tick(), FRAME_MS);
    }

    private tick(): void {
      // about 25 frames to the whole picture
      const step = Math.ceil((this.target.length * this.target[0]!.length) / 25);
      for (let i = 0; i < step && this.queue.length; i++) {
        const [y, x] = this.queue.shift()!;
        this.shown[y]![x] = this.target[y]![x]!;
      }
      this.cache = undefined;
      this.ui?.requestRender?.();
      if (!this.queue.length) this.dispose();
    }

    invalidate(): void {
      this.cache = undefined;
    }
    render(width: number): string[] {
      if (this.cache?.width === width) return this.cache.lines;
      const t = getActiveTheme();
      const room = Math.max(0, width - 1);
      const line = (s: string) => (width > 0 ? " " + t.fg("accent", s.slice(0, room)) + " ".repeat(Math.max(0, room - s.length)) : "");
      const lines = [...this.shown.map((r) => line(r.join(""))), line(ARMIN_MESSAGE)];
      this.cache = { width, lines };
      return lines;
    }
    dispose(): void {
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
    }
  }
  return ArminImpl as never;
});
