/**
 * RpcClient: drives `pi --mode rpc` in a child process (protocol.md §5–6).
 *
 * One typed method per command (the types come from the same TypeBox definitions the server
 * validates with), `onEvent`, `waitForIdle()` (resolves on `agent_settled`), `collectEvents()`,
 * `promptAndWait()` (subscribes before sending), an `onExtensionUiRequest` option to answer
 * extension dialogs, and `stop()`, which ends the child and rejects whatever is still pending.
 * When the child dies, every pending request and wait is rejected with an error that says so
 * (exit code, signal, the tail of stderr).
 *
 * ```ts
 * const client = new RpcClient({ args: ["--no-session"] });
 * await client.start();
 * const events = await client.promptAndWait("hello");
 * console.log(await client.getLastAssistantText());
 * await client.stop();
 * ```
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { packageInfo } from "./package-info.js";
import { JsonlLineReader } from "../core/stores/io/jsonl.js";
import type {
  RpcCommand,
  RpcCommandMap,
  RpcCommandType,
  RpcEventMap,
  RpcExtensionUiRequest,
  RpcResponse,
  RpcResponseData,
} from "../modes/rpc/commands.js";

export type {
  RpcCommand,
  RpcCommandMap,
  RpcCommandType,
  RpcEventMap,
  RpcExtensionUiRequest,
  RpcResponse,
  RpcResponseData,
  RpcUiRequestMap,
} from "../modes/rpc/commands.js";

/** Any record the server writes that is not a response: session events, extension_error, extension_ui_request. */
export type RpcEvent = RpcEventMap[keyof RpcEventMap] | RpcExtensionUiRequest | { type: string; [key: string]: unknown };
export type RpcEventListener = (event: RpcEvent) => void;
type RpcImages = NonNullable<RpcCommandMap["prompt"]["images"]>;
type PromptOpts = { images?: RpcCommandMap["prompt"]["images"]; streamingBehavior?: "steer" | "followUp" };
type Disposition = RpcResponseData<"prompt">["disposition"];
/** pi's positional form (images array, streamingBehavior) or an options object. */
function promptOpts(images: RpcImages | PromptOpts | undefined, streamingBehavior?: "steer" | "followUp"): PromptOpts {
  if (images === undefined) return streamingBehavior ? { streamingBehavior } : {};
  if (Array.isArray(images)) return { images, ...(streamingBehavior ? { streamingBehavior } : {}) };
  return { ...images, ...(streamingBehavior ? { streamingBehavior } : {}) };
}

/**
 * What `onExtensionUiRequest` returns for a dialog: a string (select, input, editor), a boolean
 * (confirm), `undefined` (cancel: the dialog resolves to its default), or an explicit answer.
 */
export type RpcUiAnswer = string | boolean | undefined | { value?: string; confirmed?: boolean; cancelled?: boolean; escalation?: "allow" | "deny" };

export interface RpcClientOptions {
  /** The CLI entry (default: this package's `pi` binary, dist/bundle/cli.js). */
  cliPath?: string;
  /** The Node binary (default: the current one). */
  nodePath?: string;
  /** Extra CLI arguments (after `--mode rpc`). */
  args?: string[];
  provider?: string;
  model?: string;
  cwd?: string;
  /** Added to (and overriding) the current environment. */
  env?: NodeJS.ProcessEnv;
  /** Start from the current environment (default true); false: the child gets `env` only. */
  inheritEnv?: boolean;
  /**
   * Answers extension dialogs (select, confirm, input, editor). Fire-and-forget requests are
   * passed too (the return value is ignored). Without it, dialogs reach `onEvent` listeners only
   * and wait for `respondToUiRequest()` or their server-side timeout.
   */
  onExtensionUiRequest?: (request: RpcExtensionUiRequest) => RpcUiAnswer | Promise<RpcUiAnswer>;
  /**
   * Asks a person whether a command or write the OS sandbox blocked may run outside it (the
   * `sandbox_escalation` request; the server sends it only with `sandbox.allowEscalation`). True
   * allows. Without it the client denies at once; `onExtensionUiRequest` never answers it.
   */
  onSandboxEscalation?: (request: RpcExtensionUiRequest & { method: "sandbox_escalation" }) => boolean | Promise<boolean>;
  /** Milliseconds to wait for a command's response (default 30,000; 0 = no limit). */
  requestTimeoutMs?: number;
  /** Called with every stderr chunk (default: collected, see getStderr()). */
  onStderr?: (text: string) => void;
}

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);
const STDERR_KEEP = 64 * 1024;

/** A command the server answered with `success: false`. */
export class RpcCommandError extends Error {
  constructor(
    readonly command: string,
    message: string,
    readonly response: RpcResponse,
  ) {
    super(`${command}: ${message}`);
    this.name = "RpcCommandError";
  }
}

interface PendingRequest {
  type: string;
  resolve(response: RpcResponse): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
}

interface Waiter {
  reject(error: Error): void;
}

export class RpcClient {
  private child: ChildProcess | null = null;
  private readonly listeners = new Set<RpcEventListener>();
  private readonly pending = new Map<string, PendingRequest>();
  private readonly waiters = new Set<Waiter>();
  private nextId = 0;
  private stderrText = "";
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Prompts sent and not yet answered; a run in progress (agent_start seen, agent_settled not yet). */
  private promptsInFlight = 0;
  private running = false;
  private stopping = false;

  constructor(private readonly options: RpcClientOptions = {}) {}

  /** The child's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the child ended (undefined while it runs or before start). */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** Whether the child is running. */
  get isRunning(): boolean {
    return this.child !== null && this.exitInfo === undefined;
  }

  /** Whether a run is in progress or a prompt awaits its answer (as far as this client has seen). */
  get isBusy(): boolean {
    return this.running || this.promptsInFlight > 0;
  }

  /** Spawns the CLI and resolves once it answers (a `get_state` round trip). */
  async start(): Promise<void> {
    if (this.child) throw new Error("RpcClient: already started");
    const o = this.options;
    const cliPath = o.cliPath ?? defaultCliPath();
    const args = ["--mode", "rpc"];
    if (o.provider) args.push("--provider", o.provider);
    if (o.model) args.push("--model", o.model);
    if (o.args) args.push(...o.args);
    const child = spawn(o.nodePath ?? process.execPath, [cliPath, ...args], {
      cwd: o.cwd,
      env: o.inheritEnv === false ? { ...o.env } : { ...process.env, ...o.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.exitInfo = undefined;
    this.stopping = false;
    this.exited = new Promise<void>((resolve) => {
      child.once("close", (code, signal) => {
        this.onExit(code, signal);
        resolve();
      });
    });
    child.once("error", (error) => {
      // spawn failures (ENOENT) and the like; "close" may not follow.
      this.onExit(null, null, error);
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (o.onStderr) o.onStderr(chunk);
      this.stderrText = (this.stderrText + chunk).slice(-STDERR_KEEP);
    });
    const reader = new JsonlLineReader((line) => this.handleLine(line));
    child.stdout!.on("data", (chunk: Buffer) => reader.push(chunk));
    child.stdout!.on("end", () => reader.end());
    // A child that dies makes writes fail with EPIPE; the exit handler reports it.
    child.stdin!.on("error", () => {});
    await this.send({ type: "get_state" });
  }

  /**
   * Ends the child: closes its stdin (the server disposes the session and exits 0), then
   * SIGTERM after `graceMs`, SIGKILL after another second. Pending requests and waits reject.
   */
  async stop(graceMs = 2000): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.stopping = true;
    this.failAll(new Error("RpcClient: stopped"));
    if (this.exitInfo === undefined) {
      child.stdin?.end();
      const term = setTimeout(() => child.kill("SIGTERM"), graceMs);
      const kill = setTimeout(() => child.kill("SIGKILL"), graceMs + 1000);
      await this.exited;
      clearTimeout(term);
      clearTimeout(kill);
    }
    this.child = null;
  }

  /** Subscribes to every non-response record. Returns the unsubscribe function. */
  onEvent(listener: RpcEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The last 64 KiB of the child's stderr. */
  getStderr(): string {
    return this.stderrText;
  }

  /** Sends a command and resolves with its response (success or not). */
  send(command: RpcCommand): Promise<RpcResponse> {
    const child = this.child;
    if (!child || this.exitInfo !== undefined || !child.stdin || child.stdin.destroyed) {
      return Promise.reject(new Error(this.exitInfo ? this.deathMessage(`cannot send "${command.type}"`) : "RpcClient: not started (call start() first)"));
    }
    const id = `req_${++this.nextId}`;
    return new Promise<RpcResponse>((resolve, reject) => {
      const p: PendingRequest = { type: command.type, resolve, reject };
      const timeoutMs = this.options.requestTimeoutMs ?? 30000;
      if (timeoutMs > 0) {
        p.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new Error(`RpcClient: no response to "${command.type}" within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this.pending.set(id, p);
      child.stdin!.write(JSON.stringify({ ...command, id }) + "\n");
    });
  }

  /** Sends a command; resolves with its data, rejects with RpcCommandError when it failed. */
  async request<K extends RpcCommandType>(command: RpcCommandMap[K]): Promise<RpcResponseData<K>> {
    const response = await this.send(command);
    if (!response.success) throw new RpcCommandError(command.type, response.error, response);
    return response.data as RpcResponseData<K>;
  }

  /** Answers a dialog by hand (when no `onExtensionUiRequest` handler answered it). */
  respondToUiRequest(id: string, answer: RpcUiAnswer): void {
    const child = this.child;
    if (!child?.stdin || child.stdin.destroyed || this.exitInfo) return;
    let record: Record<string, unknown>;
    if (answer === undefined) record = { cancelled: true };
    else if (typeof answer === "string") record = { value: answer };
    else if (typeof answer === "boolean") record = { confirmed: answer };
    else record = { ...answer };
    child.stdin.write(JSON.stringify({ type: "extension_ui_response", id, ...record }) + "\n");
  }

  // ---- commands -------------------------------------------------------------------------------

  /**
   * Sends user input; resolves at acceptance with how it was taken ("started", "queued",
   * "handled"); the run continues as events. pi's form `prompt(message, images?,
   * streamingBehavior?)`; an options object `{images, streamingBehavior}` as the second argument
   * is accepted too.
   */
  async prompt(message: string, images?: RpcImages | PromptOpts, streamingBehavior?: "steer" | "followUp"): Promise<Disposition> {
    const opts = promptOpts(images, streamingBehavior);
    this.promptsInFlight++;
    try {
      return (await this.request<"prompt">({ type: "prompt", message, ...opts })).disposition;
    } finally {
      this.promptsInFlight--;
    }
  }
  /** Queues a steering message (or starts a run when idle); resolves with the disposition. */
  async steer(message: string, images?: RpcCommandMap["steer"]["images"]): Promise<Disposition> {
    return (await this.request<"steer">({ type: "steer", message, images })).disposition;
  }
  /** Queues a follow-up message (or starts a run when idle); resolves with the disposition. */
  async followUp(message: string, images?: RpcCommandMap["follow_up"]["images"]): Promise<Disposition> {
    return (await this.request<"follow_up">({ type: "follow_up", message, images })).disposition;
  }
  /** Aborts the run; resolves once the session is idle. */
  async abort(): Promise<void> {
    await this.request<"abort">({ type: "abort" });
  }
  clearQueue() {
    return this.request<"clear_queue">({ type: "clear_queue" });
  }
  getQueue() {
    return this.request<"get_queue">({ type: "get_queue" });
  }
  newSession(parentSession?: string) {
    return this.request<"new_session">({ type: "new_session", parentSession });
  }
  getState() {
    return this.request<"get_state">({ type: "get_state" });
  }
  async getMessages() {
    return (await this.request<"get_messages">({ type: "get_messages" })).messages;
  }
  async getEntries(since?: string) {
    return (await this.request<"get_entries">({ type: "get_entries", since })).entries;
  }
  getTree() {
    return this.request<"get_tree">({ type: "get_tree" });
  }
  setModel(provider: string, modelId: string) {
    return this.request<"set_model">({ type: "set_model", provider, modelId });
  }
  cycleModel() {
    return this.request<"cycle_model">({ type: "cycle_model" });
  }
  async getAvailableModels() {
    return (await this.request<"get_available_models">({ type: "get_available_models" })).models;
  }
  async setThinkingLevel(level: RpcCommandMap["set_thinking_level"]["level"]): Promise<void> {
    await this.request<"set_thinking_level">({ type: "set_thinking_level", level });
  }
  cycleThinkingLevel() {
    return this.request<"cycle_thinking_level">({ type: "cycle_thinking_level" });
  }
  async getAvailableThinkingLevels() {
    return (await this.request<"get_available_thinking_levels">({ type: "get_available_thinking_levels" })).levels;
  }
  async setSteeringMode(mode: "all" | "one-at-a-time"): Promise<void> {
    await this.request<"set_steering_mode">({ type: "set_steering_mode", mode });
  }
  async setFollowUpMode(mode: "all" | "one-at-a-time"): Promise<void> {
    await this.request<"set_follow_up_mode">({ type: "set_follow_up_mode", mode });
  }
  compact(customInstructions?: string) {
    return this.request<"compact">({ type: "compact", customInstructions });
  }
  async setAutoCompaction(enabled: boolean): Promise<void> {
    await this.request<"set_auto_compaction">({ type: "set_auto_compaction", enabled });
  }
  async setAutoRetry(enabled: boolean): Promise<void> {
    await this.request<"set_auto_retry">({ type: "set_auto_retry", enabled });
  }
  async abortRetry(): Promise<void> {
    await this.request<"abort_retry">({ type: "abort_retry" });
  }
  bash(command: string, opts: { excludeFromContext?: boolean } = {}) {
    return this.request<"bash">({ type: "bash", command, ...opts });
  }
  async abortBash(): Promise<void> {
    await this.request<"abort_bash">({ type: "abort_bash" });
  }
  getSessionStats() {
    return this.request<"get_session_stats">({ type: "get_session_stats" });
  }
  exportHtml(outputPath?: string) {
    return this.request<"export_html">({ type: "export_html", outputPath });
  }
  switchSession(sessionPath: string) {
    return this.request<"switch_session">({ type: "switch_session", sessionPath });
  }
  fork(entryId: string) {
    return this.request<"fork">({ type: "fork", entryId });
  }
  clone() {
    return this.request<"clone">({ type: "clone" });
  }
  async getForkMessages() {
    return (await this.request<"get_fork_messages">({ type: "get_fork_messages" })).messages;
  }
  async getLastAssistantText() {
    return (await this.request<"get_last_assistant_text">({ type: "get_last_assistant_text" })).text;
  }
  async setSessionName(name: string): Promise<void> {
    await this.request<"set_session_name">({ type: "set_session_name", name });
  }
  async getCommands() {
    return (await this.request<"get_commands">({ type: "get_commands" })).commands;
  }

  // ---- waiting --------------------------------------------------------------------------------

  /** Resolves when the agent is idle: at once if nothing runs, else on the next `agent_settled`. */
  waitForIdle(timeoutMs = 60000): Promise<void> {
    if (!this.isBusy) return this.exitInfo ? Promise.reject(new Error(this.deathMessage("waitForIdle"))) : Promise.resolve();
    return this.collectEvents(timeoutMs).then(() => undefined);
  }

  /** Collects every event until the next `agent_settled` (included). */
  collectEvents(timeoutMs = 60000): Promise<RpcEvent[]> {
    return this.collectUntil(timeoutMs);
  }

  /**
   * Sends a prompt and resolves with every event up to its `agent_settled` (subscribed before
   * sending, so nothing is missed). A prompt an extension command handled resolves at once with
   * the events seen so far; a rejected prompt rejects.
   */
  async promptAndWait(message: string, images?: RpcImages | PromptOpts, timeoutMs = 60000): Promise<RpcEvent[]> {
    const opts = promptOpts(images);
    let settle: (() => void) | undefined;
    const events = this.collectUntil(timeoutMs, (done) => (settle = done));
    events.catch(() => {});
    const disposition = await this.prompt(message, opts).catch((e) => {
      settle?.();
      throw e;
    });
    if (disposition === "handled") settle?.();
    return events;
  }

  private collectUntil(timeoutMs: number, expose?: (finishNow: () => void) => void): Promise<RpcEvent[]> {
    return new Promise<RpcEvent[]>((resolve, reject) => {
      if (this.exitInfo) {
        reject(new Error(this.deathMessage("collectEvents")));
        return;
      }
      const events: RpcEvent[] = [];
      const waiter: Waiter = {
        reject: (error) => {
          cleanup();
          reject(error);
        },
      };
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              cleanup();
              reject(new Error(`RpcClient: the agent did not settle within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      const unsubscribe = this.onEvent((event) => {
        events.push(event);
        if (event.type === "agent_settled") {
          cleanup();
          resolve(events);
        }
      });
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        unsubscribe();
        this.waiters.delete(waiter);
      };
      this.waiters.add(waiter);
      expose?.(() => {
        cleanup();
        resolve(events);
      });
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private handleLine(line: string): void {
    let record: any;
    try {
      record = JSON.parse(line);
    } catch {
      return; // not ours to interpret; stdout carries protocol records only
    }
    if (!record || typeof record !== "object") return;
    if (record.type === "response" && typeof record.id === "string" && this.pending.has(record.id)) {
      const p = this.pending.get(record.id)!;
      this.pending.delete(record.id);
      if (p.timer) clearTimeout(p.timer);
      // The response to a started prompt precedes agent_start: the run counts from now.
      if (record.success && record.data?.disposition === "started") this.running = true;
      p.resolve(record as RpcResponse);
      return;
    }
    if (record.type === "agent_start") this.running = true;
    else if (record.type === "agent_settled") this.running = false;
    for (const l of [...this.listeners]) {
      try {
        l(record as RpcEvent);
      } catch {
        /* a failing listener must not stop the others */
      }
    }
    if (record.type === "extension_ui_request" && (record as { method?: unknown }).method === "sandbox_escalation") {
      void this.answerEscalation(record as RpcExtensionUiRequest & { method: "sandbox_escalation" });
    } else if (record.type === "extension_ui_request" && this.options.onExtensionUiRequest) {
      void this.answerUi(record as RpcExtensionUiRequest);
    }
  }

  /** Only a handler written for it may allow an escalation; an error or no handler denies. */
  private async answerEscalation(request: RpcExtensionUiRequest & { method: "sandbox_escalation" }): Promise<void> {
    let allow = false;
    try {
      allow = this.options.onSandboxEscalation ? (await this.options.onSandboxEscalation(request)) === true : false;
    } catch {
      allow = false;
    }
    this.respondToUiRequest(request.id, { escalation: allow ? "allow" : "deny" });
  }

  private async answerUi(request: RpcExtensionUiRequest): Promise<void> {
    let answer: RpcUiAnswer;
    try {
      answer = await this.options.onExtensionUiRequest!(request);
    } catch {
      answer = undefined;
    }
    if (DIALOGS.has(request.method)) this.respondToUiRequest(request.id, answer);
  }

  private deathMessage(what: string): string {
    const info = this.exitInfo;
    const how = info?.signal ? `was killed by ${info.signal}` : `exited with code ${info?.code}`;
    const tail = this.stderrText.trim().split("\n").slice(-5).join("\n");
    return `RpcClient: ${what}: the pi process ${how}${tail ? `; stderr:\n${tail}` : ""}`;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal };
    this.running = false;
    const reason = error ? new Error(`RpcClient: could not run the pi process: ${error.message}`) : undefined;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      if (p.timer) clearTimeout(p.timer);
      p.reject(reason ?? new Error(this.stopping ? "RpcClient: stopped" : this.deathMessage(`no response to "${p.type}"`)));
    }
    for (const w of [...this.waiters]) w.reject(reason ?? new Error(this.stopping ? "RpcClient: stopped" : this.deathMessage("waiting for the agent")));
  }

  private failAll(error: Error): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      if (p.timer) clearTimeout(p.timer);
      p.reject(error);
    }
    for (const w of [...this.waiters]) w.reject(error);
  }
}

/** This package's `pi` binary (the bundle), or the unbundled entry when only tsc output exists. */
function defaultCliPath(): string {
  const root = packageInfo().root;
  const bundled = join(root, "dist", "bundle", "cli.js");
  return existsSync(bundled) ? bundled : join(root, "dist", "sdk", "cli.js");
}
