/**
 * The checkpoints service: capture around the agent's file changes, and list / diff / restore
 * for the /rewind command, RPC and the SDK. One store per project folder; every git operation
 * of a process goes through one queue so captures and restores never interleave.
 */
import type { Kernel } from "../../core/kernel/index.js";
import { CheckpointError, CheckpointStore, DEFAULTS, storeDirFor, type FileChange, type StoreOptions } from "./store.js";
import { CHECKPOINT_TYPE, checkpointOf, rewindPoints, stateAt, type CheckpointData, type CheckpointPhase, type AfterOf, type EntryLike, type RewindPoint } from "./points.js";

/** The parts of a session this service uses. */
export interface SessionLike {
  cwd: string;
  sessionManager: {
    getBranch(leafId?: string | null): EntryLike[];
    getEntry(id: string): EntryLike | undefined;
    getEntries?(): EntryLike[];
    appendCustomEntry(customType: string, data?: unknown): string;
  };
  navigateTree(targetId: string, opts?: { summarize?: boolean }): Promise<{ cancelled: boolean; editorText?: string }>;
  isStreaming?: boolean;
}

export interface CheckpointSettings extends Required<StoreOptions> {
  enabled: boolean;
}

export type RestoreMode = "both" | "code" | "conversation";

export interface RestorePlan {
  point: RewindPoint;
  /** Files the restore writes or deletes. */
  changes: FileChange[];
  /** Of those, files changed outside the agent since its last checkpoint. */
  external: string[];
  /** The tree of the files as they are now (captured for the plan; the undo point). */
  current: string;
}

export interface RestoreResult {
  mode: RestoreMode;
  restored: string[];
  /** Files changed outside the agent that were kept. */
  kept: string[];
  editorText?: string;
  cancelled?: boolean;
}

export interface CheckpointsService {
  settings(): CheckpointSettings;
  /** Capture the project and record it on the session's branch (when it differs from the branch's state). */
  capture(session: SessionLike, phase: CheckpointPhase, extra?: Partial<CheckpointData>, only?: string[]): Promise<CheckpointData | undefined>;
  list(session: SessionLike): RewindPoint[];
  plan(session: SessionLike, pointRef: string | number): Promise<RestorePlan>;
  /**
   * What moving to an entry of the tree (a /tree jump, a fork) would do to the files: the plan
   * of a code-only restore to the entry's file state (a user message: the state its prompt
   * started from), computed against the current branch. Undefined when the entry has no file
   * state or the files already match it.
   */
  planEntry(session: SessionLike, entryId: string): Promise<RestorePlan | undefined>;
  restore(session: SessionLike, plan: RestorePlan, mode: RestoreMode, opts?: { overwriteExternal?: boolean }): Promise<RestoreResult>;
  /** The store of a project folder. */
  store(cwd: string): CheckpointStore;
  /** Capture the project without recording it (a session's start: the first, slow capture of a project happens before the first prompt needs it). */
  warm(cwd: string): Promise<void>;
  /** Writes the refs that keep the trees captured so far (called when a run settles and at shutdown). */
  flush(): Promise<void>;
  /**
   * Starts a capture without waiting for it (a tool call's after-state: it runs while the model
   * answers). Captures and restores queued later still wait for it; settle() waits for all of
   * them. A failure goes to `onError`.
   */
  captureLater(session: SessionLike, phase: CheckpointPhase, extra: Partial<CheckpointData> | undefined, only: string[] | undefined, onError: (e: Error) => void): void;
  /** flush() without waiting for it (settle() waits for it). */
  flushLater(onError: (e: Error) => void): void;
  /** Resolves when the captures started by captureLater (and background ref writes) are done. */
  settle(): Promise<void>;
}

export function readSettings(kernel: Kernel): CheckpointSettings {
  const raw = ((kernel.settings.get() as Record<string, unknown>).checkpoints ?? {}) as Record<string, unknown>;
  const num = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : d);
  return {
    enabled: raw.enabled !== false,
    maxFileSizeBytes: num(raw.maxFileSizeBytes, DEFAULTS.maxFileSizeBytes),
    maxCount: num(raw.maxCount, DEFAULTS.maxCount),
    maxAgeDays: num(raw.maxAgeDays, DEFAULTS.maxAgeDays),
    maxFiles: num(raw.maxFiles, DEFAULTS.maxFiles),
    watch: raw.watch !== false,
  };
}

/**
 * What extensions see on `pi.events`: "checkpoints:before_restore" before anything is written
 * (a handler sets `cancel = true`, and optionally `reason`, to refuse the restore; it must do so
 * before it awaits anything) and "checkpoints:after_restore" with the result.
 */
export interface BeforeRestoreEvent {
  point: RewindPoint;
  mode: RestoreMode;
  changes: FileChange[];
  external: string[];
  cancel: boolean;
  reason?: string;
}

export function createCheckpointsService(kernel: Kernel, warn: (message: string) => void, emit: (channel: string, data: unknown) => void = () => {}): CheckpointsService {
  const stores = new Map<string, CheckpointStore>();
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn, fn);
    chain = p.catch(() => undefined);
    return p;
  };
  let pruned = false;
  const inFlight = new Set<Promise<unknown>>();
  const later = (p: Promise<unknown>) => {
    const q = p.catch(() => undefined).finally(() => inFlight.delete(q));
    inFlight.add(q);
  };

  const store = (cwd: string): CheckpointStore => {
    let s = stores.get(cwd);
    if (!s) {
      s = new CheckpointStore(cwd, storeDirFor(kernel.agentDir, cwd), readSettings(kernel));
      stores.set(cwd, s);
    }
    return s;
  };

  /**
   * Once per process, after a store's first capture, beside the captures (refs of their own,
   * objects younger than an hour kept): nothing waits for it; at exit it is ended like any git child.
   */
  const pruneOnce = (s: CheckpointStore) => {
    if (pruned) return;
    pruned = true;
    s.prune().catch((e) => warn(`pruning old checkpoints failed: ${(e as Error).message}`));
  };

  const record = (session: SessionLike, data: CheckpointData) => session.sessionManager.appendCustomEntry(CHECKPOINT_TYPE, data);

  const planFor = (session: SessionLike, point: RewindPoint, name: string): Promise<RestorePlan> =>
    serial(async () => {
      const s = store(session.cwd);
      const known = stateAt(session.sessionManager.getBranch(), afterResolver(session));
      // A restore's plan scans the whole project (no reliance on the watcher before files are written).
      const now = await s.snapshot("current", undefined, { scan: true });
      if (!point.tree) return { point, changes: [], external: [], current: now.tree };
      if (!(await s.hasTree(point.tree))) throw new CheckpointError(`the files of ${name} are no longer in the checkpoint store (pruned)`);
      const changes = await s.diff(now.tree, point.tree);
      const external = known && known.tree !== now.tree ? (await s.diff(known.tree, now.tree)).map((c) => c.path) : [];
      const ext = new Set(external);
      return { point, changes, external: changes.filter((c) => ext.has(c.path)).map((c) => c.path), current: now.tree };
    });

  const service: CheckpointsService = {
    settings: () => readSettings(kernel),
    store,
    warm: (cwd) =>
      serial(async () => {
        const s = store(cwd);
        await s.snapshot("start");
        pruneOnce(s); // with the session's start, not on its first prompt's way
      }),
    flush: () => serial(async () => void (await Promise.all([...stores.values()].map((s) => s.flush())))),
    flushLater: (onError) => later(service.flush().catch(onError)),
    capture(session, phase, extra = {}, only) {
      return serial(async () => {
        const s = store(session.cwd);
        const snap = await s.snapshot(`${phase}${extra.tool ? ` ${extra.tool}` : ""}`, only);
        pruneOnce(s);
        const current = stateAt(session.sessionManager.getBranch(), afterResolver(session));
        if (current?.tree === snap.tree && phase !== "pre-restore" && phase !== "restore") return undefined;
        const data: CheckpointData = { tree: snap.tree, phase, ...extra, ...(snap.skipped.length ? { skipped: snap.skipped } : {}) };
        record(session, data);
        if (phase === "pre-restore" || phase === "restore") await s.flush();
        return data;
      });
    },
    captureLater(session, phase, extra, only, onError) {
      later(service.capture(session, phase, extra, only).catch(onError));
    },
    async settle() {
      while (inFlight.size) await Promise.all([...inFlight]);
    },
    list: (session) => rewindPoints(session.sessionManager.getBranch(), afterResolver(session)),
    plan(session, pointRef) {
      const points = service.list(session);
      // Entry ids are hex and may be all digits: a string names an entry first, then an index.
      const point =
        typeof pointRef === "number"
          ? points.find((p) => p.index === pointRef)
          : (points.find((p) => p.entryId === pointRef) ?? (/^\d+$/.test(pointRef) ? points.find((p) => p.index === Number(pointRef)) : undefined));
      if (!point) {
        const n = points.length;
        return Promise.reject(new CheckpointError(`no rewind point ${JSON.stringify(pointRef)} on this branch (${n ? `points 1-${n}` : "it has none"})`));
      }
      return planFor(session, point, `point ${point.index}`);
    },
    async planEntry(session, entryId) {
      const entry = session.sessionManager.getEntry(entryId);
      if (!entry) throw new CheckpointError(`no entry ${entryId} in this session`);
      const isPrompt = entry.type === "message" && entry.message?.role === "user";
      const path = isPrompt ? (entry.parentId ? session.sessionManager.getBranch(entry.parentId) : []) : session.sessionManager.getBranch(entryId);
      const tree = stateAt(path, afterResolver(session))?.tree;
      if (!tree) return undefined;
      const plan = await planFor(session, { index: 0, entryId, kind: "prompt", label: "the selected entry", timestamp: entry.timestamp, tree }, "the selected entry");
      return plan.changes.length ? plan : undefined;
    },
    async restore(session, plan, mode, opts = {}) {
      if (session.isStreaming) throw new CheckpointError("cannot restore while the agent is running; wait or abort it first");
      const result: RestoreResult = { mode, restored: [], kept: [] };
      const before: BeforeRestoreEvent = { point: plan.point, mode, changes: plan.changes, external: plan.external, cancel: false };
      emit("checkpoints:before_restore", before);
      if (before.cancel) throw new CheckpointError(`the restore was refused by an extension${before.reason ? `: ${before.reason}` : ""}`);
      const codeToo = mode !== "conversation" && plan.point.tree !== undefined;
      if (mode !== "code") {
        const nav = await session.navigateTree(plan.point.entryId);
        if (nav.cancelled) return { ...result, cancelled: true };
        result.editorText = nav.editorText;
      }
      if (codeToo) {
        // Files changed while the user read the plan count as changed outside the agent too.
        const s = store(session.cwd);
        const now = await serial(() => s.snapshot("current", undefined, { scan: true }));
        if (now.tree !== plan.current) {
          const moved = new Set([...plan.external, ...(await serial(() => s.diff(plan.current, now.tree))).map((c) => c.path)]);
          const changes = await serial(() => s.diff(now.tree, plan.point.tree!));
          plan = { ...plan, current: now.tree, changes, external: changes.filter((c) => moved.has(c.path)).map((c) => c.path) };
        }
        // The files as they were, recorded where the restore lands: a point to undo it from.
        await serial(async () => {
          record(session, { tree: plan.current, phase: "pre-restore" });
        });
        const keep = new Set(opts.overwriteExternal ? [] : plan.external);
        const apply = plan.changes.filter((c) => !keep.has(c.path));
        await serial(() => store(session.cwd).restore(plan.point.tree!, apply));
        result.restored = apply.map((c) => c.path);
        result.kept = plan.changes.filter((c) => keep.has(c.path)).map((c) => c.path);
        await service.capture(session, "restore");
      }
      emit("checkpoints:after_restore", { point: plan.point, ...result });
      return result;
    },
  };
  return service;
}

/**
 * Finds a tool call's after-checkpoint from its result entry (points.ts AfterOf): it follows the
 * result, with the results of the same message's other calls (and their checkpoints) between.
 */
function afterResolver(session: SessionLike): AfterOf {
  let children: Map<string, EntryLike[]> | undefined;
  return (result) => {
    const callId = (result.message as { toolCallId?: string } | undefined)?.toolCallId;
    if (!callId) return undefined;
    if (!children) {
      children = new Map();
      for (const e of session.sessionManager.getEntries?.() ?? []) if (e.parentId) children.set(e.parentId, [...(children.get(e.parentId) ?? []), e]);
    }
    let at: EntryLike | undefined = result;
    for (let steps = 0; at && steps < 256; steps++) {
      const next: EntryLike | undefined = (children.get(at.id) ?? []).find((e) => e.type === "custom" || e.message?.role === "toolResult");
      const cp = next && checkpointOf(next);
      if (cp?.phase === "after" && cp.toolCallId === callId) return cp;
      at = next;
    }
    return undefined;
  };
}

/** The checkpoints of one session (the SDK's `session.checkpoints`). */
export interface SessionCheckpoints {
  /** The rewind points of the current branch. */
  list(): RewindPoint[];
  /** What restoring a point (index or entry id) would change, and which files changed outside the agent. */
  diff(point: string | number): Promise<{ changes: FileChange[]; external: string[] }>;
  /** Restore a point's files, conversation or both (default both); files changed outside the agent are kept unless overwriteExternal. */
  restore(point: string | number, mode?: RestoreMode, opts?: { overwriteExternal?: boolean }): Promise<RestoreResult>;
}

export function sessionCheckpoints(service: CheckpointsService, session: SessionLike): SessionCheckpoints {
  return {
    list: () => service.list(session),
    async diff(point) {
      const plan = await service.plan(session, point);
      return { changes: plan.changes, external: plan.external };
    },
    async restore(point, mode = "both", opts) {
      return service.restore(session, await service.plan(session, point), mode, opts);
    },
  };
}
