/**
 * The input router: raw terminal data (terminal replies taken out, bracketed paste, mouse reports,
 * every key encoding key-parser.ts reads) becomes KeyPress values that go to one place — the
 * terminal-input handlers extensions registered, then the top dialog layer, then the completion
 * list, then the keybinding → action table below, then extension shortcuts, then the editor.
 */
import type { AppView } from "./app-view.js";
import { BUILTIN_COMMANDS } from "./commands.js";
import { commonPrefix, completePath, computeCompletion, type CompletionItem } from "./completion.js";
import { canonicalKey, type KeyPress } from "./keys.js";
import { parseKey, parseMouse, splitInput } from "./key-parser.js";
import { InputLayer, ComponentLayer, SelectLayer } from "./layers.js";
import { TranscriptSearch } from "./search.js";

/** What the app does for a keybinding id when no dialog has focus. `false` = not handled, keep looking. */
export interface KeyAction {
  binding: string;
  run(app: AppView, k: KeyPress): boolean | void;
}

const pageRows = (app: AppView) => Math.max(1, ((app.chatBox.height as number) || 10) - 2);

/** The keybinding → action table (the ids and their default keys are in keys.ts). Order matters: first match wins. */
export const APP_ACTIONS: readonly KeyAction[] = [
  { binding: "app.interrupt", run: (app) => void app.onInterrupt() },
  {
    binding: "app.clear",
    run: (app) => {
      const now = Date.now();
      if (app.editor.getText()) {
        app.editor.clear();
        app.completion = undefined;
        app.lastCtrlC = now;
      } else if (now - app.lastCtrlC < 1500) void app.quit(0);
      else {
        app.lastCtrlC = now;
        app.flash(`Press ${app.keys.hint("app.clear")} again to quit`, 1500);
      }
    },
  },
  { binding: "app.exit", run: (app) => (app.editor.getText() ? false : void app.quit(0)) },
  { binding: "app.message.followUp", run: (app) => void app.submit("followUp") },
  { binding: "tui.input.submit", run: (app) => void (app.editor.backslashNewLine() || app.submit("steer")) },
  { binding: "app.message.dequeue", run: (app) => void app.restoreQueue() },
  { binding: "app.model.select", run: (app) => void app.runCommand("/model") },
  { binding: "app.model.cycleForward", run: (app) => void app.cycleModel("forward") },
  { binding: "app.model.cycleBackward", run: (app) => void app.cycleModel("backward") },
  {
    binding: "app.thinking.cycle",
    run: (app) => {
      const lvl = app.session.cycleThinkingLevel();
      app.flash(lvl ? `Thinking level: ${lvl}` : "This model has no thinking levels");
    },
  },
  { binding: "app.thinking.toggle", run: (app) => app.toggleThinking() },
  {
    binding: "app.tools.expand",
    run: (app) => {
      app.expandTools = !app.expandTools;
      app.chat.invalidateAll();
    },
  },
  { binding: "tui.altScreen.search", run: (app) => TranscriptSearch.open(app) },
  { binding: "app.chat.scrollUp", run: (app) => app.viewport.scrollBy(pageRows(app)) },
  { binding: "app.chat.scrollDown", run: (app) => app.viewport.scrollBy(-pageRows(app)) },
  { binding: "tui.altScreen.top", run: (app) => app.viewport.toTop() },
  { binding: "tui.altScreen.bottom", run: (app) => app.viewport.toBottom() },
  { binding: "app.editor.external", run: (app) => app.externalEditor() },
  { binding: "app.message.copy", run: (app) => void app.runCommand("/copy") },
  {
    binding: "app.clipboard.pasteImage",
    run: (app) =>
      void import("./clipboard-read.js")
        .then((m) => m.readClipboardForPaste(process.env, process.platform))
        .then((got) => {
          if (!got || app.destroyed) return;
          if (got.kind === "image") app.editor.insert(got.text);
          else app.editor.paste(got.text);
          app.requestRender();
        })
        .catch((e: Error) => app.addNotice(`Failed to paste from clipboard: ${e.message}`, "error")),
  },
  { binding: "app.suspend", run: (app) => app.suspend() },
  { binding: "app.session.new", run: (app) => void app.runCommand("/new") },
  { binding: "app.session.tree", run: (app) => void app.runCommand("/tree") },
  { binding: "app.session.fork", run: (app) => void app.runCommand("/fork") },
  { binding: "app.session.resume", run: (app) => void app.runCommand("/resume") },
];

export class InputRouter {
  /** A lone Esc waits one tick: Esc then Enter is Alt+Enter. */
  escPending: NodeJS.Immediate | undefined;
  /** While leaving: input is read (terminal replies, late keys) and dropped. */
  draining = false;
  private inPaste = false;
  private pasteBuf = "";

  constructor(private readonly app: AppView) {}

  /** A read from the terminal (`late`: a held fragment no reply completed, read as keys now). */
  onInputData(data: string, late = false): void {
    if (this.app.destroyed) return;
    // The terminal's answers to our queries (keyboard protocol, DA, program status) are not keys.
    const s = this.app.terminal.takeReplies(data, !late);
    if (!s || this.draining) return;
    if (this.inPaste || s.includes("\x1b[200~")) {
      this.handlePasteData(s);
      return;
    }
    // Pastes come wrapped (bracketed paste is on); anything else is keys, one at a time, even
    // when several arrive in one read ("text\rmore" is text, Enter, more — as pi 1.6 reads it).
    for (const seq of splitInput(s)) this.onSequence(seq);
  }

  private onSequence(seq: string): void {
    const mouse = parseMouse(seq);
    if (mouse) {
      // The wheel over an open list below the transcript (a selector, the completion list) moves
      // its selection; over the transcript it scrolls the transcript.
      const top = this.app.layers[this.app.layers.length - 1];
      const wheel = mouse.kind === "wheelUp" ? "up" : mouse.kind === "wheelDown" ? "down" : undefined;
      if (wheel && !this.app.viewport.inChat(mouse.y) && (top instanceof SelectLayer || (!top && this.app.completion))) {
        this.dispatch({ id: wheel, sequence: wheel === "up" ? "\x1b[A" : "\x1b[B" });
        return;
      }
      // Otherwise the transcript takes the mouse, unless an overlay covers it.
      if (this.app.layers.every((l) => l.placement !== "overlay")) this.app.viewport.handleMouse(mouse);
      return;
    }
    const k = parseKey(seq);
    if (!k) return;
    if (k.id === "escape") {
      if (this.escPending) {
        clearImmediate(this.escPending);
        this.dispatch(k);
      }
      this.escPending = setImmediate(() => {
        this.escPending = undefined;
        this.dispatch(k);
      });
      return;
    }
    if (this.escPending) {
      clearImmediate(this.escPending);
      this.escPending = undefined;
      if (k.id === "enter") return this.dispatch({ id: "alt+enter", sequence: "\x1b\r" });
      this.dispatch({ id: "escape", sequence: "\x1b" });
    }
    this.dispatch(k);
  }

  handlePasteData(s: string): void {
    let rest = s;
    while (rest) {
      if (!this.inPaste) {
        const i = rest.indexOf("\x1b[200~");
        if (i === -1) {
          const typed = rest.replace(/\x1b\[[0-9;]*[~A-Za-z]|[\x00-\x1f\x7f]/g, "");
          if (typed) this.deliverPaste(typed);
          return;
        }
        const typed = rest.slice(0, i).replace(/\x1b\[[0-9;]*[~A-Za-z]|[\x00-\x1f\x7f]/g, "");
        if (typed) this.deliverPaste(typed);
        this.inPaste = true;
        this.pasteBuf = "";
        rest = rest.slice(i + 6);
      } else {
        const j = rest.indexOf("\x1b[201~");
        if (j === -1) {
          this.pasteBuf += rest;
          return;
        }
        this.pasteBuf += rest.slice(0, j);
        this.inPaste = false;
        const text = this.pasteBuf;
        this.pasteBuf = "";
        this.deliverPaste(text);
        rest = rest.slice(j + 6);
      }
    }
  }

  deliverPaste(text: string): void {
    const top = this.app.layers[this.app.layers.length - 1];
    if (top instanceof InputLayer) top.editor.paste(text);
    else if (top instanceof ComponentLayer) top.component?.handleInput?.(text);
    else if (!top && this.app.customEditor.component) this.app.customEditor.paste(text);
    else if (top) {
      /* selectors take no paste */
    } else {
      this.app.editor.paste(text);
      this.updateCompletion();
    }
    this.app.requestRender();
  }

  /** Route one key press (tests may call this directly). */
  dispatch(k: KeyPress): void {
    if (this.app.destroyed) return;
    for (const h of this.app.inputHandlers) {
      try {
        const r = h(k.sequence) as { consume?: boolean } | undefined;
        if (r?.consume) return;
      } catch (e) {
        this.app.kernel.diagnostics.report({ level: "warning", source: "tui", message: "terminal input handler failed", error: e });
      }
    }
    try {
      this.handleKey(k);
    } catch (e) {
      this.app.addNotice(`key handling failed: ${(e as Error).message}`, "error");
    }
    this.app.requestRender();
  }

  handleKey(k: KeyPress): void {
    const kb = this.app.keys;
    const top = this.app.layers[this.app.layers.length - 1];
    if (top) {
      top.handleKey(k, this.app.layerEnv());
      return;
    }
    if (this.app.customEditor.handleKey(k)) return;
    const m = (id: string) => kb.matches(k, id);
    // Completion list.
    const c = this.app.completion;
    if (c) {
      if (m("tui.select.up") || m("tui.select.down")) {
        const n = c.items.length;
        c.index = (c.index + (m("tui.select.up") ? -1 : 1) + n) % n;
        return;
      }
      if (m("tui.input.tab")) {
        this.applyCompletion(c.items[c.index]!);
        return;
      }
      if (m("app.interrupt")) {
        this.app.completion = undefined;
        return;
      }
      if (m("tui.input.submit")) {
        const it = c.items[c.index]!;
        const current = this.app.editor.getText().slice(c.start, c.end);
        if (it.value !== current) {
          this.applyCompletion(it);
          if (c.kind !== "command") return;
        }
        this.app.completion = undefined;
      }
    }
    for (const a of APP_ACTIONS) {
      if (m(a.binding) && a.run(this.app, k) !== false) return;
    }
    for (const e of this.app.kernel.shortcuts.list()) {
      if (canonicalKey(e.value.key) === k.id) {
        Promise.resolve()
          .then(() => e.value.handler(this.app.session.contextFactory()))
          .catch((err: unknown) => this.app.kernel.diagnostics.report({ level: "error", source: e.source, hook: `shortcut ${e.value.key}`, message: "shortcut failed", error: err }));
        return;
      }
    }
    if (m("tui.input.tab")) {
      this.tabComplete();
      return;
    }
    if (this.app.editor.handleKey(k)) {
      this.app.chat.scroll = 0;
      this.updateCompletion();
    }
  }

  updateCompletion(): void {
    this.app.completion = computeCompletion(this.app.editor.getText(), this.app.editor.cursor, {
      commands: () => this.commandItems(),
      files: this.app.files,
      cwd: this.app.kernel.cwd,
    });
  }

  tabComplete(): void {
    const text = this.app.editor.getText();
    const c = computeCompletion(text, this.app.editor.cursor, { commands: () => this.commandItems(), files: this.app.files, cwd: this.app.kernel.cwd }) ?? completePath(text, this.app.editor.cursor, this.app.kernel.cwd);
    if (!c) return;
    if (c.items.length === 1) return this.applyCompletion(c.items[0]!, c);
    const prefix = commonPrefix(c.items);
    if (prefix.length > c.end - c.start) {
      this.app.editor.text = text.slice(0, c.start) + prefix + text.slice(c.end);
      this.app.editor.cursor = c.start + prefix.length;
    }
    this.app.completion = { ...c, end: c.start + Math.max(prefix.length, c.end - c.start) };
  }

  applyCompletion(it: CompletionItem, c = this.app.completion): void {
    if (!c) return;
    const text = this.app.editor.getText();
    const addSpace = !it.value.endsWith("/");
    const value = it.value + (addSpace && text[c.end] !== " " ? " " : "");
    this.app.editor.text = text.slice(0, c.start) + value + text.slice(c.end);
    this.app.editor.cursor = c.start + value.length;
    this.app.completion = undefined;
    if (!addSpace) this.updateCompletion();
  }

  commandItems(): CompletionItem[] {
    const items: CompletionItem[] = BUILTIN_COMMANDS.map((c) => ({ value: "/" + c.name, label: "/" + c.name + (c.argumentHint ? ` ${c.argumentHint}` : ""), description: c.description }));
    const seen = new Set(BUILTIN_COMMANDS.map((c) => c.name));
    for (const e of this.app.kernel.commands.list()) {
      if (seen.has(e.name)) continue;
      seen.add(e.name);
      items.push({ value: "/" + e.name, label: "/" + e.name, description: e.value.description ?? e.value.source ?? e.source });
    }
    return items;
  }
}
