/**
 * bubblewrap (`bwrap`, Debian package `bubblewrap`): finding it, checking once that it can build
 * a sandbox here, and the arguments that build one for a policy.
 *
 * The mount plan: the whole file system read-only (`--ro-bind / /`), a fresh /dev and /proc in a
 * new PID namespace, then the writable folders bound writable, then the protected paths bound
 * read-only over them (later mounts win), hidden folders replaced by an empty read-only tmpfs and
 * hidden files by /dev/null. `--unshare-net` leaves only a loopback interface of its own, so no
 * connection leaves the sandbox, not even to the host's loopback. The sandbox dies with pi.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { isInside, type SandboxPolicy } from "./policy.js";

export const PACKAGE_HINT = `install the package "bubblewrap" (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)`;

export type Probe = { ok: true; path: string } | { ok: false; message: string };

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

/** Can bubblewrap build a sandbox with the features we use? (One short run of `true`.) */
export function probeBwrap(level: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): Probe {
  if (platform !== "linux") {
    return { ok: false, message: `the sandbox (${level}) is not supported on this platform (${platform}): it needs Linux with bubblewrap. Start pi with --sandbox off, or remove "sandbox" from settings.` };
  }
  const path = findBwrap(env);
  if (!path) {
    return { ok: false, message: `the sandbox (${level}) needs bubblewrap, and no "bwrap" was found on PATH: ${PACKAGE_HINT}, or start pi with --sandbox off.` };
  }
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "true"];
  const r = spawnSync(path, args, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  if (r.status === 0) return { ok: true, path };
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
 * Protected folders that do not exist yet are created empty first, so a sandboxed command cannot
 * create them (a `.pi/extensions/x.ts` or a `.git/hooks/pre-commit` would run unconfined later).
 */
function ensureProtectedFolders(policy: SandboxPolicy, configDir: string): void {
  const gitDir = join(policy.workspace, ".git");
  const wanted = [join(policy.workspace, configDir)];
  if (kindOf(gitDir) === "dir") wanted.push(join(gitDir, "hooks"));
  for (const p of wanted) {
    if (!policy.readOnly.includes(p) || existsSync(p) || !existsSync(dirname(p))) continue;
    try {
      mkdirSync(p);
    } catch {
      /* a read-only project: nothing can be created inside it either */
    }
  }
}

/** bwrap's arguments for `policy`, up to and including `--`; the command follows. */
export function bwrapArgs(policy: SandboxPolicy, cwd: string, configDir = ".pi"): string[] {
  const a = ["--die-with-parent", "--unshare-pid"];
  if (!policy.network) a.push("--unshare-net");
  a.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");
  if (policy.level === "read-only") {
    a.push("--tmpfs", "/tmp");
    // The private /tmp must not hide the project (or the folder the command runs in).
    for (const p of new Set([policy.workspace, cwd])) if (isInside(p, "/tmp") && p !== "/tmp" && kindOf(p)) a.push("--ro-bind", p, p);
  }
  for (const w of policy.writable) if (kindOf(w)) a.push("--bind", w, w);
  if (policy.level === "workspace-write") ensureProtectedFolders(policy, configDir);
  const exposed = policy.level === "read-only" ? ["/tmp"] : policy.writable;
  // Read-only binds matter only where something would be writable (or, in read-only, where the private /tmp hides them).
  for (const r of policy.readOnly) if (kindOf(r) && exposed.some((w) => isInside(r, w))) a.push("--ro-bind", r, r);
  for (const h of policy.hidden) {
    const k = kindOf(h);
    if (k === "dir") a.push("--tmpfs", h, "--remount-ro", h);
    else if (k === "file") a.push("--ro-bind", "/dev/null", h);
  }
  a.push("--chdir", cwd, "--");
  return a;
}
