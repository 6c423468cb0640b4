/**
 * checkpoints: the project's files follow the session tree. Before each prompt and around each
 * call of a tool that may change files (write, edit, bash, `!` commands, MCP and extension tools
 * not declared read-only), the project is captured into a shadow git repository outside it
 * (store.ts) and recorded as a `custom` entry of the session (points.ts). `/rewind` lists the
 * points of the current branch and restores code, conversation or both (rewind.ts).
 *
 * Settings: checkpoints.{enabled (default true), maxFileSizeBytes, maxCount, maxAgeDays, maxFiles}.
 * A store that cannot be written, or a missing git, gives one warning and the turn goes on.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { definePlugin } from "../../core/kernel/index.js";
import { createCheckpointsService, type CheckpointsService, type SessionLike } from "./service.js";
import { runRewind } from "./rewind.js";
import { notAProject } from "./store.js";
import type { CheckpointData, CheckpointPhase } from "./points.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    /** Checkpoints of the project's files along the session tree (the checkpoints plugin). */
    checkpoints: CheckpointsService;
  }
}

/** Built-in tools that never change files. */
const READ_ONLY_TOOLS = new Set(["read", "grep", "find", "ls", "glob", "web_search", "web_fetch", "mcp_search"]);

/** How long leaving a session waits for its captures (the first one of a big project takes long; exit ends what is left). */
const SHUTDOWN_WAIT_MS = 3000;

function within(ms: number, work: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise((r) => (timer = setTimeout(r, ms)));
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

export default definePlugin({
  name: "checkpoints",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Captures the project's files around the agent's changes and restores them along the session tree (/rewind)",
  setup(api) {
    let warned = false;
    const warn = (message: string) => {
      if (warned) return;
      warned = true;
      api.report("warning", message);
      api.kernel.service("ui")?.notify?.(`checkpoints: ${message}`, "warning");
    };
    // Extensions hear about restores on their shared bus (pi.events), and may refuse one there.
    const emit = (channel: string, data: unknown) => api.kernel.service("extensions")?.bus.emit(channel, data);
    const service = createCheckpointsService(api.kernel, warn, emit);
    api.provide("checkpoints", service);

    const currentSession = (): SessionLike | undefined => {
      try {
        return api.kernel.bound("checkpoints").session as unknown as SessionLike | undefined;
      } catch {
        return undefined;
      }
    };
    /** The project files a write or edit call names (relative); undefined: any file may change. */
    const targetsOf = (session: SessionLike, toolName: string, input: Record<string, unknown>): string[] | undefined => {
      if (toolName !== "write" && toolName !== "edit") return undefined;
      const raw = typeof input.path === "string" ? input.path.replace(/^@/, "") : undefined;
      if (!raw || raw.startsWith("~")) return undefined;
      const rel = relative(session.cwd, resolve(session.cwd, raw));
      return rel.startsWith("..") || isAbsolute(rel) ? [] : [rel];
    };
    const failed = new Set<string>(); // project folders whose capture failed: not retried in this process
    const failure = (session: SessionLike) => (e: Error) => {
      failed.add(session.cwd);
      warn(`the project's files were not captured (${e.message}); the agent goes on without checkpoints`);
    };
    /** `later`: do not wait for it (a tool call's after-state, taken while the model answers). */
    const capture = async (phase: CheckpointPhase, extra?: Partial<CheckpointData>, input?: Record<string, unknown>, later = false, session = currentSession()) => {
      if (!service.settings().enabled) return;
      if (!session || failed.has(session.cwd) || notAProject(session.cwd)) return;
      const only = input && extra?.tool ? targetsOf(session, extra.tool, input) : undefined;
      if (only && only.length === 0) return; // a file outside the project
      if (later) return service.captureLater(session, phase, extra, only, failure(session));
      try {
        await service.capture(session, phase, extra, only);
      } catch (e) {
        failure(session)(e as Error);
      }
    };
    const mutating = (name: string): boolean => {
      if (READ_ONLY_TOOLS.has(name)) return false;
      const tool = api.kernel.tools.get(name) as { readOnly?: boolean; annotations?: { readOnlyHint?: boolean } } | undefined;
      return !(tool?.readOnly === true || tool?.annotations?.readOnlyHint === true);
    };

    // The capture before a tool call starts as soon as the model starts writing one (it streams
    // its arguments meanwhile); a call waits for it, and takes it as its before-state, when no
    // tool ran since (the calls of one message are all checked before any of them runs).
    let fresh = false;
    // A tool call's after-capture starts once the next message other than a tool result starts
    // (the model's answer: its request is on the wire by then), or before anything else that captures or reads the
    // captures (a tool call, a `!` command, the run settling, leaving the session): the git
    // children it spawns do not compete with building the request after a tool result.
    const afters: Array<() => void> = [];
    const startAfters = () => {
      for (const start of afters.splice(0)) start();
    };
    api.on("message_start", (event) => {
      const role = (event.message as { role?: string }).role;
      if (role !== "toolResult") startAfters(); // a tool result's message follows its call at once
      if (role === "assistant") fresh = false;
    });
    api.on("message_update", (event) => {
      const ame = (event as { assistantMessageEvent?: { type?: string; contentIndex?: number; partial?: { content?: Array<{ name?: string }> } } }).assistantMessageEvent;
      if (ame?.type !== "toolcall_start" || fresh) return;
      const name = ame.partial?.content?.[ame.contentIndex ?? -1]?.name;
      if (name && !mutating(name)) return; // a read-only call needs no capture
      fresh = true;
      void capture("before", undefined, undefined, true);
    });
    api.on("message_end", async (event) => {
      const role = (event.message as { role?: string }).role;
      if (role !== "toolResult") startAfters();
      // A tool call's after-capture, running while the model answered, lands before the next
      // message of the session (a tool result is stored right after its call: not waited for).
      if (role !== "toolResult") await service.settle();
      // Before a prompt: the state the prompt starts from (recorded only when it changed).
      if (role === "user") await capture("before");
      else if (role === "bashExecution") await capture("after", { tool: "!" });
      return undefined;
    });
    // Late in the chain, so a call another tap blocks costs nothing.
    api.on(
      "tool_call",
      async (event) => {
        startAfters();
        if (!mutating(event.toolName)) return undefined;
        if (fresh) await service.settle();
        else await capture("before", { tool: event.toolName, toolCallId: event.toolCallId }, event.input);
        return undefined;
      },
      { stage: 100 },
    );
    api.on("tool_result", async (event) => {
      fresh = false;
      if (mutating(event.toolName)) {
        const session = currentSession();
        const extra = { tool: event.toolName, toolCallId: event.toolCallId };
        afters.push(() => void capture("after", extra, event.input, true, session));
      }
      return undefined;
    });
    const refsFailed = (e: Error) => warn(`the checkpoint refs were not written (${e.message})`);
    // The run's captures are in the session when it settles; the refs are written off its path.
    api.on("agent_settled", async () => {
      startAfters();
      await service.settle();
      service.flushLater(refsFailed);
    });
    // The first capture of a big project takes seconds: start it with the session, not with its
    // first prompt — as background work, which the mode may hold a moment (RPC: until its client's
    // first commands are answered).
    api.on("session_start", () => {
      const session = currentSession();
      if (!service.settings().enabled || !session || notAProject(session.cwd)) return;
      const start = api.kernel.service("background-work") ?? ((work: () => void) => work());
      start(() => void service.warm(session.cwd).catch(() => undefined)); // a failure is reported by the first real capture
    });
    // Leaving the session: its captures finish and the refs are written (at process exit, git
    // children still running are ended: git-children.ts).
    api.on("session_shutdown", async () => {
      startAfters();
      await within(SHUTDOWN_WAIT_MS, service.settle().then(() => service.flush().catch(refsFailed)));
    });
    api.on("user_bash", async () => {
      startAfters();
      fresh = false;
      await capture("before", { tool: "!" });
      return undefined;
    });

    api.registerCommand({
      name: "rewind",
      description: "Go back to an earlier point of this branch: restore code and conversation, code only or conversation only",
      source: "plugin",
      async handler(args, ctx) {
        const session = (ctx?.session as SessionLike | undefined) ?? currentSession();
        if (!session) throw new Error("/rewind needs a live session");
        startAfters();
        await runRewind(service, session, args, ctx?.ui ?? api.kernel.service("ui"), Boolean(ctx?.hasUI));
      },
    });
  },
});
