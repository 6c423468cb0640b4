/**
 * Values in auth.json and models.json (`apiKey`, header values) come in three forms:
 *   "!command"  run through the shell once; stdout, trimmed, is the value
 *   "NAME"      when an environment variable of that name is set, its value
 *   anything    the literal itself
 *
 * Commands run asynchronously (never blocking the event loop) with a 10 s timeout; a failing
 * or empty command resolves to undefined. `cache: true` keeps a successful result for the life
 * of the process (auth.json keys); models.json values are resolved per request, as the
 * reference does.
 */
import { exec } from "node:child_process";

const COMMAND_TIMEOUT_MS = 10_000;
const commandCache = new Map<string, Promise<string | undefined>>();

export interface ResolveOptions {
  /** Keep a command's result for the life of the process (default true). */
  cache?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Told why a command failed (exit code, timeout); the value is then undefined. */
  onError?: (message: string) => void;
}

export function isCommandValue(value: string): boolean {
  return value.startsWith("!");
}

function runCommand(command: string, onError?: (m: string) => void): Promise<string | undefined> {
  return new Promise((resolve) => {
    exec(command, { timeout: COMMAND_TIMEOUT_MS, windowsHide: true, maxBuffer: 1024 * 1024 }, (error, stdout) => {
      if (error) {
        const why = error.killed ? `timed out after ${COMMAND_TIMEOUT_MS / 1000} s` : `exited with code ${error.code ?? "?"}`;
        onError?.(`command "${command}" ${why}`);
        resolve(undefined);
        return;
      }
      const out = String(stdout).trim();
      if (!out) onError?.(`command "${command}" printed nothing`);
      resolve(out || undefined);
    });
  });
}

/** Resolve one config value (see the module comment). */
export async function resolveConfigValue(value: string, opts: ResolveOptions = {}): Promise<string | undefined> {
  if (isCommandValue(value)) {
    const command = value.slice(1).trim();
    if (!command) return undefined;
    if (opts.cache === false) return runCommand(command, opts.onError);
    let p = commandCache.get(command);
    if (!p) {
      p = runCommand(command, opts.onError);
      commandCache.set(command, p);
      // A failure is not remembered: the next request tries the command again.
      void p.then((v) => {
        if (v === undefined && commandCache.get(command) === p) commandCache.delete(command);
      });
    }
    return p;
  }
  const env = opts.env ?? process.env;
  const fromEnv = env[value];
  return fromEnv || value;
}

/** Resolve every header value; a header whose value resolves to nothing is an error. */
export async function resolveHeaders(
  headers: Record<string, string> | undefined,
  what: string,
  opts: ResolveOptions = {},
): Promise<Record<string, string> | undefined> {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const r = await resolveConfigValue(v, opts);
    if (r === undefined) throw new Error(`cannot resolve ${what} header "${k}"${isCommandValue(v) ? ` from command: ${v.slice(1)}` : ""}`);
    out[k] = r;
  }
  return Object.keys(out).length ? out : undefined;
}

/** Forget cached command results (tests, /login). */
export function clearConfigValueCache(): void {
  commandCache.clear();
}
