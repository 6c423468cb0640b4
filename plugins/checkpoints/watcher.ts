/**
 * A change detector for a checkpoint store: one non-recursive `fs.watch` (inotify) per folder of
 * the project that is not ignored, so a capture can tell that nothing changed since the store's
 * last look without scanning the project.
 *
 * Trust rules (any doubt means "changed", and the store scans as before):
 * - Until the first scan after the watches were in place, everything counts as changed.
 * - The watcher does not tell *what* changed to the store's index, only *that* something may
 *   have: the store still finds the changes with its own scan.
 * - sync() is a barrier: it creates a file in a folder of the store watched through the same
 *   inotify queue as the project (libuv has one per event loop, read in order), and resolves when
 *   that file's event arrives, so every change made before the call has been reported by then.
 *   No event within SYNC_TIMEOUT_MS: the watcher stops (the store's file system gives none).
 * - A folder that appears is watched (with what is inside it) before the next capture scans, so
 *   a file created in it before its watch existed is found by that scan and one created after
 *   gives an event. A folder that goes away loses its watches.
 * - A watch error, a failed watch (the inotify limit), a file system whose changes inotify may
 *   not see (network and FUSE mounts) or too many folders: the watcher stops for good and every
 *   capture scans.
 */
import { watch, promises as fsp, statfsSync, writeFileSync, unlinkSync, mkdirSync, readFileSync, type FSWatcher } from "node:fs";
import { join } from "node:path";

/** Folders watched at most (inotify watches are a per-user resource). */
const MAX_FOLDERS = 10_000;
/** Paths remembered one by one; more count as "everything changed". */
const MAX_PATHS = 10_000;
/** How long sync() waits for its own event. */
const SYNC_TIMEOUT_MS = 1000;

/** statfs types whose changes may come from elsewhere (NFS, SMB/CIFS, FUSE, 9p, Ceph, AFS): not watched. */
const REMOTE_FS = new Set([0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, 0x00c36400, 0x5346414f]);

export type WatchState = "starting" | "ready" | "stopped";

export class ProjectWatcher {
  state: WatchState = "starting";
  /** Why the watcher stopped (for tests and diagnostics). */
  stopReason: string | undefined;
  private readonly watches = new Map<string, FSWatcher>();
  /** Paths (relative) reported since the last reset(); "all": unknown. */
  private changed: Set<string> | "all" = "all";
  private readonly pending = new Set<Promise<unknown>>();
  private barrier: FSWatcher | undefined;
  private readonly barrierDir: string;
  private readonly waiting = new Map<string, () => void>();
  private seq = 0;
  /** A quarter of the user's inotify watches at most: editors and other tools need theirs. */
  private readonly maxFolders = Math.min(MAX_FOLDERS, Math.floor((inotifyLimit() ?? 8192) / 4));

  constructor(
    readonly cwd: string,
    storeDir: string,
  ) {
    this.barrierDir = join(storeDir, "watch");
  }

  /** Watches the project's folders except `ignored` (relative, as git lists them, with a trailing slash) and `.git`. */
  async start(ignored: Set<string>): Promise<void> {
    try {
      const type = Number(statfsSync(this.cwd).type);
      if (REMOTE_FS.has(type)) return this.stop(`the project is on a file system inotify may not follow (type 0x${type.toString(16)})`);
      mkdirSync(this.barrierDir, { recursive: true });
      const storeType = Number(statfsSync(this.barrierDir).type);
      if (REMOTE_FS.has(storeType)) return this.stop(`the store is on a file system inotify may not follow (type 0x${storeType.toString(16)})`);
      this.barrier = watch(this.barrierDir, { persistent: false }, (_ev, name) => {
        const done = name ? this.waiting.get(String(name)) : undefined;
        done?.();
      });
      this.barrier.on("error", (e) => this.stop(`the store's watch failed: ${e.message}`));
      await this.watchTree("", ignored);
      await this.settlePending();
    } catch (e) {
      this.stop(`watching the project failed: ${(e as Error).message}`);
    }
    if (this.state === "starting") this.state = "ready";
  }

  /** Stops watching; every capture scans from now on. */
  stop(reason: string): void {
    if (this.state === "stopped") return;
    this.state = "stopped";
    this.stopReason = reason;
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
    this.barrier?.close();
    for (const done of this.waiting.values()) done();
  }

  /** Resolves true when every change made before the call has been reported (see the barrier above); false: do not trust the watcher now. */
  async sync(): Promise<boolean> {
    if (this.state !== "ready") return false;
    const name = `b${process.pid}-${this.seq++}`;
    const file = join(this.barrierDir, name);
    let timer: NodeJS.Timeout | undefined;
    const arrived = await new Promise<boolean>((res) => {
      this.waiting.set(name, () => res(true));
      // (Timers run before the poll phase: after a long block of the event loop, let one poll pass first.)
      timer = setTimeout(() => setImmediate(() => res(false)), SYNC_TIMEOUT_MS);
      try {
        writeFileSync(file, "");
      } catch {
        res(false);
      }
    });
    clearTimeout(timer);
    this.waiting.delete(name);
    try {
      unlinkSync(file);
    } catch {
      /* never written */
    }
    // The store's file system gives no events (a network mount): every capture would wait for nothing.
    if (!arrived) {
      this.stop(`no event for the store's sync file within ${SYNC_TIMEOUT_MS} ms, or it could not be written`);
      return false;
    }
    await this.settlePending();
    return this.state === "ready";
  }

  /** Whether nothing was reported since the last reset() (call after sync()). */
  clean(): boolean {
    return this.state === "ready" && this.changed !== "all" && this.changed.size === 0;
  }

  /**
   * What was reported since the last reset() (call after sync()), when a look at only those paths
   * finds every change: at most `max` paths, none of them an ignore file (a changed .gitignore
   * may bring in files that did not change). Undefined: scan the whole project.
   */
  reported(max: number): string[] | undefined {
    if (this.state !== "ready" || this.changed === "all" || this.changed.size > max) return undefined;
    const paths = [...this.changed];
    return paths.some((p) => p === ".gitignore" || p.endsWith("/.gitignore")) ? undefined : paths;
  }

  /** A capture failed after reset() or forget(): count everything as changed until the next scan. */
  invalidate(): void {
    this.changed = "all";
  }

  /** A scan of the whole project starts now (after sync()): forget what was reported. */
  reset(): void {
    if (this.state === "ready") this.changed = new Set();
  }

  /** A capture of these files starts now (after sync()): forget what was reported about them. */
  forget(paths: string[]): void {
    if (this.changed === "all") return;
    for (const p of paths) this.changed.delete(p);
  }

  /** Folders watched (tests). */
  get folderCount(): number {
    return this.watches.size;
  }

  private note(path: string | undefined): void {
    if (this.changed === "all") return;
    if (path === undefined || this.changed.size >= MAX_PATHS) this.changed = "all";
    else this.changed.add(path);
  }

  private async settlePending(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((e: Error) => this.stop(`watching a new folder failed: ${e.message}`)).finally(() => this.pending.delete(q));
    this.pending.add(q);
  }

  /** Watches `rel` (a folder) and the folders inside it; the watch comes before the listing, so nothing created meanwhile is missed. */
  private async watchTree(rel: string, ignored?: Set<string>): Promise<void> {
    if (this.state === "stopped" || this.watches.has(rel)) return;
    if (this.watches.size >= this.maxFolders) return this.stop(`more than ${this.maxFolders} folders to watch`);
    const abs = rel ? join(this.cwd, rel) : this.cwd;
    let w: FSWatcher;
    try {
      w = watch(abs, { persistent: false }, (ev, name) => this.onEvent(rel, ev, name === null ? undefined : String(name)));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return; // gone meanwhile: its parent reported it
      return this.stop(`cannot watch ${rel || "."}: ${(e as Error).message}`);
    }
    w.on("error", (e) => this.stop(`the watch of ${rel || "."} failed: ${e.message}`));
    this.watches.set(rel, w);
    let entries: import("node:fs").Dirent[];
    try {
      entries = await fsp.readdir(abs, { withFileTypes: true });
    } catch {
      return; // gone meanwhile
    }
    await Promise.all(
      entries
        .filter((d) => d.isDirectory() && d.name !== ".git")
        .map((d) => (rel ? `${rel}/${d.name}` : d.name))
        .filter((p) => !ignored?.has(`${p}/`))
        .map((p) => this.watchTree(p, ignored)),
    );
  }

  private onEvent(dir: string, ev: string, name: string | undefined): void {
    if (this.state === "stopped") return;
    const path = name === undefined ? undefined : dir ? `${dir}/${name}` : name;
    this.note(path);
    if (ev !== "rename" || path === undefined || name === ".git") return;
    // An entry came or went: a new folder is watched, a folder gone loses its watches.
    this.track(
      fsp.lstat(join(this.cwd, path)).then(
        (st) => {
          // Watched already: it may be a new folder of the same name (its old watch is dead).
          this.unwatch(path);
          return st.isDirectory() ? this.watchTree(path) : undefined;
        },
        () => this.unwatch(path),
      ),
    );
  }

  private unwatch(path: string): void {
    for (const [rel, w] of this.watches) {
      if (rel === path || rel.startsWith(path + "/")) {
        w.close();
        this.watches.delete(rel);
      }
    }
  }
}

/** The inotify watches a user may have (undefined: unknown). */
function inotifyLimit(): number | undefined {
  try {
    return Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8").trim()) || undefined;
  } catch {
    return undefined;
  }
}
