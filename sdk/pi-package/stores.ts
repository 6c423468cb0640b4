/**
 * Storage classes and the entry point the pi packages export: auth.json backends (0.73.1's
 * FileAuthStorageBackend / InMemoryAuthStorageBackend: read-modify-write of the raw file text
 * under a lock), 1.6's ProjectTrustStore over `<agentDir>/trust.json` (the file the trust plugin
 * reads) with hasTrustRequiringProjectResources, and `main(args)` (the `pi` CLI in-process).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { writeFileAtomic } from "../../core/kernel/fs-utils.js";
import { getAgentDir } from "../../plugins/extensions/helpers.js";

// ---- auth storage backends -------------------------------------------------------------------------

export interface LockResult<T> {
  result: T;
  /** The new file text; the file is left as it is when undefined. */
  next?: string;
}
export interface AuthStorageBackend {
  withLock<T>(fn: (current: string | undefined) => LockResult<T>): T;
  withLockAsync<T>(fn: (current: string | undefined) => Promise<LockResult<T>>): Promise<T>;
}

const LOCK_STALE_MS = 30_000;

/** auth.json on disk (the agent dir's by default), written atomically with mode 0600 under `<file>.lock`. */
export class FileAuthStorageBackend implements AuthStorageBackend {
  private readonly authPath: string;
  constructor(authPath: string = join(getAgentDir(), "auth.json")) {
    this.authPath = resolve(authPath);
  }

  private tryLock(): boolean {
    const lock = `${this.authPath}.lock`;
    mkdirSync(dirname(this.authPath), { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(lock, "wx", 0o600));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      // a lock left by a crashed process is taken over
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { force: true });
      } catch {
        /* gone meanwhile */
      }
      return false;
    }
  }
  private unlock(): void {
    rmSync(`${this.authPath}.lock`, { force: true });
  }
  private read(): string | undefined {
    return existsSync(this.authPath) ? readFileSync(this.authPath, "utf8") : undefined;
  }
  private write(next: string | undefined): void {
    if (next !== undefined) writeFileAtomic(this.authPath, next, { mode: 0o600, dirMode: 0o700 });
  }

  withLock<T>(fn: (current: string | undefined) => LockResult<T>): T {
    const until = Date.now() + 10_000;
    while (!this.tryLock()) {
      if (Date.now() > until) throw new Error(`auth storage: ${this.authPath} is locked by another process (${this.authPath}.lock)`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    try {
      const r = fn(this.read());
      this.write(r.next);
      return r.result;
    } finally {
      this.unlock();
    }
  }

  async withLockAsync<T>(fn: (current: string | undefined) => Promise<LockResult<T>>): Promise<T> {
    const until = Date.now() + 10_000;
    while (!this.tryLock()) {
      if (Date.now() > until) throw new Error(`auth storage: ${this.authPath} is locked by another process (${this.authPath}.lock)`);
      await new Promise((r) => setTimeout(r, 20));
    }
    try {
      const r = await fn(this.read());
      this.write(r.next);
      return r.result;
    } finally {
      this.unlock();
    }
  }
}

/** The same contract held in memory (tests, hosts that keep credentials elsewhere). */
export class InMemoryAuthStorageBackend implements AuthStorageBackend {
  private value: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  withLock<T>(fn: (current: string | undefined) => LockResult<T>): T {
    const r = fn(this.value);
    if (r.next !== undefined) this.value = r.next;
    return r.result;
  }
  withLockAsync<T>(fn: (current: string | undefined) => Promise<LockResult<T>>): Promise<T> {
    const run = this.queue.then(async () => {
      const r = await fn(this.value);
      if (r.next !== undefined) this.value = r.next;
      return r.result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

// ---- project trust ---------------------------------------------------------------------------------

export type ProjectTrustDecision = boolean | null;
export interface ProjectTrustStoreEntry {
  path: string;
  decision: boolean;
}
export interface ProjectTrustUpdate {
  path: string;
  decision: ProjectTrustDecision;
}

function folder(p: string): string {
  const r = resolve(p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p);
  return r.length > 1 && r.endsWith(sep) ? r.slice(0, -1) : r;
}

/** Saved trust decisions (`<agentDir>/trust.json`, folder → true/false); a folder's decision covers its subfolders. */
export class ProjectTrustStore {
  private readonly trustPath: string;
  constructor(agentDir: string) {
    this.trustPath = join(resolve(agentDir), "trust.json");
  }

  private read(): Record<string, unknown> {
    if (!existsSync(this.trustPath)) return {};
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(this.trustPath, "utf8").replace(/^\uFEFF/, ""));
    } catch (e) {
      throw new Error(`${this.trustPath}: not valid JSON (${(e as Error).message})`);
    }
    if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error(`${this.trustPath}: expected an object of folder: true|false`);
    return data as Record<string, unknown>;
  }

  get(cwd: string): ProjectTrustDecision {
    return this.getEntry(cwd)?.decision ?? null;
  }

  /** The nearest saved decision at or above `cwd`. */
  getEntry(cwd: string): ProjectTrustStoreEntry | null {
    const data = this.read();
    const saved = new Map<string, boolean>();
    for (const [k, v] of Object.entries(data)) if (v === true || v === false) saved.set(folder(k), v);
    for (let d = folder(cwd); ; d = dirname(d)) {
      const v = saved.get(d);
      if (v !== undefined) return { path: d, decision: v };
      if (dirname(d) === d) return null;
    }
  }

  set(cwd: string, decision: ProjectTrustDecision): void {
    this.setMany([{ path: cwd, decision }]);
  }

  /** Save decisions; null forgets a folder's decision. */
  setMany(decisions: ProjectTrustUpdate[]): void {
    const data = this.read();
    for (const { path, decision } of decisions) {
      const key = folder(path);
      for (const k of Object.keys(data)) if (folder(k) === key) delete data[k];
      if (decision !== null) data[key] = decision;
    }
    const sorted = Object.fromEntries(Object.keys(data).sort().map((k) => [k, data[k]]));
    writeFileAtomic(this.trustPath, JSON.stringify(sorted, null, 2) + "\n", { mode: 0o600, dirMode: 0o700 });
  }
}

const TRUST_REQUIRING = ["settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"];

/** Whether `cwd` has project resources that only load once the project is trusted (.pi/… or a .agents/skills folder up the tree). */
export function hasTrustRequiringProjectResources(cwd: string): boolean {
  const start = folder(cwd);
  if (TRUST_REQUIRING.some((n) => existsSync(join(start, ".pi", n)))) return true;
  const userSkills = join(folder(process.env.HOME || homedir()), ".agents", "skills");
  for (let d = start; ; d = dirname(d)) {
    const skills = join(d, ".agents", "skills");
    if (skills !== userSkills && existsSync(skills)) return true;
    if (dirname(d) === d) return false;
  }
}

// ---- main ----------------------------------------------------------------------------------------

type ExtensionFactory = (pi: any) => unknown;

/** Run the `pi` CLI in this process with `args` (process.exitCode gets its exit code). */
export async function main(args: string[], options: { extensionFactories?: Array<ExtensionFactory | { name: string; factory: ExtensionFactory }> } = {}): Promise<void> {
  const [{ createCli }, { builtinPlugins }, { packageInfo }] = await Promise.all([import("../main.js"), import("../builtins.js"), import("../package-info.js")]);
  const extensionFactories = (options.extensionFactories ?? []).map((f) => (typeof f === "function" ? f : f.factory));
  const cli = createCli({ name: "pi", version: packageInfo().version, configDir: ".pi", plugins: builtinPlugins(), extensionFactories });
  process.exitCode = await cli.run(args);
}
