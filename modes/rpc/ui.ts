/**
 * `ExtensionUI` over the wire (protocol.md §5.2): dialogs become `extension_ui_request`
 * records answered by `extension_ui_response` lines; fire-and-forget calls become requests
 * nobody answers; what cannot cross the wire (custom components, footer, header, editor
 * component, themes) behaves as pi documents for RPC: a no-op or a neutral value, with no
 * record of its own, so the client sees only the fire-and-forget and dialog records.
 *
 * Dialog timeouts run here, on the server (the client need not track them), and an aborted
 * signal resolves the dialog to its default at once.
 */
import { dialogDeadline, type ExtensionUI, type UiDialogOptions, type Diagnostic } from "../../core/kernel/index.js";
import type { RpcExtensionUiResponse } from "./commands.js";

export interface RpcUiDeps {
  /** Writes one record to stdout (through the stdout guard). */
  send(record: Record<string, unknown>): Promise<void>;
  /** Reports a diagnostic (the RPC server turns diagnostics into extension_error records). */
  report(d: Diagnostic): void;
}

export interface RpcUi extends ExtensionUI {
  /** Routes an extension_ui_response to its dialog. Returns false when no dialog waits for that id. */
  handleResponse(response: RpcExtensionUiResponse): boolean;
  /** Resolves every open dialog to its default (shutdown). */
  cancelAll(): void;
  /** Ids of the dialogs still waiting for an answer. */
  readonly pendingIds: string[];
}

interface Pending {
  answer(response: RpcExtensionUiResponse): void;
  cancel(): void;
}

/** A theme stand-in: every style function returns its text unchanged, so `theme.fg("accent", s)` still works. */
function plainTheme(): unknown {
  const passthrough = (...args: unknown[]) => {
    const last = args[args.length - 1];
    return typeof last === "string" ? last : "";
  };
  return new Proxy(
    {},
    {
      get(_t, prop) {
        if (typeof prop === "symbol") return undefined;
        if (prop === "then") return undefined; // not a thenable
        return passthrough;
      },
    },
  );
}

export function createRpcUi(deps: RpcUiDeps): RpcUi {
  const pending = new Map<string, Pending>();
  const send = (record: Record<string, unknown>) => {
    for (const k of Object.keys(record)) if (record[k] === undefined) delete record[k];
    return deps.send(record);
  };
  const fireAndForget = (method: string, fields: Record<string, unknown>) => {
    void send({ type: "extension_ui_request", id: globalThis.crypto.randomUUID(), method, ...fields }).catch((error) =>
      deps.report({ level: "error", source: "ui", hook: `ctx.ui.${method}`, message: "could not send the request", error }),
    );
  };

  function dialog<T>(
    method: string,
    fields: Record<string, unknown>,
    opts: UiDialogOptions | undefined,
    fallback: T,
    parse: (r: RpcExtensionUiResponse) => T,
  ): Promise<T> {
    if (opts?.signal?.aborted) return Promise.resolve(fallback);
    const id = globalThis.crypto.randomUUID();
    const deadline = dialogDeadline(opts, fallback);
    return new Promise<T>((resolve) => {
      let done = false;
      const finish = (value: T) => {
        if (done) return;
        done = true;
        pending.delete(id);
        deadline.cancel();
        resolve(value);
      };
      pending.set(id, {
        answer: (r) => finish(r.cancelled ? fallback : parse(r)),
        cancel: () => finish(fallback),
      });
      void deadline.promise.then(finish);
      const timeout = opts?.timeout !== undefined && opts.timeout >= 0 ? opts.timeout : undefined;
      send({ type: "extension_ui_request", id, method, ...fields, timeout }).catch((error) => {
        deps.report({ level: "error", source: "ui", hook: `ctx.ui.${method}`, message: "could not send the dialog; using its default", error });
        finish(fallback);
      });
    });
  }

  const stringValue = (r: RpcExtensionUiResponse) => (typeof r.value === "string" ? r.value : undefined);
  let theme: unknown;

  const ui: RpcUi = {
    kind: "rpc",
    select: (title, options, opts) => dialog("select", { title, options }, opts, undefined, stringValue),
    confirm: (title, message, opts) => dialog("confirm", { title, message }, opts, false, (r) => r.confirmed === true),
    // Its own request: only an answer {escalation: "allow"} allows (a client confirming every
    // confirm, or answering every dialog with a value, does not).
    confirmEscalation: (req, opts) =>
      dialog("sandbox_escalation", { title: req.title, message: req.message, kind: req.kind, toolName: req.toolName, command: req.command, path: req.path }, opts, false, (r) => r.escalation === "allow"),
    input: (title, placeholder, opts) => dialog("input", { title, placeholder }, opts, undefined, stringValue),
    editor: (title, prefill, opts) => dialog("editor", { title, prefill }, opts, undefined, stringValue),
    notify(message, type) {
      fireAndForget("notify", { message, notifyType: type });
    },
    setStatus(key, text) {
      fireAndForget("setStatus", { statusKey: key, statusText: text });
    },
    // What has no RPC form (component widgets, footer, header, custom components, editor
    // components, themes) is a quiet no-op, as in pi 1.6.
    setWidget(key, content, opts) {
      if (typeof content === "function") return; // component widgets need a terminal UI
      fireAndForget("setWidget", { widgetKey: key, widgetLines: content, widgetPlacement: opts?.placement });
    },
    setTitle(title) {
      fireAndForget("setTitle", { title });
    },
    setEditorText(text) {
      fireAndForget("set_editor_text", { text });
    },
    // The client owns its editor: its text is not known here.
    getEditorText: () => "",
    pasteToEditor(text) {
      ui.setEditorText(text);
    },
    setWorkingMessage: () => {},
    setFooter: () => {},
    setHeader: () => {},
    async custom() {
      return undefined;
    },
    onTerminalInput: () => () => {},
    setEditorComponent: () => {},
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
    get theme() {
      theme ??= plainTheme();
      return theme;
    },
    getAllThemes() {
      return [];
    },
    getTheme() {
      return undefined;
    },
    setTheme() {
      return { success: false, error: "Theme switching not supported in RPC mode" };
    },
    handleResponse(response) {
      const p = pending.get(response.id);
      if (!p) return false;
      p.answer(response);
      return true;
    },
    cancelAll() {
      for (const p of [...pending.values()]) p.cancel();
    },
    get pendingIds() {
      return [...pending.keys()];
    },
  };
  return ui;
}
