/**
 * The OS sandbox: `sandbox` in settings or `--sandbox read-only|workspace-write|off`.
 *
 * When on, every command the bash tool, `!` commands, `pi.exec` and extensions' local bash
 * operations start runs inside bubblewrap (the process-wide command wrapper,
 * core/command-wrapper.ts), and the write and edit tools check the same writable folders
 * in-process (a `tool_call` tap). A command the sandbox blocked says so in words; where the mode
 * has a UI, one confirm dialog may let it run again outside the sandbox; without one the call
 * fails closed. An unusable bubblewrap is a start-up error (never a silent unconfined run), and
 * the footer shows the level (ui.setStatus "sandbox").
 */
import { join } from "node:path";
import { definePlugin } from "../../core/plugin.js";
import type { PluginApi } from "../../core/kernel.js";
import type { ToolCallEvent, ToolCallResult } from "../../core/hooks.js";
import type { ToolDefinition } from "../../core/types.js";
import { dialogDeadline } from "../../core/ui.js";
import { installCommandWrapper, runUnwrapped, type CommandSpec } from "../../core/command-wrapper.js";
import { bwrapArgs, probeBwrap, type Probe } from "./bwrap.js";
import { checkWrite, describePolicy, expandUserPath, howToAllow, resolvePolicy, SANDBOX_LEVELS, type SandboxPolicy } from "./policy.js";

export { checkWrite, resolvePolicy, describePolicy, SANDBOX_LEVELS, type SandboxLevel, type SandboxPolicy } from "./policy.js";
export { bwrapArgs, probeBwrap, findBwrap } from "./bwrap.js";

const STATUS_KEY = "sandbox";
const DEFAULT_ASK_TIMEOUT_MS = 60_000;
const READ_ONLY_FS = /Read-only file system|EROFS/;
const NETWORK_FAILURE = /Network is unreachable|ENETUNREACH|Could not resolve host|Temporary failure in name resolution|Name or service not known|EAI_AGAIN|getaddrinfo|Connection refused|ECONNREFUSED/;

declare module "../../core/services.js" {
  interface KernelServices {
    sandbox: SandboxService;
  }
}

export interface SandboxService {
  /** The policy in force now (settings and the flag are read at each call). */
  policy(): SandboxPolicy;
  /** The command to spawn inside the sandbox (undefined when it is off); throws when it cannot run. */
  wrap(spec: CommandSpec): CommandSpec | undefined;
  /** Words for a failed command's output, when the sandbox is why. */
  explain(output: string): string | undefined;
  /** Checks bubblewrap once; throws the start-up error when the sandbox is on and cannot work. */
  check(): void;
  /** Where the person allows more (the global settings file). */
  readonly settingsPath: string;
  /** Remove the process-wide command wrapper (an SDK host or a test done with this kernel). */
  uninstall(): void;
}

type Obj = Record<string, unknown>;

export function createSandbox(api: PluginApi): SandboxService {
  const kernel = api.kernel;
  const settingsPath = join(kernel.agentDir, "settings.json");
  const probes = new Map<string, Probe>();

  const policy = (): SandboxPolicy =>
    resolvePolicy({
      cwd: kernel.cwd,
      agentDir: kernel.agentDir,
      configDir: kernel.app.configDir,
      global: kernel.settings.getGlobal() as Obj,
      project: kernel.settings.getProject() as Obj,
      projectTrusted: kernel.service("project-trust")?.isTrusted() ?? false,
      flag: kernel.service("argv")?.flags?.sandbox,
      globalPath: settingsPath,
      projectPath: kernel.settings.projectPath() ?? join(kernel.cwd, kernel.app.configDir, "settings.json"),
    });

  const usable = (level: string): string => {
    let p = probes.get(level);
    if (!p) {
      p = probeBwrap(level);
      probes.set(level, p);
    }
    if (!p.ok) throw new Error(p.message);
    return p.path;
  };

  return {
    settingsPath,
    uninstall: () => undefined,
    policy,
    wrap(spec) {
      const pol = policy();
      if (pol.level === "off") return undefined;
      const bwrap = usable(pol.level);
      return { file: bwrap, args: [...bwrapArgs(pol, spec.cwd, kernel.app.configDir), spec.file, ...spec.args], cwd: spec.cwd, env: spec.env };
    },
    explain(output) {
      let pol: SandboxPolicy;
      try {
        pol = policy();
      } catch {
        return undefined;
      }
      if (pol.level === "off") return undefined;
      if (READ_ONLY_FS.test(output)) {
        const what = pol.level === "read-only" ? "a write (the sandbox is read-only)" : "a write outside the workspace";
        return `[sandbox] The sandbox blocked ${what}. ${describePolicy(pol)} ${howToAllow("write", settingsPath)}`;
      }
      if (!pol.network && NETWORK_FAILURE.test(output)) {
        return `[sandbox] The sandbox has no network access (${pol.level}, network off), which is likely why the connection failed. ${howToAllow("network", settingsPath)}`;
      }
      return undefined;
    },
    check() {
      const pol = policy();
      if (pol.level !== "off") usable(pol.level);
    },
  };
}

/** Ask the person once (the mode's UI); false without a UI, on No, on timeout or on a failing dialog. */
async function askOutside(api: PluginApi, title: string, message: string, signal?: AbortSignal): Promise<boolean> {
  const ui = api.service("ui");
  if (!ui || ui.kind === "none" || signal?.aborted) return false;
  const t = Number(((api.kernel.settings.get() as Obj).permissions as Obj | undefined)?.askTimeoutMs);
  const timeout = Number.isFinite(t) && t > 0 ? t : DEFAULT_ASK_TIMEOUT_MS;
  const dismiss = new AbortController();
  const deadline = dialogDeadline<boolean>({ timeout: timeout + 500, signal }, false);
  try {
    return (await Promise.race([ui.confirm(title, message, { timeout, signal: dismiss.signal }), deadline.promise])) === true;
  } catch (error) {
    api.report("warning", "the sandbox escalation dialog failed; the command stays blocked", error);
    return false;
  } finally {
    deadline.cancel();
    dismiss.abort();
  }
}

/** bash tool middleware: words for a blocked command, and the retry outside the sandbox the person may allow. */
function wrapBashTool(api: PluginApi, sandbox: SandboxService) {
  return (tool: ToolDefinition): ToolDefinition => ({
    ...tool,
    async execute(id, params, signal, onUpdate, ctx) {
      try {
        return await tool.execute(id, params, signal, onUpdate, ctx);
      } catch (e) {
        const text = e instanceof Error ? e.message : String(e);
        const why = sandbox.explain(text);
        if (!why || signal?.aborted) throw e;
        const command = String((params as Obj | undefined)?.command ?? "");
        const allowed = await askOutside(api, "Run outside the sandbox?", `${why.replace(/^\[sandbox\] /, "")}\n\nRun this command again outside the sandbox?\n\n${command}`, signal);
        if (!allowed) {
          const ui = api.service("ui");
          const tail = !ui || ui.kind === "none" ? " (No user interface to ask, so it stays blocked.)" : " (The user did not allow running it outside the sandbox.)";
          throw new Error(`${text}\n\n${why}${tail}`);
        }
        api.report("info", `ran outside the sandbox with the user's permission: ${command}`);
        const r = await runUnwrapped(() => tool.execute(id, params, signal, onUpdate, ctx));
        return { ...r, content: [{ type: "text", text: "[sandbox] The user allowed this command to run outside the sandbox.\n" }, ...(r.content ?? [])] };
      }
    },
  });
}

/** The write and edit tools: the same writable folders, checked in-process. */
async function checkFileTool(api: PluginApi, sandbox: SandboxService, event: ToolCallEvent): Promise<ToolCallResult | undefined> {
  if (event.toolName !== "write" && event.toolName !== "edit") return undefined;
  const pol = sandbox.policy();
  if (pol.level === "off") return undefined;
  const raw = event.input.path ?? event.input.file_path;
  if (typeof raw !== "string" || raw === "") return undefined;
  const verdict = checkWrite(pol, expandUserPath(raw, api.kernel.cwd));
  if (verdict.ok) return undefined;
  const why = `The sandbox (${pol.level}) does not allow this ${event.toolName}: ${verdict.why}.`;
  if (await askOutside(api, "Write outside the sandbox?", `${why}\n\nAllow this ${event.toolName} anyway?`)) {
    api.report("info", `${event.toolName} of ${raw} allowed outside the sandbox by the user`);
    return undefined;
  }
  return { block: true, reason: `[sandbox] ${why} ${howToAllow("write", sandbox.settingsPath)}` };
}

function statusText(pol: SandboxPolicy): string | undefined {
  if (pol.level === "off") return undefined;
  return `sandbox: ${pol.level}${pol.network ? " +net" : ""}`;
}

export default definePlugin({
  name: "sandbox",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "OS sandbox (bubblewrap) for commands; write/edit confined to the same folders",
  setup(api) {
    api.registerFlag({
      name: "sandbox",
      type: "string",
      placeholder: SANDBOX_LEVELS.join("|"),
      choices: [...SANDBOX_LEVELS],
      description: "Run commands in an OS sandbox (bubblewrap): read-only, workspace-write (project and /tmp writable) or off",
      group: "Prompt and tools",
    });
    const sandbox = createSandbox(api);
    api.provide("sandbox", sandbox);

    // Start-up: a bad level or an unusable bubblewrap ends the run with the reason.
    const check = () => {
      sandbox.check();
      wrapBashOnce(sandbox.policy());
    };
    const current = api.kernel.service("startup-checks");
    if (Array.isArray(current)) current.push(check);
    else if (typeof current === "function") api.provide("startup-checks", [current, check]);
    else api.provide("startup-checks", [check]);

    // Process-wide and never removed behind the person's back: with the level "off" it leaves commands alone.
    sandbox.uninstall = installCommandWrapper({ source: api.name, wrap: (spec) => sandbox.wrap(spec), explain: (out) => sandbox.explain(out) });
    api.on("tool_call", (event) => checkFileTool(api, sandbox, event), { stage: 50 });

    // The bash tool middleware (words, escalation) is added once the sandbox is on, so a run
    // without it lists and runs bash exactly as before.
    let wrapped = false;
    const wrapBashOnce = (pol: SandboxPolicy) => {
      if (wrapped || pol.level === "off") return;
      wrapped = true;
      api.wrapTool("bash", wrapBashTool(api, sandbox));
    };
    let shown = false;
    api.on("session_start", () => {
      let text: string | undefined;
      try {
        const pol = sandbox.policy();
        wrapBashOnce(pol);
        text = statusText(pol);
      } catch {
        text = undefined;
      }
      if (!text && !shown) return;
      shown = !!text;
      api.service("ui")?.setStatus(STATUS_KEY, text);
    });
  },
});
