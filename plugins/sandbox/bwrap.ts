/**
 * bubblewrap (`bwrap`, Debian package `bubblewrap`): finding it, checking once that it can build
 * a sandbox here that holds no capabilities, and the arguments that build one for a policy.
 *
 * The mount plan: the whole file system read-only (`--ro-bind / /`), a fresh /dev and /proc in a
 * new PID namespace with /proc/sys and the other kernel knobs read-only, the host's /run (sockets
 * of tmux, ssh-agent, D-Bus, docker, systemd) replaced by an empty folder, a private /tmp (one per
 * pi process, not the host's), then the writable folders bound writable, then the protected paths
 * bound read-only over them (later mounts win), hidden folders replaced by an empty read-only
 * tmpfs and hidden files by /dev/null. The command gets no capabilities (`--cap-drop ALL`, so a
 * root pi does not hand root's powers to it), its own UTS and IPC namespaces, and a new terminal
 * session (`--new-session`: no TIOCSTI into pi's terminal). `--unshare-net` leaves only a
 * loopback interface of its own; with the network off a seccomp filter also refuses Unix socket
 * creation, so no path socket anywhere on the file system is reachable. The sandbox dies with pi.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { isInside, type SandboxPolicy } from "./policy.js";
import { seccompDenyUnixSockets } from "./seccomp.js";

export const PACKAGE_HINT = `install the package "bubblewrap" (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)`;

export type Probe = { ok: true; path: string } | { ok: false; message: string };

/** The options every sandboxed command gets, whatever the level. */
export const ISOLATION_ARGS: readonly string[] = Object.freeze(["--die-with-parent", "--unshare-pid", "--unshare-uts", "--unshare-ipc", "--new-session", "--cap-drop", "ALL"]);

/** Kernel knobs under /proc kept read-only (a process that is uid 0 without capabilities may still own them). */
const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"];

/** The fd bwrap reads the seccomp program from (opened by the launcher, see launchArgs). */
const SECCOMP_FD = "9";

export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, "bwrap");
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** A status line's hex value (`CapEff:\t0000…`), or undefined. */
function statusField(status: string, field: string): string | undefined {
  return new RegExp(`^${field}:\\s*(\\S+)`, "m").exec(status)?.[1];
}

/**
 * Can bubblewrap build a sandbox with the features we use, and does the command inside hold no
 * capabilities? (One short run that prints /proc/self/status.)
 */
export function probeBwrap(level: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): Probe {
  if (platform !== "linux") {
    return { ok: false, message: `the sandbox (${level}) is not supported on this platform (${platform}): it needs Linux with bubblewrap. Start pi with --sandbox off, or remove "sandbox" from settings.` };
  }
  const path = findBwrap(env);
  if (!path) {
    return { ok: false, message: `the sandbox (${level}) needs bubblewrap, and no "bwrap" was found on PATH: ${PACKAGE_HINT}, or start pi with --sandbox off.` };
  }
  const args = [...ISOLATION_ARGS, "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--tmpfs", "/tmp", "--", "cat", "/proc/self/status"];
  const r = spawnSync(path, args, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  if (r.status === 0) {
    const capEff = statusField(r.stdout ?? "", "CapEff");
    if (capEff === undefined || !/^0+$/.test(capEff)) {
      return {
        ok: false,
        message:
          `the sandbox (${level}) cannot start: a command inside bubblewrap (${path}) would keep capabilities (CapEff ${capEff ?? "unknown"}), ` +
          `so it could remount the file system writable and leave the sandbox. Use a bubblewrap that honours --cap-drop (0.4 or later), or start pi with --sandbox off.`,
      };
    }
    return { ok: true, path };
  }
  const why = (r.error?.message ?? r.stderr ?? "").trim() || `exit code ${r.status}`;
  return {
    ok: false,
    message:
      `the sandbox (${level}) cannot start: bubblewrap (${path}) could not create a sandbox here (${why}). ` +
      `It needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0), ` +
      `or root with CAP_SYS_ADMIN (inside a container: allow namespaces, e.g. --privileged or a seccomp profile that permits them); ` +
      `if it is missing, ${PACKAGE_HINT}. Or start pi with --sandbox off.`,
  };
}

function kindOf(p: string): "dir" | "file" | undefined {
  try {
    const s = statSync(p);
    return s.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/**
 * What one pi process keeps for its sandboxed commands: the private /tmp they share (not the
 * host's), and the seccomp program file. Both live in a folder of their own that is read-only
 * inside the sandbox; removed when pi exits.
 */
export interface SandboxRuntime {
  base: string;
  tmp: string;
  /** The seccomp program refusing Unix sockets, undefined on an architecture it is not written for. */
  seccomp?: string;
  /** Placeholders created for protected paths that did not exist (removed at exit when still empty). */
  placeholders: Set<string>;
}

let runtime: SandboxRuntime | undefined;

const RUNTIME_PREFIX = "pi-sandbox-";

/** Folders left by pi processes that were killed (SIGKILL: no exit handler ran), removed once. */
export function sweepStaleRuntimes(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = new RegExp(`^${RUNTIME_PREFIX}(\\d+)-`).exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const dir = join(tmpdir(), name);
    try {
      if (uid !== undefined && lstatSync(dir).uid !== uid) continue;
    } catch {
      continue;
    }
    spawnSync("rm", ["-rf", "--one-file-system", dir], { stdio: "ignore", timeout: 5_000 });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function sandboxRuntime(): SandboxRuntime {
  if (runtime && existsSync(runtime.tmp)) return runtime;
  sweepStaleRuntimes();
  const base = mkdtempSync(join(tmpdir(), `${RUNTIME_PREFIX}${process.pid}-`));
  const tmp = join(base, "tmp");
  mkdirSync(tmp, { mode: 0o700 });
  const program = seccompDenyUnixSockets(process.arch);
  let seccomp: string | undefined;
  if (program) {
    seccomp = join(base, "deny-unix-sockets.bpf");
    writeFileSync(seccomp, program, { mode: 0o400 });
  }
  const created: SandboxRuntime = { base, tmp, seccomp, placeholders: runtime?.placeholders ?? new Set() };
  runtime = created;
  process.once("exit", () => cleanupRuntime(created));
  return created;
}

function cleanupRuntime(rt: SandboxRuntime): void {
  for (const p of rt.placeholders) {
    try {
      const s = lstatSync(p);
      if (s.isDirectory() && readdirSync(p).length === 0) rmdirSync(p);
      else if (s.isFile() && s.size === 0) unlinkSync(p);
    } catch {
      /* gone or not ours any more */
    }
  }
  try {
    spawnSync("rm", ["-rf", "--one-file-system", rt.base], { stdio: "ignore", timeout: 5_000 });
  } catch {
    /* best effort */
  }
}

/**
 * Protected paths at the top of the project that do not exist yet are created empty first (a
 * folder, or an empty file for a settings file), so the read-only bind covers them and a
 * sandboxed command cannot create them (a `pi.config.ts`, `.mcp.json`, `.claude/settings.json`
 * or `.git/config` would run unconfined at the next start of pi or git). They are removed again
 * when pi exits, if still empty.
 */
function ensureProtectedPaths(policy: SandboxPolicy, rt: SandboxRuntime): void {
  for (const { path: p, kind } of policy.startupPaths) {
    if (existsSync(p) || lstatExists(p) || !existsSync(dirname(p))) continue;
    try {
      if (kind === "file") writeFileSync(p, "", { flag: "wx" });
      else mkdirSync(p);
      rt.placeholders.add(p);
    } catch {
      /* a read-only project: nothing can be created inside it either */
    }
  }
}

function lstatExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function resolvConfDir(): string | undefined {
  try {
    const dir = dirname(realpathSync("/etc/resolv.conf"));
    return ["/run", "/var/run"].some((r) => isInside(dir, r)) && kindOf(dir) === "dir" ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** bwrap's arguments for `policy`, up to and including `--`; the command follows. */
export function bwrapArgs(policy: SandboxPolicy, cwd: string, rt: SandboxRuntime = sandboxRuntime()): string[] {
  const a = [...ISOLATION_ARGS];
  // Behind the private /tmp, what lies under the host's /tmp is invisible already (and binding
  // over it would create its folders inside the private /tmp).
  const behindPrivateTmp = (p: string) => isInside(p, "/tmp") && !policy.writable.some((w) => isInside(p, w));
  if (!policy.network) a.push("--unshare-net");
  if (!policy.network && rt.seccomp) a.push("--seccomp", SECCOMP_FD);
  a.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");
  for (const p of PROC_READ_ONLY) if (existsSync(p)) a.push("--ro-bind", p, p);
  // The host's runtime sockets (tmux, ssh-agent, D-Bus, docker, systemd) are not reachable.
  for (const run of ["/run", "/var/run"]) {
    try {
      if (lstatSync(run).isDirectory()) a.push("--tmpfs", run);
    } catch {
      /* none */
    }
  }
  // Name resolution still works with the network on (resolv.conf often points into /run:
  // systemd-resolved, resolvconf, NetworkManager): the folder it points into comes back read-only.
  if (policy.network) {
    const resolvDir = resolvConfDir();
    if (resolvDir) a.push("--ro-bind", resolvDir, resolvDir);
  }
  if (policy.level === "read-only") a.push("--tmpfs", "/tmp");
  else a.push("--bind", rt.tmp, "/tmp");
  // The private /tmp must not hide the project (or the folder the command runs in).
  for (const p of new Set([policy.workspace, cwd])) {
    if (isInside(p, "/tmp") && p !== "/tmp" && kindOf(p) && !policy.writable.some((w) => isInside(p, w))) a.push("--ro-bind", p, p);
  }
  // Programs on PATH under the host's /tmp (a Node or tool installed there, as CI and
  // containers do) stay reachable, read-only: the private /tmp would hide them.
  for (const p of programFoldersUnderTmp()) {
    if (kindOf(p) === "dir" && ![policy.workspace, cwd, ...policy.writable].some((w) => isInside(p, w))) a.push("--ro-bind", p, p);
  }
  for (const w of policy.writable) if (kindOf(w)) a.push("--bind", w, w);
  if (policy.level === "workspace-write") ensureProtectedPaths(policy, rt);
  // Read-only binds matter only where something would be writable (what sits under the host's
  // /tmp outside the project is not visible at all behind the private /tmp).
  const exposed = policy.writable;
  for (const r of [...policy.readOnly, rt.base]) if (kindOf(r) && exposed.some((w) => isInside(r, w))) a.push("--ro-bind", r, r);
  // The host's socket folders, after the writable binds so that none of them shows them again
  // (behind the private /tmp they are hidden already).
  for (const h of policy.socketDirs) if (kindOf(h) === "dir" && !isInside(policy.workspace, h) && !behindPrivateTmp(h)) a.push("--tmpfs", h, "--remount-ro", h);
  for (const h of policy.hidden) {
    if (behindPrivateTmp(h)) continue;
    const k = kindOf(h);
    if (k === "dir") a.push("--tmpfs", h, "--remount-ro", h);
    else if (k === "file") a.push("--ro-bind", "/dev/null", h);
  }
  a.push("--chdir", cwd, "--");
  return a;
}

/**
 * The program to spawn for a sandboxed command: bwrap itself, or (when a seccomp program is
 * used) `/bin/sh` opening it on the fd bwrap reads and exec'ing bwrap in its place (same pid).
 */
export function launchArgs(bwrap: string, args: string[], rt: SandboxRuntime): { file: string; args: string[] } {
  const i = args.indexOf("--seccomp");
  if (i < 0 || !rt.seccomp) return { file: bwrap, args };
  return { file: "/bin/sh", args: ["-c", `exec "$@" ${SECCOMP_FD}<"$0"`, rt.seccomp, bwrap, ...args] };
}

/**
 * The folders of the programs a command finds on PATH (and of the Node running pi) that lie under
 * /tmp: each PATH entry, or the install folder above a `bin` entry (its libraries sit beside it).
 */
function programFoldersUnderTmp(): string[] {
  const entries = [dirname(process.execPath), ...(process.env.PATH ?? "").split(delimiter)];
  const out = new Set<string>();
  for (const e of entries) {
    if (!e || !isAbsolute(e)) continue;
    const dir = resolve(e);
    if (!isInside(dir, "/tmp") || dir === "/tmp") continue;
    const folder = basename(dir) === "bin" && dirname(dir) !== "/tmp" ? dirname(dir) : dir;
    out.add(folder);
  }
  return [...out];
}
