/**
 * V8's on-disk compile cache for the modules the CLI loads (Node ≥ 22.1, `module.enableCompileCache`).
 *
 * Every start compiles about 1.1 MB of bundled JavaScript before the first answer, the provider
 * module of the first prompt another ~1 MB, and the first tool call the validator's chunk. With
 * the cache, the compiled code is reused by the next processes (checked against each file's
 * content, so a rebuilt or updated package recompiles by itself).
 *
 * Where: one folder per user shared by every agent dir, so a new agent dir (CI, containers, a
 * fresh HOME) starts warm: `<OS temp dir>/pi-kernel-compile-cache-<uid>`. It is created private
 * (0700) and used only when it is a real folder owned by this user that no one else can write, so
 * no other user can plant compiled code in it. Node writes each entry to a temporary file and
 * renames it, so concurrent processes are safe.
 *
 * Never making the user wait: Node writes the cache when the process exits, which on a cold cache
 * costs several hundred milliseconds after the answer. So a process turns the cache on only when
 * the folder is warm for this Node and this build (a `ready-…` marker); on a cold one it runs
 * without, and at exit starts a detached background process that compiles the bundle's chunks into
 * the cache and writes the marker (one at a time: a `warming-…` lock). A later process then reads
 * the cache and writes at exit only the few entries it still lacks.
 *
 * `NODE_DISABLE_COMPILE_CACHE=1` turns all of it off; a `NODE_COMPILE_CACHE` folder the user set
 * is used as is (Node's own behaviour). Failures are silent (no cache). Node 20 has no such API.
 */
import * as nodeModule from "node:module";
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from "node:fs";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { tmpdir, userInfo } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

type EnableCompileCache = (dir?: string) => { status: number; directory?: string; message?: string };

/** How long a `warming-…` lock holds off another warm-up (a crashed warm-up frees it by age). */
const WARM_LOCK_MS = 120_000;

/** The per-user cache folder, created private; undefined when it is not safe to use. */
export function compileCacheDir(): string | undefined {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const who = uid !== undefined ? String(uid) : userInfo().username.replace(/[^\w.-]/g, "_");
  const dir = join(tmpdir(), `pi-kernel-compile-cache-${who}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
  }
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.isSymbolicLink()) return undefined;
    if (uid !== undefined && (st.uid !== uid || (st.mode & 0o077) !== 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** The folder of the bundle's chunks when running from the bundle (what a warm-up compiles). */
function bundleChunksDir(): string | undefined {
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    return basename(here) === "chunks" ? here : undefined;
  } catch {
    return undefined;
  }
}

/** Names this Node, these V8 flags and this build: a new Node, other flags or a rebuilt/updated package warm again. */
function buildKey(chunks: string | undefined, v8Flags: string): string {
  const h = createHash("sha256").update(`${process.version}\0${process.arch}\0${v8Flags}\0${chunks ?? ""}`);
  if (chunks) {
    try {
      h.update(String(statSync(chunks).mtimeMs));
    } catch {
      // no stamp: the version alone
    }
  }
  return h.digest("hex").slice(0, 16);
}

/**
 * Turn the cache on for this process (see the module comment). Returns the folder, or undefined.
 * `v8Flags`: the V8 flags this process set at start (sdk/v8-flags.ts), which the warm-up sets too:
 * V8 accepts cached code only under the flags it was made with.
 */
export function enableModuleCompileCache(v8Flags = ""): string | undefined {
  const enable = (nodeModule as unknown as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== "function" || process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  try {
    if (process.env.NODE_COMPILE_CACHE) return enable().directory;
    const dir = compileCacheDir();
    if (!dir) return undefined;
    const chunks = bundleChunksDir();
    const key = buildKey(chunks, v8Flags);
    if (existsSync(join(dir, `ready-${key}`))) return enable(dir).directory;
    if (chunks) process.once("exit", () => startWarmUp(dir, chunks, key, v8Flags));
    return undefined;
  } catch {
    return undefined;
  }
}

/** Start the detached warm-up unless one is running; never waited for. */
function startWarmUp(dir: string, chunks: string, key: string, v8Flags: string): void {
  try {
    const lock = join(dir, `warming-${key}`);
    try {
      if (Date.now() - statSync(lock).mtimeMs < WARM_LOCK_MS) return;
      rmSync(lock, { force: true });
    } catch {
      // no lock
    }
    closeSync(openSync(lock, "wx", 0o600));
    const child = spawn(process.execPath, ["--input-type=module", "-e", WARM_UP_SCRIPT, dir, chunks, `ready-${key}`, lock, v8Flags], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, NODE_COMPILE_CACHE: "", NODE_OPTIONS: "" },
    });
    child.unref();
  } catch {
    // no warm-up: the next process tries again
  }
}

/**
 * The warm-up process: sets the V8 flags the processes that will read the cache run with, compiles
 * (imports) every chunk of the bundle with the cache on, then marks the folder ready and drops the
 * lock. Its output goes nowhere; it exits when done. (Dynamic
 * imports of the built-ins: the bundler rewrites static `import … from "node:…"` lines.)
 */
const WARM_UP_SCRIPT = `
const { enableCompileCache, flushCompileCache } = await import("node:module");
const { readdirSync, writeFileSync, rmSync } = await import("node:fs");
const { join } = await import("node:path");
const { pathToFileURL } = await import("node:url");
const { setFlagsFromString } = await import("node:v8");
const [dir, chunks, ready, lock, v8Flags] = process.argv.slice(1);
try {
  if (v8Flags) setFlagsFromString(v8Flags);
  enableCompileCache(dir);
  for (const f of readdirSync(chunks)) if (f.endsWith(".js")) { try { await import(pathToFileURL(join(chunks, f)).href); } catch {} }
  flushCompileCache?.();
  writeFileSync(join(dir, ready), "", { mode: 0o600 });
} finally {
  rmSync(lock, { force: true });
  process.exit(0);
}
`;

/** The entries in the cache folder (tests and the benchmark). */
export function compileCacheEntries(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true }).length;
  } catch {
    return 0;
  }
}
