/**
 * pi 1.6's components for extensions, as pi-tui components: CustomEditor (a pi-tui Editor that
 * routes the app's keys to its action handlers, for ctx.ui.setEditorComponent) and
 * BorderedLoader (a spinner between two borders, cancellable with the interrupt key).
 *
 * pi-tui costs hundreds of milliseconds to load, and most runs that import this package never
 * build a component, so it is loaded on first use: each class is a stand-in that loads pi-tui
 * (synchronously, require of the ESM module — the same instance an `import` gets) and builds
 * the real class the first time it is constructed, subclassed, or checked with instanceof.
 * `class MyEditor extends CustomEditor` works: it reads CustomEditor.prototype, which loads it.
 */
import { createRequire } from "node:module";
import { libraryRequireSpecifier } from "../../../core/kernel/index.js";
import type { CancellableLoader, Component, Editor, EditorOptions, EditorTheme, Loader, TUI } from "@earendil-works/pi-tui";
import { Keybindings, keyFromData } from "../keys.js";
import { DynamicBorder } from "../pi-theme.js";
import { keyHint } from "./hints.js";

type PiTui = typeof import("@earendil-works/pi-tui");
let tuiModule: PiTui | undefined;

/** pi-tui 1.6, loaded on first call. */
export function piTui(): PiTui {
  return (tuiModule ??= createRequire(import.meta.url)(libraryRequireSpecifier("@earendil-works/pi-tui")) as PiTui);
}

/** A class whose definition (and pi-tui) is built on first use; see the module comment. */
export function lazyClass<C extends abstract new (...args: any[]) => unknown>(name: string, build: () => C): C {
  let real: C | undefined;
  const get = () => (real ??= build());
  const stand = function () {} as unknown as C;
  Object.defineProperty(stand, "name", { value: name });
  const proxy: C = new Proxy(stand, {
    construct(_t, args, newTarget) {
      const R = get() as unknown as new (...a: unknown[]) => object;
      return Reflect.construct(R, args, newTarget === proxy ? R : newTarget);
    },
    get(_t, key) {
      if (key === Symbol.hasInstance) return (x: unknown) => x instanceof (get() as unknown as Function);
      return Reflect.get(get(), key);
    },
    set(_t, key, value) {
      return Reflect.set(get(), key, value);
    },
    has(_t, key) {
      return Reflect.has(get(), key);
    },
  });
  return proxy;
}

// ---- CustomEditor -----------------------------------------------------------------------------------

/** What CustomEditor needs of a keybindings manager (pi-tui's KeybindingsManager has it). */
export interface KeybindingsLike {
  matches(data: string, keybinding: string): boolean;
}

/** The TUI's default bindings, matched against raw terminal input. */
function defaultKeybindings(): KeybindingsLike {
  const kb = new Keybindings();
  return { matches: (data, id) => kb.matches(keyFromData(data) ?? data, id) };
}

export type CustomEditorOptions = EditorOptions & { embedWorkingStatus?: boolean };

export interface CustomEditor extends Editor {
  readonly embedWorkingStatus: boolean;
  /** App actions (keybinding ids such as "app.model.select") this editor runs itself. */
  actionHandlers: Map<string, () => void>;
  onEscape?: () => void;
  onCtrlD?: () => void;
  onPasteImage?: () => void;
  /** Shortcuts registered by extensions; returns true when it took the key. */
  onExtensionShortcut?: (data: string) => boolean;
  onAction(action: string, handler: () => void): void;
  setWorkingStatusIndicator(indicator: unknown): void;
}

export const CustomEditor: new (tui: TUI, theme: EditorTheme, keybindings?: KeybindingsLike, options?: CustomEditorOptions) => CustomEditor = lazyClass("CustomEditor", () => {
  const { Editor: PiEditor } = piTui();
  class CustomEditorImpl extends PiEditor {
    readonly embedWorkingStatus: boolean;
    actionHandlers = new Map<string, () => void>();
    onEscape?: () => void;
    onCtrlD?: () => void;
    onPasteImage?: () => void;
    onExtensionShortcut?: (data: string) => boolean;
    private readonly keys: KeybindingsLike;
    private workingStatus: unknown;

    constructor(tui: TUI, theme: EditorTheme, keybindings?: KeybindingsLike, options?: CustomEditorOptions) {
      super(tui, theme, options);
      this.keys = keybindings ?? defaultKeybindings();
      this.embedWorkingStatus = options?.embedWorkingStatus ?? false;
    }

    setWorkingStatusIndicator(indicator: unknown): void {
      this.workingStatus = indicator;
    }

    onAction(action: string, handler: () => void): void {
      this.actionHandlers.set(action, handler);
    }

    override handleInput(data: string): void {
      if (this.onExtensionShortcut?.(data)) return;
      const is = (id: string) => this.keys.matches(data, id);
      const menu = this.isShowingAutocomplete();
      // an open completion menu keeps its paging and cancel keys
      if (menu && (is("tui.select.pageUp") || is("tui.select.pageDown"))) return super.handleInput(data);
      if (is("app.clipboard.pasteImage")) return void this.onPasteImage?.();
      if (is("app.interrupt")) {
        const run = menu ? undefined : (this.onEscape ?? this.actionHandlers.get("app.interrupt"));
        return run ? run() : super.handleInput(data);
      }
      if (is("app.exit") && this.getText().length === 0) return void (this.onCtrlD ?? this.actionHandlers.get("app.exit"))?.();
      if (is("tui.editor.historyPrevious") || is("tui.editor.historyNext")) return super.handleInput(data);
      for (const [action, run] of this.actionHandlers) {
        if (action !== "app.interrupt" && action !== "app.exit" && is(action)) return run();
      }
      super.handleInput(data);
    }
  }
  return CustomEditorImpl;
});

// ---- BorderedLoader ---------------------------------------------------------------------------------

interface ThemeLike {
  fg(token: string, text: string): string;
}

export interface BorderedLoader extends Component {
  children: Component[];
  readonly signal: AbortSignal;
  onAbort: (() => void) | undefined;
  handleInput(data: string): void;
  dispose(): void;
}

export const BorderedLoader: new (tui: TUI, theme: ThemeLike, message: string, options?: { cancellable?: boolean }) => BorderedLoader = lazyClass("BorderedLoader", () => {
  const { Container, Loader: PiLoader, CancellableLoader: PiCancellable, Spacer, Text } = piTui();
  class BorderedLoaderImpl extends Container {
    private readonly loader: Loader | CancellableLoader;
    private readonly cancellable: boolean;
    private own?: AbortController;

    constructor(tui: TUI, theme: ThemeLike, message: string, options?: { cancellable?: boolean }) {
      super();
      this.cancellable = options?.cancellable ?? true;
      const border = (s: string) => theme.fg("border", s);
      this.addChild(new DynamicBorder(border));
      const spin = (s: string) => theme.fg("accent", s);
      const msg = (s: string) => theme.fg("muted", s);
      this.loader = this.cancellable ? new PiCancellable(tui, spin, msg, message) : new PiLoader(tui, spin, msg, message);
      this.addChild(this.loader);
      if (this.cancellable) {
        this.addChild(new Spacer(1));
        this.addChild(new Text(keyHint("app.interrupt", "cancel"), 1, 0));
      }
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder(border));
    }

    get signal(): AbortSignal {
      if (this.cancellable) return (this.loader as CancellableLoader).signal;
      return (this.own ??= new AbortController()).signal;
    }

    set onAbort(fn: (() => void) | undefined) {
      if (this.cancellable) (this.loader as CancellableLoader).onAbort = fn;
    }

    handleInput(data: string): void {
      if (this.cancellable) (this.loader as CancellableLoader).handleInput(data);
    }

    dispose(): void {
      const l = this.loader as Loader & { dispose?: () => void };
      if (typeof l.dispose === "function") l.dispose();
      else l.stop();
    }
  }
  return BorderedLoaderImpl as never;
});
