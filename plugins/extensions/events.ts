/**
 * `pi.on(event, handler)` → one tap on `kernel.hooks[event]`, named after the extension (so a
 * throw is reported with the extension's path and the event, and a throwing `tool_call`
 * handler blocks — both done by the kernel's interceptor). There is no second dispatcher:
 * each adapter only translates payloads and return values between pi's conventions and the
 * hook's kind (core/hooks.ts):
 *
 *   bail hooks (session_before_*, tool_call, user_bash, session_directory): a result is
 *     returned only when it does something ({cancel: true}, {block: true}, …), so a handler
 *     returning `{cancel: false}` does not stop later handlers;
 *   waterfall hooks (before_agent_start, context, before_provider_request, tool_result): the
 *     handler's partial result is merged into the payload, which is passed on;
 *   input: pi's {action: "transform"} changes the payload in place, {action: "handled"}
 *     stops the chain;
 *   resources_discover: the result is pushed to the event's results;
 *   message_end: `{message}` replaces the finished message in place (same role only);
 *   everything else is an observer.
 */
import type { PluginApi } from "../../core/kernel.js";
import type { HookName } from "../../core/hooks.js";

export type PiHandler = (event: any, ctx: any) => unknown;

/** Events this host emits. */
export const EXTENSION_EVENTS: ReadonlySet<string> = new Set([
  "resources_discover",
  "session_directory",
  "session_start",
  "session_before_switch",
  "session_switch",
  "session_before_fork",
  "session_fork",
  "session_before_compact",
  "session_compact",
  "session_before_tree",
  "session_tree",
  "session_shutdown",
  "input",
  "before_agent_start",
  "agent_start",
  "agent_end",
  "agent_settled",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "context",
  "before_provider_request",
  "model_select",
  "tool_call",
  "tool_result",
  "user_bash",
  "queue_update",
  "compaction_start",
  "compaction_end",
  "auto_retry_start",
  "auto_retry_end",
]);

/** What the adapters need from the host. */
export interface EventHost {
  /** The ctx for this extension's handlers. */
  ctx(): unknown;
  /** The kind of the session replacement in progress (for session_shutdown), set by the host's own taps. */
  pendingSwitch(): { reason: string } | undefined;
  /** Extra fields of before_agent_start (systemPromptOptions). */
  systemPromptOptions(): Record<string, unknown>;
  /** Report once: an event name this host never emits. */
  unknownEvent(name: string): void;
}

type Obj = Record<string, any>;

function startReason(r: string): string {
  if (r === "clone") return "fork";
  if (r === "import") return "resume";
  return r;
}

function shutdownReason(e: Obj, pending: { reason: string } | undefined): { reason: string; targetSessionFile?: string } {
  if (e.reason === "reload") return { reason: "reload" };
  if (e.reason === "switch") {
    const p = pending?.reason ?? "new";
    const reason = p === "clone" ? "fork" : p === "import" ? "resume" : p;
    return e.targetSessionFile ? { reason, targetSessionFile: e.targetSessionFile } : { reason };
  }
  return { reason: "quit" };
}

function inputSource(s: string): string {
  return s === "rpc" || s === "extension" || s === "interactive" ? s : "interactive";
}

/** Tap `event` for one extension. Returns false for an event this host never emits. */
export function tapExtensionEvent(scope: PluginApi, host: EventHost, event: string, handler: PiHandler): boolean {
  if (typeof handler !== "function") throw new TypeError(`pi.on("${event}", handler): the handler must be a function`);
  const call = (payload: unknown) => handler(payload, host.ctx());
  const on = (name: HookName, fn: (e: any) => unknown) => scope.on(name, fn as never);

  switch (event) {
    case "session_start":
      on("session_start", async (e: Obj) => {
        await call({ type: "session_start", reason: startReason(e.reason), previousSessionFile: e.previousSessionFile });
      });
      return true;
    case "session_shutdown":
      on("session_shutdown", async (e: Obj) => {
        await call({ type: "session_shutdown", ...shutdownReason(e, host.pendingSwitch()) });
      });
      return true;
    case "session_switch":
    case "session_fork":
    case "session_compact":
    case "session_tree":
      on(event, async (e: Obj) => {
        await call(e);
      });
      return true;
    case "session_before_switch":
      on("session_before_switch", async (e: Obj) => {
        // (fork and clone go to session_before_fork)
        if (e.reason === "fork" || e.reason === "clone") return undefined;
        const r = (await call({ type: "session_before_switch", reason: e.reason === "import" ? "resume" : e.reason, targetSessionFile: e.targetSessionFile })) as Obj | undefined;
        return r?.cancel ? { cancel: true } : undefined;
      });
      return true;
    case "session_before_fork":
      on("session_before_fork", async (e: Obj) => {
        const r = (await call({ type: "session_before_fork", entryId: e.entryId, position: e.position === "at" ? "at" : "before" })) as Obj | undefined;
        return r?.cancel ? { ...r, cancel: true } : undefined;
      });
      return true;
    case "session_before_compact":
      on("session_before_compact", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        if (!r) return undefined;
        if (r.cancel) return { cancel: true };
        if (r.compaction) return { compaction: r.compaction };
        return undefined;
      });
      return true;
    case "session_before_tree":
      on("session_before_tree", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        if (!r) return undefined;
        const acts = r.cancel || r.summary || r.customInstructions !== undefined || r.replaceInstructions !== undefined || r.label !== undefined;
        return acts ? r : undefined;
      });
      return true;
    case "session_directory":
      on("session_directory", async (e: Obj) => {
        const r = (await handler(e, undefined)) as Obj | undefined;
        return typeof r?.sessionDir === "string" && r.sessionDir ? { sessionDir: r.sessionDir } : undefined;
      });
      return true;
    case "resources_discover":
      on("resources_discover", async (e: Obj) => {
        const r = (await call({ type: "resources_discover", cwd: e.cwd, reason: e.reason })) as Obj | undefined;
        if (!r) return;
        const item: Obj = { source: scope.name };
        for (const k of ["skillPaths", "promptPaths", "themePaths"]) if (Array.isArray(r[k]) && r[k].length) item[k] = r[k];
        if (Object.keys(item).length > 1) e.results.push(item);
      });
      return true;
    case "input":
      on("input", async (e: Obj) => {
        const r = (await call({ type: "input", text: e.text, images: e.images, source: inputSource(e.source) })) as Obj | undefined;
        if (!r || r.action === "continue") return undefined;
        if (r.action === "handled") return { action: "handled" };
        if (r.action === "transform") {
          if (typeof r.text === "string") e.text = r.text;
          if (r.images !== undefined) e.images = r.images;
        }
        return undefined;
      });
      return true;
    case "before_agent_start":
      on("before_agent_start", async (e: Obj) => {
        const r = (await call({
          type: "before_agent_start",
          prompt: e.prompt,
          images: e.images,
          systemPrompt: e.systemPrompt,
          systemPromptOptions: host.systemPromptOptions(),
        })) as Obj | undefined;
        if (r?.message) e.messages.push(r.message);
        if (typeof r?.systemPrompt === "string") e.systemPrompt = r.systemPrompt;
        return e;
      });
      return true;
    case "context":
      on("context", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        if (r && Array.isArray(r.messages)) e.messages = r.messages;
        return e;
      });
      return true;
    case "before_provider_request":
      on("before_provider_request", async (e: Obj) => {
        const r = await call({ type: "before_provider_request", payload: e.payload });
        if (r !== undefined) e.payload = r;
        return e;
      });
      return true;
    case "tool_call":
      on("tool_call", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        return r?.block ? { block: true, reason: typeof r.reason === "string" ? r.reason : undefined } : undefined;
      });
      return true;
    case "tool_result":
      on("tool_result", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        if (r && typeof r === "object") {
          if (r.content !== undefined) e.content = r.content;
          if (r.details !== undefined) e.details = r.details;
          if (r.isError !== undefined) e.isError = !!r.isError;
        }
        return e;
      });
      return true;
    case "user_bash":
      on("user_bash", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        if (r?.result) return { result: r.result };
        if (r?.operations) return { operations: r.operations };
        return undefined;
      });
      return true;
    case "message_end":
      on("message_end", async (e: Obj) => {
        const r = (await call(e)) as Obj | undefined;
        const next = r?.message;
        if (!next || typeof next !== "object" || next === e.message) return;
        if (next.role !== e.message?.role) throw new Error(`message_end: the replacement message must keep the role "${e.message?.role}"`);
        // Replace in place: the transcript holds this very object and saves it after the hook.
        for (const k of Object.keys(e.message)) if (!(k in next)) delete e.message[k];
        Object.assign(e.message, next);
      });
      return true;
    default:
      if (EXTENSION_EVENTS.has(event)) {
        on(event as HookName, async (e: Obj) => {
          await call(e);
        });
        return true;
      }
      host.unknownEvent(event);
      return false;
  }
}
