/**
 * The one seam every command the agent or the person runs goes through before it is spawned:
 * the bash tool, `!` commands (the "bash-executor" service), `pi.exec`, and the local bash
 * operations an extension builds with `createLocalBashOperations()`.
 *
 * A plugin (the sandbox) installs a wrapper; spawn sites call `wrapCommand()` with the program
 * they are about to start and spawn what it returns (e.g. `bwrap … -- /bin/bash -c cmd`). A
 * wrapper may throw to refuse the command (fail closed); the spawn site reports the message as
 * the command's failure. `explainCommandFailure()` lets the wrapper say in words why a failed
 * command failed (a write the sandbox blocked, the network being off).
 *
 * Wrappers are process-wide (extension code creating local operations has no kernel at hand),
 * and `runUnwrapped()` runs a function whose spawns skip them (a retry the person allowed).
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface CommandSpec {
  /** The program to start. */
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * Variables the person configured for this program by name (an MCP server's "env"): a wrapper
   * that trims the inherited environment keeps these.
   */
  explicitEnv?: Record<string, string>;
}

/** Which spawn site asks: the bash tool and `!`, `pi.exec`, a hook command, an MCP stdio server. */
export type CommandOrigin = "bash" | "exec" | "hook" | "mcp";

export interface CommandWrapper {
  /** Who installed it (for messages). */
  source: string;
  /** The command to spawn instead, or undefined to leave it alone (e.g. the sandbox is off); throw to refuse. */
  wrap(spec: CommandSpec, origin: CommandOrigin): CommandSpec | undefined;
  /** Words for a failed command's output (undefined when the wrapper had nothing to do with it). */
  explain?(output: string): string | undefined;
}

const installed: CommandWrapper[] = [];
const bypass = new AsyncLocalStorage<boolean>();

/** Install a wrapper (newest first); returns a remover. */
export function installCommandWrapper(wrapper: CommandWrapper): () => void {
  installed.push(wrapper);
  return () => {
    const i = installed.indexOf(wrapper);
    if (i >= 0) installed.splice(i, 1);
  };
}

/**
 * The command to spawn for `spec`: the newest installed wrapper that takes it decides (several
 * kernels in one process each install theirs; one that is off never un-confines another's).
 * Unchanged without a wrapper. Throws when the wrapper refuses.
 */
export function wrapCommand(spec: CommandSpec, origin: CommandOrigin): CommandSpec {
  if (bypass.getStore() === true) return spec;
  for (let i = installed.length - 1; i >= 0; i--) {
    const out = installed[i]!.wrap(spec, origin);
    if (out) return out;
  }
  return spec;
}

/** Why a command failed, in words, when an installed wrapper knows (e.g. the sandbox blocked a write). */
export function explainCommandFailure(output: string): string | undefined {
  if (bypass.getStore() === true) return undefined;
  for (let i = installed.length - 1; i >= 0; i--) {
    try {
      const why = installed[i]!.explain?.(output);
      if (why) return why;
    } catch {
      /* no explanation from this one */
    }
  }
  return undefined;
}

/** Run `fn`; commands it spawns (also asynchronously) skip the wrapper. */
export function runUnwrapped<T>(fn: () => T): T {
  return bypass.run(true, fn);
}
