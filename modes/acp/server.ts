/**
 * ACP agent mode, the input side: the official SDK's AgentSideConnection over stdin/stdout
 * (`ndJsonStream`: invalid JSON answers -32700 and the agent keeps serving, unknown methods
 * -32601, malformed params -32602), with our session runtime behind it. See docs/acp.md.
 *
 * One process serves one folder (its cwd) and holds one live session at a time (the runtime's):
 * session/new, session/load and session/resume switch the runtime; a prompt for another known
 * session switches to it when idle. Output goes only through the stdout guard.
 *
 * The SDK is imported here, so it loads only when this mode runs.
 */
import { realpathSync } from "node:fs";
import { isAbsolute } from "node:path";
import { attachJsonlReader } from "../../core/stores/index.js";
import { DEFAULT_MAX_INPUT_LINE, type ModeContext, type SlashCommand, type AgentSessionEvent, type AnyModel, type AssistantMessage, type ImageContent, type ThinkingLevel } from "../../core/kernel/index.js";
import type * as Acp from "@agentclientprotocol/sdk";
import type { AgentSession, AgentSessionRuntime } from "../../core/engine/index.js";
import { openAcpOutput } from "./output.js";
import { AcpSessions } from "./sessions.js";
import { LiveUpdates, replayUpdates, type Update } from "./updates.js";
import { promptToMessage } from "./prompt.js";
import { useClientTools } from "./client-tools.js";
import { ClientMcpServers } from "./mcp.js";

/** Our session modes (session/set_mode). */
export const SESSION_MODES = [
  { id: "default", name: "Default", description: "Asks before tool calls the permission gate flags (dangerous bash, ask rules)" },
  { id: "auto-approve", name: "Auto-approve", description: "Answers the permission gate's questions with yes; deny rules still block" },
  { id: "read-only", name: "Read only", description: "Only the active tools that change nothing (read, grep, find, ls)" },
] as const;
const READ_ONLY_TOOLS = new Set(["read", "grep", "find", "ls"]);
const AUTH_METHOD_ID = "provider-api-key";

interface Turn {
  cancelled: boolean;
}

export async function runAcp(ctx: ModeContext): Promise<number> {
  const { kernel } = ctx;
  const runtime = ctx.runtime as AgentSessionRuntime;
  const session = (): AgentSession => runtime.session;
  const out = openAcpOutput(kernel);
  const acp = await import("@agentclientprotocol/sdk");
  const { RequestError } = acp;
  const stderr = (s: string) => process.stderr.write(s.endsWith("\n") ? s : s + "\n");
  const registry = () => kernel.service("model-registry");

  // Lines in: the SDK's ndJsonStream (answers -32700 itself). Messages out: one record at a time
  // through the stdout guard, with the SDK's schema errors (-32602 "Invalid params" + a zod tree)
  // given a message that names the fields.
  const decoder = new TextDecoder();
  const rawOutput = new WritableStream<Uint8Array>({ write: (chunk) => out.guard.write(decoder.decode(chunk, { stream: true })) });
  // Input lines are cut at `acp.maxLineLength` characters before the SDK buffers them: a longer
  // line is dropped as it arrives (memory stays bounded) and answered with a JSON-RPC error.
  const maxLine = Number((kernel.settings.get().acp as { maxLineLength?: unknown } | undefined)?.maxLineLength);
  const maxLineLength = Number.isFinite(maxLine) && maxLine > 0 ? maxLine : DEFAULT_MAX_INPUT_LINE;
  const encoder = new TextEncoder();
  let detachInput = () => {};
  const input = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        detachInput = attachJsonlReader(
          process.stdin,
          (line) => {
            controller.enqueue(encoder.encode(line + "\n"));
            if ((controller.desiredSize ?? 1) <= 0) process.stdin.pause();
          },
          () => {
            try {
              controller.close();
            } catch {
              // already closed
            }
          },
          {
            maxLineLength,
            onOversized: (length) =>
              void out.guard.writeRecord({
                jsonrpc: "2.0",
                id: null,
                error: { code: -32600, message: `Input line too long: ${length} characters, the limit is ${maxLineLength} (setting acp.maxLineLength); the line was ignored` },
              }),
          },
        );
      },
      pull() {
        process.stdin.resume();
      },
    },
    { highWaterMark: 16 },
  );
  const lines = acp.ndJsonStream(rawOutput, input);
  const stream: Acp.Stream = {
    readable: lines.readable,
    writable: new WritableStream<Acp.AnyMessage>({
      write: async (msg) => {
        await out.guard.writeRecord(explainInvalidParams(msg)).catch((e: unknown) => {
          stderr(`${kernel.app.name}: could not write an ACP message: ${(e as Error).message}`);
        });
      },
    }),
  };

  let conn!: Acp.AgentSideConnection;
  let clientCaps: Acp.ClientCapabilities = {};
  let modeId: string = "default";
  let savedTools: string[] | undefined;
  const turns = new Set<Turn>();
  const sessions = new AcpSessions(runtime);
  let lastTitle: string | undefined;
  let removeClientTools = () => {};
  const clientMcp = new ClientMcpServers(kernel);

  const sessionId = () => session().sessionId;
  const send = (update: Update, id = sessionId()): Promise<void> =>
    conn.signal.aborted
      ? Promise.resolve()
      : conn.sessionUpdate({ sessionId: id, update } as unknown as Acp.SessionNotification).catch((e: unknown) => {
          if (!conn.signal.aborted) stderr(`${kernel.app.name}: could not send a session/update: ${(e as Error).message}`);
        });

  const live = new LiveUpdates((u) => send(u), () => runtime.cwd);
  out.ui.attach({
    async requestPermission(toolCall, options) {
      const r = await conn.requestPermission({ sessionId: sessionId(), toolCall, options } as unknown as Acp.RequestPermissionRequest);
      return r.outcome.outcome === "selected" ? r.outcome.optionId : undefined;
    },
    async escalate(request) {
      try {
        const r = await conn.extMethod("_pi/sandbox_escalation", { sessionId: sessionId(), ...request });
        return (r as { allow?: unknown } | undefined)?.allow === true;
      } catch {
        // A client without the method (or failing) does not allow it.
        return false;
      }
    },
    currentToolCall: () => live.currentToolCall(),
    sessionMode: () => modeId,
    setTitle: (title) => void send({ sessionUpdate: "session_info_update", title }),
    notice(message, type) {
      if (!turns.size) return;
      void send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${type === "info" ? "" : `[${type}] `}${message}\n` } });
    },
  });

  // ---- events ----
  let unsubscribe = () => {};
  const subscribe = () => {
    unsubscribe();
    unsubscribe = session().agent.subscribe(async (ev: AgentSessionEvent) => {
      await live.onEvent(ev);
      if (ev.type === "model_select") await send({ sessionUpdate: "config_option_update", configOptions: await configOptions() });
      if (ev.type === "agent_end") await sendUsage();
    });
  };
  const unRebind = runtime.onRebind(() => {
    subscribe();
    out.ui.resetRemembered();
    savedTools = undefined;
    applyMode();
  });
  subscribe();

  // ---- helpers ----
  async function sendUsage(): Promise<void> {
    const s = session();
    const usage = s.getContextUsage();
    const stats = s.getSessionStats();
    await send({ sessionUpdate: "usage_update", used: usage.tokens ?? 0, size: usage.contextWindow, cost: { amount: stats.cost, currency: "USD" } });
    const name = s.sessionName;
    if (name && name !== lastTitle) {
      lastTitle = name;
      await send({ sessionUpdate: "session_info_update", title: name, updatedAt: new Date().toISOString() });
    }
  }

  const modelValue = (m: AnyModel) => `${m.provider}/${m.id}`;
  async function availableModels(): Promise<AnyModel[]> {
    const list = [...((await registry()?.getAvailable()) ?? [])];
    const cur = session().model;
    if (cur && !list.some((m) => m.provider === cur.provider && m.id === cur.id)) list.unshift(cur);
    return list;
  }
  async function configOptions(): Promise<Acp.SessionConfigOption[]> {
    const s = session();
    const models = await availableModels();
    const opts: Acp.SessionConfigOption[] = [];
    if (s.model || models.length) {
      opts.push({
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: s.model ? modelValue(s.model) : "",
        options: models.map((m) => ({ value: modelValue(m), name: m.name || m.id, description: m.provider })),
      });
    }
    opts.push({
      id: "thought_level",
      name: "Thinking",
      category: "thought_level",
      type: "select",
      currentValue: s.thinkingLevel,
      options: s.getAvailableThinkingLevels().map((l) => ({ value: l, name: l })),
    });
    return opts;
  }
  async function sessionSetup(): Promise<Record<string, unknown>> {
    const s = session();
    const models = await availableModels();
    return {
      modes: { currentModeId: modeId, availableModes: SESSION_MODES.map((m) => ({ ...m })) },
      configOptions: await configOptions(),
      // Legacy (pre-config-option) model selector, still read by some clients.
      models: { currentModelId: s.model ? modelValue(s.model) : "", availableModels: models.map((m) => ({ modelId: modelValue(m), name: m.name || m.id })) },
    };
  }
  function commandsUpdate(): Update {
    const availableCommands: Array<Record<string, unknown>> = [];
    for (const entry of kernel.commands.list()) {
      const c: SlashCommand = entry.value;
      if ((c.source ?? "plugin") === "builtin") continue;
      availableCommands.push({ name: entry.name, description: c.description ?? "", input: { hint: "arguments" } });
    }
    return { sessionUpdate: "available_commands_update", availableCommands };
  }
  /** After a session answer went out: the commands (and the mode) the client can show. */
  function afterSetup(id: string): void {
    setImmediate(() => void send(commandsUpdate(), id));
  }
  function applyMode(): void {
    const s = session();
    if (modeId === "read-only") {
      savedTools ??= s.getActiveToolNames();
      s.setActiveTools(savedTools.filter((n) => READ_ONLY_TOOLS.has(n)));
    } else if (savedTools) {
      s.setActiveTools(savedTools);
      savedTools = undefined;
    }
  }
  function checkCwd(cwd: unknown): void {
    if (typeof cwd !== "string" || !isAbsolute(cwd)) throw RequestError.invalidParams({ field: "cwd" }, `cwd must be an absolute path (got ${JSON.stringify(cwd)})`);
    const real = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return p;
      }
    };
    if (real(cwd) !== real(runtime.cwd)) {
      throw RequestError.invalidParams({ field: "cwd" }, `cwd ${cwd} is not this agent's folder (${runtime.cwd}); start one agent process per project folder`);
    }
  }
  async function useMcpServers(servers: unknown): Promise<void> {
    try {
      await clientMcp.use(servers);
    } catch (e) {
      throw RequestError.invalidParams({ field: "mcpServers" }, (e as Error).message);
    }
  }
  async function needSession(id: unknown): Promise<AgentSession> {
    if (typeof id !== "string" || !id) throw RequestError.invalidParams({ field: "sessionId" }, "sessionId must be a non-empty string");
    if (id === sessionId()) return session();
    if (session().isStreaming) throw RequestError.invalidRequest({ sessionId: id }, `session ${sessionId()} is running; cancel it before using session ${id}`);
    const file = await sessions.find(id);
    if (!file) throw RequestError.resourceNotFound(id);
    await runtime.switchSession(file);
    return session();
  }
  async function ensureAuth(): Promise<void> {
    const s = session();
    const m = s.model;
    const reg = registry();
    if (m && reg && (reg.isKeyless(m.provider) || (await reg.hasConfiguredAuth(m)))) return;
    throw RequestError.authRequired(
      { authMethods: [AUTH_METHOD_ID] },
      m ? `no API key for provider "${m.provider}": set its environment variable or add it to auth.json in the agent dir, then restart the agent` : "no model is selected: set a provider API key (e.g. ANTHROPIC_API_KEY) or add models.json and restart the agent, or choose a model with the \"model\" config option",
    );
  }
  function stopReasonOf(before: number): Acp.StopReason {
    const msgs = session().messages;
    for (let i = msgs.length - 1; i >= before; i--) {
      const m = msgs[i] as AssistantMessage;
      if (m.role !== "assistant") continue;
      if (m.stopReason === "aborted") return "cancelled";
      if (m.stopReason === "length") return "max_tokens";
      if (m.stopReason === "error") throw RequestError.internalError({ message: m.errorMessage ?? "the model request failed" }, m.errorMessage ?? "the model request failed");
      return "end_turn";
    }
    return "end_turn";
  }

  // ---- the agent ----
  const agent: Acp.Agent = {
    async initialize(params) {
      clientCaps = params.clientCapabilities ?? {};
      removeClientTools();
      removeClientTools = useClientTools(kernel, {
        caps: clientCaps,
        sessionId,
        cwd: () => runtime.cwd,
        readTextFile: (p) => conn.readTextFile(p),
        writeTextFile: (p) => conn.writeTextFile(p),
        createTerminal: (p) => conn.createTerminal(p),
        embedTerminal: (toolCallId, terminalId) => live.embedTerminal(toolCallId, terminalId),
      });
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: kernel.app.name, title: "pi (pi-kernel)", version: kernel.app.version },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: true },
          sessionCapabilities: { list: {}, resume: {}, close: {} },
        },
        _meta: { steering: { supported: true } },
        authMethods: [
          {
            id: AUTH_METHOD_ID,
            name: "Provider API key",
            description: `Set the provider's API key in the agent's environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) or in auth.json in the agent dir (${kernel.app.agentDirEnv}), then restart the agent`,
          },
        ],
      } as Acp.InitializeResponse;
    },
    async authenticate(params) {
      if (params.methodId !== AUTH_METHOD_ID) throw RequestError.invalidParams({ field: "methodId" }, `unknown methodId "${params.methodId}" (available: ${AUTH_METHOD_ID})`);
      await ensureAuth();
      return {};
    },
    async newSession(params) {
      checkCwd(params.cwd);
      await useMcpServers(params.mcpServers);
      if (!sessions.claimFresh()) await runtime.newSession();
      sessions.remember(session());
      const id = sessionId();
      afterSetup(id);
      return { sessionId: id, ...(await sessionSetup()) } as Acp.NewSessionResponse;
    },
    async loadSession(params) {
      checkCwd(params.cwd);
      await useMcpServers(params.mcpServers);
      const s = await needSession(params.sessionId);
      sessions.remember(s);
      for (const u of replayUpdates(s.messages, runtime.cwd)) await send(u, s.sessionId);
      if (s.sessionName) await send({ sessionUpdate: "session_info_update", title: s.sessionName }, s.sessionId);
      afterSetup(s.sessionId);
      return (await sessionSetup()) as Acp.LoadSessionResponse;
    },
    async resumeSession(params) {
      checkCwd(params.cwd);
      await useMcpServers(params.mcpServers);
      const s = await needSession(params.sessionId);
      sessions.remember(s);
      afterSetup(s.sessionId);
      return (await sessionSetup()) as Acp.ResumeSessionResponse;
    },
    async listSessions(params) {
      if (params.cwd !== undefined && params.cwd !== null) {
        if (typeof params.cwd !== "string" || !isAbsolute(params.cwd)) throw RequestError.invalidParams({ field: "cwd" }, "cwd must be an absolute path");
      }
      return { sessions: await sessions.list(params.cwd ?? undefined) } as Acp.ListSessionsResponse;
    },
    async closeSession(params) {
      const id = params.sessionId;
      if (id === sessionId()) {
        await cancelTurns();
        await session().waitForIdle();
        return {};
      }
      if (!(await sessions.find(id))) throw RequestError.resourceNotFound(id);
      return {};
    },
    async setSessionMode(params) {
      await needSession(params.sessionId);
      if (!SESSION_MODES.some((m) => m.id === params.modeId)) {
        throw RequestError.invalidParams({ field: "modeId" }, `unknown modeId "${params.modeId}" (available: ${SESSION_MODES.map((m) => m.id).join(", ")})`);
      }
      modeId = params.modeId;
      applyMode();
      await send({ sessionUpdate: "current_mode_update", currentModeId: modeId });
      return {};
    },
    async setSessionConfigOption(params) {
      const s = await needSession(params.sessionId);
      const value = (params as { value: unknown }).value;
      if (params.configId === "model") {
        await setModel(s, value);
      } else if (params.configId === "thought_level") {
        const levels = s.getAvailableThinkingLevels();
        if (typeof value !== "string" || !levels.includes(value as ThinkingLevel)) {
          throw RequestError.invalidParams({ field: "value" }, `value must be one of ${levels.join(", ")} for thought_level (got ${JSON.stringify(value)})`);
        }
        s.setThinkingLevel(value as ThinkingLevel);
      } else {
        throw RequestError.invalidParams({ field: "configId" }, `unknown configId "${params.configId}" (available: model, thought_level)`);
      }
      return { configOptions: await configOptions() };
    },
    async prompt(params) {
      const s = await needSession(params.sessionId);
      sessions.remember(s);
      const { text, images } = promptToMessage(params.prompt, (field) => {
        throw RequestError.invalidParams({ field }, `${field} is not a valid content block`);
      });
      const turn: Turn = { cancelled: false };
      turns.add(turn);
      const before = s.messages.length;
      try {
        let disposition;
        try {
          disposition = await s.prompt(text, { images: images as ImageContent[], streamingBehavior: "steer", source: "rpc" });
        } catch (e) {
          if (turn.cancelled) return { stopReason: "cancelled" };
          const message = (e as Error).message;
          if (/no model is selected|no api key/i.test(message)) throw RequestError.authRequired({ authMethods: [AUTH_METHOD_ID] }, message);
          throw RequestError.internalError({ message }, message);
        }
        if (disposition === "queued") await s.waitForIdle();
        if (turn.cancelled) return { stopReason: "cancelled" };
        if (disposition === "handled") return { stopReason: "end_turn" };
        return { stopReason: stopReasonOf(before) };
      } finally {
        turns.delete(turn);
      }
    },
    async cancel() {
      await cancelTurns();
    },
    async extMethod(method, params) {
      if (method === "_session/steering" || method === "session/steering") return steer(params);
      if (method === "session/set_model") {
        const p = params as { sessionId?: unknown; modelId?: unknown };
        const s = await needSession(p.sessionId);
        await setModel(s, p.modelId, "modelId");
        return {};
      }
      throw RequestError.methodNotFound(method);
    },
  };

  async function setModel(s: AgentSession, value: unknown, field = "value"): Promise<void> {
    const reg = registry();
    if (!reg) throw RequestError.internalError({}, "no model registry is installed");
    const v = typeof value === "string" ? value : "";
    const slash = v.indexOf("/");
    const model = slash > 0 ? reg.find(v.slice(0, slash), v.slice(slash + 1)) : (await availableModels()).find((m) => m.id === v);
    if (!model) throw RequestError.invalidParams({ field }, `${field} must name an available model as provider/id (got ${JSON.stringify(value)})`);
    if (!reg.isKeyless(model.provider) && !(await reg.hasConfiguredAuth(model))) {
      throw RequestError.invalidParams({ field }, `no API key for provider "${model.provider}" (model ${model.id})`);
    }
    await s.setModel(model);
  }

  /**
   * The steering extension other agents ship (`_session/steering`, advertised by
   * `_meta.steering.supported`): injects the prompt into the running turn; when idle, starts a
   * new turn, or answers "promptRequired" if the client asked for that (`_meta.steering.idleBehavior`).
   */
  async function steer(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const s = await needSession(params.sessionId);
    const { text, images } = promptToMessage(params.prompt, (field) => {
      throw RequestError.invalidParams({ field }, `${field} is not a valid content block`);
    });
    if (s.isStreaming) {
      await s.steer(text, images as ImageContent[]);
      return { outcome: "injected" };
    }
    const idle = ((params._meta as { steering?: { idleBehavior?: unknown } } | undefined)?.steering?.idleBehavior ?? "startNewTurn") as string;
    if (idle === "promptRequired") return { outcome: "promptRequired" };
    void Promise.resolve(agent.prompt({ sessionId: s.sessionId, prompt: params.prompt as Acp.ContentBlock[] })).catch((e: unknown) =>
      kernel.diagnostics.report({ level: "error", source: "mode-acp", hook: "_session/steering", message: "the steered turn failed", error: e }),
    );
    return { outcome: "startedNewTurn" };
  }

  /** Plans: an extension emits `pi.events.emit("acp:plan", {entries:[{content, status?, priority?}]})`. */
  function listenForPlans(): () => void {
    const bus = kernel.service("extensions")?.bus;
    if (!bus) return () => {};
    const STATUS = ["pending", "in_progress", "completed"];
    const PRIORITY = ["high", "medium", "low"];
    return bus.on(
      "acp:plan",
      (data) => {
        const raw = (data as { entries?: unknown })?.entries ?? data;
        if (!Array.isArray(raw)) throw new Error('acp:plan needs {entries: [{content, status?, priority?}]}');
        const entries = raw.map((e, i) => {
          const x = (typeof e === "string" ? { content: e } : e) as Record<string, unknown>;
          if (typeof x?.content !== "string") throw new Error(`acp:plan entries[${i}].content must be a string`);
          return {
            content: x.content,
            status: STATUS.includes(x.status as string) ? x.status : "pending",
            priority: PRIORITY.includes(x.priority as string) ? x.priority : "medium",
          };
        });
        return send({ sessionUpdate: "plan", entries });
      },
      "mode-acp",
    );
  }
  const unPlans = listenForPlans();

  async function cancelTurns(): Promise<void> {
    for (const t of turns) t.cancelled = true;
    out.ui.cancelAll();
    await session().abort();
  }

  conn = new acp.AgentSideConnection(() => agent, stream);

  // ---- ending ----
  let signalled: number | undefined;
  const ended = new Promise<void>((resolve) => {
    const onSignal = (sig: NodeJS.Signals) => {
      if (signalled !== undefined) process.exit(sig === "SIGHUP" ? 129 : 143);
      signalled = sig === "SIGHUP" ? 129 : 143;
      resolve();
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGHUP", onSignal);
    void conn.closed.then(resolve, resolve);
  });
  await ended;
  try {
    out.ui.cancelAll();
    await session().abort();
    await runtime.dispose();
  } catch (e) {
    stderr(`${kernel.app.name}: error while closing the session: ${(e as Error).message}`);
  }
  unsubscribe();
  unRebind();
  removeClientTools();
  clientMcp.dispose();
  unPlans();
  await out.close();
  detachInput();
  process.stdin.pause();
  return signalled ?? 0;
}

/** Zod's format() tree → "field: problem; field.sub: problem". */
function zodProblems(tree: unknown, path: string[] = [], out: string[] = []): string[] {
  if (!tree || typeof tree !== "object") return out;
  const t = tree as Record<string, unknown>;
  if (Array.isArray(t._errors)) for (const e of t._errors) out.push(`${path.length ? path.join(".") : "params"}: ${String(e)}`);
  for (const [k, v] of Object.entries(t)) if (k !== "_errors") zodProblems(v, [...path, k], out);
  return out;
}

/** Gives the SDK's bare "Invalid params" errors a message naming the fields. */
export function explainInvalidParams(msg: Acp.AnyMessage): Acp.AnyMessage {
  const err = (msg as { error?: { code?: number; message?: string; data?: unknown } }).error;
  if (!err || err.code !== -32602 || err.message !== "Invalid params") return msg;
  const problems = zodProblems(err.data);
  if (!problems.length) return msg;
  return { ...msg, error: { ...err, message: `Invalid params: ${problems.join("; ")}` } } as Acp.AnyMessage;
}
