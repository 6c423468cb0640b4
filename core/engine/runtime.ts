/**
 * AgentSessionRuntime: holds the current AgentSession and the factory that builds sessions for
 * a working directory, and runs every replacement (/new, resume, fork, clone, import) through
 * the same steps:
 *
 *   1. ask: session_before_switch (new, resume, import) or session_before_fork (fork, clone);
 *      a handler returning {cancel: true} stops here and nothing changes
 *   2. check the target (fork entry, file exists) — a bad target throws, nothing changes
 *   3. abort the current run, so the running turn is saved (its aborted answer included)
 *   4. open or create the target session store and build the new session with the factory;
 *      if that throws, the error reaches the caller and the old session keeps working
 *   5. tear down the old session: session_shutdown {reason: "switch"}, dispose
 *   6. switch over, session_start {reason, previousSessionFile} (plus the legacy
 *      session_switch / session_fork events)
 *   7. call the rebind callbacks (modes re-subscribe there), each awaited
 */
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Kernel } from "../kernel/kernel.js";
import type { SessionStartReason } from "../kernel/hooks.js";
import type { AgentSession } from "./agent-session.js";
import { SessionManager } from "../stores/session/session-manager.js";
import { asTreeStore } from "../stores/session/store.js";
import { contentText, copyBranch } from "./tree.js";

export type ReplaceReason = "new" | "resume" | "fork" | "clone" | "import";

/** What the factory is asked to build a session for. */
export interface SessionBuildInput {
  /** The store of the session to build: opened, created or forked by the runtime. */
  sessionManager: SessionManager;
  /** The working directory the session runs in. */
  cwd: string;
  reason: SessionStartReason;
  /** The session being replaced (its model, thinking level and tools carry over to a new session). */
  previous?: AgentSession;
}

/**
 * Builds everything that depends on the working directory and returns the session. Must not
 * emit events or touch the previous session: the runtime does the switching.
 */
export type SessionFactory = (input: SessionBuildInput) => Promise<AgentSession>;

export type RebindCallback = (session: AgentSession) => void | Promise<void>;

export interface ForkOptions {
  /** "before" (default): fork from a user message — the new session ends at its parent and the message text is returned for the editor. "at": the new session ends at the entry itself. */
  position?: "before" | "at";
}

export class AgentSessionRuntime {
  private current: AgentSession;
  private readonly rebinders = new Set<RebindCallback>();
  private switching = false;
  private disposed = false;

  /**
   * Set while a runtime made with `deferStart` has not been started: the kernel is
   * not bound to it and session_start has not been emitted; holds what start() will announce.
   */
  private pendingStart: { reason: SessionStartReason; previousSessionFile?: string } | undefined;

  constructor(
    readonly kernel: Kernel,
    private readonly factory: SessionFactory,
    initial: AgentSession,
    opts: { deferStart?: boolean; reason?: SessionStartReason } = {},
  ) {
    this.current = initial;
    if (opts.deferStart) this.pendingStart = { reason: opts.reason ?? "startup" };
    else kernel.bind(this);
  }

  /**
   * Build the first session and announce it (session_start, reason "startup" by default).
   * With `deferStart` the kernel is bound and session_start emitted only by start().
   */
  static async create(
    kernel: Kernel,
    factory: SessionFactory,
    sessionManager: SessionManager,
    opts: { cwd?: string; reason?: SessionStartReason; deferStart?: boolean } = {},
  ): Promise<AgentSessionRuntime> {
    const reason = opts.reason ?? "startup";
    const session = await factory({ sessionManager, cwd: opts.cwd ?? kernel.cwd, reason });
    const rt = new AgentSessionRuntime(kernel, factory, session, { deferStart: opts.deferStart, reason });
    if (!opts.deferStart) await rt.emitStart(reason);
    return rt;
  }

  /** Whether the kernel is bound to this runtime (always, unless made with `deferStart` and not started yet). */
  get isStarted(): boolean {
    return this.pendingStart === undefined;
  }

  /**
   * Start a runtime made with `deferStart`: bind the kernel to it and emit
   * session_start for the current session. Returns false (and does nothing) when already started.
   */
  async start(): Promise<boolean> {
    const pending = this.pendingStart;
    if (!pending) return false;
    if (this.disposed) throw new Error("the session runtime was disposed");
    this.pendingStart = undefined;
    this.kernel.bind(this);
    await this.emitStart(pending.reason, pending.previousSessionFile);
    return true;
  }

  get session(): AgentSession {
    return this.current;
  }
  get sessionManager(): SessionManager {
    return this.current.sessionManager as SessionManager;
  }
  get cwd(): string {
    return this.current.cwd;
  }
  get isSwitching(): boolean {
    return this.switching;
  }

  /** Modes re-subscribe here after every switch (awaited in order). Returns an unsubscribe function. */
  onRebind(fn: RebindCallback): () => void {
    this.rebinders.add(fn);
    return () => this.rebinders.delete(fn);
  }

  private async emitStart(reason: SessionStartReason, previousSessionFile?: string): Promise<void> {
    if (this.kernel.hooks.session_start.isUsed()) {
      await this.kernel.hooks.session_start.promise({ type: "session_start", reason, previousSessionFile });
    }
  }

  private async askSwitch(reason: "new" | "resume" | "import", targetSessionFile?: string): Promise<boolean> {
    const hook = this.kernel.hooks.session_before_switch;
    if (!hook.isUsed()) return true;
    const r = await hook.promise({ type: "session_before_switch", reason, targetSessionFile });
    return !r?.cancel;
  }

  private async askFork(entryId: string, position: "before" | "at"): Promise<boolean> {
    const hook = this.kernel.hooks.session_before_fork;
    if (!hook.isUsed()) return true;
    const r = await hook.promise({ type: "session_before_fork", entryId, position } as Parameters<typeof hook.promise>[0]);
    return !r?.cancel;
  }

  /**
   * The common steps 3–7 (see the module comment). `open` makes the target store; it runs after
   * the old session was aborted, so it sees the running turn saved.
   */
  private async switchTo(reason: ReplaceReason, open: () => SessionManager | Promise<SessionManager>): Promise<void> {
    const old = this.current;
    const previousSessionFile = old.sessionFile;
    await old.abort();
    (old.sessionManager as Partial<SessionManager>).flushPendingWrites?.();
    const sessionManager = await open();
    const next = await this.factory({ sessionManager, cwd: old.cwd, reason, previous: old });
    await old.dispose("switch", { targetSessionFile: next.sessionFile });
    this.current = next;
    if (this.pendingStart) {
      // not started yet: start() announces the session the runtime holds then.
      this.pendingStart = { reason, previousSessionFile };
    } else {
      this.kernel.bind(this);
      await this.emitStart(reason, previousSessionFile);
      const hooks = this.kernel.hooks;
      if ((reason === "new" || reason === "resume") && hooks.session_switch.isUsed()) {
        await hooks.session_switch.promise({ type: "session_switch", reason, previousSessionFile });
      } else if ((reason === "fork" || reason === "clone") && hooks.session_fork.isUsed()) {
        await hooks.session_fork.promise({ type: "session_fork", previousSessionFile });
      }
    }
    for (const fn of [...this.rebinders]) {
      try {
        await fn(next);
      } catch (error) {
        this.kernel.diagnostics.report({ level: "error", source: "runtime", message: "rebind callback failed", error });
      }
    }
  }

  /** Run one replacement at a time. */
  private async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.disposed) throw new Error("the session runtime was disposed");
    if (this.switching) throw new Error("a session switch is already in progress");
    this.switching = true;
    try {
      return await fn();
    } finally {
      this.switching = false;
    }
  }

  /** Start a new, empty session in the same folder (in memory when the current one is). */
  newSession(options: { parentSession?: string; setup?: (sm: SessionManager) => void | Promise<void> } | string = {}): Promise<{ cancelled: boolean }> {
    // (the form newSession(parentSession) of the first version is still accepted)
    const opts = typeof options === "string" ? { parentSession: options } : options;
    return this.exclusive(async () => {
      if (!(await this.askSwitch("new"))) return { cancelled: true };
      await this.switchTo("new", async () => {
        const cur = this.current.sessionManager as SessionManager;
        const sm = cur.isPersisted() ? SessionManager.create(this.cwd, cur.getSessionDir()) : SessionManager.inMemory(this.cwd);
        if (opts.parentSession) sm.newSession({ parentSession: opts.parentSession });
        if (opts.setup) await opts.setup(sm);
        return sm;
      });
      return { cancelled: false };
    });
  }

  /** Resume a session file (messages, model and thinking level come back). */
  switchSession(path: string): Promise<{ cancelled: boolean }> {
    return this.exclusive(async () => {
      const file = resolve(this.cwd, path);
      if (!existsSync(file)) throw new Error(`session file not found: ${file}`);
      if (!(await this.askSwitch("resume", file))) return { cancelled: true };
      await this.switchTo("resume", () => SessionManager.open(file));
      return { cancelled: false };
    });
  }

  /**
   * Fork the current session into a new file. With position "before" (default) `entryId` must be
   * a user message: the new session holds the path up to its parent, and `selectedText` is the
   * message's text (for the editor). With "at" it holds the path up to the entry itself.
   */
  fork(entryId: string, opts?: ForkOptions): Promise<{ cancelled: boolean; selectedText?: string }>;
  /** @deprecated the first version's form: fork(current session file, entryId) — the new session ends at the entry's parent, whatever its type. */
  fork(sessionFile: string, entryId: string): Promise<{ cancelled: boolean; selectedText?: string }>;
  fork(a: string, b: ForkOptions | string = {}): Promise<{ cancelled: boolean; selectedText?: string }> {
    if (typeof b === "string") {
      const file = this.current.sessionFile;
      if (!file || resolve(this.cwd, a) !== resolve(file)) {
        return Promise.reject(new Error("fork(file, entryId): the file must be the current session's; open another session with switchSession() first"));
      }
      return this.exclusive(() => this.forkFrom(b, "parent", "fork"));
    }
    return this.exclusive(() => this.forkFrom(a, b.position ?? "before", "fork"));
  }

  /** Duplicate the current branch into a new session file (session_before_fork with position "at"; start reason "clone"). */
  clone(): Promise<{ cancelled: boolean }> {
    return this.exclusive(async () => {
      const leaf = asTreeStore(this.current.sessionManager, "clone").getLeafId();
      if (!leaf) throw new Error("nothing to clone: the session has no entries yet");
      const r = await this.forkFrom(leaf, "at", "clone");
      return { cancelled: r.cancelled };
    });
  }

  private async forkFrom(entryId: string, position: "before" | "at" | "parent", reason: "fork" | "clone"): Promise<{ cancelled: boolean; selectedText?: string }> {
    const store = asTreeStore(this.current.sessionManager, reason);
    const entry = store.getEntry(entryId);
    if (!entry) throw new Error(`${reason}: no entry "${entryId}" in this session`);
    let leafId: string | null;
    let selectedText: string | undefined;
    if (position === "at") leafId = entry.id;
    else if (position === "parent") {
      leafId = entry.parentId;
      if (entry.type === "message" && entry.message.role === "user") selectedText = contentText(entry.message.content);
    } else {
      if (entry.type !== "message" || entry.message.role !== "user") {
        throw new Error(`fork: entry "${entryId}" is not a user message (fork from a user message, or use position "at")`);
      }
      leafId = entry.parentId;
      selectedText = contentText(entry.message.content);
    }
    if (!(await this.askFork(entryId, position === "at" ? "at" : "before"))) return { cancelled: true };
    await this.switchTo(reason, () => this.branchInto(leafId));
    return { cancelled: false, selectedText };
  }

  /** A new store holding the current session's path root → leafId (empty for null), parentSession = the current file. */
  private branchInto(leafId: string | null): SessionManager {
    const cur = this.current.sessionManager as SessionManager;
    const file = cur.getSessionFile();
    const persisted = cur.isPersisted();
    if (persisted && file && leafId && existsSync(file)) {
      // The usual case: a fresh reader of the file branches off (entry ids are kept); the current store is untouched.
      const source = SessionManager.open(file, cur.getSessionDir(), cur.getCwd());
      if (source.getEntry(leafId)) {
        source.createBranchedSession(leafId);
        return source;
      }
    }
    const sm = persisted ? SessionManager.create(this.cwd, cur.getSessionDir()) : SessionManager.inMemory(this.cwd);
    if (persisted && file) sm.newSession({ parentSession: file });
    if (leafId) copyBranch(sm, cur.getBranch(leafId));
    return sm;
  }

  /**
   * Import a session file: it is copied into the current session folder and resumed from there
   * (start reason "import").
   */
  importSession(path: string): Promise<{ cancelled: boolean }> {
    return this.exclusive(async () => {
      const source = resolve(this.cwd, path);
      if (!existsSync(source)) throw new Error(`import: file not found: ${source}`);
      const cur = this.current.sessionManager as SessionManager;
      if (!cur.isPersisted()) throw new Error("import: sessions are not being saved (--no-session); open the file with --session instead");
      const dir = cur.getSessionDir();
      const dest = join(dir, basename(source));
      if (!(await this.askSwitch("import", dest))) return { cancelled: true };
      await this.switchTo("import", () => {
        if (resolve(dest) !== source) {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          copyFileSync(source, dest);
        }
        return SessionManager.open(dest, dir);
      });
      return { cancelled: false };
    });
  }

  /** Abort, session_shutdown {reason: "exit"}, dispose. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.current.dispose("exit");
  }
}
