/**
 * An extension's editor (ctx.ui.setEditorComponent): a pi-tui EditorComponent that replaces
 * ours in the bottom panel. It gets the text ours had, draws itself at the panel's width and
 * has the keyboard while no dialog is open. Enter goes through its own onSubmit, wired to the
 * app's submit (a prompt, or a steer while the agent streams); the app's follow-up key queues
 * its text. An editor built on pi's CustomEditor (it has `actionHandlers`) receives the app's
 * actions and handles every key itself, as in pi; a plain EditorComponent gets the keys the
 * app's own actions (interrupt, clear, quit, follow-up, model, …) do not take.
 */
import type { AppView, EditorComponentLike, EditorFactory } from "./app-view.js";
import { disposeComponent, renderComponent, setFocused } from "./component-host.js";
import { APP_ACTIONS } from "./input.js";
import type { KeyPress } from "./keys.js";

/** Keys that belong to editing even when the app has an action for them. */
const EDITING = new Set(["tui.input.submit", "tui.input.tab"]);

export class CustomEditorSlot {
  component: EditorComponentLike | undefined;
  factory: EditorFactory | undefined;

  constructor(private readonly app: AppView) {}

  /** Put `factory`'s editor in place of ours (undefined restores ours); the text moves over. */
  set(factory: EditorFactory | undefined, make: () => unknown[]): void {
    const current = this.component ? (this.component.getExpandedText?.() ?? this.component.getText()) : this.app.editor.getText();
    const old = this.component;
    this.component = undefined;
    this.factory = undefined;
    if (old) {
      setFocused(old, false);
      disposeComponent(old);
    }
    if (factory) {
      const ed = factory(...make()) as EditorComponentLike | undefined;
      if (!ed || typeof ed.render !== "function" || typeof ed.getText !== "function" || typeof ed.setText !== "function" || typeof ed.handleInput !== "function") {
        throw new TypeError("setEditorComponent: the factory must return an editor component (render, getText, setText, handleInput)");
      }
      ed.onSubmit = (text: string) => void this.app.submitText(text, "steer");
      ed.setText(current);
      if (ed.actionHandlers instanceof Map) {
        ed.onEscape ??= () => void this.app.onInterrupt();
        ed.onCtrlD ??= () => {
          if (!ed.getText()) void this.app.quit(0);
        };
        for (const a of APP_ACTIONS) if (!EDITING.has(a.binding)) ed.actionHandlers.set(a.binding, () => void a.run(this.app, { id: a.binding, sequence: "" }));
      }
      setFocused(ed, true);
      this.component = ed;
      this.factory = factory;
    } else {
      this.app.editor.setText(current);
    }
    this.app.requestRender();
  }

  render(width: number, focused: boolean): string[] {
    const ed = this.component;
    if (!ed) return [];
    if (ed.focused !== undefined && ed.focused !== focused) setFocused(ed, focused);
    return renderComponent(ed, width);
  }

  /** Route a key to the custom editor; false when there is none. */
  handleKey(k: KeyPress): boolean {
    const ed = this.component;
    if (!ed) return false;
    if (!(ed.actionHandlers instanceof Map)) {
      const kb = this.app.keys;
      for (const a of APP_ACTIONS) {
        if (EDITING.has(a.binding) || !kb.matches(k, a.binding)) continue;
        if (a.binding === "app.message.followUp") {
          const text = (ed.getExpandedText?.() ?? ed.getText()).trim();
          if (!text) return true;
          ed.addToHistory?.(ed.getText());
          ed.setText("");
          void this.app.submitText(text, "followUp");
          return true;
        }
        if (a.binding === "app.exit" || a.binding === "app.clear") {
          // Quitting keys apply to an empty editor; with text they edit (Ctrl+C clears it).
          if (ed.getText()) {
            if (a.binding === "app.clear") ed.setText("");
            else ed.handleInput(k.sequence);
            return true;
          }
        }
        if (a.run(this.app, k) !== false) return true;
      }
    }
    ed.handleInput(k.sequence);
    return true;
  }

  paste(text: string): void {
    // pi-tui editors take bracketed paste as input data.
    this.component?.handleInput(`\x1b[200~${text}\x1b[201~`);
  }
}
