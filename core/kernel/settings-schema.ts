/**
 * The settings.json schema as a TypeBox definition: the source of the published
 * schemas/settings.schema.json (scripts/gen-schemas.mjs; tests/schemas.test.ts checks the file
 * equals what this generates) and of `SettingsFile`, the type of one settings file. Every key
 * of the `Settings` interface (core/kernel/settings.ts) must be here (checked at compile time below).
 * pi 1.6's keys are all described, including the ones this build does not act on (their
 * description says so; docs/pi-1.6-compat.md has the table). Unknown keys are allowed: plugins
 * and extensions read keys of their own.
 */
import { Type, type Static, type TSchema } from "typebox";
import type { Settings } from "./settings.js";
import { THINKING_LEVELS } from "./types.js";

const opt = <T extends TSchema>(t: T) => Type.Optional(t);
const str = (description: string) => opt(Type.String({ description }));
const bool = (description: string) => opt(Type.Boolean({ description }));
const int = (description: string, minimum = 0) => opt(Type.Integer({ minimum, description }));
const strings = (description: string) => opt(Type.Array(Type.String(), { description }));
const oneOf = (values: readonly string[], description: string) => opt(Type.Union(values.map((v) => Type.Literal(v)), { description }));
const NOT_HERE = " Accepted; no effect in this build (see docs/pi-1.6-compat.md).";

const timeout = (description: string) => opt(Type.Union([Type.Integer({ minimum: 0 }), Type.Literal("disabled")], { description }));

const PermissionRules = Type.Object(
  {
    allow: strings("Tool calls allowed without asking, e.g. \"read\", \"bash(git status*)\"."),
    ask: strings("Tool calls that ask first."),
    deny: strings("Tool calls refused (beats allow and ask)."),
    askTimeoutMs: int("How long an ask waits for an answer."),
  },
  { description: "Rules of the permission gate (this project's addition).", additionalProperties: true },
);

const PackageSource = Type.Union([
  Type.String({ description: "npm:, git: or a local path" }),
  Type.Object(
    { source: Type.String(), extensions: strings("Filter"), skills: strings("Filter"), prompts: strings("Filter"), themes: strings("Filter") },
    { additionalProperties: true },
  ),
]);

export const SettingsSchema = Type.Object(
  {
    $schema: str("The URL or path of this schema (for editors)."),
    // ---- model and thinking
    defaultProvider: str("Start-up provider."),
    defaultModel: str("Start-up model id."),
    defaultThinkingLevel: oneOf(THINKING_LEVELS, "Start-up thinking level (clamped to what the model offers)."),
    modelThinkingLevels: opt(Type.Record(Type.String(), Type.Union(THINKING_LEVELS.map((v) => Type.Literal(v))), { description: "Start-up thinking level per exact \"provider/modelId\", over defaultThinkingLevel." })),
    thinkingBudgets: opt(Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: "Token budgets for minimal, low, medium and high." })),
    enabledModels: strings("Model patterns for start-up and cycling (the format of --models)."),
    hideThinkingBlock: bool("Hide thinking blocks in the TUI."),
    showCacheMissNotices: bool("pi 1.6: cache-miss notices." + NOT_HERE),
    cacheWarming: oneOf(["off", "streaming", "idle"], "pi 1.6: prompt cache warming." + NOT_HERE),
    // ---- interaction
    steeringMode: oneOf(["all", "one-at-a-time"], "How queued steering messages are delivered."),
    followUpMode: oneOf(["all", "one-at-a-time"], "How queued follow-up messages are delivered."),
    externalEditor: str("pi 1.6: external editor command." + NOT_HERE),
    doubleEscapeAction: oneOf(["tree", "fork", "none"], "Double Escape with an empty editor."),
    treeFilterMode: oneOf(["default", "no-tools", "user-only", "labeled-only", "all"], "Initial /tree filter."),
    defaultProjectTrust: oneOf(["ask", "always", "never"], "Project trust when nothing is saved (global settings only)."),
    // ---- tools
    defaultTools: strings("Start-up tools: names, or only +name/-name entries changing read, bash, edit, write."),
    codemode: opt(Type.Object({ mode: oneOf(["on", "only"], ""), inlineBudget: int("") }, { description: "pi 1.6's code mode." + NOT_HERE, additionalProperties: true })),
    // ---- sessions and context
    sessionDir: str("Where session files go (project value: trusted projects only)."),
    sessionShareDestination: oneOf(["auto", "gist", "radius"], "pi 1.6: /share destination." + NOT_HERE),
    compaction: opt(
      Type.Object(
        {
          enabled: bool("Automatic compaction."),
          reserveTokens: int("Free context tokens below which compaction starts."),
          keepRecentTokens: int("Recent tokens kept without summarising."),
          modelOverrides: opt(Type.Record(Type.String(), Type.Object({ reserveTokens: int(""), keepRecentTokens: int("") }), { description: "Per-model reserveTokens and keepRecentTokens, keyed by exact \"provider/modelId\"; each value falls back to the ordinary setting." })),
        },
        { additionalProperties: true },
      ),
    ),
    branchSummary: opt(Type.Object({ reserveTokens: int("Tokens reserved for branch summaries."), skipPrompt: bool("No summary prompt.") }, { additionalProperties: true })),
    // ---- terminal and display
    theme: str("TUI theme name."),
    quietStartup: opt(Type.Union([Type.Boolean(), Type.Literal("header")], { description: "true: no start-up header; \"header\": the header without the resource listing." })),
    tuiMode: oneOf(["regular", "fullscreen"], "pi 1.6: TUI mode." + NOT_HERE),
    fullscreenExitOutput: oneOf(["transcript", "resume-hint"], "What fullscreen mode prints on exit: the conversation and the resume hint, or the hint only."),
    fullscreenScrollbar: oneOf(["auto", "always", "hidden"], "Fullscreen transcript scrollbar: shown for a moment after scrolling, always, or never."),
    fullscreenCopyOnSelect: bool("Fullscreen: copy transcript text selected with the mouse (OSC 52)."),
    fullscreenWheelScrollLines: opt(Type.Union([Type.Literal("auto"), Type.Integer({ minimum: 1, maximum: 100 })], { description: "Fullscreen: lines per mouse-wheel step; \"auto\" follows the speed of the spin (1 to 6)." })),
    editorPaddingX: opt(Type.Integer({ minimum: 0, maximum: 3, description: "pi 1.6." + NOT_HERE })),
    outputPad: opt(Type.Union([Type.Literal(0), Type.Literal(1)], { description: "pi 1.6." + NOT_HERE })),
    autocompleteMaxVisible: opt(Type.Integer({ minimum: 3, maximum: 20, description: "pi 1.6." + NOT_HERE })),
    showHardwareCursor: bool("Show the terminal's own cursor at the input's cursor (it is placed there either way, for input methods)."),
    terminal: opt(
      Type.Object(
        {
          showImages: bool("Inline images."),
          imageWidthCells: int("Inline image width in cells.", 1),
          clearOnShrink: bool("Clear rows when content shrinks."),
          showTerminalProgress: bool("pi 1.6." + NOT_HERE),
          hyperlinks: opt(Type.Union([Type.Boolean(), Type.Literal("auto")], { description: "pi 1.6." + NOT_HERE })),
          images: opt(Type.Union([Type.Literal("kitty"), Type.Literal("iterm2"), Type.Literal("auto"), Type.Literal(false)], { description: "pi 1.6." + NOT_HERE })),
          trueColor: opt(Type.Union([Type.Boolean(), Type.Literal("auto")], { description: "pi 1.6." + NOT_HERE })),
        },
        { additionalProperties: true },
      ),
    ),
    images: opt(Type.Object({ autoResize: bool("Resize to at most 2000x2000."), blockImages: bool("Never send images.") }, { additionalProperties: true })),
    markdown: opt(Type.Object({ codeBlockIndent: str("Code block indent."), mermaid: oneOf(["off", "final", "streaming"], "pi 1.6." + NOT_HERE) }, { additionalProperties: true })),
    // ---- network and retries
    transport: oneOf(["auto", "sse", "websocket", "websocket-cached"], "Preferred provider transport."),
    httpProxy: str("Proxy URL for HTTP(S) requests, set as HTTP_PROXY/HTTPS_PROXY when those are unset (global settings only)."),
    httpIdleTimeoutMs: timeout("HTTP headers/body idle timeout in ms; 0 or \"disabled\" for none (default 300000)."),
    websocketConnectTimeoutMs: timeout("pi 1.6: WebSocket connect timeout." + NOT_HERE),
    retry: opt(
      Type.Object(
        {
          enabled: bool("Agent-level retries of transient failures."),
          maxRetries: int("Most agent-level retries."),
          baseDelayMs: int("First backoff delay."),
          maxDelayMs: int("Longest backoff delay (this project's name)."),
          maxAgentDelayMs: int("Longest backoff delay (pi 1.6's name)."),
          provider: opt(
            Type.Object(
              { timeoutMs: int("Provider SDK request timeout (default: httpIdleTimeoutMs)."), maxRetries: int("Provider SDK retries."), maxRetryDelayMs: int("Longest server-requested delay.") },
              { additionalProperties: true },
            ),
          ),
        },
        { additionalProperties: true },
      ),
    ),
    // ---- shell
    shellPath: str("The shell for bash (project value: trusted projects only)."),
    shellCommandPrefix: str("Prepended to every shell command (project value: trusted projects only)."),
    npmCommand: strings("argv for npm in package operations."),
    selfUpdateCommand: strings("pi 1.6: self-update command." + NOT_HERE),
    // ---- resources
    packages: opt(Type.Array(PackageSource, { description: "Pi packages (npm:, git:, paths)." })),
    extensions: strings("Extension files or folders; +builtin:<name>, -builtin:<name>, !builtin:* turn built-in extensions on or off."),
    skills: strings("Skill files or folders."),
    prompts: strings("Prompt template files or folders."),
    themes: strings("Theme files or folders."),
    enableSkillCommands: bool("Skills as /skill:name commands."),
    // ---- updates, telemetry, warnings
    collapseChangelog: bool("pi 1.6." + NOT_HERE),
    enableInstallTelemetry: bool("pi 1.6: no telemetry here." + NOT_HERE),
    enableAnalytics: bool("pi 1.6: no analytics here." + NOT_HERE),
    warnings: opt(Type.Object({ anthropicExtraUsage: bool("pi 1.6: Anthropic extra-usage warning (never shown here).") }, { additionalProperties: true })),
    // ---- this project
    extensionHandlerTimeoutMs: int("An extension handler running longer is abandoned; 0 = no limit."),
    rpc: opt(Type.Object({ maxLineLength: int("Longest RPC input line (a project may only lower it).", 1) }, { additionalProperties: true })),
    acp: opt(Type.Object({ maxLineLength: int("Longest ACP input line (a project may only lower it).", 1) }, { additionalProperties: true })),
    permissions: opt(PermissionRules),
    yolo: bool("Turn ask into allow (deny still wins)."),
    sandbox: opt(Type.Union([Type.Literal("off"), Type.Literal("read-only"), Type.Literal("workspace-write"), Type.Object({}, { additionalProperties: true })], { description: "OS sandbox for commands." })),
    trustedProjects: strings("Trusted project folders (global settings only)."),
    mcpServers: opt(Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }), { description: "MCP servers (the shape of .mcp.json's mcpServers)." })),
    mcp: opt(Type.Object({}, { additionalProperties: true, description: "MCP plugin options (toolMode, connectTimeoutMs, …)." })),
    plugins: strings("Native kernel plugins to load."),
    faux: opt(Type.Object({ script: str("Script file for the faux model.") }, { additionalProperties: true })),
    checkpoints: opt(
      Type.Object(
        {
          enabled: bool("Capture the project's files along the session tree (/rewind); default true."),
          maxFileSizeBytes: int("Files larger than this are not captured (default 10485760).", 1),
          maxCount: int("Checkpoints kept per project (default 500).", 1),
          maxAgeDays: int("Checkpoints older than this are pruned (default 30).", 1),
          maxFiles: int("Most new or changed files one capture takes (default 50000).", 1),
          watch: bool("Watch the project's folders so a capture with nothing changed reuses the last one instead of scanning; default true."),
        },
        { additionalProperties: true },
      ),
    ),
  },
  {
    $id: "settings.schema.json",
    title: "pi-kernel settings.json",
    description: "Global (<agentDir>/settings.json) and project (.pi/settings.json) settings of pi-kernel, a pi-compatible coding agent.",
    additionalProperties: true,
  },
);

/** One settings file as written. */
export type SettingsFile = Static<typeof SettingsSchema>;

// Compile-time check: every key of Settings is described by the schema.
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };
type Undescribed = Exclude<KnownKeys<Settings>, keyof SettingsFile>;
export const SETTINGS_SCHEMA_COVERS_SETTINGS: [Undescribed] extends [never] ? true : Undescribed = true;
