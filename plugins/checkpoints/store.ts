/**
 * The checkpoint store: a shadow git repository per project, outside the project
 * (`<agentDir>/checkpoints/<project hash>/`), driven as `git --git-dir=<store> --work-tree=<cwd>`
 * with the store's own index. The user's `.git` (index, config, hooks) is never read or written:
 * system and global git config are off, hooks point at /dev/null, GIT_DIR / GIT_INDEX_FILE and
 * friends from the environment are dropped.
 *
 * A snapshot stages what changed in the project (its .gitignore files apply; files above the
 * size limit are left out), writes a tree and keeps it under a ref `refs/checkpoints/<time>-<n>`
 * (written in batches by flush()). Git's
 * objects are content-addressed, so an unchanged file costs nothing twice and an unchanged
 * project gives the same tree (no new ref). Old refs beyond the retention limits are deleted.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, promises as fsp, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { writeFileAtomic } from "../../core/kernel/index.js";
import { onExit, recoverStaleLock, track, updateRefsSync } from "./git-children.js";
import { ProjectWatcher } from "./watcher.js";

export interface StoreOptions {
  /** Files larger than this are not captured (default 10 MiB). */
  maxFileSizeBytes?: number;
  /** Checkpoints kept per project (default 500). */
  maxCount?: number;
  /** Checkpoints older than this are pruned (default 30 days). */
  maxAgeDays?: number;
  /** A capture that finds more new or changed files than this is refused (default 50,000): a folder such as the home directory is not a project. */
  maxFiles?: number;
  /** Watch the project's folders so a capture that finds nothing reported needs no scan (default true; watcher.ts). */
  watch?: boolean;
}

export interface Snapshot {
  /** The tree object of the project's files. */
  tree: string;
  /** The ref that keeps it (absent when the tree equals the previous snapshot's). */
  ref?: string;
  /** Files left out because of their size (relative paths). */
  skipped: string[];
}

export interface FileChange {
  path: string;
  /** A: the restore creates it, D: deletes it, M: changes its content or mode. */
  status: "A" | "D" | "M";
}

export const DEFAULTS = { maxFileSizeBytes: 10 * 1024 * 1024, maxCount: 500, maxAgeDays: 30, maxFiles: 50_000, watch: true };

/** The store folder of a project. */
export function storeDirFor(agentDir: string, cwd: string): string {
  const abs = resolve(cwd);
  const hash = createHash("sha256").update(abs).digest("hex").slice(0, 16);
  return join(agentDir, "checkpoints", hash);
}

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GIT_")) env[k] = v;
  env.GIT_CONFIG_NOSYSTEM = "1";
  env.GIT_CONFIG_GLOBAL = "/dev/null";
  env.GIT_TERMINAL_PROMPT = "0";
  env.GIT_OPTIONAL_LOCKS = "0";
  env.LC_ALL = "C";
  return env;
}

const CONFIG = [
  "core.hooksPath=/dev/null",
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.fileMode=true",
  "core.symlinks=true",
  "core.quotePath=false",
  "core.fsmonitor=false",
  "core.untrackedCache=true",
  // The store's index is split: a write (update-index, write-tree) writes only the entries
  // that changed, not all of them (measured: about 10% less CPU per whole-project capture);
  // the shared part a new split replaces is deleted at once (only this index uses it).
  "core.splitIndex=true",
  "splitIndex.sharedIndexExpire=now",
  "core.bare=false",
  "gc.auto=0",
  "advice.addEmbeddedRepo=false",
  "user.name=pi checkpoints",
  "user.email=checkpoints@localhost",
  "commit.gpgsign=false",
].flatMap((c) => ["-c", c]);

export class CheckpointError extends Error {}

/**
 * Lays out an empty bare repository, as `git init --bare` does without its templates (sample
 * hooks, description), so the first capture of a project does not wait for a git process: the
 * object and ref folders, a version-0 config and, last, HEAD (a folder is a repository once HEAD
 * names a ref). Each file is written whole under a temporary name and renamed, so a second
 * process laying out the same store at once never reads half a file.
 */
export function initBareRepository(dir: string): void {
  for (const d of ["objects/info", "objects/pack", "refs/heads", "refs/tags"]) mkdirSync(join(dir, d), { recursive: true });
  writeFileAtomic(join(dir, "config"), "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n");
  writeFileAtomic(join(dir, "HEAD"), "ref: refs/heads/master\n");
}

/** Options of one git run against the store. */
interface GitOptions {
  /** Written to git's stdin. */
  input?: string;
  /** Another index file (a restore's throwaway one). */
  index?: string;
  /** Stop git once its output holds more NUL-terminated entries than this (TooManyEntries). */
  maxEntries?: number;
}

/** A listing cut at GitOptions.maxEntries. */
class TooManyEntries extends Error {
  constructor(readonly entries: number) {
    super(`the listing was cut after ${entries} entries`);
  }
}

class LockError extends CheckpointError {
  constructor(
    message: string,
    readonly lockPath: string,
  ) {
    super(message);
  }
}
const LOCK_RETRIES = 20;
const LOCK_RETRY_MS = 100;
/** File times are coarse (a clock tick): a file changed this close to a capture's start counts as changed after it. */
const CLOCK_MARGIN_MS = 20;
/** A whole-project capture looks at the watcher's reported paths instead of scanning when there are at most this many. */
const REPORTED_MAX = 200;

export class CheckpointStore {
  readonly dir: string;
  private readonly env = gitEnv();
  private ready = false;
  private lastTree: string | undefined;
  private counter = 0;
  private readonly pending: string[] = [];
  /** When the last whole-project scan started (its result is in the index); 0: none yet. */
  private seenAll = 0;
  /** When a targeted capture last took a path in (since the last whole scan). */
  private readonly seen = new Map<string, number>();
  private dropExit: (() => void) | undefined;
  /** Tells whether anything changed since the last scan (started after the first whole-project capture). */
  private watcher: ProjectWatcher | undefined;
  /** The start of the watcher (listing the ignored folders, then the watches). */
  private watchStart: Promise<void> | undefined;
  /** The files the last whole-project scan left out for their size (a capture that needs no scan reports them again). */
  private lastSkipped: string[] = [];

  constructor(
    readonly cwd: string,
    dir: string,
    readonly opts: Required<StoreOptions>,
  ) {
    this.dir = dir;
  }

  /** Runs git against the store and the project; resolves with stdout. A stale lock (its writer is gone) is removed and the call retried. */
  async git(args: string[], opts: GitOptions = {}): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.gitOnce(args, opts);
      } catch (e) {
        const lock = e instanceof LockError ? e.lockPath : undefined;
        if (!lock || attempt >= LOCK_RETRIES) throw e;
        // A live writer (another pi on the same project): wait for it a little, then try again.
        if (!recoverStaleLock(this.dir, lock)) await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
      }
    }
  }

  private gitOnce(args: string[], opts: GitOptions): Promise<string> {
    const env = opts.index ? { ...this.env, GIT_INDEX_FILE: opts.index } : { ...this.env, GIT_INDEX_FILE: join(this.dir, "index") };
    return new Promise((res, rej) => {
      // A throwaway index (a restore's) is not split: it would leave a shared index file behind.
      const config = opts.index ? [...CONFIG, "-c", "core.splitIndex=false"] : CONFIG;
      let done: (() => void) | undefined;
      let entries = 0;
      const child = execFile("git", [...config, `--git-dir=${this.dir}`, `--work-tree=${this.cwd}`, ...args], { cwd: this.cwd, env, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" }, (err, stdout, stderr) => {
        done?.();
        if (opts.maxEntries !== undefined && entries > opts.maxEntries) rej(new TooManyEntries(entries));
        else if (err) {
          const code = (err as NodeJS.ErrnoException).code;
          const lock = /Unable to create '([^']+\.lock)': File exists/.exec(stderr ?? "");
          if (code === "ENOENT" && !existsSync(this.cwd)) rej(new CheckpointError(`the project folder ${this.cwd} no longer exists`));
          else if (code === "ENOENT") rej(new CheckpointError("git is not installed (checkpoints need git on PATH)"));
          else if (lock) rej(new LockError(`git ${args[0]} failed: the store is locked (${lock[1]})`, lock[1]!));
          else rej(new CheckpointError(`git ${args[0]} failed: ${(stderr || err.message).trim().split("\n")[0]}`));
        } else res(stdout);
      });
      done = track(child, this.dir);
      // A listing longer than the caller takes is not read to its end (a home-sized folder lists
      // hundreds of thousands of paths: memory and seconds for nothing).
      if (opts.maxEntries !== undefined) {
        const max = opts.maxEntries;
        child.stdout?.on("data", (chunk: string) => {
          if (entries > max) return;
          for (let i = chunk.indexOf("\0"); i >= 0; i = chunk.indexOf("\0", i + 1)) entries++;
          if (entries > max) child.kill();
        });
      }
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  private async init(): Promise<void> {
    if (this.ready) return;
    if (notAProject(this.cwd)) throw new CheckpointError(`${resolve(this.cwd)} is the home folder or the file system's root, not a project: no checkpoints here`);
    try {
      mkdirSync(join(this.dir, "writers"), { recursive: true });
      if (!existsSync(join(this.dir, "HEAD"))) {
        initBareRepository(this.dir);
        writeFileSync(join(this.dir, "project"), resolve(this.cwd) + "\n");
      }
    } catch (e) {
      throw new CheckpointError(`cannot create the checkpoint store ${this.dir}: ${(e as Error).message}`);
    }
    this.ready = true;
  }

  /**
   * Captures the project's files. One scan (`ls-files`: untracked, modified, deleted against the
   * store's index) finds what changed; only those paths are hashed into the index, and a tree is
   * written only when something changed. The ref that keeps a new tree is written by flush().
   *
   * `only`: the caller knows the files that may change (write, edit): no scan of the project,
   * unless the store has no tree yet; ignored files among them stay out. When none of them was
   * changed since the store last saw it (its change time is older than that capture's start, or,
   * for a missing file, its folder's), no git process runs at all.
   *
   * Without `only`, the project's watcher (watcher.ts) may spare the scan: nothing reported since
   * the last one, the last tree as it is; a few paths reported, a look at those only.
   * `scan`: scan the whole project whatever the watcher says (a restore's plan).
   */
  async snapshot(label: string, only?: string[], opts: { scan?: boolean } = {}): Promise<Snapshot> {
    await this.init();
    void label;
    // The store's first scan: the watches go in place before it, so the watcher is trusted from it on.
    if (this.lastTree === undefined) await this.watchFirst();
    const started = Date.now();
    if (only && this.lastTree && (await this.unchanged(only))) return { tree: this.lastTree, skipped: [] };
    // Nothing reported by the watcher since the last scan: the index, and so the last tree, is the project.
    const watched = this.lastTree !== undefined && this.watcher !== undefined && (await this.watcher.sync());
    if (watched && !only && !opts.scan && this.watcher!.clean()) return { tree: this.lastTree!, skipped: this.lastSkipped };
    // Only a few paths reported (files, or folders that came or went): look at those, not at the whole project.
    const reported = watched && !only && !opts.scan ? this.watcher!.reported(REPORTED_MAX) : undefined;
    // From here on the scan sees what changed so far; the watcher reports what changes after.
    if (watched && only) this.watcher!.forget(only);
    else if (watched) this.watcher!.reset();
    try {
      return await this.take(started, only, reported);
    } catch (e) {
      // What was reported is not in the index: the next capture scans the whole project.
      this.watcher?.invalidate();
      throw e;
    }
  }

  /** The rest of snapshot(): finds what changed (the whole project, `only`, or the watcher's `reported` paths) and writes the tree. */
  private async take(started: number, only: string[] | undefined, reported: string[] | undefined): Promise<Snapshot> {
    const look = only && this.lastTree ? only : reported;
    const known = look ? await this.git(["ls-files", "-z", "-o", "-c", "--exclude-standard", "--", ...look.map((p) => `:(literal)${p}`)]) : undefined;
    const tooMany = (count: string) =>
      new CheckpointError(`${count} files to capture, more than checkpoints.maxFiles (${this.opts.maxFiles}); is ${this.cwd} a project? Add a .gitignore or raise the limit`);
    // A path may be listed twice (modified and deleted): the listing is cut at twice the limit.
    const listed = known ?? (await this.git(["ls-files", "-z", "-o", "-m", "--exclude-standard"], { maxEntries: 2 * this.opts.maxFiles }).catch((e: unknown) => {
      throw e instanceof TooManyEntries ? tooMany(`over ${2 * this.opts.maxFiles}`) : e;
    }));
    const paths = [...new Set(listed.split("\0").filter((p) => p && !p.endsWith("/")))];
    if (paths.length > this.opts.maxFiles) throw tooMany(String(paths.length));
    const skipped: string[] = [];
    const update: string[] = [];
    const max = this.opts.maxFileSizeBytes;
    await Promise.all(
      paths.map(async (p) => {
        try {
          const st = await fsp.lstat(join(this.cwd, p));
          if (st.isFile() && st.size > max) skipped.push(p);
          else update.push(p);
        } catch {
          update.push(p); // gone: update-index --remove records the deletion
        }
      }),
    );
    if (update.length) await this.git(["update-index", "--add", "--remove", "-z", "--stdin"], { input: update.join("\0") + "\0" });
    if (skipped.length) await this.git(["update-index", "--force-remove", "-z", "--stdin"], { input: skipped.join("\0") + "\0" });
    let tree = this.lastTree;
    if (!tree || update.length || skipped.length) tree = (await this.git(["write-tree"])).trim();
    // The index now holds what the scan saw as of its start (all of the project when the
    // watcher's report was the whole of what changed).
    if (known === undefined || reported) {
      this.seenAll = started;
      this.seen.clear();
      const looked = reported && new Set(reported);
      const under = (p: string) => looked && [...looked].some((r) => p === r || p.startsWith(r + "/"));
      this.lastSkipped = looked ? [...this.lastSkipped.filter((p) => !under(p)), ...skipped] : skipped;
      this.startWatcher();
    } else for (const p of only!) this.seen.set(p, started);
    if (tree === this.lastTree) return { tree, skipped };
    this.lastTree = tree;
    const ref = `refs/checkpoints/${Date.now().toString().padStart(14, "0")}-${(this.counter++).toString().padStart(4, "0")}`;
    this.pending.push(`update ${ref} ${tree}\n`);
    this.keepAtExit();
    return { tree, ref, skipped };
  }

  /**
   * Before the store's first scan: lists the ignored folders and puts the watches in place, so
   * that scan is the watcher's baseline (everything before it is in the scan, everything after is
   * reported). A watcher that cannot start leaves every capture scanning, as with watch: false.
   */
  private async watchFirst(): Promise<void> {
    this.startWatcher();
    await this.watchStart;
    this.watcher?.reset();
  }

  /** Starts the watcher (once); until it is ready, and until a scan started after that, captures scan. */
  private startWatcher(): void {
    if (this.watcher || !this.opts.watch) return;
    const watcher = (this.watcher = new ProjectWatcher(this.cwd, this.dir));
    // Ignored folders (build output, node_modules) are not watched.
    this.watchStart = this.git(["ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory"]).then(
      (out) => watcher.start(new Set(out.split("\0").filter((p) => p.endsWith("/")))),
      (e: Error) => watcher.stop(`listing the ignored folders failed: ${e.message}`),
    );
  }

  /** The checkpoint refs written so far, read from the store's files (undefined: ask git). */
  private readRefNames(): string[] | undefined {
    if (existsSync(join(this.dir, "reftable"))) return undefined;
    return readCheckpointRefs(this.dir);
  }

  /** Settles once the watcher has started or given up (undefined before the first whole-project capture or with watch: false). */
  get watching(): Promise<void> | undefined {
    return this.watchStart;
  }

  /** The watcher's state: "off" before the first whole-project capture or with watch: false. */
  get watchState(): "off" | "starting" | "ready" | "stopped" {
    return this.watcher?.state ?? "off";
  }

  /** Stops watching the project (captures scan from then on). */
  close(): void {
    this.watcher?.stop("the store was closed");
  }

  /** Whether none of `paths` changed since the store's index last took them in (file times, no git). */
  private async unchanged(paths: string[]): Promise<boolean> {
    const results = await Promise.all(
      paths.map(async (p) => {
        const since = Math.max(this.seenAll, this.seen.get(p) ?? 0) - CLOCK_MARGIN_MS;
        if (since <= 0) return false;
        const abs = join(this.cwd, p);
        try {
          const st = await fsp.lstat(abs);
          return st.ctimeMs < since && st.mtimeMs < since;
        } catch {
          // Missing: unchanged when its folder (the nearest one that exists) saw no entry come or go since.
          for (let d = dirname(abs); d.length >= this.cwd.length; d = dirname(d)) {
            try {
              const st = await fsp.stat(d);
              return st.ctimeMs < since && st.mtimeMs < since;
            } catch {
              if (d === dirname(d)) break;
            }
          }
          return false;
        }
      }),
    );
    return results.every(Boolean);
  }

  /** Refs not written when the process exits are written then (synchronously). */
  private keepAtExit(): void {
    if (this.dropExit) return;
    this.dropExit = onExit(() => {
      if (!this.pending.length) return;
      const input = this.pending.splice(0).join("");
      updateRefsSync([...CONFIG, `--git-dir=${this.dir}`, "update-ref", "--stdin"], this.env, this.cwd, input);
    });
  }

  /** Writes the refs of the trees captured since the last flush (one git call). */
  async flush(): Promise<void> {
    if (!this.pending.length) return;
    const lines = this.pending.splice(0);
    try {
      await this.git(["update-ref", "--stdin"], { input: lines.join("") });
    } catch (e) {
      this.pending.unshift(...lines);
      throw e;
    }
    if (!this.pending.length) {
      this.dropExit?.();
      this.dropExit = undefined;
    }
  }

  /** What restoring `to` changes, starting from the tree `from`. */
  async diff(from: string, to: string): Promise<FileChange[]> {
    await this.init();
    const out = await this.git(["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to]);
    const parts = out.split("\0").filter(Boolean);
    const changes: FileChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const s = parts[i]![0]!;
      changes.push({ path: parts[i + 1]!, status: s === "A" ? "A" : s === "D" ? "D" : "M" });
    }
    return changes;
  }

  /** Writes the files of `tree` for `changes` (as diff(current, tree) gave them) into the project. */
  async restore(tree: string, changes: FileChange[]): Promise<void> {
    await this.init();
    const writes = changes.filter((c) => c.status !== "D").map((c) => c.path);
    for (const c of changes) {
      if (c.status !== "D") continue; // checkout-index -f replaces the others (content, mode, type)
      const abs = join(this.cwd, c.path);
      await fsp.rm(abs, { force: true, recursive: false }).catch(() => undefined);
      await removeEmptyParents(this.cwd, dirname(abs));
    }
    if (!writes.length) return;
    const tmpIndex = join(this.dir, `restore-index-${process.pid}`);
    try {
      await this.git(["read-tree", tree], { index: tmpIndex });
      await this.git(["checkout-index", "-f", "-z", "--stdin"], { index: tmpIndex, input: writes.join("\0") + "\0" });
    } finally {
      await fsp.rm(tmpIndex, { force: true });
    }
  }

  /** Whether the store still has the tree (it may have been pruned). */
  async hasTree(tree: string): Promise<boolean> {
    await this.init();
    return this.git(["cat-file", "-e", `${tree}^{tree}`]).then(
      () => true,
      () => false,
    );
  }

  /** Deletes refs beyond the retention limits and the objects only they kept (no git at all when none is due). */
  async prune(): Promise<number> {
    await this.init();
    const cutoff = Date.now() - this.opts.maxAgeDays * 86_400_000;
    const due = (refs: string[]) => {
      const sorted = [...refs].sort();
      return sorted.filter((r, i) => i < sorted.length - this.opts.maxCount || Number(r.slice("refs/checkpoints/".length).split("-")[0]) < cutoff);
    };
    const known = this.readRefNames();
    if (known && !due([...known, ...this.pending.map((l) => l.split(" ")[1]!)]).length) return 0;
    await this.flush();
    const out = await this.git(["for-each-ref", "--format=%(refname)", "refs/checkpoints/"]);
    const doomed = due(out.split("\n").filter(Boolean));
    if (!doomed.length) return 0;
    await this.git(["update-ref", "--stdin"], { input: doomed.map((r) => `delete ${r}\n`).join("") });
    await this.git(["prune", "--expire=1.hour.ago"]); // younger objects may belong to refs not flushed yet
    return doomed.length;
  }
}

/** How prune() reads the checkpoint refs without git: the loose ref files and packed-refs (the store is made with git's files backend). */
export function readCheckpointRefs(storeDir: string): string[] | undefined {
  const names = new Set<string>();
  try {
    for (const e of readdirSync(join(storeDir, "refs", "checkpoints"), { withFileTypes: true })) {
      if (!e.isFile()) return undefined; // not one of ours: let git list them
      names.add(`refs/checkpoints/${e.name}`);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
  }
  try {
    for (const line of readFileSync(join(storeDir, "packed-refs"), "utf8").split("\n")) {
      const m = /^[0-9a-f]{40,64} (refs\/checkpoints\/\S+)$/.exec(line);
      if (m) names.add(m[1]!);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
  }
  return [...names];
}

async function removeEmptyParents(root: string, dir: string): Promise<void> {
  const top = resolve(root);
  let d = resolve(dir);
  while (d.startsWith(top + "/") && d !== top) {
    try {
      await fsp.rmdir(d);
    } catch {
      return;
    }
    d = dirname(d);
  }
}

/** The home folder and the file system's root are never captured (the plugin skips them without a warning). */
export function notAProject(cwd: string): boolean {
  const abs = resolve(cwd);
  return abs === resolve(homedir()) || abs === dirname(abs);
}
