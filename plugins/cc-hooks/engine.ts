/**
 * The hooks engine: finds the handlers for an event, builds Claude Code's stdin JSON, runs them
 * in parallel and reads their answers (exit code, stdout JSON or text, stderr).
 */
import type { Kernel } from "../../core/kernel/index.js";
import { loadHooks, matches, type CommandHook, type HookEventName, type LoadedHooks } from "./config.js";
import { DEFAULT_TIMEOUT_S, parseJsonOutput, runCommand, type HookRun } from "./runner.js";

type Obj = Record<string, unknown>;
export const SOURCE = "cc-hooks";

export interface HookAnswer {
  hook: CommandHook;
  run: HookRun;
  /** Exit code 2: stderr is the reason. */
  blocking?: string;
  /** Parsed stdout JSON (exit 0). */
  json?: Obj;
  /** Plain stdout text (exit 0, not JSON). */
  text?: string;
}

interface SessionLike {
  sessionId: string;
  sessionFile?: string;
  messages: unknown[];
}

export interface ProjectTrustService {
  isTrusted(cwd?: string): boolean;
  noteSkipped(item: { kind: string; path: string }, cwd?: string): void;
  onTrust(fn: (cwd: string) => void): () => void;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v : undefined);
export const hso = (j: Obj | undefined): Obj => (j && typeof j.hookSpecificOutput === "object" && j.hookSpecificOutput ? (j.hookSpecificOutput as Obj) : {});

export class HookEngine {
  private loaded: LoadedHooks | undefined;

  constructor(private readonly kernel: Kernel) {}

  /** The hooks in effect (read once, again after the project is trusted). */
  current(report = true): LoadedHooks {
    if (this.loaded) return this.loaded;
    const k = this.kernel;
    const trust = k.service("project-trust");
    const loaded = loadHooks({
      agentDir: k.agentDir,
      cwd: k.cwd,
      trusted: trust?.isTrusted() ?? false,
      globalSettings: k.settings.getGlobal(),
      projectSettings: k.settings.getProject(),
      projectFile: k.settings.projectPath(),
      configDir: k.app.configDir,
    });
    if (!report) return loaded;
    this.loaded = loaded;
    for (const p of loaded.problems) k.diagnostics.report({ level: p.level, source: p.file, message: `hooks: ${p.message}` });
    for (const file of loaded.skipped) {
      trust?.noteSkipped({ kind: "hooks", path: file });
      k.diagnostics.report({
        level: "warning",
        source: SOURCE,
        message: `project ${k.cwd} is not trusted, so the hooks in ${file} do not run. Trust it with --trust (this run), the trust prompt of the interactive UI, or "trustedProjects" in the global settings.json`,
      });
    }
    return loaded;
  }

  /** Forget the loaded hooks (the project was trusted). */
  reset(): void {
    this.loaded = undefined;
  }

  handlers(event: HookEventName, targets?: readonly string[]): CommandHook[] {
    const seen = new Set<string>();
    return this.current().hooks.filter((h) => {
      if (h.event !== event) return false;
      if (targets && !matches(h.matcher, targets)) return false;
      // Identical commands run once per event (as in Claude Code).
      if (seen.has(h.command)) return false;
      seen.add(h.command);
      return true;
    });
  }

  session(): SessionLike | undefined {
    try {
      return this.kernel.bound(SOURCE).session as unknown as SessionLike;
    } catch {
      return undefined;
    }
  }

  permissionMode(): string {
    const flags = this.kernel.service("argv")?.flags;
    return flags?.yolo === true || this.kernel.settings.get().yolo === true ? "bypassPermissions" : "default";
  }

  /** The fields every event carries. */
  common(event: HookEventName): Obj {
    const s = this.session();
    return {
      session_id: s?.sessionId ?? "",
      // The session's JSONL file (pi's tree format, not Claude Code's); "" for a session kept in memory only.
      transcript_path: s?.sessionFile ?? "",
      transcript_format: "pi-session",
      cwd: this.kernel.cwd,
      hook_event_name: event,
      permission_mode: this.permissionMode(),
    };
  }

  /** Run `hooks` (all matching handlers of one event) in parallel with `extra` fields; report failures. */
  async run(event: HookEventName, hooks: CommandHook[], extra: Obj): Promise<HookAnswer[]> {
    if (!hooks.length) return [];
    const input = { ...this.common(event), ...extra };
    const projectVar = `${this.kernel.app.name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_PROJECT_DIR`;
    const env = { ...process.env, CLAUDE_PROJECT_DIR: this.kernel.cwd, [projectVar]: this.kernel.cwd };
    return Promise.all(
      hooks.map(async (hook) => {
        const timeoutS = hook.timeout ?? DEFAULT_TIMEOUT_S;
        const run = await runCommand(hook.command, input, { cwd: this.kernel.cwd, env, timeoutMs: timeoutS * 1000 });
        return this.read(event, hook, run, timeoutS);
      }),
    );
  }

  private read(event: HookEventName, hook: CommandHook, run: HookRun, timeoutS: number): HookAnswer {
    const name = `${event} hook "${hook.command}" (${hook.source})`;
    const warn = (message: string) => this.kernel.diagnostics.report({ level: "warning", source: SOURCE, hook: event, message });
    if (run.timedOut) {
      warn(`${name} did not finish within ${timeoutS} s and was killed; the run goes on without it`);
      return { hook, run };
    }
    if (run.spawnError) {
      warn(`${name} could not start: ${run.spawnError}`);
      return { hook, run };
    }
    if (run.code === 2) return { hook, run, blocking: run.stderr.trim() || `${event} hook "${hook.command}" exited with code 2` };
    if (run.code !== 0) {
      warn(`${name} failed with exit code ${run.code}${run.stderr.trim() ? `: ${run.stderr.trim()}` : ""}`);
      return { hook, run };
    }
    const { json, invalid } = parseJsonOutput(run.stdout);
    if (invalid) warn(`${name} printed output that looks like JSON but does not parse (${invalid}); it is taken as plain text`);
    if (json) {
      const msg = str(json.systemMessage);
      if (msg) warn(`${event} hook: ${msg}`);
      return { hook, run, json };
    }
    return { hook, run, text: run.stdout.trim() || undefined };
  }
}

/** The first blocking reason among answers: exit 2, or `decision: "block"` with a reason. */
export function blockReason(answers: HookAnswer[], event: string): string | undefined {
  for (const a of answers) {
    if (a.blocking) return a.blocking;
    if (a.json?.decision === "block") return str(a.json.reason) ?? `${event} hook "${a.hook.command}" blocked`;
  }
  return undefined;
}

/** `continue: false` anywhere: the stop reason (shown to the person). */
export function stopRequest(answers: HookAnswer[]): string | undefined {
  for (const a of answers) if (a.json?.continue === false) return str(a.json.stopReason) ?? `hook "${a.hook.command}" asked to stop`;
  return undefined;
}

/** additionalContext values (and, when `plainText`, plain stdout) of the answers. */
export function contexts(answers: HookAnswer[], plainText: boolean): string[] {
  const out: string[] = [];
  for (const a of answers) {
    const c = str(hso(a.json).additionalContext);
    if (c) out.push(c);
    if (plainText && a.text) out.push(a.text);
  }
  return out;
}
