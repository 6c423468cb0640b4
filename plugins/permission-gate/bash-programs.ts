/**
 * What programs do with their arguments, for the bash analysis (bash-analysis.ts): which run
 * another command from their arguments (wrappers), which take a script of shell code (shells,
 * `trap`, `alias`, git's command-valued config keys, command-valued environment variables), and
 * which evaluate names or arithmetic (so a quoted text holding `$(…)` becomes code).
 *
 * The tables are deliberately broad: a program listed here that does not run anything only
 * makes the analysis look at more text; a program missing here lets a deny rule be bypassed.
 */

/** Programs that run the rest of their arguments as a command, after their own options. */
export const WRAPPERS = new Set([
  "env", "command", "exec", "nice", "timeout", "time", "nohup", "sudo", "doas", "xargs", "stdbuf", "builtin",
  "ionice", "chroot", "setsid", "unbuffer", "strace", "ltrace", "nocorrect", "noglob", "busybox", "toybox",
  "unshare", "fakeroot", "pkexec", "catchsegv", "taskset", "chrt", "flock", "nsenter", "setpriv", "runcon",
  "systemd-run", "firejail", "proot", "valgrind", "sg", "cpulimit", "trickle", "tsp", "caffeinate", "torsocks", "proxychains", "proxychains4",
  "run0", "with-contenv", "s6-setuidgid", "chpst", "numactl", "prlimit", "faketime",
]);

/**
 * Option letters or long names that take a value in the next word (or glued: `-uroot`,
 * `--user=root`). A cluster `-iu root` takes its value after the last letter.
 */
export const WRAPPER_VALUE_OPTS: Record<string, Set<string>> = {
  env: new Set(["u", "unset", "C", "chdir", "S", "split-string", "a", "argv0"]),
  exec: new Set(["a"]),
  nice: new Set(["n", "adjustment"]),
  timeout: new Set(["s", "signal", "k", "kill-after"]),
  sudo: new Set(["u", "user", "g", "group", "C", "close-from", "D", "chdir", "h", "host", "p", "prompt", "r", "role", "t", "type", "U", "other-user", "T", "command-timeout", "R", "chroot"]),
  doas: new Set(["u", "C"]),
  run0: new Set(["u", "user", "g", "group", "D", "chdir", "setenv", "property", "unit", "description", "slice", "nice", "background"]),
  xargs: new Set(["I", "i", "n", "P", "L", "l", "s", "d", "E", "e", "a", "max-args", "max-procs", "delimiter", "arg-file", "replace", "max-lines", "max-chars", "eof", "process-slot-var"]),
  stdbuf: new Set(["i", "o", "e", "input", "output", "error"]),
  ionice: new Set(["c", "n", "p", "P", "u", "class", "classdata"]),
  strace: new Set(["o", "e", "p", "s", "u", "E", "P", "I", "b", "a", "X"]),
  ltrace: new Set(["o", "e", "p", "s", "u", "n", "l", "A", "D", "F", "x", "L"]),
  unshare: new Set(["S", "setuid", "G", "setgid", "R", "root", "w", "wd", "map-user", "map-group", "propagation"]),
  nsenter: new Set(["t", "target", "S", "setuid", "G", "setgid", "r", "root", "w", "wd"]),
  setpriv: new Set(["reuid", "regid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "selinux-label", "apparmor-profile"]),
  "systemd-run": new Set(["u", "unit", "p", "property", "description", "slice", "E", "setenv", "uid", "gid", "nice", "working-directory", "M", "machine", "H", "host", "on-calendar", "on-active"]),
  taskset: new Set([]),
  chrt: new Set([]),
  flock: new Set(["w", "wait", "timeout", "E", "conflict-exit-code"]),
  firejail: new Set([]),
  valgrind: new Set([]),
  cpulimit: new Set(["l", "limit", "p", "pid", "e", "exe"]),
  numactl: new Set(["C", "N", "m", "p", "i", "cpunodebind", "membind", "preferred", "interleave", "physcpubind"]),
  prlimit: new Set(["p", "pid"]),
  runcon: new Set(["u", "r", "t", "l", "user", "role", "type", "range"]),
  chpst: new Set(["u", "U", "e", "d", "o", "p", "f", "c", "m", "n", "l", "L", "b", "/"]),
  script: new Set(["O", "I", "B", "T", "t", "timing", "log-out", "log-in", "log-io", "log-timing", "E", "echo", "m", "logging-format", "o", "output-limit"]),
};

/** Wrappers that take positional words before the command: `timeout 5 cmd`, `chroot /new cmd`. */
export const WRAPPER_POSITIONALS: Record<string, number> = {
  timeout: 1, chroot: 1, taskset: 1, chrt: 1, flock: 1, sg: 1, faketime: 1, "s6-setuidgid": 1, trickle: 0, tsp: 0,
};

/** Wrappers whose `-c`/`--command` option (or, for `script`, `-c`) is a shell script. */
export const COMMAND_OPTION = new Map<string, Set<string>>([
  ["su", new Set(["c", "command", "session-command"])],
  ["runuser", new Set(["c", "command", "session-command"])],
  ["script", new Set(["c", "command"])],
  ["flock", new Set(["c", "command"])],
  ["sg", new Set(["c"])],
]);

/** Programs that join their arguments with spaces and hand the result to `sh -c`. */
export const SHELL_JOINERS = new Set(["watch", "ssh-agent", "dbus-launch", "xvfb-run", "parallel", "nohup-sh"]);

export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh", "rbash", "pdksh", "oksh", "elvish", "nu", "xonsh", "su", "runuser"]);
export const INTERPRETERS = new Set(["python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit", "deno", "bun", "osascript", "Rscript", "tclsh", "wish", "expect", "pwsh", "powershell", "irb", "jshell", "groovy", "julia", "guile", "racket", "sbcl", "clisp", "gawk", "awk", "mawk", "nawk"]);
export const AWKS = new Set(["awk", "gawk", "mawk", "nawk", "busybox-awk"]);

/** Shell options that take a value: `-o errexit`, `-O extglob`, `--rcfile f`. */
const SHELL_VALUE_SHORT = new Set(["o", "O"]);
const SHELL_VALUE_LONG = new Set(["--rcfile", "--init-file"]);

export type ShellInvocation =
  | { kind: "script"; script: string | undefined }
  | { kind: "stdin"; why: string }
  | { kind: "file"; file: string | undefined }
  | { kind: "dynamic" };

/**
 * How a shell is run: with `-c SCRIPT` (options may come before or after `-c`: `bash -x -c`,
 * `bash -c -x`, `bash -c -- …`, `bash -cx`), from stdin (`-s`, `-i`, no arguments, `-`,
 * `/dev/stdin`, `/dev/fd/N`, `/proc/*​/fd/N`), or from a file.
 */
export function shellInvocation(name: string, rest: Array<string | undefined>): ShellInvocation {
  let cMode = false;
  let sMode = false;
  let i = 0;
  const isSu = name === "su" || name === "runuser";
  for (; i < rest.length; i++) {
    const x = rest[i];
    if (x === undefined) return { kind: "dynamic" };
    if (x === "--") {
      i++;
      break;
    }
    if (isSu) {
      const m = /^--(?:session-)?command(?:=([\s\S]*))?$/.exec(x);
      if (m) return { kind: "script", script: m[1] ?? rest[i + 1] };
      if (/^-[A-Za-z]*c$/.test(x) && x !== "-") return { kind: "script", script: rest[i + 1] };
      if (/^-[A-Za-z]*c./.test(x)) return { kind: "script", script: x.slice(x.indexOf("c") + 1) };
      if (/^-(?:[gGsw]|-group|-supp-group|-shell|-whitelist-environment)$/.test(x)) i++;
      continue; // su's user name and `-`/`-l` are not the command
    }
    if (SHELL_VALUE_LONG.has(x)) {
      i++;
      continue;
    }
    if (x.startsWith("--")) continue;
    if (/^[-+][A-Za-z]+$/.test(x)) {
      const letters = x.slice(1);
      if (x[0] === "-" && letters.includes("c")) cMode = true;
      if (x[0] === "-" && (letters.includes("s") || letters.includes("i"))) sMode = true;
      if (SHELL_VALUE_SHORT.has(letters[letters.length - 1]!)) i++;
      continue;
    }
    break;
  }
  if (isSu) return { kind: "stdin", why: `${name} without -c starts a shell reading its commands from stdin` };
  if (cMode) return { kind: "script", script: i < rest.length ? rest[i] : undefined };
  if (sMode || i >= rest.length) return { kind: "stdin", why: `${name} reads its commands from stdin` };
  const file = rest[i];
  if (file === undefined) return { kind: "dynamic" };
  if (file === "-" || /^\/dev\/(stdin|fd\/|tty|pts|tcp|udp)/.test(file) || /^\/proc\/[^/]+\/fd\//.test(file)) {
    return { kind: "stdin", why: `${name} reads its commands from ${file}` };
  }
  return { kind: "file", file };
}

/** Environment variables whose value is a command line some program runs. */
export const COMMAND_VARS = new Set([
  "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
  "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE",
  "BROWSER", "RSYNC_RSH", "CVS_RSH", "SUDO_ASKPASS", "FCEDIT", "TAR_OPTIONS", "GPG_TTY_PROGRAM", "PSQL_PAGER", "MYSQL_PS1",
]);

/** Variables that make bash or another program run code the rules cannot see. */
export const OPAQUE_VAR_RE =
  /^(BASH_ENV|ENV|PS[0-4]|BASH_ALIASES|BASH_CMDS|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|GIT_CONFIG.*|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|NODE_OPTIONS|PERL5OPT|PERL5LIB|RUBYOPT|PYTHONSTARTUP|PYTHONPATH|PROMPT_COMMAND.*|EXECIGNORE|BASH_LOADABLES_PATH|ZDOTDIR)$/;

/** Builtins that evaluate a name (array subscripts are arithmetic) or an arithmetic expression. */
export const EVALUATING_BUILTINS = new Set([
  "declare", "typeset", "local", "export", "readonly", "printf", "test", "[", "read", "let", "unset", "mapfile", "readarray",
  "getopts", "wait", "trap", "set", "shopt", "alias", "printf", "source", ".", "eval", "enable", "hash", "fc", "bind", "complete", "compgen",
]);

/**
 * git config keys whose value git runs (as a shell command line, or a program), or that point
 * git at more configuration or hooks. `alias.*` runs through a shell when it starts with `!`.
 */
export function gitConfigEffect(key: string, value: string | undefined): { script?: string; opaque?: string } | undefined {
  const k = key.toLowerCase();
  if (k.startsWith("alias.")) {
    if (value === undefined) return { opaque: `git alias ${key} is built at run time` };
    return value.trimStart().startsWith("!") ? { script: value.trimStart().slice(1) } : undefined;
  }
  if (/^(include\.|includeif\.)|\.hookspath$|^protocol\.|^core\.worktree$|^safe\.directory$|^uploadpack\.packobjectshook$/.test(k)) {
    return { opaque: `git -c ${key} makes git load or run what the rules cannot see` };
  }
  if (/(command|cmd|program|editor|pager|askpass|fsmonitor|driver|helper|textconv|clean|smudge|process|external|hook|uploadpack|receivepack|proxy|difffilter|variant|tool)$/.test(k) || k.startsWith("pager.")) {
    if (value === undefined) return { opaque: `git config ${key} is built at run time` };
    if (/^(true|false|yes|no|on|off|\d+)$/i.test(value.trim()) || !value.trim()) return undefined;
    return { script: value.replace(/^!/, "") };
  }
  return undefined;
}
