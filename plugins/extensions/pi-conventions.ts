/**
 * pi-extension conventions of the kernel's hooks: what a pi extension's handler sees for each
 * hook and how its return value maps onto the hook's result. The extension plugin applies them
 * with one generic adapter (events.ts); the kernel's hooks know nothing of them.
 */
import { turnBoundaryOf, type AgentBeforeSettleEvent, type ResourcesDiscoverResult, type SessionShutdownEvent, type HookKinds, type HookName, type HookPayload } from "../../core/kernel/index.js";

/** What a pi convention may ask of the host that adapts handlers (the extension plugin). */
export interface PiAdapterEnv {
  /** Who taps (an extension's path): results it contributes are tagged with it. */
  owner: string;
  /** The reason of the session replacement under way ("new", "resume", "fork", …), if any. */
  pendingSwitch(): string | undefined;
  /** The system prompt's parts, for before_agent_start. */
  systemPromptOptions(): Record<string, unknown>;
}

/**
 * How a pi-style handler `(event, ctx) => result` maps onto a hook:
 * - `toPi`: the event the handler sees (default: the payload itself); `undefined` = this handler
 *   is not called for this payload;
 * - `fromPi`: applies the handler's result. For a bail hook it returns the hook's result
 *   (`undefined` passes on); for a waterfall/collect hook it changes the payload. Observers
 *   cannot declare one: whatever their handlers return is ignored.
 * - `noContext`: the handler is called without a ctx.
 */
export interface PiConvention<N extends HookName> {
  toPi?(event: HookPayload<N>, env: PiAdapterEnv): object | undefined;
  fromPi?(result: any, event: HookPayload<N>, env: PiAdapterEnv): unknown;
  noContext?: boolean;
}
type ObserverHookName = { [N in HookName]: HookKinds[N] extends "observer" ? N : never }[HookName];
export type PiConventions = { [N in Exclude<HookName, ObserverHookName | "kernel_mode_select">]?: PiConvention<N> } & {
  [N in ObserverHookName]?: Omit<PiConvention<N>, "fromPi">;
};

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object";
/** pi names "clone" a fork and "import" a resume. */
const piReason = (r: string | undefined): string | undefined => (r === "clone" ? "fork" : r === "import" ? "resume" : r);
/** A bail result is returned only when it does something, so `{cancel: false}` does not stop later handlers. */
const cancelled = (r: unknown) => (isObj(r) && r.cancel ? { ...r, cancel: true } : undefined);

/** Drafts a handler returned, those with a type only. */
const drafts = (r: Obj): Array<Record<string, unknown> & { type: string }> =>
  Array.isArray(r.entries) ? r.entries.filter((x: unknown) => isObj(x) && typeof x.type === "string") : [];

/** Hooks not listed use the defaults: the handler sees the payload; an observer's result is ignored. */
export const PI_CONVENTIONS: PiConventions = {
  session_start: { toPi: (e) => ({ type: e.type, reason: piReason(e.reason), previousSessionFile: e.previousSessionFile }) },
  session_shutdown: {
    toPi: (e, env) => {
      const ev = e as SessionShutdownEvent & { targetSessionFile?: string };
      if (ev.reason === "reload") return { type: e.type, reason: "reload" };
      if (ev.reason !== "switch") return { type: e.type, reason: "quit" };
      const reason = piReason(env.pendingSwitch()) ?? "new";
      return ev.targetSessionFile ? { type: e.type, reason, targetSessionFile: ev.targetSessionFile } : { type: e.type, reason };
    },
  },
  session_before_switch: {
    // fork and clone go to session_before_fork
    toPi: (e) => (e.reason === "fork" || e.reason === "clone" ? undefined : { type: e.type, reason: piReason(e.reason), targetSessionFile: e.targetSessionFile }),
    fromPi: (r) => (isObj(r) && r.cancel ? { cancel: true } : undefined),
  },
  session_before_fork: {
    toPi: (e) => ({ type: e.type, entryId: e.entryId, position: (e as Obj).position === "at" ? "at" : "before" }),
    fromPi: cancelled,
  },
  session_before_compact: {
    fromPi: (r) => (!isObj(r) ? undefined : r.cancel ? { cancel: true } : r.compaction ? { compaction: r.compaction } : undefined),
  },
  session_before_tree: {
    fromPi: (r) =>
      isObj(r) && (r.cancel || r.summary || r.customInstructions !== undefined || r.replaceInstructions !== undefined || r.label !== undefined) ? r : undefined,
  },
  session_directory: {
    noContext: true,
    fromPi: (r) => (isObj(r) && typeof r.sessionDir === "string" && r.sessionDir ? { sessionDir: r.sessionDir } : undefined),
  },
  resources_discover: {
    toPi: (e) => ({ type: e.type, cwd: e.cwd, reason: e.reason }),
    fromPi: (r, e, env) => {
      if (!isObj(r)) return;
      const item: Obj = { source: env.owner };
      for (const k of ["skillPaths", "promptPaths", "themePaths"]) if (Array.isArray(r[k]) && r[k].length) item[k] = r[k];
      if (Object.keys(item).length > 1) e.results.push(item as ResourcesDiscoverResult & { source: string });
    },
  },
  input: {
    toPi: (e) => ({
      type: e.type,
      text: e.text,
      images: e.images,
      source: e.source === "rpc" || e.source === "extension" || e.source === "interactive" ? e.source : "interactive",
      ...((e as Obj).streamingBehavior ? { streamingBehavior: (e as Obj).streamingBehavior } : {}),
    }),
    fromPi: (r, e) => {
      if (!isObj(r) || r.action === "continue") return undefined;
      if (r.action === "handled") return { action: "handled" };
      if (r.action === "transform") {
        if (typeof r.text === "string") e.text = r.text;
        if (r.images !== undefined) e.images = r.images;
      }
      return undefined;
    },
  },
  before_agent_start: {
    toPi: (e, env) => ({
      type: e.type,
      messageType: (e as Obj).messageType ?? "user",
      ...((e as Obj).messageType === "custom" ? { message: (e as Obj).message } : { prompt: e.prompt, images: e.images }),
      systemPrompt: e.systemPrompt,
      systemPromptOptions: { ...env.systemPromptOptions(), sections: (e.sections ??= {}) },
    }),
    fromPi: (r, e) => {
      if (!isObj(r)) return;
      if (r.message) e.messages.push(r.message);
      if (typeof r.systemPrompt === "string") e.systemPrompt = r.systemPrompt;
    },
  },
  context: { fromPi: (r, e) => void (isObj(r) && Array.isArray(r.messages) && (e.messages = r.messages)) },
  context_with_system: { fromPi: (r, e) => void (isObj(r) && Array.isArray(r.messages) && (e.messages = r.messages)) },
  before_provider_request: {
    toPi: (e) => ({ type: e.type, payload: e.payload }),
    fromPi: (r, e) => void (r !== undefined && (e.payload = r)),
  },
  // headers are changed in place by the handler; its return value is ignored
  before_provider_headers: { toPi: (e) => ({ type: e.type, headers: e.headers }) },
  after_provider_response: { toPi: (e) => ({ type: e.type, status: e.status, headers: e.headers }) },
  tool_call: {
    fromPi: (r) => (isObj(r) && r.block ? { block: true, reason: typeof r.reason === "string" ? r.reason : undefined, ...(r.terminate === true ? { terminate: true } : {}) } : undefined),
  },
  tool_result: {
    fromPi: (r, e) => {
      if (!isObj(r)) return;
      if (r.content !== undefined) {
        e.content = r.content;
        // replacing the content alone drops the machine-readable copy (pi 1.6)
        if (r.structuredContent === undefined) delete e.structuredContent;
      }
      if (r.structuredContent !== undefined) e.structuredContent = r.structuredContent;
      if (r.details !== undefined) e.details = r.details;
      if (r.isError !== undefined) e.isError = !!r.isError;
      if (r.usage !== undefined) e.usage = r.usage;
    },
  },
  user_bash: {
    fromPi: (r) => (isObj(r) && r.result ? { result: r.result } : isObj(r) && r.operations ? { operations: r.operations } : undefined),
  },
  message_end: {
    fromPi: (r, e) => {
      const next = isObj(r) ? r.message : undefined;
      const cur = e.message as Obj;
      if (!isObj(next) || next === cur) return;
      if (next.role !== cur?.role) throw new Error(`message_end: the replacement message must keep the role "${cur?.role}"`);
      // Replace in place: the transcript holds this very object and saves it after the hook.
      for (const k of Object.keys(cur)) if (!(k in next)) delete cur[k];
      Object.assign(cur, next);
    },
  },
  turn_end: {
    toPi: (e) => {
      const b = turnBoundaryOf(e);
      if (!b) return e;
      return {
        ...e,
        entries: [...b.entries],
        continue: b.continue,
        context: b.context(),
        outcome: b.outcome,
        messageEntryId: b.messageEntryId,
        toolResultEntryIds: [...b.toolResultEntryIds],
      };
    },
    fromPi: (r, e) => {
      const b = turnBoundaryOf(e);
      if (!b || !isObj(r)) return;
      b.entries.push(...drafts(r));
      if (r.continue === true) b.continue = true;
    },
  },
  agent_before_settle: {
    toPi: (e) => ({ type: e.type, outcome: e.outcome, entries: [...e.entries], continue: e.continue }),
    fromPi: (r, e) => {
      if (!isObj(r)) return;
      if (Array.isArray(r.entries)) e.entries.push(...(r.entries.filter((x: unknown) => isObj(x) && typeof x.type === "string") as AgentBeforeSettleEvent["entries"]));
      if (r.continue === true) e.continue = true;
    },
  },
  project_trust: {
    fromPi: (r) => (isObj(r) && (r.trusted === "yes" || r.trusted === "no") ? { trusted: r.trusted, remember: !!r.remember } : undefined),
  },
  cache_warming_decision: { fromPi: (r) => (isObj(r) ? r : undefined) },
};

