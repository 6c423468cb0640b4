/**
 * The sandbox policy: which level applies (the `--sandbox` flag, else settings), what is
 * writable, what is protected, and the same check the write and edit tools go through.
 *
 * Settings (`sandbox`, a level string or an object):
 *   { "level": "read-only" | "workspace-write" | "off", "network": false,
 *     "writableRoots": ["~/.cache"], "readOnly": ["docs/frozen"], "hidden": ["~/.ssh", "~/.aws", "~/.gnupg"] }
 * A project's settings (`.pi/settings.json`, from a repository nobody vetted) may only tighten:
 * a stricter level, more read-only or hidden paths. Turning the sandbox off, the network on or
 * adding writable roots from a project needs the project to be trusted.
 */
import { readlinkSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { expandHome, projectStartupPaths } from "../../core/kernel/index.js";

export type SandboxLevel = "read-only" | "workspace-write" | "off";
export const SANDBOX_LEVELS: readonly SandboxLevel[] = Object.freeze(["read-only", "workspace-write", "off"]);
/** Hidden by default (an empty read-only folder in their place). */
export const DEFAULT_HIDDEN: readonly string[] = Object.freeze(["~/.ssh", "~/.aws", "~/.gnupg"]);

export interface SandboxPolicy {
  level: SandboxLevel;
  /** Where the level came from, for messages: "--sandbox" or the settings file. */
  from: string;
  network: boolean;
  /** The project folder (real path). */
  workspace: string;
  /** Writable folders (real paths); empty in read-only (its /tmp is private). */
  writable: string[];
  /** Kept read-only although inside a writable folder (real paths; may not exist). */
  readOnly: string[];
  /** Replaced by an empty read-only folder (real paths, existing ones only matter). */
  hidden: string[];
  /**
   * The project's paths pi, its plugins and git run code from at their next start (the loaders'
   * own list, core/kernel/project-files.ts): read-only inside, created empty first when missing.
   */
  startupPaths: Array<{ path: string; kind: "dir" | "file" }>;
  /** Folders holding the host's sockets (ssh-agent, tmux, the session's runtime folder): hidden. */
  socketDirs: string[];
}

type Obj = Record<string, unknown>;

export function isLevel(v: unknown): v is SandboxLevel {
  return typeof v === "string" && (SANDBOX_LEVELS as readonly string[]).includes(v);
}

const STRICTNESS: Record<SandboxLevel, number> = { off: 0, "workspace-write": 1, "read-only": 2 };

/** The `sandbox` settings value as an object (a bare string is the level). */
export function sandboxSettings(v: unknown): Obj {
  if (typeof v === "string") return { level: v };
  if (v && typeof v === "object" && !Array.isArray(v)) return v as Obj;
  return {};
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x.trim() !== "") : [];
}

export function expandUserPath(p: string, base: string): string {
  const q = expandHome(p.startsWith("@") ? p.slice(1) : p);
  return isAbsolute(q) ? resolve(q) : resolve(base, q);
}

/**
 * The real path of `p`: symlinks resolved where they exist, and a dangling symlink (one whose
 * target does not exist yet, so opening it for writing would create the target) followed to
 * where it points; the part that does not exist is joined to its nearest existing folder.
 */
export function realish(p: string, depth = 0): string {
  const rest: string[] = [];
  let cur = resolve(p);
  for (;;) {
    try {
      const real = realpathSync(cur);
      return rest.length ? join(real, ...rest.reverse()) : real;
    } catch {
      // A link that exists but does not resolve: follow it (bounded, so a loop ends).
      let target: string | undefined;
      try {
        target = readlinkSync(cur);
      } catch {
        target = undefined;
      }
      if (target !== undefined) {
        if (depth > 40) return resolve(p);
        const next = realish(resolve(dirname(cur), target), depth + 1);
        return rest.length ? join(next, ...rest.reverse()) : next;
      }
      const parent = dirname(cur);
      if (parent === cur) return resolve(p);
      rest.push(basename(cur));
      cur = parent;
    }
  }
}

export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

export interface PolicyInputs {
  cwd: string;
  agentDir: string;
  /** The project config folder name (".pi"). */
  configDir: string;
  /** The app's name ("pi": `.pirc.json`, `pi.config.ts`). */
  appName?: string;
  global: Obj;
  project: Obj;
  projectTrusted: boolean;
  /** The `--sandbox` flag value, if given. */
  flag?: unknown;
  /**
   * The files of the extensions this run loaded (the extension host's own list): code the next
   * start runs again, so kept read-only where a writable folder holds them.
   */
  codeFiles?: string[];
  /** Where the settings live, for messages. */
  globalPath: string;
  projectPath: string;
}

/** What the level depends on: the settings layers, the project's trust and the flag. */
export type LevelInputs = Pick<PolicyInputs, "global" | "project" | "projectTrusted" | "flag" | "globalPath" | "projectPath">;

/**
 * The level in force and where it comes from, without resolving any path (what "is the sandbox
 * on?" needs, asked on every tool call). Throws an Error naming the bad value when the flag or a
 * settings level is not a level.
 */
export function resolveLevel(inp: LevelInputs): { level: SandboxLevel; from: string } {
  const g = sandboxSettings(inp.global.sandbox);
  const p = sandboxSettings(inp.project.sandbox);
  if (inp.flag !== undefined && !isLevel(inp.flag)) {
    throw new Error(`--sandbox ${JSON.stringify(inp.flag)} is not a sandbox level; use one of ${SANDBOX_LEVELS.join(", ")}`);
  }
  for (const [layer, where] of [[g, inp.globalPath], [p, inp.projectPath]] as const) {
    if (layer.level !== undefined && !isLevel(layer.level)) {
      throw new Error(`"sandbox" in ${where} is ${JSON.stringify(layer.level)}, not a sandbox level; use one of ${SANDBOX_LEVELS.join(", ")}`);
    }
  }

  let level: SandboxLevel = "off";
  let from = "default";
  if (inp.flag !== undefined) {
    level = inp.flag as SandboxLevel;
    from = "--sandbox";
  } else {
    if (isLevel(g.level)) {
      level = g.level;
      from = inp.globalPath;
    }
    if (isLevel(p.level) && (inp.projectTrusted || STRICTNESS[p.level] > STRICTNESS[level])) {
      level = p.level;
      from = inp.projectPath;
    }
  }
  return { level, from };
}

/** Throws an Error naming the bad value when the flag or a settings level is not a level. */
export function resolvePolicy(inp: PolicyInputs): SandboxPolicy {
  const { level, from } = resolveLevel(inp);
  const g = sandboxSettings(inp.global.sandbox);
  const p = sandboxSettings(inp.project.sandbox);

  const projectTrusted = inp.projectTrusted;
  let network = g.network === true;
  if (p.network === false) network = false;
  else if (p.network === true && projectTrusted) network = true;

  const workspace = realish(inp.cwd);
  // Relative paths (in either layer) are relative to the project; "~/" is the home folder.
  const fromGlobal = (list: string[]) => list.map((x) => realish(expandUserPath(x, workspace)));
  const fromProject = fromGlobal;

  const writable: string[] = [];
  if (level === "workspace-write") {
    // Commands get a private /tmp of their own (bwrap.ts), not the host's.
    writable.push(workspace);
    writable.push(...fromGlobal(strings(g.writableRoots)));
    if (projectTrusted) writable.push(...fromProject(strings(p.writableRoots)));
  }

  const agentDir = realish(inp.agentDir);
  const startupPaths = projectStartupPaths(inp.configDir, inp.appName ?? "pi").map((p) => ({ path: join(workspace, p.path), kind: p.kind }));
  const home = realish(homedir());
  const readOnly = [
    agentDir,
    ...startupPaths.map((p) => p.path),
    // What a shell or git started by the person runs, should a writable folder hold the home folder.
    ...SHELL_STARTUP_FILES.map((f) => join(home, f)),
    ...extensionPaths(inp.codeFiles ?? [], workspace),
    ...fromGlobal(strings(g.readOnly)),
    ...fromProject(strings(p.readOnly)),
  ];
  const hiddenBase = Array.isArray(g.hidden) ? strings(g.hidden) : [...DEFAULT_HIDDEN];
  // The agent dir's credentials are never visible to a command.
  const hidden = [...CREDENTIAL_FILES.map((f) => join(agentDir, f)), ...fromGlobal(hiddenBase), ...fromProject(strings(p.hidden))];

  return {
    level,
    from,
    network,
    workspace,
    writable: dedupe(writable),
    readOnly: dedupe(readOnly),
    hidden: dedupe(hidden),
    startupPaths,
    socketDirs: socketDirs(process.env),
  };
}

/**
 * An extension's file, and its folder (the modules next to it that it imports) unless that is
 * the project folder itself (then the file alone).
 */
function extensionPaths(files: string[], workspace: string): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (!isAbsolute(f)) continue;
    const real = realish(f);
    out.push(real);
    const dir = dirname(real);
    if (dir !== workspace && isInside(dir, workspace)) out.push(dir);
  }
  return out;
}

/** Files in the agent dir that hold keys and tokens (logins, provider keys, MCP headers and env). */
export const CREDENTIAL_FILES: readonly string[] = Object.freeze(["auth.json", "models.json", "mcp.json"]);

/** Start-up files of shells and git in the home folder (read-only should a writable folder contain them). */
const SHELL_STARTUP_FILES = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".gitconfig", ".config/git", ".config/fish", ".inputrc"];

/** Folders of the host's sockets the environment names (hidden inside; the variables are removed too). */
export function socketDirs(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const add = (p: string | undefined) => {
    if (p && isAbsolute(p)) out.push(realish(p));
  };
  add(env.XDG_RUNTIME_DIR);
  if (env.SSH_AUTH_SOCK) add(dirname(env.SSH_AUTH_SOCK));
  if (env.TMUX) add(dirname(env.TMUX.split(",")[0] ?? ""));
  add(env.TMUX_TMPDIR);
  add("/tmp/.X11-unix");
  return dedupe(out).filter((d) => d !== "/" && d !== realish(homedir()));
}

function dedupe(list: string[]): string[] {
  return [...new Set(list)];
}

export type WriteVerdict = { ok: true } | { ok: false; why: string };

/** May a file be written at `absPath` under this policy (the check the write and edit tools get)? */
export function checkWrite(policy: SandboxPolicy, absPath: string): WriteVerdict {
  if (policy.level === "off") return { ok: true };
  const real = realish(absPath);
  if (policy.level === "read-only") return { ok: false, why: `${real} cannot be written: the sandbox is read-only (nothing is writable)` };
  const hidden = policy.hidden.find((h) => isInside(real, h));
  if (hidden) return { ok: false, why: `${real} is inside ${hidden}, which the sandbox hides` };
  const ro = policy.readOnly.find((r) => isInside(real, r));
  if (ro) return { ok: false, why: `${real} is inside ${ro}, which the sandbox keeps read-only` };
  if (!policy.writable.some((w) => isInside(real, w))) {
    return { ok: false, why: `${real} is outside the writable folders (${policy.writable.join(", ")})` };
  }
  return { ok: true };
}

/** One line naming the level and what is writable. */
export function describePolicy(policy: SandboxPolicy): string {
  if (policy.level === "off") return "The sandbox is off.";
  const net = policy.network ? "network on" : "network off";
  if (policy.level === "read-only") return `The sandbox is read-only: nothing is writable but a private /tmp (${net}).`;
  return `The sandbox is workspace-write: only ${policy.writable.join(", ")} and a private /tmp are writable; the agent dir, .git, .pi and the project's other start-up files stay read-only (${net}).`;
}

/** How the person can allow what was blocked. */
export function howToAllow(kind: "write" | "network", settingsPath: string): string {
  if (kind === "network") {
    return `To allow network access, set "sandbox": {"network": true} in ${settingsPath}, or start pi with --sandbox off.`;
  }
  return `To allow it, add the folder to "sandbox.writableRoots" in ${settingsPath}, or start pi with --sandbox off.`;
}

