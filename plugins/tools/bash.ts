/**
 * bash: run a command with the configured shell in the project folder.
 *
 * stdout and stderr are merged and streamed to `onUpdate` (throttled); the result keeps the
 * tail of the output (2,000 lines / 50 KB) and, when that cut anything, the whole output is in a
 * temp file whose path is given. The shell runs in its own process group, so an abort or a
 * timeout ends everything it started (SIGTERM, then SIGKILL).
 */
import { commandProcesses, newRunToken, TOOL_RUN_ENV } from "./process-tree.js";
import { canPrepare, discardPreparedShell, prepareShell, takePreparedShell, wantPreparedShell } from "./prepared-shell.js";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, statSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { Type, type Static } from "typebox";
import { type ToolDefinition, wrapCommand, type CommandSpec } from "../../core/kernel/index.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, sanitizeOutput, truncateTail, type TruncationResult } from "./truncate.js";

const bashSchema = Type.Object({
  command: Type.String({ description: "The command line to run" }),
  timeout: Type.Optional(Type.Number({ description: "Stop the command after this many seconds (no limit by default)" })),
});

export type BashToolInput = Static<typeof bashSchema>;

export interface BashToolDetails {
  truncation?: TruncationResult;
  fullOutputPath?: string;
}

export interface BashExecOptions {
  /** Receives stdout and stderr as they arrive. */
  onData: (data: Buffer) => void;
  signal?: AbortSignal;
  /** Seconds. */
  timeout?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs commands; replace it to run them elsewhere (ssh, a container). `exec` resolves with the
 * exit code (null when the process was killed by a signal), and rejects with
 * `new Error("aborted")` after an abort and `new Error("timeout:<seconds>")` after a timeout.
 */
export interface BashOperations {
  exec(command: string, cwd: string, options: BashExecOptions): Promise<{ exitCode: number | null; signal?: NodeJS.Signals | null }>;
}

export interface BashSpawnContext {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}
export type BashSpawnHook = (context: BashSpawnContext) => BashSpawnContext;

export interface BashToolOptions {
  operations?: BashOperations;
  /** Prepended (on its own line) to every command, e.g. `shopt -s expand_aliases`. */
  commandPrefix?: string;
  /** The shell to use (settings `shellPath`); default /bin/bash, bash on PATH, then sh. */
  shellPath?: string;
  /**
   * Give commands the current session as PI_SESSION_ID, PI_SESSION_FILE, PI_PROVIDER, PI_MODEL and
   * PI_REASONING_LEVEL (read when each command starts; before spawnHook). Default true.
   */
  exposeSessionEnvironment?: boolean;
  /** Adjusts command, cwd or environment just before the command runs. */
  spawnHook?: BashSpawnHook;
}

// ---- shell and processes ----------------------------------------------------------------------

export interface ShellConfig {
  shell: string;
  args: string[];
}

/** The first regular file `name` in a folder of PATH (`Path` on Windows), or undefined. */
export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? process.env.Path ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** The shell a command runs in: `shellPath` when given (it must exist), else bash, else sh. */
export function getShellConfig(shellPath?: string): ShellConfig {
  if (shellPath) {
    if (!existsSync(shellPath)) throw new Error(`The configured shell (shellPath) does not exist: ${shellPath}`);
    return { shell: shellPath, args: ["-c"] };
  }
  if (process.platform === "win32") {
    const candidates = [process.env.ProgramFiles, process.env["ProgramFiles(x86)"]]
      .filter((d): d is string => !!d)
      .map((d) => join(d, "Git", "bin", "bash.exe"));
    for (const c of candidates) if (existsSync(c)) return { shell: c, args: ["-c"] };
    const onPath = findOnPath("bash.exe");
    if (onPath) return { shell: onPath, args: ["-c"] };
    throw new Error("No bash found: install Git for Windows or set shellPath in settings.json");
  }
  if (existsSync("/bin/bash")) return { shell: "/bin/bash", args: ["-c"] };
  const onPath = findOnPath("bash");
  if (onPath) return { shell: onPath, args: ["-c"] };
  return { shell: "/bin/sh", args: ["-c"] };
}

/** Grace period between SIGTERM and SIGKILL when stopping a command. */
export const KILL_GRACE_MS = 2000;

function signalAll(pid: number, others: number[], signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
  for (const p of others) {
    try {
      process.kill(p, signal);
    } catch {
      /* gone meanwhile */
    }
  }
}

/**
 * End a process, everything in its process group and — on Linux — every process it started
 * that left the group (`setsid`, an orphan of a double fork; found by ancestry and by the
 * `token` in their environment, process-tree.ts): SIGTERM now, SIGKILL after `graceMs` for
 * whatever is still there.
 */
export function killProcessTree(pid: number, graceMs = KILL_GRACE_MS, token?: string): void {
  if (process.platform === "win32") {
    try {
      spawn("taskkill", ["/F", "/T", "/PID", String(pid)], { stdio: "ignore", detached: true }).unref();
    } catch {
      /* already gone */
    }
    return;
  }
  // Found before signalling: once the shell dies, ancestry no longer leads to its children.
  const others = commandProcesses(pid, token);
  signalAll(pid, others, "SIGTERM");
  const t = setTimeout(() => signalAll(pid, [...new Set([...others, ...commandProcesses(pid, token)])], "SIGKILL"), graceMs);
  t.unref();
}

/** After the shell exits, how long to wait for its pipes to close (a background child may hold them). */
const STDIO_GRACE_MS = 100;

export function createLocalBashOperations(options: { shellPath?: string } = {}): BashOperations {
  return createLocalShellOperations(() => getShellConfig(options.shellPath));
}

/**
 * A prepared bash reads its command from a pipe one byte per read (bash reads pipes unbuffered):
 * longer commands (a file written through a heredoc) are spawned with the command as an argument.
 */
const PREPARED_COMMAND_MAX = 4096;

/**
 * Start a bash for the bash tool's next command ahead of time (prepared-shell.ts), with the
 * environment that command will have (`ctx` as the tool gets it); nothing when a command wrapper
 * (the sandbox) would take it or the shell is not bash.
 */
export function prepareBashTool(cwd: string, ctx: unknown, shellPath?: string): void {
  let shell: ShellConfig;
  try {
    shell = getShellConfig(shellPath);
  } catch {
    return;
  }
  if (!canPrepare(shell.shell, shell.args)) return;
  const env = sessionEnvironment(ctx);
  const probe: CommandSpec = { file: shell.shell, args: [...shell.args, ""], cwd, env };
  try {
    if (wrapCommand(probe, "bash") !== probe) return;
  } catch {
    return; // the wrapper cannot work (the command will say why)
  }
  prepareShell(shell.shell, cwd, env);
}

/**
 * Operations running commands with the shell `resolveShell` names (asked on every command);
 * `prepared`: the bash tool's own, which may use a bash started ahead (prepared-shell.ts).
 */
export function createLocalShellOperations(resolveShell: () => ShellConfig, prepared = false): BashOperations {
  return {
    exec(command, cwd, { onData, signal, timeout, env }) {
      return new Promise((resolve, reject) => {
        let shell: ShellConfig;
        try {
          shell = resolveShell();
        } catch (e) {
          reject(e);
          return;
        }
        if (!existsSync(cwd)) {
          reject(new Error(`Working directory does not exist: ${cwd}`));
          return;
        }
        if (signal?.aborted) {
          reject(new Error("aborted"));
          return;
        }
        // the command goes through the kernel's command wrapper (core/kernel/command-wrapper.ts).
        // Its processes carry a marker, so those that leave the process group are still ended.
        const token = newRunToken();
        const plain: CommandSpec = { file: shell.shell, args: [...shell.args, command], cwd, env: { ...(env ?? process.env), [TOOL_RUN_ENV]: token } };
        let spec: CommandSpec;
        try {
          spec = wrapCommand(plain, "bash");
        } catch (e) {
          reject(e);
          return;
        }
        // For the bash tool, when no wrapper took the command: a bash started ahead may run it,
        // and one is wanted for the next command (prepared-shell.ts).
        const usePrepared = prepared && spec === plain && canPrepare(shell.shell, shell.args);
        const child =
          (usePrepared && command.length <= PREPARED_COMMAND_MAX ? takePreparedShell(shell.shell, cwd, spec.env!, token, command) : undefined) ??
          spawn(spec.file, spec.args, {
            cwd: spec.cwd,
            env: spec.env,
            detached: process.platform !== "win32",
            stdio: ["ignore", "pipe", "pipe"],
            windowsHide: true,
          });
        if (usePrepared) wantPreparedShell(shell.shell, cwd, spec.env!);
        else if (prepared && spec !== plain) discardPreparedShell(); // a wrapper (the sandbox) takes the commands now: no bash waits outside it
        let timedOut = false;
        let wasAborted = false;
        let settled = false;
        let timer: NodeJS.Timeout | undefined;
        let graceTimer: NodeJS.Timeout | undefined;
        const stop = () => {
          if (child.pid) killProcessTree(child.pid, KILL_GRACE_MS, token);
        };
        const onAbort = () => {
          wasAborted = true;
          stop();
        };
        if (timeout !== undefined && timeout > 0) {
          timer = setTimeout(() => {
            timedOut = true;
            stop();
          }, timeout * 1000);
        }
        signal?.addEventListener("abort", onAbort, { once: true });
        child.stdout!.on("data", onData);
        child.stderr!.on("data", onData);

        let exited = false;
        let exitCode: number | null = null;
        let exitSignal: NodeJS.Signals | null = null;
        let openStreams = 2;
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          if (timer) clearTimeout(timer);
          if (graceTimer) clearTimeout(graceTimer);
          signal?.removeEventListener("abort", onAbort);
          child.stdout!.destroy();
          child.stderr!.destroy();
          fn();
        };
        const finish = () =>
          settle(() => {
            if (wasAborted) reject(new Error("aborted"));
            else if (timedOut) reject(new Error(`timeout:${timeout}`));
            else resolve({ exitCode, signal: exitSignal });
          });
        const onEnd = () => {
          openStreams--;
          if (exited && openStreams <= 0) finish();
        };
        child.stdout!.once("close", onEnd);
        child.stderr!.once("close", onEnd);
        child.once("exit", (code, sig) => {
          exited = true;
          exitCode = code;
          exitSignal = sig;
          if (openStreams <= 0) finish();
          else graceTimer = setTimeout(finish, STDIO_GRACE_MS);
        });
        child.once("error", (err) => settle(() => reject(new Error(`Could not start ${shell.shell}: ${err.message}`))));
      });
    },
  };
}

// ---- output collection ------------------------------------------------------------------------

/**
 * Collects streamed output with bounded memory: a rolling decoded tail for display, counters
 * for the totals, and a temp file with every byte once the output outgrows the limits.
 */
export class OutputCollector {
  private readonly decoder = new StringDecoder("utf8");
  private tail = "";
  /** The tail no longer starts at the beginning of a line. */
  private tailCut = false;
  private rawBytes = 0;
  private newlines = 0;
  private lastLineBytes = 0;
  private pending: Buffer[] = [];
  private file: WriteStream | undefined;
  private fileError: Error | undefined;
  filePath: string | undefined;

  constructor(
    private readonly maxLines = DEFAULT_MAX_LINES,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
    private readonly tempPrefix = "pi-bash",
  ) {}

  append(data: Buffer): void {
    this.rawBytes += data.length;
    let last = -1;
    for (let p = data.indexOf(10); p >= 0; p = data.indexOf(10, p + 1)) {
      this.newlines++;
      last = p;
    }
    this.lastLineBytes = last < 0 ? this.lastLineBytes + data.length : data.length - last - 1;
    this.tail += this.decoder.write(data);
    const keep = this.maxBytes * 2;
    if (this.tail.length > keep * 2) {
      const from = this.tail.length - keep;
      this.tailCut = this.tail.charCodeAt(from - 1) !== 10;
      this.tail = this.tail.slice(from);
    }
    if (this.file) this.file.write(data);
    else {
      this.pending.push(data);
      if (this.overLimits()) this.openFile();
    }
  }

  private overLimits(): boolean {
    return this.rawBytes > this.maxBytes || this.newlines + 1 > this.maxLines;
  }

  private openFile(): void {
    this.filePath = join(tmpdir(), `${this.tempPrefix}-${randomBytes(8).toString("hex")}.log`);
    // Full output may hold secrets: a new file (never one planted at the name), owner only.
    this.file = createWriteStream(this.filePath, { flags: "wx", mode: 0o600 });
    this.file.on("error", (e) => (this.fileError = e));
    for (const b of this.pending) this.file.write(b);
    this.pending = [];
  }

  /** Flush the decoder (at the end of the output). */
  end(): void {
    this.tail += this.decoder.end();
  }

  get lastLineSize(): number {
    return this.lastLineBytes;
  }

  snapshot(): { text: string; truncation: TruncationResult; fullOutputPath?: string } {
    let text = this.tail;
    if (this.tailCut) {
      const nl = text.indexOf("\n");
      if (nl >= 0) text = text.slice(nl + 1);
    }
    const t = truncateTail(text, { maxLines: this.maxLines, maxBytes: this.maxBytes });
    const truncated = this.overLimits();
    const truncation: TruncationResult = {
      ...t,
      truncated,
      truncatedBy: truncated ? (t.truncatedBy ?? (this.rawBytes > this.maxBytes ? "bytes" : "lines")) : null,
      totalLines: this.newlines + 1,
      totalBytes: this.rawBytes,
    };
    return { text: t.content, truncation, fullOutputPath: this.filePath };
  }

  /** Close the temp file; resolves once it is written. */
  close(): Promise<void> {
    const f = this.file;
    if (!f) return Promise.resolve();
    this.file = undefined;
    return new Promise((resolve) => {
      if (this.fileError) return resolve();
      f.end(() => resolve());
      f.once("error", () => resolve());
    });
  }
}

// ---- the tool ---------------------------------------------------------------------------------

const UPDATE_INTERVAL_MS = 100;

function checkTimeout(t: unknown): number | undefined {
  if (t === undefined || t === null) return undefined;
  if (typeof t !== "number" || !Number.isFinite(t) || t < 0) throw new Error(`timeout must be a positive number of seconds, got ${JSON.stringify(t)}`);
  // setTimeout cannot wait longer than about 24.8 days; treat longer as no timeout.
  return t === 0 || t * 1000 > 2 ** 31 - 1 ? undefined : t;
}

export function createBashToolDefinition(cwd: string, options: BashToolOptions = {}): ToolDefinition<BashToolInput, BashToolDetails | undefined> {
  return createShellToolDefinition(
    cwd,
    {
      name: "bash",
      description:
        `Run a shell command in the working directory; stdout and stderr are returned together. ` +
        `Long output keeps its last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB, and the complete output is saved to a temp file whose path is given. ` +
        `A timeout in seconds can be set.`,
      promptSnippet: "Run shell commands (build, test, git, ls, …)",
      promptGuidelines: [
        "Use bash for builds, tests, git and other programs; use read, edit and write for files.",
        "Set a timeout for commands that might not finish on their own (servers, watchers).",
      ],
    },
    { ...options, operations: options.operations ?? createLocalShellOperations(() => getShellConfig(options.shellPath), true) },
  );
}

/** What tells one shell tool from another (bash, powershell): the rest is shared. */
export interface ShellToolIdentity {
  name: string;
  description: string;
  promptSnippet: string;
  promptGuidelines: string[];
}

/** The environment a command starts with: the process's, with the session's PI_* values from the tool context. */
function sessionEnvironment(ctx: any): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL"]) delete env[k];
  if (!ctx) return env;
  try {
    const id = ctx.sessionManager?.getSessionId?.();
    if (id) env.PI_SESSION_ID = id;
    const file = ctx.sessionManager?.getSessionFile?.();
    if (file) env.PI_SESSION_FILE = file;
    const model = ctx.model;
    if (model) {
      env.PI_PROVIDER = model.provider;
      env.PI_MODEL = model.id;
    }
    if (ctx.thinkingLevel) env.PI_REASONING_LEVEL = ctx.thinkingLevel;
  } catch {
    /* a context without a live session (a tool called outside a run): no session values */
  }
  return env;
}

/** A tool running commands through `options.operations` (required), named and described by `identity`. */
export function createShellToolDefinition(cwd: string, identity: ShellToolIdentity, options: BashToolOptions & { operations: BashOperations }): ToolDefinition<BashToolInput, BashToolDetails | undefined> {
  const ops = options.operations;
  return {
    name: identity.name,
    label: identity.name,
    description: identity.description,
    promptSnippet: identity.promptSnippet,
    promptGuidelines: [...identity.promptGuidelines],
    parameters: bashSchema,
    async execute(_id, params, signal, onUpdate, ctx) {
      const command = params?.command;
      if (typeof command !== "string" || command.trim() === "") throw new Error(`${identity.name} needs a command (a non-empty string)`);
      const timeout = checkTimeout(params.timeout);
      const full = options.commandPrefix ? `${options.commandPrefix}\n${command}` : command;
      let context: BashSpawnContext = { command: full, cwd, env: sessionEnvironment(options.exposeSessionEnvironment === false ? undefined : ctx) };
      if (options.spawnHook) context = options.spawnHook(context);

      const out = new OutputCollector();
      let lastUpdate = 0;
      let timer: NodeJS.Timeout | undefined;
      let dirty = false;
      const emit = () => {
        timer = undefined;
        if (!onUpdate || !dirty) return;
        dirty = false;
        lastUpdate = Date.now();
        const snap = out.snapshot();
        try {
          onUpdate({
            content: [{ type: "text", text: sanitizeOutput(snap.text) }],
            details: { truncation: snap.truncation.truncated ? snap.truncation : undefined, fullOutputPath: snap.fullOutputPath },
          });
        } catch {
          /* a failing listener must not break the command */
        }
      };
      const onData = (data: Buffer) => {
        out.append(data);
        if (!onUpdate) return;
        dirty = true;
        if (timer) return;
        const wait = UPDATE_INTERVAL_MS - (Date.now() - lastUpdate);
        if (wait <= 0) emit();
        else timer = setTimeout(emit, wait);
      };

      const render = (emptyText: string): { text: string; details?: BashToolDetails } => {
        out.end();
        const snap = out.snapshot();
        const t = snap.truncation;
        let text = sanitizeOutput(snap.text) || emptyText;
        if (!t.truncated) return { text };
        const end = t.totalLines;
        const start = end - t.outputLines + 1;
        const where = `Full output: ${snap.fullOutputPath}`;
        if (t.lastLinePartial) {
          text += `\n\n[Showing the last ${formatSize(t.outputBytes)} of line ${end} (the line is ${formatSize(out.lastLineSize)}). ${where}]`;
        } else if (t.truncatedBy === "lines") {
          text += `\n\n[Showing lines ${start}-${end} of ${end}. ${where}]`;
        } else {
          text += `\n\n[Showing lines ${start}-${end} of ${end} (${formatSize(DEFAULT_MAX_BYTES)} limit). ${where}]`;
        }
        return { text, details: { truncation: t, fullOutputPath: snap.fullOutputPath } };
      };
      const withStatus = (text: string, status: string) => {
        const body = text.replace(/\n+$/, "");
        return body ? `${body}\n\n${status}` : status;
      };

      try {
        let result: { exitCode: number | null; signal?: NodeJS.Signals | null };
        try {
          result = await ops.exec(context.command, context.cwd, { onData, signal, timeout, env: context.env });
        } catch (e) {
          if (timer) clearTimeout(timer);
          const { text } = render("");
          await out.close();
          const msg = e instanceof Error ? e.message : String(e);
          if (msg === "aborted") throw new Error(withStatus(text, "Command aborted"));
          if (msg.startsWith("timeout:")) throw new Error(withStatus(text, `Command timed out after ${msg.slice(8)} seconds`));
          throw new Error(withStatus(text, msg));
        }
        if (timer) clearTimeout(timer);
        const { text, details } = render("(no output)");
        await out.close();
        if (result.exitCode !== 0 && result.exitCode !== null) {
          throw new Error(withStatus(text, `Command exited with code ${result.exitCode}`));
        }
        if (result.exitCode === null && result.signal) {
          throw new Error(withStatus(text, `Command was killed by signal ${result.signal}`));
        }
        return { content: [{ type: "text", text }], details };
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
  };
}

export function createBashTool(cwd: string, options?: BashToolOptions): ToolDefinition<BashToolInput, BashToolDetails | undefined> {
  return createBashToolDefinition(cwd, options);
}
