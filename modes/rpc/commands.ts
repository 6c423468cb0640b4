/**
 * The RPC protocol (protocol.md §5), defined once as TypeBox schemas: the commands a client
 * sends, the `data` of each successful response, the events and the extension UI records.
 *
 * The same objects validate input (validate.ts walks them; they are plain JSON Schema) and are
 * printed by `pi rpc-schema` (buildRpcSchema()). The TypeScript types of the client
 * (sdk/rpc-client.ts) are derived from them with `Static`.
 *
 * Cheap to import: only `typebox` itself (which the tools plugin loads anyway); never
 * `typebox/compile` or `typebox/value`.
 */
import { Type, type Static, type TSchema, type TProperties } from "typebox";
import { PROTOCOL_VERSION } from "../../core/stores/index.js";

// ---- shared pieces ------------------------------------------------------------------------------

/** A request id: any string or number; the response echoes it unchanged. */
export const RequestId = Type.Union([Type.String(), Type.Number()], { description: "Echoed in the response" });
export const ImageContent = Type.Object(
  { type: Type.Literal("image"), data: Type.String({ description: "base64" }), mimeType: Type.String() },
  { description: "An image (pi-ai ImageContent)" },
);
const Images = Type.Optional(Type.Array(ImageContent));
export const StreamingBehavior = Type.Union([Type.Literal("steer"), Type.Literal("followUp")]);
export const QueueMode = Type.Union([Type.Literal("all"), Type.Literal("one-at-a-time")]);
export const ThinkingLevel = Type.Union([
  Type.Literal("off"),
  Type.Literal("minimal"),
  Type.Literal("low"),
  Type.Literal("medium"),
  Type.Literal("high"),
  Type.Literal("xhigh"),
  Type.Literal("max"),
]);
export const Disposition = Type.Union([Type.Literal("started"), Type.Literal("queued"), Type.Literal("handled")], {
  description: "started: the run begins now; queued: the agent is busy and the message waits in a queue; handled: a command or input handler consumed it",
});
// ---- commands ---------------------------------------------------------------------------------

const CheckpointPoint = Type.Union([Type.Integer({ minimum: 1 }), Type.String()], { description: "A point's index (get_checkpoints) or its entryId" });

function command<T extends string, P extends TProperties>(type: T, fields: P, description: string) {
  return Type.Object({ id: Type.Optional(RequestId), type: Type.Literal(type), ...fields }, { description });
}
const none = {};

/** Every command a client may send, by `type`. */
export const COMMANDS = {
  prompt: command(
    "prompt",
    { message: Type.String(), images: Images, streamingBehavior: Type.Optional(StreamingBehavior) },
    "Send user input. The one response comes after preflight and before agent_start; the run continues as events",
  ),
  steer: command("steer", { message: Type.String(), images: Images }, "Queue a steering message (delivered after the current turn's tool calls)"),
  follow_up: command("follow_up", { message: Type.String(), images: Images }, "Queue a follow-up message (delivered when the agent would stop)"),
  abort: command("abort", none, "Abort the current run; answered once the session is idle"),
  clear_queue: command("clear_queue", none, "Empty both queues; the data is what was removed"),
  get_queue: command("get_queue", none, "The pending steering and follow-up messages"),
  new_session: command("new_session", { parentSession: Type.Optional(Type.String()) }, "Start a fresh session"),
  get_state: command("get_state", none, "The session state"),
  get_messages: command("get_messages", none, "Every message of the conversation"),
  get_entries: command("get_entries", { since: Type.Optional(Type.String({ description: "An entry id; only later entries are returned" })) }, "Session entries in file order"),
  get_tree: command("get_tree", none, "The session tree and the current leaf"),
  set_model: command("set_model", { provider: Type.String(), modelId: Type.String() }, "Switch to a model"),
  cycle_model: command("cycle_model", none, "Switch to the next available (or scoped) model"),
  get_available_models: command("get_available_models", none, "Models that have credentials"),
  set_thinking_level: command(
    "set_thinking_level",
    { level: ThinkingLevel },
    "Set the reasoning level (clamped to what the model offers; xhigh and max only where the model maps them)",
  ),
  cycle_thinking_level: command("cycle_thinking_level", none, "Switch to the next thinking level"),
  get_available_thinking_levels: command("get_available_thinking_levels", none, "Thinking levels the current model supports"),
  set_steering_mode: command("set_steering_mode", { mode: QueueMode }, "How steering messages are delivered"),
  set_follow_up_mode: command("set_follow_up_mode", { mode: QueueMode }, "How follow-up messages are delivered"),
  compact: command("compact", { customInstructions: Type.Optional(Type.String()) }, "Summarise older context"),
  set_auto_compaction: command("set_auto_compaction", { enabled: Type.Boolean() }, "Turn automatic compaction on or off"),
  set_auto_retry: command("set_auto_retry", { enabled: Type.Boolean() }, "Turn automatic retry of transient errors on or off"),
  abort_retry: command("abort_retry", none, "Cancel a pending automatic retry"),
  bash: command(
    "bash",
    { command: Type.String(), excludeFromContext: Type.Optional(Type.Boolean()) },
    "Run a shell command for the user; its output joins the context of the next prompt",
  ),
  abort_bash: command("abort_bash", none, "Abort a running bash command"),
  get_session_stats: command("get_session_stats", none, "Message counts, tokens and cost"),
  export_html: command("export_html", { outputPath: Type.Optional(Type.String()) }, "Export the session to HTML"),
  switch_session: command("switch_session", { sessionPath: Type.String() }, "Open another session file"),
  fork: command(
    "fork",
    {
      entryId: Type.String({ description: "The id of a user message entry" }),
      restoreFiles: Type.Optional(Type.Boolean({ description: "Also bring the project's files back to the state the message started from (the checkpoints plugin); files changed outside the agent are kept unless overwriteExternal" })),
      overwriteExternal: Type.Optional(Type.Boolean({ description: "With restoreFiles: overwrite files changed outside the agent too" })),
    },
    "Start a new session branched before a user message",
  ),
  clone: command("clone", none, "Copy the current session into a new one"),
  get_fork_messages: command("get_fork_messages", none, "User messages of the current branch that can be forked from"),
  get_last_assistant_text: command("get_last_assistant_text", none, "Text of the last assistant message"),
  set_session_name: command("set_session_name", { name: Type.String() }, "Set the session's display name"),
  get_commands: command("get_commands", none, "Extension, plugin, prompt-template and skill commands (invoke with a / prompt)"),
  get_checkpoints: command("get_checkpoints", none, "The rewind points of the current branch and their file checkpoints (the checkpoints plugin)"),
  get_checkpoint_diff: command("get_checkpoint_diff", { point: CheckpointPoint }, "The files restoring a point would change, and which of them changed outside the agent"),
  restore_checkpoint: command(
    "restore_checkpoint",
    { point: CheckpointPoint, mode: Type.Optional(Type.Union([Type.Literal("both"), Type.Literal("code"), Type.Literal("conversation")], { description: "Default both" })), overwriteExternal: Type.Optional(Type.Boolean({ description: "Also overwrite files changed outside the agent (default: keep them)" })) },
    "Restore the files and/or the conversation of a point; the files before it become a point of their own",
  ),
} as const;

export type RpcCommandType = keyof typeof COMMANDS;
export type RpcCommandMap = { [K in RpcCommandType]: Static<(typeof COMMANDS)[K]> };
export type RpcCommand = RpcCommandMap[RpcCommandType];

/** The answer to a dialog request (`extension_ui_request` with a dialog method). */
export const ExtensionUiResponse = Type.Object(
  {
    type: Type.Literal("extension_ui_response"),
    id: Type.String({ description: "The id of the extension_ui_request" }),
    value: Type.Optional(Type.String({ description: "select, input, editor" })),
    confirmed: Type.Optional(Type.Boolean({ description: "confirm" })),
    cancelled: Type.Optional(Type.Boolean({ description: "any dialog: resolves to its default" })),
    escalation: Type.Optional(Type.Union([Type.Literal("allow"), Type.Literal("deny")], { description: "sandbox_escalation: \"allow\" runs it outside the sandbox" })),
  },
  { description: "Answer to a dialog; produces no response record" },
);
export type RpcExtensionUiResponse = Static<typeof ExtensionUiResponse>;

// ---- output schemas (responses, events, UI requests) --------------------------------------------
// Built on first use (rpc-schema, tests): validating input needs only COMMANDS, and start-up
// should not pay for the rest.

function buildOutputSchemas() {
  /** A model (pi-ai Model); only the identifying fields are listed, the rest pass through. */
  const Model = Type.Object(
    {
      id: Type.String(),
      name: Type.String(),
      api: Type.String(),
      provider: Type.String(),
      baseUrl: Type.Optional(Type.String()),
      reasoning: Type.Optional(Type.Boolean()),
      input: Type.Optional(Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")]))),
      contextWindow: Type.Optional(Type.Number()),
      maxTokens: Type.Optional(Type.Number()),
    },
    { additionalProperties: true, description: "A model (pi-ai Model)" },
  );
  /** pi-ai Usage (pi 1.6 adds reasoning and cost.totalFromProvider). */
  const Usage = Type.Object(
    {
      input: Type.Number(),
      output: Type.Number(),
      cacheRead: Type.Number(),
      cacheWrite: Type.Number(),
      reasoning: Type.Optional(Type.Number({ description: "Reasoning tokens (part of output), when the provider reports them" })),
      totalTokens: Type.Number(),
      cost: Type.Object(
        {
          input: Type.Number(),
          output: Type.Number(),
          cacheRead: Type.Number(),
          cacheWrite: Type.Number(),
          total: Type.Number(),
          totalFromProvider: Type.Optional(Type.Boolean({ description: "true: total is the provider's billed cost; false/absent: the catalog estimate" })),
        },
        { additionalProperties: true },
      ),
    },
    { additionalProperties: true, description: "Token usage and cost" },
  );
  const Content = Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }))]);
  /** The messages of the conversation as pi 1.6 sends them (pi-ai shapes plus this CLI's own roles). */
  const AgentMessage = Type.Union(
    [
      Type.Object(
        {
          role: Type.Literal("system"),
          content: Content,
          sections: Type.Optional(Type.Object({}, { additionalProperties: Type.Union([Type.String(), Type.Null()]) })),
          toolsAdded: Type.Optional(Type.Array(Type.Object({ name: Type.String(), description: Type.String(), parameters: Type.Unknown() }, { additionalProperties: true }))),
          toolsRemoved: Type.Optional(Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: true }))),
          timestamp: Type.Number(),
        },
        { additionalProperties: true, description: "The prompt sections and tools declared (first run) or changed since (pi 1.6)" },
      ),
      Type.Object(
        { role: Type.Literal("user"), content: Content, timestamp: Type.Number() },
        { additionalProperties: true, description: "User input: a text block, then any images" },
      ),
      Type.Object(
        {
          role: Type.Literal("assistant"),
          content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
          api: Type.String(),
          provider: Type.String(),
          model: Type.String(),
          usage: Usage,
          stopReason: Type.String(),
          errorMessage: Type.Optional(Type.String()),
          rawStopReason: Type.Optional(Type.String({ description: "The provider's own stop reason, when the provider reports it" })),
          thinkingLevel: Type.Optional(Type.String({ description: "The thinking level requested for this response" })),
          durationMs: Type.Optional(Type.Number({ description: "From the request's start to the response's end (monotonic clock)" })),
          timestamp: Type.Number(),
        },
        { additionalProperties: true, description: "A model response" },
      ),
      Type.Object(
        {
          role: Type.Literal("toolResult"),
          toolCallId: Type.String(),
          toolName: Type.String(),
          content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
          isError: Type.Boolean(),
          durationMs: Type.Optional(Type.Number({ description: "How long the tool ran (absent when it did not run)" })),
          timestamp: Type.Number(),
        },
        { additionalProperties: true, description: "A tool's result" },
      ),
      Type.Object(
        { role: Type.Union([Type.Literal("custom"), Type.Literal("bashExecution"), Type.Literal("branchSummary"), Type.Literal("compactionSummary")]), timestamp: Type.Number() },
        { additionalProperties: true, description: "Extension message, user shell command, or summary" },
      ),
    ],
    { description: "A conversation message" },
  );
  /** A session file entry (format version 3, sessions.md). */
  const SessionEntry = Type.Object(
    { type: Type.String(), id: Type.String(), parentId: Type.Union([Type.String(), Type.Null()]), timestamp: Type.String() },
    { additionalProperties: true, description: "A session entry (session file format version 3)" },
  );
  const SessionTreeNode = Type.Object(
    {
      entry: SessionEntry,
      children: Type.Array(Type.Unknown(), { description: "Child nodes, of this same shape, oldest first" }),
      label: Type.Optional(Type.String()),
      labelTimestamp: Type.Optional(Type.String()),
    },
    { description: "A node of the session tree" },
  );
  const Queue = Type.Object({ steering: Type.Array(Type.String()), followUp: Type.Array(Type.String()) });
  const Cancelled = Type.Object({ cancelled: Type.Boolean() });

  // ---- response data ----------------------------------------------------------------------------

  const SessionState = Type.Object({
    model: Type.Optional(Model),
    thinkingLevel: ThinkingLevel,
    isStreaming: Type.Boolean(),
    isCompacting: Type.Boolean(),
    steeringMode: QueueMode,
    followUpMode: QueueMode,
    sessionFile: Type.Optional(Type.String()),
    sessionId: Type.String(),
    sessionName: Type.Optional(Type.String()),
    autoCompactionEnabled: Type.Boolean(),
    messageCount: Type.Number(),
    pendingMessageCount: Type.Number(),
  });
  const Tokens = Type.Object({ input: Type.Number(), output: Type.Number(), cacheRead: Type.Number(), cacheWrite: Type.Number(), total: Type.Number() });
  const SessionStats = Type.Object({
    sessionFile: Type.Optional(Type.String()),
    sessionId: Type.String(),
    userMessages: Type.Number(),
    assistantMessages: Type.Number(),
    toolCalls: Type.Number(),
    toolResults: Type.Number(),
    totalMessages: Type.Number(),
    tokens: Tokens,
    cost: Type.Number(),
    contextUsage: Type.Optional(
      Type.Object({ tokens: Type.Union([Type.Number(), Type.Null()]), contextWindow: Type.Number(), percent: Type.Union([Type.Number(), Type.Null()]) }),
    ),
  });
  const BashResult = Type.Object({
    output: Type.String(),
    exitCode: Type.Optional(Type.Number()),
    cancelled: Type.Boolean(),
    truncated: Type.Boolean(),
    fullOutputPath: Type.Optional(Type.String()),
  });
  const CompactionResult = Type.Object({
    summary: Type.String(),
    firstKeptEntryId: Type.String(),
    tokensBefore: Type.Number(),
    estimatedTokensAfter: Type.Optional(Type.Number({ description: "Estimated context tokens once compacted (pi 1.6)" })),
    usage: Type.Optional(Usage),
    details: Type.Optional(Type.Unknown()),
  });
  const SlashCommandInfo = Type.Object({
    name: Type.String(),
    description: Type.Optional(Type.String()),
    source: Type.Union([Type.Literal("extension"), Type.Literal("prompt"), Type.Literal("skill"), Type.Literal("plugin")]),
    location: Type.Optional(Type.Union([Type.Literal("user"), Type.Literal("project"), Type.Literal("path")])),
    path: Type.Optional(Type.String()),
    sourceInfo: Type.Object(
      {
        path: Type.String({ description: "The file, or builtin:<plugin> for a plugin's command" }),
        source: Type.String({ description: "local, or builtin" }),
        scope: Type.Union([Type.Literal("user"), Type.Literal("project"), Type.Literal("temporary")]),
        origin: Type.Union([Type.Literal("package"), Type.Literal("top-level")]),
      },
      { description: "Where the command comes from (pi 1.6 SourceInfo)" },
    ),
  });
  const NoData = Type.Undefined({ description: "no data field" });

  /** The `data` of each command's success response (`Type.Undefined()`: the response has no data). */
  const RESPONSE_DATA = {
    prompt: Type.Object({ disposition: Disposition }),
    steer: Type.Object({ disposition: Disposition }),
    follow_up: Type.Object({ disposition: Disposition }),
    abort: NoData,
    clear_queue: Queue,
    get_queue: Queue,
    new_session: Cancelled,
    get_state: SessionState,
    get_messages: Type.Object({ messages: Type.Array(AgentMessage) }),
    get_entries: Type.Object({ entries: Type.Array(SessionEntry), leafId: Type.Union([Type.String(), Type.Null()], { description: "The current leaf (pi 1.6)" }) }),
    get_tree: Type.Object({ tree: Type.Array(SessionTreeNode), leafId: Type.Union([Type.String(), Type.Null()]) }),
    set_model: Model,
    cycle_model: Type.Union([Type.Object({ model: Model, thinkingLevel: ThinkingLevel, isScoped: Type.Boolean() }), Type.Null()]),
    get_available_models: Type.Object({ models: Type.Array(Model) }),
    set_thinking_level: NoData,
    cycle_thinking_level: Type.Union([Type.Object({ level: ThinkingLevel }), Type.Null()]),
    get_available_thinking_levels: Type.Object({ levels: Type.Array(ThinkingLevel) }),
    set_steering_mode: NoData,
    set_follow_up_mode: NoData,
    compact: CompactionResult,
    set_auto_compaction: NoData,
    set_auto_retry: NoData,
    abort_retry: NoData,
    bash: BashResult,
    abort_bash: NoData,
    get_session_stats: SessionStats,
    export_html: Type.Object({ path: Type.String() }),
    switch_session: Cancelled,
    fork: Type.Object({
      text: Type.String(),
      cancelled: Type.Boolean(),
      files: Type.Optional(Type.Object({ restored: Type.Array(Type.String()), kept: Type.Array(Type.String(), { description: "Files changed outside the agent, left as they are" }) }, { description: "restoreFiles: what the restore did" })),
    }),
    clone: Cancelled,
    get_fork_messages: Type.Object({ messages: Type.Array(Type.Object({ entryId: Type.String(), text: Type.String() })) }),
    get_last_assistant_text: Type.Object({ text: Type.Union([Type.String(), Type.Null()]) }),
    set_session_name: NoData,
    get_commands: Type.Object({ commands: Type.Array(SlashCommandInfo) }),
    get_checkpoints: Type.Object({
      points: Type.Array(
        Type.Object({
          index: Type.Integer(),
          entryId: Type.String(),
          kind: Type.Union([Type.Literal("prompt"), Type.Literal("restore")]),
          label: Type.String(),
          timestamp: Type.Optional(Type.String()),
          tree: Type.Optional(Type.String({ description: "The git tree of the point's files in the checkpoint store; absent: no file checkpoint" })),
        }),
      ),
    }),
    get_checkpoint_diff: Type.Object({
      changes: Type.Array(Type.Object({ path: Type.String(), status: Type.Union([Type.Literal("A"), Type.Literal("D"), Type.Literal("M")], { description: "A: created, D: deleted, M: changed by the restore" }) })),
      external: Type.Array(Type.String(), { description: "Files of changes that changed outside the agent since its last checkpoint" }),
    }),
    restore_checkpoint: Type.Object({
      mode: Type.String(),
      restored: Type.Array(Type.String()),
      kept: Type.Array(Type.String(), { description: "Files changed outside the agent that were kept" }),
      editorText: Type.Optional(Type.String()),
      cancelled: Type.Optional(Type.Boolean()),
    }),
  } satisfies Record<RpcCommandType, TSchema>;


  /** A failed command. `command` is "parse" (no id) when the line was not JSON. */
  const ErrorResponse = Type.Object({
    id: Type.Optional(RequestId),
    type: Type.Literal("response"),
    command: Type.String(),
    success: Type.Literal(false),
    error: Type.String(),
  });

  function successResponse(type: RpcCommandType) {
    const data = RESPONSE_DATA[type] as TSchema;
    const noData = (data as { type?: string }).type === "undefined";
    return Type.Object({
      id: Type.Optional(RequestId),
      type: Type.Literal("response"),
      command: Type.Literal(type),
      success: Type.Literal(true),
      ...(noData ? {} : { data }),
    });
  }


  // ---- events -----------------------------------------------------------------------------------

  function event<T extends string, P extends TProperties>(type: T, fields: P, description: string) {
    return Type.Object({ type: Type.Literal(type), ...fields }, { description, additionalProperties: true });
  }
  const ToolResult = Type.Object(
    { content: Type.Array(Type.Unknown()), details: Type.Optional(Type.Unknown()), isError: Type.Optional(Type.Boolean()) },
    { additionalProperties: true },
  );
  const CompactionReason = Type.Union([Type.Literal("manual"), Type.Literal("threshold"), Type.Literal("overflow")]);

  /** Session events as they appear on the wire (message_update is delta-only, protocol.md §2). */
  const EVENTS = {
    agent_start: event("agent_start", none, "A run begins"),
    agent_end: event("agent_end", { messages: Type.Array(AgentMessage), willRetry: Type.Optional(Type.Boolean()) }, "A run's loop ended (see agent_settled)"),
    agent_settled: event("agent_settled", { aborted: Type.Boolean() }, "Nothing automatic is left: this, not agent_end, means done"),
    turn_start: event("turn_start", none, "One assistant response (and its tool calls) begins"),
    turn_end: event("turn_end", { message: AgentMessage, toolResults: Type.Array(AgentMessage) }, "A turn ended"),
    message_start: event("message_start", { message: AgentMessage }, "A message begins (initial form)"),
    message_update: event(
      "message_update",
      {
        usage: Type.Optional(Type.Unknown()),
        assistantMessageEvent: Type.Object(
          {
            type: Type.String({ description: "start, text_start|_delta|_end, thinking_start|_delta|_end, toolcall_start|_delta|_end, done, error" }),
            contentIndex: Type.Optional(Type.Number()),
            delta: Type.Optional(Type.String()),
            id: Type.Optional(Type.String({ description: "toolcall_start: the call id" })),
            toolName: Type.Optional(Type.String({ description: "toolcall_start: the tool" })),
          },
          { additionalProperties: true },
        ),
      },
      "A streaming delta (no partial message on the wire)",
    ),
    message_end: event("message_end", { message: AgentMessage }, "A message is complete (authoritative)"),
    tool_execution_start: event("tool_execution_start", { toolCallId: Type.String(), toolName: Type.String(), args: Type.Unknown() }, "A tool starts"),
    tool_execution_update: event(
      "tool_execution_update",
      { toolCallId: Type.String(), toolName: Type.String(), args: Type.Unknown(), partialResult: ToolResult },
      "A tool's partial result (accumulated)",
    ),
    tool_execution_end: event(
      "tool_execution_end",
      { toolCallId: Type.String(), toolName: Type.String(), result: ToolResult, isError: Type.Boolean(), durationMs: Type.Optional(Type.Number()) },
      "A tool finished",
    ),
    queue_update: event("queue_update", { steering: Type.Array(Type.String()), followUp: Type.Array(Type.String()) }, "The full queues, on every change"),
    compaction_start: event("compaction_start", { reason: CompactionReason }, "Compaction begins"),
    compaction_end: event(
      "compaction_end",
      { reason: CompactionReason, result: Type.Optional(Type.Unknown()), aborted: Type.Boolean(), willRetry: Type.Boolean(), errorMessage: Type.Optional(Type.String()) },
      "Compaction ended",
    ),
    auto_retry_start: event(
      "auto_retry_start",
      { attempt: Type.Number(), maxAttempts: Type.Number(), delayMs: Type.Number(), errorMessage: Type.String() },
      "A transient error will be retried",
    ),
    auto_retry_end: event("auto_retry_end", { success: Type.Boolean(), attempt: Type.Number(), finalError: Type.Optional(Type.String()) }, "Retrying ended"),
    summarization_retry_scheduled: event(
      "summarization_retry_scheduled",
      { attempt: Type.Number(), maxAttempts: Type.Number(), delayMs: Type.Number(), errorMessage: Type.String() },
      "A failed summary request (compaction, branch summary) will be retried",
    ),
    summarization_retry_attempt_start: event(
      "summarization_retry_attempt_start",
      { source: Type.Union([Type.Literal("compaction"), Type.Literal("branchSummary")]), reason: Type.Optional(CompactionReason) },
      "The retried summary request starts",
    ),
    summarization_retry_finished: event("summarization_retry_finished", {}, "Retrying a summary request ended (success, failure or abort)"),
    model_select: event("model_select", { model: Model, previousModel: Type.Optional(Model), source: Type.String() }, "The model changed"),
    entry_appended: event("entry_appended", { entry: SessionEntry }, "An extension appended a custom entry (pi.appendEntry); the entry as stored"),
    // (pi 1.6)
    thinking_level_changed: event("thinking_level_changed", { level: Type.String() }, "The active thinking level changed"),
    session_info_changed: event("session_info_changed", { name: Type.Optional(Type.String()) }, "The session's display name changed (absent: cleared)"),
    bash_execution_update: event(
      "bash_execution_update",
      { id: Type.Optional(Type.Union([Type.String(), Type.Number()])), delta: Type.String() },
      "RPC only: a chunk of a running bash command's output; id repeats the bash command's id",
    ),
    extension_error: event(
      "extension_error",
      {
        extensionPath: Type.String({ description: "The extension path or plugin name that caused it" }),
        event: Type.String({ description: "The hook or event it happened in (may be empty)" }),
        error: Type.String(),
        level: Type.Optional(Type.Union([Type.Literal("error"), Type.Literal("warning")])),
      },
      "An extension or plugin failed, or used something RPC cannot do",
    ),
  } as const;


  // ---- extension UI requests --------------------------------------------------------------------

  function uiRequest<M extends string, P extends TProperties>(method: M, fields: P, description: string) {
    return Type.Object({ type: Type.Literal("extension_ui_request"), id: Type.String(), method: Type.Literal(method), ...fields }, { description });
  }
  const Timeout = Type.Optional(Type.Number({ description: "Milliseconds; the server resolves to the default when it runs out" }));

  /** Records the server writes for ctx.ui calls (protocol.md §5.2). Dialogs wait for an extension_ui_response. */
  const UI_REQUESTS = {
    select: uiRequest("select", { title: Type.String(), options: Type.Array(Type.String()), timeout: Timeout }, "Dialog; answer {value} or {cancelled}"),
    confirm: uiRequest("confirm", { title: Type.String(), message: Type.String(), timeout: Timeout }, "Dialog; answer {confirmed} or {cancelled}"),
    input: uiRequest("input", { title: Type.String(), placeholder: Type.Optional(Type.String()), timeout: Timeout }, "Dialog; answer {value} or {cancelled}"),
    editor: uiRequest("editor", { title: Type.String(), prefill: Type.Optional(Type.String()), timeout: Timeout }, "Dialog; answer {value} or {cancelled}"),
    sandbox_escalation: uiRequest(
      "sandbox_escalation",
      {
        title: Type.String(),
        message: Type.String(),
        kind: Type.Union([Type.Literal("command"), Type.Literal("write")]),
        toolName: Type.String(),
        command: Type.Optional(Type.String()),
        path: Type.Optional(Type.String()),
        timeout: Timeout,
      },
      "A person decides whether a command or write the OS sandbox blocked runs outside it; answer {escalation: \"allow\"|\"deny\"} (anything else denies)",
    ),
    notify: uiRequest(
      "notify",
      { message: Type.String(), notifyType: Type.Optional(Type.Union([Type.Literal("info"), Type.Literal("warning"), Type.Literal("error")])) },
      "Fire and forget",
    ),
    setStatus: uiRequest("setStatus", { statusKey: Type.String(), statusText: Type.Optional(Type.String()) }, "Fire and forget; no text clears"),
    setWidget: uiRequest(
      "setWidget",
      {
        widgetKey: Type.String(),
        widgetLines: Type.Optional(Type.Array(Type.String())),
        widgetPlacement: Type.Optional(Type.Union([Type.Literal("aboveEditor"), Type.Literal("belowEditor")])),
      },
      "Fire and forget; no lines clears",
    ),
    setTitle: uiRequest("setTitle", { title: Type.String() }, "Fire and forget"),
    set_editor_text: uiRequest("set_editor_text", { text: Type.String() }, "Fire and forget"),
  } as const;


  return { RESPONSE_DATA, ErrorResponse, EVENTS, UI_REQUESTS, successResponse };
}

type OutputSchemas = ReturnType<typeof buildOutputSchemas>;
let outputSchemas: OutputSchemas | undefined;
/** The response, event and UI request schemas (built once, on first call). */
export function getOutputSchemas(): OutputSchemas {
  return (outputSchemas ??= buildOutputSchemas());
}

export type RpcResponseData<K extends RpcCommandType> = Static<OutputSchemas["RESPONSE_DATA"][K]>;
export type RpcSuccessResponse = { id?: string | number; type: "response"; command: string; success: true; data?: unknown };
export type RpcErrorResponse = Static<OutputSchemas["ErrorResponse"]>;
export type RpcResponse = RpcSuccessResponse | RpcErrorResponse;
export type RpcEventType = keyof OutputSchemas["EVENTS"];
export type RpcEventMap = { [K in RpcEventType]: Static<OutputSchemas["EVENTS"][K]> };

export type RpcUiMethod = keyof OutputSchemas["UI_REQUESTS"];
export type RpcUiRequestMap = { [K in RpcUiMethod]: Static<OutputSchemas["UI_REQUESTS"][K]> };
export type RpcExtensionUiRequest = RpcUiRequestMap[RpcUiMethod];
export const DIALOG_METHODS: readonly RpcUiMethod[] = ["select", "confirm", "input", "editor"];

// ---- the printed schema -----------------------------------------------------------------------

/** The JSON Schema document `pi rpc-schema` prints: every command, response, event and UI record. */
export function buildRpcSchema(): Record<string, unknown> {
  const { ErrorResponse, EVENTS, UI_REQUESTS, successResponse } = getOutputSchemas();
  const types = Object.keys(COMMANDS) as RpcCommandType[];
  const ref = (group: string, name: string) => ({ $ref: `#/$defs/${group}/${name}` });
  const responses: Record<string, TSchema> = {};
  for (const t of types) responses[t] = successResponse(t);
  responses.error = ErrorResponse;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "pi RPC protocol",
    description:
      "pi --mode rpc: commands are JSON lines on stdin; responses, events and extension UI requests are JSON lines on stdout (LF-delimited, protocol.md).",
    protocolVersion: PROTOCOL_VERSION,
    $defs: {
      commands: { ...COMMANDS, extension_ui_response: ExtensionUiResponse },
      responses,
      events: EVENTS,
      extensionUiRequests: UI_REQUESTS,
    },
    properties: {
      input: { anyOf: [...types.map((t) => ref("commands", t)), ref("commands", "extension_ui_response")] },
      output: {
        anyOf: [
          ...Object.keys(responses).map((t) => ref("responses", t)),
          ...Object.keys(EVENTS).map((t) => ref("events", t)),
          ...Object.keys(UI_REQUESTS).map((t) => ref("extensionUiRequests", t)),
        ],
      },
    },
  };
}
