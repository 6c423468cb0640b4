/**
 * Driving the real CLI in a terminal: tmux on its own `-L` socket, keys in with send-keys, the
 * screen back with capture-pane. Every wait is for something on screen (or a condition), with a
 * generous limit for a busy machine. Fails naming the package when tmux is missing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { alive } from "./processes.js";
import { requireProgram } from "./system.js";

export interface TmuxDriver {
  tmux(...args: string[]): string;
  capture(): string;
  send(...keys: string[]): string;
  typeText(text: string): string;
  /** Polls the screen until `test` holds (a function may ignore the screen and test anything). */
  waitFor(test: RegExp | ((screen: string) => boolean), timeoutMs?: number): Promise<string>;
  /** The CLI's stderr log (shown when a wait times out). */
  readErr(): string;
  /** Ends the tmux server of this socket (nothing when it is gone). */
  kill(): void;
}

/**
 * `socket`: a name of this test file's own (include process.pid); `env`: the environment tmux
 * runs with (read at each call, so it may be set in beforeAll); `errLog`: where the CLI's stderr goes.
 */
export function tmuxDriver(socket: string, env: () => NodeJS.ProcessEnv, errLog: () => string): TmuxDriver {
  requireProgram("tmux", "tmux", ["-V"]);
  // Without Node 22's compile cache: a TUI still exiting after kill() would be writing it into the
  // test's agent dir while the test removes that folder (ENOTEMPTY on fresh-clone CI runs).
  // tests/compile-cache.e2e.test.ts tests the cache itself.
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: { ...env(), NODE_DISABLE_COMPILE_CACHE: "1" } });
  const capture = () => tmux("capture-pane", "-p", "-t", "t");
  const readErr = () => (existsSync(errLog()) ? readFileSync(errLog(), "utf8") : "");
  return {
    tmux,
    capture,
    send: (...keys) => tmux("send-keys", "-t", "t", ...keys),
    typeText: (text) => tmux("send-keys", "-t", "t", "-l", text),
    readErr,
    async waitFor(test, timeoutMs = 60_000) {
      const ok = (screen: string) => (typeof test === "function" ? test(screen) : test.test(screen));
      const t0 = Date.now();
      let s = "";
      while (Date.now() - t0 < timeoutMs) {
        s = capture();
        if (ok(s)) {
          // A capture can catch a frame half drawn (tmux reads the pty in pieces, so rows of the
          // frame before may remain): a second capture that still passes is returned instead.
          const again = capture();
          return ok(again) ? again : s;
        }
        await new Promise((r) => setTimeout(r, 30));
      }
      throw new Error(`timed out waiting for ${test}\n--- screen ---\n${s}\n--- stderr ---\n${readErr()}`);
    },
    kill() {
      // The pane's program and its children (the CLI, its git children) outlive the server by
      // their exit work; the test removes their folders next, so wait for them too.
      let pids: number[] = [];
      try {
        pids = execFileSync("tmux", ["-L", socket, "list-panes", "-a", "-F", "#{pane_pid}"], { encoding: "utf8", env: env(), stdio: ["ignore", "pipe", "ignore"] })
          .split("\n").filter(Boolean).map(Number).flatMap((p) => [p, ...descendants(p)]);
      } catch {
        /* no server */
      }
      try {
        tmux("kill-server");
      } catch {
        /* already gone */
      }
      const tExit = Date.now();
      while (pids.some(alive) && Date.now() - tExit < 15_000) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      // Until the server is really gone: a new-session on this socket while it is still shutting
      // down fails with "server exited unexpectedly" (seen on a CI run).
      const t0 = Date.now();
      while (Date.now() - t0 < 10_000) {
        try {
          execFileSync("tmux", ["-L", socket, "list-sessions"], { env: env(), stdio: "ignore" });
        } catch {
          return;
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
    },
  };
}

/** The processes below `pid` now (from /proc; none where there is no /proc). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let names: string[] = [];
  try {
    names = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  for (const n of names) {
    try {
      const stat = readFileSync(`/proc/${n}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(n));
      children.set(ppid, list);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}
