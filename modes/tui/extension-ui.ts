/**
 * pi's `ctx.ui` for the terminal UI: the ExtensionUI this mode provides as the kernel service
 * "ui". Dialogs go through the dialog host; status, widgets, header, footer and components are
 * kept on the app and drawn by the renderer.
 */
import type { ExtensionUI } from "../../core/kernel/index.js";
import type { AppView } from "./app-view.js";
import { ComponentLayer } from "./layers.js";
import { keyFromData } from "./keys.js";
import { Theme } from "./theme.js";
import { getEditorTheme } from "./pi-theme.js";

export class ExtensionUiBridge {
  private readonly warnedUnsupported = new Set<string>();

  constructor(private readonly app: AppView) {}

  /** What pi-tui components get as their `tui` (requestRender, terminal size, focus). */
  tuiHandle() {
    const app = this.app;
    return {
      requestRender: (_force?: boolean) => app.requestRender(),
      get terminal() {
        return { columns: (app.screen as any)?.width ?? 80, rows: (app.screen as any)?.height ?? 24 };
      },
      get width() {
        return (app.screen as any)?.width ?? 80;
      },
      get height() {
        return (app.screen as any)?.height ?? 24;
      },
      /** Focus moves with the dialog stack here; a component asking for it is redrawn. */
      setFocus: (_c: unknown) => app.requestRender(),
    };
  }

  /** pi-tui's EditorTheme from the app's theme (an extension's editor draws with it). */
  editorTheme() {
    return getEditorTheme();
  }

  keysHandle() {
    const app = this.app;
    return {
      matches: (data: string, id: string) => {
        const k = keyFromData(data);
        return k !== undefined && app.keys.matches(k, id);
      },
      getKeys: (id: string) => app.keys.getKeys(id),
    };
  }

  unsupported(method: string): void {
    if (this.warnedUnsupported.has(method)) return;
    this.warnedUnsupported.add(method);
    this.app.kernel.diagnostics.report({ level: "warning", source: "tui", message: `ctx.ui.${method}() is not supported by this terminal UI yet` });
  }

  create(): ExtensionUI {
    const app = this.app;
    const bridge = this;
    const ui: ExtensionUI & { getEditorComponent(): unknown } = {
      kind: "tui",
      select: (title, options, opts) =>
        app.select<string>(
          title,
          (options ?? []).map((o) => ({ label: String(o), value: String(o) })),
          { search: (options ?? []).length > 8, deadlineLabel: "cancels" },
          opts,
        ),
      confirm: (title, message, opts) => app.confirm(title, message, opts),
      // The person at the terminal answers "Run outside the sandbox?" like any confirm.
      confirmEscalation: (req, opts) => app.confirm(req.title, req.message, opts),
      input: (title, placeholder, opts) => app.input(title, { placeholder }, opts),
      editor: (title, prefill, opts) => app.input(title, { prefill, multiline: true }, opts),
      notify: (message, type) => app.addNotice(String(message), type === "error" ? "error" : type === "warning" ? "warning" : "info"),
      setStatus: (key, text) => {
        if (text === undefined || text === "") app.statuses.delete(key);
        else app.statuses.set(key, String(text));
        app.requestRender();
      },
      setWidget: (key, content, opts) => {
        const old = app.widgets.get(key);
        (old?.content as { dispose?: () => void } | undefined)?.dispose?.();
        if (content === undefined) app.widgets.delete(key);
        else {
          const value = typeof content === "function" ? content(bridge.tuiHandle(), app.theme) : content;
          app.widgets.set(key, { placement: opts?.placement ?? "aboveEditor", content: value });
        }
        app.requestRender();
      },
      setTitle: (title) => {
        app.customTitle = title;
        app.updateTitle();
      },
      setEditorText: (text) => {
        app.editor.setText(String(text ?? ""));
        app.requestRender();
      },
      getEditorText: () => app.editor.getText(),
      pasteToEditor: (text) => {
        app.editor.paste(String(text ?? ""));
        app.requestRender();
      },
      setWorkingMessage: (message) => {
        app.workingMessage = message;
        app.requestRender();
      },
      setFooter: (factory) => {
        (app.footerComponent as { dispose?: () => void } | undefined)?.dispose?.();
        app.footerComponent = factory
          ? factory(bridge.tuiHandle(), app.theme, {
              getGitBranch: () => app.gitBranch,
              getExtensionStatuses: () => app.statuses,
              onBranchChange: () => () => {},
            })
          : undefined;
        app.requestRender();
      },
      setHeader: (factory) => {
        (app.headerComponent as { dispose?: () => void } | undefined)?.dispose?.();
        app.headerComponent = factory ? factory(bridge.tuiHandle(), app.theme) : undefined;
        const fresh = app.events.makeHeader();
        if (app.headerBlock) {
          app.chat.insertBefore(fresh, app.headerBlock);
          app.chat.remove(app.headerBlock);
        } else app.chat.blocks.unshift(fresh);
        app.headerBlock = fresh;
        app.requestRender();
      },
      custom: <T>(factory: (...a: any[]) => unknown, opts?: Record<string, unknown>) =>
        new Promise<T | undefined>((resolve) => {
          let layer: ComponentLayer | undefined;
          let finished = false;
          const done = (v?: T) => {
            if (finished) return;
            finished = true;
            app.dialogs.open.delete(cancel);
            if (layer) app.popLayer(layer);
            resolve(v);
          };
          const cancel = () => done(undefined);
          if (app.quitting || app.destroyed) return done(undefined);
          app.dialogs.open.add(cancel);
          Promise.resolve()
            .then(() => factory(bridge.tuiHandle(), app.theme, bridge.keysHandle(), done))
            .then((component) => {
              if (finished) return;
              const o = opts?.overlayOptions;
              const overlayOptions = (typeof o === "function" ? (o as () => unknown)() : o) as Record<string, unknown> | undefined;
              const l = new ComponentLayer(component, !!opts?.overlay, overlayOptions);
              layer = l;
              app.pushLayer(l);
              const onHandle = opts?.onHandle as ((h: unknown) => void) | undefined;
              onHandle?.({
                hide: () => done(undefined),
                close: () => done(undefined),
                setHidden: (hidden: boolean) => {
                  l.hidden = !!hidden;
                  app.requestRender();
                },
                isHidden: () => l.hidden,
                focus: () => app.requestRender(),
                unfocus: () => app.requestRender(),
                isFocused: () => app.layers[app.layers.length - 1] === l,
                requestRender: () => app.requestRender(),
              });
            })
            .catch((e: unknown) => {
              app.kernel.diagnostics.report({ level: "error", source: "tui", message: "ctx.ui.custom() component failed", error: e });
              done(undefined);
            });
        }),
      onTerminalInput: (handler) => {
        app.inputHandlers.add(handler);
        return () => app.inputHandlers.delete(handler);
      },
      setEditorComponent: (factory) => {
        try {
          app.customEditor.set(factory, () => [bridge.tuiHandle(), bridge.editorTheme(), bridge.keysHandle()]);
        } catch (e) {
          app.kernel.diagnostics.report({ level: "error", source: "tui", message: "ctx.ui.setEditorComponent() failed", error: e });
        }
      },
      getEditorComponent: () => app.customEditor.factory,
      getToolsExpanded: () => app.expandTools,
      setToolsExpanded: (expanded) => {
        app.expandTools = !!expanded;
        app.chat.invalidateAll();
        app.requestRender();
      },
      get theme() {
        return app.theme;
      },
      getAllThemes: () => [...app.themes.values()].map((t) => ({ name: t.name, path: t.path })),
      getTheme: (name) => app.themes.get(name),
      setTheme: (theme) => {
        const t = typeof theme === "string" ? app.themes.get(theme) : theme instanceof Theme ? theme : undefined;
        if (!t) return { success: false, error: `unknown theme ${typeof theme === "string" ? `"${theme}"` : ""}`.trim() };
        app.setTheme(t);
        return { success: true };
      },
    };
    return ui;
  }
}
