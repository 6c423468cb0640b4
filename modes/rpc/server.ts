/**
 * RPC mode (`pi --mode rpc`, protocol.md §5): commands arrive as JSON lines on stdin;
 * responses, events and extension UI requests leave as JSON lines on stdout.
 *
 * - Output goes only through the stdout guard, one record at a time; event writes are awaited
 *   by the session's emit, so a slow reader slows the agent instead of growing memory. stdin
 *   keeps being read meanwhile, so `abort` still takes effect while output is blocked.
 * - Each input line is handled on its own: nothing waits behind a running command.
 * - The session runtime can replace the session (new, switch, fork, clone): events are
 *   re-subscribed through runtime.onRebind, and every handler looks up `runtime.session` anew.
 * - Kernel diagnostics (extension and plugin errors, unsupported UI calls) go out as
 *   `extension_error` records.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { ModeContext, SlashCommand, AgentSessionEvent } from "../../core/kernel/index.js";
import { attachJsonlReader, parseJsonLine, toWireEvent, writeProtocolNotices, messagesRecord } from "../../core/stores/index.js";

/** Default limit of one RPC input line, in characters (setting `rpc.maxLineLength`). */
export const DEFAULT_MAX_RPC_LINE = 64 * 1024 * 1024;
/** Quiet time after the last command before the provider module is preloaded. */
const WARM_UP_IDLE_MS = 500;
import { messageText, type AgentSession, type Disposition, type AgentSessionRuntime } from "../../core/engine/index.js";
import type { RpcCommand, RpcCommandMap, RpcCommandType } from "./commands.js";
import { validateInput } from "./validate.js";
import { openRpcOutput } from "./output.js";

type Id = string | number | undefined;
/** A handler returns the response data (undefined: a response without data), or NO_RESPONSE when it answered itself. */
type Handler<K extends RpcCommandType> = (cmd: RpcCommandMap[K], id: Id) => Promise<unknown> | unknown;
const NO_RESPONSE = Symbol("no response");

class CommandError extends Error {}

export async function runRpc(ctx: ModeContext): Promise<number> {
  const { kernel } = ctx;
  const runtime = ctx.runtime as AgentSessionRuntime;
  const session = (): AgentSession => runtime.session;
  const out = openRpcOutput(kernel);
  const { write, ui } = out;
  const stderr = (s: string) => process.stderr.write(s.endsWith("\n") ? s : s + "\n");

  // Once the client has had an answer and sent nothing for WARM_UP_IDLE_MS, load the model's
  // provider module, off the first prompt's path, and start the background work plugins asked
  // for ("background-work": a project's first checkpoint capture, whose git children block the
  // loop while they are spawned). Not at once after the first answer: the commands a client
  // sends at start (get_messages of a long session, get_commands) would wait behind ~1 MB of
  // module compilation, or be written in stalls. A command arriving meanwhile re-arms the wait;
  // a prompt starts the background work at once (its first tool call may need the capture).
  let warmed = false;
  let warmTimer: NodeJS.Timeout | undefined;
  const warmUp = () => {
    if (warmed) return;
    if (warmTimer) clearTimeout(warmTimer);
    warmTimer = setTimeout(() => {
      warmTimer = undefined;
      if (inflight > 0) return warmUp();
      warmed = true;
      session().warmUp();
      out.startBackgroundWork();
    }, WARM_UP_IDLE_MS);
    warmTimer.unref();
  };
  const holdWarmUp = () => {
    if (warmTimer) clearTimeout(warmTimer);
    warmTimer = undefined;
  };
  const success = (id: Id, command: string, data?: unknown) => {
    const done = write(data === undefined ? { id, type: "response", command, success: true } : { id, type: "response", command, success: true, data });
    warmUp();
    return done;
  };
  const failure = (id: Id, command: string, error: string) => write({ id, type: "response", command, success: false, error });

  // ctx.shutdown() is honoured once the agent is settled (after the current command when idle).
  let inflight = 0;
  out.onShutdownRequest = () => maybeShutdown();

  // ---- events ----
  let unsubscribe = () => {};
  const subscribe = () => {
    unsubscribe();
    unsubscribe = session().agent.subscribe((event: AgentSessionEvent) => {
      if (out.shutdownRequested && (event.type === "agent_settled" || event.type === "compaction_end")) setImmediate(maybeShutdown);
      return write(toWireEvent(event));
    });
  };
  const unRebind = runtime.onRebind(subscribe);
  subscribe();
  const unNotices = writeProtocolNotices(kernel.hooks, write); // (thinking_level_changed, session_info_changed)

  // ---- ending ----
  let resolveRun!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveRun = r));
  let finishing: Promise<void> | undefined;
  const inflightCommands = new Set<Promise<unknown>>();
  let detachInput = () => {};

  const finish = (code: number): Promise<void> => {
    if (finishing) return finishing;
    finishing = (async () => {
      detachInput();
      process.stdin.pause();
      ui.cancelAll();
      try {
        session().abortBash();
        await session().abort();
        // Commands still running (a bash, a switch) end quickly now; wait so their answers go out.
        await Promise.race([Promise.allSettled([...inflightCommands]), delay(5000)]);
        ui.cancelAll();
        await runtime.dispose();
      } catch (e) {
        stderr(`${kernel.app.name}: error while closing the session: ${(e as Error).message}`);
      }
      unsubscribe();
      unRebind();
      unNotices();
      await out.close();
      resolveRun(code);
    })();
    return finishing;
  };

  function maybeShutdown(): void {
    if (!out.shutdownRequested || finishing) return;
    if (inflight > 0 || session().isStreaming || session().isCompacting) return;
    void finish(0);
  }

  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    const code = sig === "SIGHUP" ? 129 : sig === "SIGINT" ? 130 : 143;
    if (signalled) process.exit(code);
    signalled = true;
    void finish(code);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  process.on("SIGINT", onSignal); // Ctrl-C ends the tool process groups too

  // ---- commands ----
  const registry = () => kernel.service("model-registry");

  /**
   * Starts session.prompt() and resolves once the one response is written: at acceptance (with
   * the disposition, before agent_start) or, on a preflight failure, as an error. A failure
   * after acceptance shows only in the events (plus a diagnostic if the run itself threw).
   */
  function startPrompt(
    command: "prompt" | "steer" | "follow_up",
    id: Id,
    message: string,
    opts: { images?: RpcCommandMap["prompt"]["images"]; streamingBehavior?: "steer" | "followUp" },
  ): Promise<typeof NO_RESPONSE> {
    let accepted = false;
    out.startBackgroundWork();
    return new Promise((resolveAnswered) => {
      session()
        .prompt(message, {
          images: opts.images,
          streamingBehavior: opts.streamingBehavior,
          source: "rpc",
          onAccepted: async (disposition: Disposition) => {
            accepted = true;
            await success(id, command, { disposition });
            resolveAnswered(NO_RESPONSE);
          },
        })
        .then(
          () => resolveAnswered(NO_RESPONSE),
          async (e: unknown) => {
            if (!accepted) await failure(id, command, e instanceof Error ? e.message : String(e));
            else kernel.diagnostics.report({ level: "error", source: "rpc", hook: command, message: "the run failed", error: e });
            resolveAnswered(NO_RESPONSE);
          },
        );
    });
  }

  /** steer / follow_up: queued while streaming; when idle the message starts a run (answered at acceptance). */
  async function queueOrStart(kind: "steer" | "follow_up", cmd: { message: string; images?: RpcCommandMap["steer"]["images"] }, id: Id): Promise<unknown> {
    const name = cmd.message.startsWith("/") ? cmd.message.slice(1).split(/\s/, 1)[0]! : undefined;
    if (name && kernel.commands.get(name)?.source === "extension") {
      throw new CommandError(`Extension commands cannot be queued; send "/${name}" as a prompt`);
    }
    const s = session();
    if (s.isStreaming) return { disposition: await (kind === "steer" ? s.steer(cmd.message, cmd.images) : s.followUp(cmd.message, cmd.images)) };
    return startPrompt(kind, id, cmd.message, { images: cmd.images, streamingBehavior: kind === "steer" ? "steer" : "followUp" });
  }

  const handlers: { [K in RpcCommandType]: Handler<K> } = {
    prompt: (cmd, id) => startPrompt("prompt", id, cmd.message, { images: cmd.images, streamingBehavior: cmd.streamingBehavior }),
    steer: (cmd, id) => queueOrStart("steer", cmd, id),
    follow_up: (cmd, id) => queueOrStart("follow_up", cmd, id),
    // Answered once the session is idle: the aborted run's agent_settled comes first. An abort
    // ends the run, not the queue: messages still queued (a client that wants them back sends
    // clear_queue first) run next, after the response.
    abort: async () => {
      ui.cancelAll();
      await session().abort();
      await session().waitForSettled();
      const s = session();
      setImmediate(() => s.resumeQueue());
    },
    clear_queue: () => session().clearQueue(),
    get_queue: () => session().getQueue(),
    new_session: (cmd) => runtime.newSession({ parentSession: cmd.parentSession }),
    get_state: () => {
      const s = session();
      return {
        model: s.model,
        thinkingLevel: s.thinkingLevel,
        isStreaming: s.isStreaming,
        isCompacting: s.isCompacting,
        steeringMode: s.steeringMode,
        followUpMode: s.followUpMode,
        sessionFile: s.sessionFile,
        sessionId: s.sessionId,
        sessionName: s.sessionName,
        autoCompactionEnabled: s.autoCompactionEnabled,
        messageCount: s.messages.length,
        pendingMessageCount: s.pendingMessageCount,
      };
    },
    get_messages: (_cmd, id) => {
      // Written as bytes: messages loaded from the session file are copied from its
      // bytes instead of being serialised again (core/stores/session/raw-json.ts); the record is the
      // same one JSON line success() would write.
      const s = session();
      const store = s.sessionManager;
      const head = JSON.stringify({ id, type: "response", command: "get_messages", success: true, data: { messages: [] } }).slice(0, -"]}}".length);
      const record = store.messagesRecord
        ? store.messagesRecord(head, s.messages, "]}}\n")
        : messagesRecord(head, s.messages, store.rawMessageJson ? (m: object) => store.rawMessageJson!(m) : () => undefined, "]}}\n");
      void out.guard.write(record);
      warmUp();
      return NO_RESPONSE;
    },
    get_entries: (cmd) => {
      const entries = runtime.sessionManager.getEntries() as Array<{ id: string }>;
      const leafId = runtime.sessionManager.getLeafId();
      if (cmd.since === undefined) return { entries, leafId };
      const at = entries.findIndex((e) => e.id === cmd.since);
      if (at < 0) throw new CommandError(`no entry with id "${cmd.since}" in this session`);
      return { entries: entries.slice(at + 1), leafId };
    },
    get_tree: () => ({ tree: runtime.sessionManager.getTree(), leafId: runtime.sessionManager.getLeafId() }),
    set_model: async (cmd) => {
      const reg = registry();
      if (!reg) throw new CommandError("no model registry is installed");
      const model = reg.find(cmd.provider, cmd.modelId);
      if (!model) throw new CommandError(`Model not found: ${cmd.provider}/${cmd.modelId}`);
      if (!reg.isKeyless(model.provider) && !(await reg.hasConfiguredAuth(model))) {
        throw new CommandError(`No API key for provider "${model.provider}" (model ${model.id}); add one to auth.json or set its environment variable`);
      }
      await session().setModel(model);
      return model;
    },
    cycle_model: async () => (await session().cycleModel()) ?? null,
    get_available_models: async () => ({ models: await session().models.getAvailable() }),
    set_thinking_level: (cmd) => {
      session().setThinkingLevel(cmd.level); // clamped to the model's levels, as pi 1.6
    },
    cycle_thinking_level: () => {
      const level = session().cycleThinkingLevel();
      return level ? { level } : null;
    },
    get_available_thinking_levels: () => ({ levels: session().getAvailableThinkingLevels() }),
    set_steering_mode: (cmd) => {
      session().steeringMode = cmd.mode;
      kernel.settings.update({ steeringMode: cmd.mode });
    },
    set_follow_up_mode: (cmd) => {
      session().followUpMode = cmd.mode;
      kernel.settings.update({ followUpMode: cmd.mode });
    },
    compact: async (cmd) => {
      const s = session() as AgentSession & { compact?: (instructions?: string) => Promise<unknown> };
      if (typeof s.compact !== "function") throw new CommandError("compact is not available yet: no installed plugin provides compaction");
      return s.compact(cmd.customInstructions);
    },
    set_auto_compaction: (cmd) => {
      session().autoCompactionEnabled = cmd.enabled;
      kernel.settings.update({ compaction: { enabled: cmd.enabled } });
    },
    set_auto_retry: (cmd) => {
      session().autoRetryEnabled = cmd.enabled;
      kernel.settings.update({ retry: { enabled: cmd.enabled } });
    },
    abort_retry: () => {
      session().abortRetry();
    },
    bash: (cmd, id) =>
      session().executeBash(cmd.command, {
        excludeFromContext: cmd.excludeFromContext,
        // (pi 1.6 streams the output as bash_execution_update, with the command's id)
        onData: (delta) => void write(id === undefined ? { type: "bash_execution_update", delta } : { type: "bash_execution_update", id, delta }),
      }),
    abort_bash: () => {
      session().abortBash();
    },
    get_session_stats: () => {
      const s = session();
      const stats: Record<string, unknown> = { ...s.getSessionStats() };
      if (s.model?.contextWindow) stats.contextUsage = s.getContextUsage();
      return stats;
    },
    export_html: async (cmd) => {
      const exporter = kernel.service("export-html");
      if (!exporter) throw new CommandError('export_html is not available yet: no installed plugin provides "export-html"');
      const file = session().sessionFile;
      if (!file || !existsSync(file)) throw new CommandError("nothing to export: this session has not been saved yet");
      const path = await exporter(file, cmd.outputPath ? resolve(kernel.cwd, cmd.outputPath) : undefined);
      return { path };
    },
    switch_session: (cmd) => runtime.switchSession(cmd.sessionPath),
    fork: async (cmd) => {
      // The text is returned even when an extension cancels the fork (as the reference does).
      const entry = runtime.sessionManager.getEntry(cmd.entryId);
      const text = entry?.type === "message" && entry.message.role === "user" ? messageText(entry.message) : "";
      // restoreFiles: the files the prompt started from come back too (checkpoints), into the new session.
      const plan = cmd.restoreFiles ? await checkpoints().planEntry(session() as never, cmd.entryId) : undefined;
      const r = await runtime.fork(cmd.entryId);
      if (r.cancelled || !cmd.restoreFiles) return { text: r.selectedText ?? text, cancelled: r.cancelled };
      const files = plan ? await checkpoints().restore(session() as never, plan, "code", { overwriteExternal: cmd.overwriteExternal }) : { restored: [], kept: [] };
      return { text: r.selectedText ?? text, cancelled: false, files: { restored: files.restored, kept: files.kept } };
    },
    clone: () => runtime.clone(),
    get_fork_messages: () => {
      const branch = runtime.sessionManager.getBranch() as Array<{ id: string; type: string; message?: { role: string } }>;
      const messages = branch
        .filter((e) => e.type === "message" && e.message?.role === "user")
        .map((e) => ({ entryId: e.id, text: messageText(e.message as never) }));
      return { messages };
    },
    get_last_assistant_text: () => ({ text: session().getLastAssistantText() }),
    set_session_name: (cmd) => {
      session().setSessionName(cmd.name);
    },
    get_commands: () => {
      const commands: Array<Record<string, unknown>> = [];
      for (const entry of kernel.commands.list()) {
        const c: SlashCommand = entry.value;
        const source = c.source ?? "plugin";
        if (source === "builtin") continue;
        const path = c.path ?? (source === "extension" ? entry.source : undefined);
        // pi 1.6's built-in extensions (`builtin:<name>`, e.g. /llama) carry no file path of their own.
        const builtinExt = path?.startsWith("builtin:");
        commands.push(dropUndefined({ name: entry.name, description: c.description, source, location: c.location, path: builtinExt ? undefined : path, sourceInfo: sourceInfoOf(entry.source, source, c.location, path) }));
      }
      return { commands };
    },
    get_checkpoints: () => ({ points: checkpoints().list(session() as never) }),
    get_checkpoint_diff: async (cmd) => {
      const plan = await checkpoints().plan(session() as never, cmd.point);
      return { changes: plan.changes, external: plan.external };
    },
    restore_checkpoint: async (cmd) => {
      const s = session() as never;
      const svc = checkpoints();
      return svc.restore(s, await svc.plan(s, cmd.point), cmd.mode ?? "both", { overwriteExternal: cmd.overwriteExternal });
    },
  };
  function checkpoints() {
    const svc = kernel.service("checkpoints");
    if (!svc) throw new CommandError("checkpoints are not installed (the checkpoints plugin is not loaded)");
    return svc;
  }

  /**
   * Runs one command. A handler that answers synchronously has its response queued at once, so
   * quick commands are answered in the order they arrived; async ones answer when they finish.
   */
  function runCommand(command: RpcCommand): Promise<void> | undefined {
    const id = command.id;
    const type = command.type;
    const answer = (result: unknown) => (result === NO_RESPONSE ? undefined : success(id, type, result));
    const fail = (e: unknown) => failure(id, type, e instanceof Error ? e.message : String(e));
    let result: unknown;
    try {
      // prompt (and an idle steer/follow_up) writes its own response at acceptance.
      result = (handlers[type] as Handler<typeof type>)(command as never, id);
    } catch (e) {
      void fail(e);
      return undefined;
    }
    if (!(result instanceof Promise)) {
      void answer(result);
      return undefined;
    }
    inflight++;
    return result.then(answer, fail).finally(() => {
      inflight--;
      if (out.shutdownRequested) maybeShutdown();
    });
  }

  const onLine = (line: string) => {
    if (finishing) return;
    holdWarmUp();
    const parsed = parseJsonLine(line);
    if (!parsed.ok) {
      void write({ type: "response", command: "parse", success: false, error: `Failed to parse command: ${parsed.error}` });
      return;
    }
    const v = validateInput(parsed.value);
    if (!v.ok) {
      void failure(v.id, v.command, v.error);
      return;
    }
    if (v.kind === "ui_response") {
      ui.handleResponse(v.response);
      return;
    }
    const p = runCommand(v.command);
    if (p) {
      inflightCommands.add(p);
      void p.finally(() => inflightCommands.delete(p));
    }
  };

  // An input line over the limit is dropped as it arrives and answered with an error.
  const maxLine = Number((kernel.settings.get().rpc as { maxLineLength?: unknown } | undefined)?.maxLineLength);
  const maxLineLength = Number.isFinite(maxLine) && maxLine > 0 ? maxLine : DEFAULT_MAX_RPC_LINE;
  detachInput = attachJsonlReader(
    process.stdin,
    onLine,
    (error) => {
      if (error) stderr(`${kernel.app.name}: stdin failed: ${error.message}`);
      void finish(0);
    },
    {
      maxLineLength,
      onOversized: (length) =>
        void write({
          type: "response",
          command: "parse",
          success: false,
          error: `Input line too long: ${length} characters, the limit is ${maxLineLength} (setting rpc.maxLineLength); the line was ignored`,
        }),
    },
  );

  // ctx.shutdown() may have come during start-up (a session_start handler).
  if (out.shutdownRequested) queueMicrotask(maybeShutdown);

  const code = await done;
  process.off("SIGTERM", onSignal);
  process.off("SIGHUP", onSignal);
  process.off("SIGINT", onSignal);
  // Whatever still holds the event loop (a provider's keep-alive socket, a stray timer) must not keep a finished server alive.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/**
 * pi 1.6's sourceInfo of a command: a file-based resource is `local` with its scope (user,
 * project; a path given on the command line is `temporary`); a plugin's command is
 * `builtin:<plugin>`.
 */
function sourceInfoOf(owner: string, source: string, location: string | undefined, path: string | undefined) {
  if (!path || source === "plugin") return { path: `builtin:${owner}`, source: "builtin", scope: "temporary", origin: "top-level" };
  if (path.startsWith("builtin:")) return { path, source: "builtin", scope: "temporary", origin: "top-level" };
  const scope = location === "user" || location === "project" ? location : "temporary";
  return { path, source: "local", scope, origin: /[\\/]node_modules[\\/]/.test(path) ? "package" : "top-level" };
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
