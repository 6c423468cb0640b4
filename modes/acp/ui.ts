/**
 * `ExtensionUI` for ACP mode: the one permission pipeline reaches the editor here.
 *
 * - The permission gate's ask (a `select(title, ["Yes", "No"])` while a tool call is being
 *   checked) becomes `session/request_permission` for that tool call with allow_once /
 *   allow_always / reject_once / reject_always. "Always" answers are remembered for the session
 *   (per call description), so the same call is not asked again; the mode "auto-approve"
 *   answers the gate's asks with yes (its deny rules still apply: they never reach the UI).
 * - An extension's confirm() is a request with allow_once / reject_once; its select() offers
 *   every option (allow_once kinds, except ones that read as a refusal).
 * - A cancelled request (session/cancel, the client answering "cancelled", the dialog's timeout
 *   or signal) resolves the dialog to its default: the gate blocks the tool.
 * - notify() goes to stderr and, while a prompt runs (a command's result), to the client as an
 *   agent_message_chunk.
 * - input()/editor() and terminal-only calls have no ACP form: they answer their default and
 *   report themselves once. setTitle() becomes a session_info_update.
 */
import { dialogDeadline, type EscalationRequest, type ExtensionUI, type UiDialogOptions, type Diagnostic } from "../../core/kernel/index.js";

export interface PermissionOptionLike {
  optionId: string;
  name: string;
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always";
}

/** The tool call the gate is checking right now (the loop checks one call at a time). */
export interface PendingToolCall {
  toolCallId: string;
  title: string;
  kind: string;
  rawInput: unknown;
  locations?: Array<{ path: string }>;
}

export interface AcpUiDeps {
  /** Sends session/request_permission; resolves with the chosen optionId, or undefined when cancelled. */
  requestPermission(toolCall: Record<string, unknown>, options: PermissionOptionLike[]): Promise<string | undefined>;
  currentToolCall(): PendingToolCall | undefined;
  sessionMode(): string;
  setTitle(title: string): void;
  /**
   * Sends the `_pi/sandbox_escalation` request (its own method, never session/request_permission,
   * so approve-all clients and the auto-approve mode do not answer it); true only when the client
   * answers {allow: true}.
   */
  escalate?(request: EscalationRequest): Promise<boolean>;
  /** Shows a notice to the user (a session update while a prompt runs, such as a command's result). */
  notice?(message: string, type: "info" | "warning" | "error"): void;
}

export interface AcpUi extends ExtensionUI {
  attach(deps: AcpUiDeps | undefined): void;
  /** Resolves every open dialog to its default (session/cancel, shutdown). */
  cancelAll(): void;
  /** Forgets the "always" answers (a new or another session). */
  resetRemembered(): void;
  readonly pendingCount: number;
}

const PERMISSION_OPTIONS: PermissionOptionLike[] = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

const REFUSAL = /^(no|cancel|reject|deny|abort|skip|stop)\b/i;

export function createAcpUi(report: (d: Diagnostic) => void): AcpUi {
  let deps: AcpUiDeps | undefined;
  const pending = new Set<() => void>();
  const always = new Map<string, "Yes" | "No">();
  const warned = new Set<string>();
  const unsupported = (method: string, detail = "ACP clients have no such dialog") => {
    if (warned.has(method)) return;
    warned.add(method);
    report({ level: "warning", source: "ui", hook: `ctx.ui.${method}`, message: `ctx.ui.${method}() has no effect in ACP mode: ${detail}` });
  };

  /** Runs one request to the client; the dialog's deadline, signal and cancelAll() answer `fallback`. */
  function ask<T>(toolCall: Record<string, unknown>, options: PermissionOptionLike[], opts: UiDialogOptions | undefined, fallback: T, map: (optionId: string) => T): Promise<T> {
    const d = deps;
    if (!d || opts?.signal?.aborted) return Promise.resolve(fallback);
    const deadline = dialogDeadline(opts, fallback);
    return new Promise<T>((resolve) => {
      let done = false;
      const finish = (v: T) => {
        if (done) return;
        done = true;
        pending.delete(cancel);
        deadline.cancel();
        resolve(v);
      };
      const cancel = () => finish(fallback);
      pending.add(cancel);
      void deadline.promise.then(finish);
      d.requestPermission(toolCall, options).then(
        (id) => finish(id === undefined ? fallback : map(id)),
        (error) => {
          report({ level: "error", source: "ui", hook: "session/request_permission", message: "the permission request failed; using its default", error });
          finish(fallback);
        },
      );
    });
  }

  function dialogToolCall(title: string, extra?: string): Record<string, unknown> {
    const current = deps?.currentToolCall();
    const body = extra ? `${title}\n${extra}` : title;
    if (current) return { toolCallId: current.toolCallId, title: current.title, kind: current.kind, rawInput: current.rawInput, content: [{ type: "content", content: { type: "text", text: body } }] };
    return { toolCallId: `dialog-${globalThis.crypto.randomUUID()}`, title: body, kind: "other", status: "pending" };
  }

  async function gateAsk(title: string, call: PendingToolCall, opts?: UiDialogOptions): Promise<string | undefined> {
    const key = `${call.title}\u0000${JSON.stringify(call.rawInput ?? null)}`;
    const remembered = always.get(key);
    if (remembered) return remembered;
    if (deps?.sessionMode() === "auto-approve") return "Yes";
    const toolCall = { toolCallId: call.toolCallId, title: call.title, kind: call.kind, rawInput: call.rawInput, locations: call.locations, content: [{ type: "content", content: { type: "text", text: title } }] };
    return ask<string | undefined>(toolCall, PERMISSION_OPTIONS, opts, undefined, (id) => {
      if (id === "allow_always") always.set(key, "Yes");
      if (id === "reject_always") always.set(key, "No");
      return id.startsWith("allow") ? "Yes" : "No";
    });
  }

  const ui: AcpUi = {
    kind: "rpc",
    attach(d) {
      deps = d;
    },
    select(title, options, opts) {
      const call = deps?.currentToolCall();
      if (call && options.length === 2 && options[0] === "Yes" && options[1] === "No") return gateAsk(title, call, opts);
      const choices: PermissionOptionLike[] = options.map((name, i) => ({ optionId: String(i), name, kind: REFUSAL.test(name) ? "reject_once" : "allow_once" }));
      return ask<string | undefined>(dialogToolCall(title), choices, opts, undefined, (id) => options[Number(id)]);
    },
    confirmEscalation(request, opts) {
      const d = deps;
      if (!d?.escalate || opts?.signal?.aborted) return Promise.resolve(false);
      const deadline = dialogDeadline(opts, false);
      return new Promise<boolean>((resolve) => {
        let done = false;
        const finish = (v: boolean) => {
          if (done) return;
          done = true;
          pending.delete(cancel);
          deadline.cancel();
          resolve(v);
        };
        const cancel = () => finish(false);
        pending.add(cancel);
        void deadline.promise.then(finish);
        d.escalate!(request).then(
          (allow) => finish(allow === true),
          () => finish(false),
        );
      });
    },
    confirm(title, message, opts) {
      const choices: PermissionOptionLike[] = [
        { optionId: "yes", name: "Yes", kind: "allow_once" },
        { optionId: "no", name: "No", kind: "reject_once" },
      ];
      return ask(dialogToolCall(title, message), choices, opts, false, (id) => id === "yes");
    },
    async input() {
      unsupported("input", "ACP has no text-input dialog; the call answers undefined");
      return undefined;
    },
    async editor() {
      unsupported("editor", "ACP has no editor dialog; the call answers undefined");
      return undefined;
    },
    notify(message, type) {
      process.stderr.write(`[${type ?? "info"}] ${message}\n`);
      deps?.notice?.(message, type ?? "info");
    },
    setStatus: () => {},
    setWidget: () => {},
    setTitle(title) {
      deps?.setTitle(title);
    },
    setEditorText: () => unsupported("setEditorText", "the editor's input box belongs to the client"),
    getEditorText: () => "",
    pasteToEditor: () => unsupported("pasteToEditor", "the editor's input box belongs to the client"),
    setWorkingMessage: () => {},
    setFooter: () => unsupported("setFooter", "it needs a terminal UI"),
    setHeader: () => unsupported("setHeader", "it needs a terminal UI"),
    async custom() {
      unsupported("custom", "custom components need a terminal UI");
      return undefined;
    },
    onTerminalInput: () => () => {},
    setEditorComponent: () => unsupported("setEditorComponent", "it needs a terminal UI"),
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
    theme: new Proxy({}, { get: (_t, p) => (p === "then" || typeof p === "symbol" ? undefined : (...a: unknown[]) => (typeof a[a.length - 1] === "string" ? a[a.length - 1] : "")) }),
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "Themes cannot be switched in ACP mode" }),
    cancelAll() {
      for (const cancel of [...pending]) cancel();
    },
    resetRemembered() {
      always.clear();
    },
    get pendingCount() {
      return pending.size;
    },
  };
  return ui;
}
