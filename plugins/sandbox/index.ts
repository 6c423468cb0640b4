/**
 * The OS sandbox: `sandbox` in settings or `--sandbox read-only|workspace-write|off`.
 *
 * When on, every command the bash tool, `!` commands, `pi.exec`, extensions' local bash
 * operations, hook commands and MCP stdio servers start runs inside bubblewrap (the process-wide
 * command wrapper, core/kernel/command-wrapper.ts), without capabilities, credentials or host sockets.
 * The write and edit tools check the same writable folders in-process, before the call (a
 * `tool_call` tap) and again where the write lands when it happens (core/kernel/file-guard.ts). A command
 * the sandbox blocked says so in words; with `sandbox.allowEscalation` in the global settings, a
 * person may let it run outside through the UI's own escalation request (never a plain confirm);
 * otherwise the call fails closed. An unusable bubblewrap, or one that would leave the command
 * capabilities, is a start-up error (never a silent unconfined run), and the footer shows the
 * level (ui.setStatus "sandbox").
 */
import { join } from "node:path";
import { definePlugin, type PluginApi, type ToolCallEvent, type ToolCallResult, type ToolDefinition, dialogDeadline, type EscalationRequest, installCommandWrapper, runUnwrapped, type CommandSpec, installFileGuard, runUnguarded } from "../../core/kernel/index.js";
import { bwrapArgs, launchArgs, probeBwrap, sandboxRuntime, type Probe } from "./bwrap.js";
import { sandboxEnv } from "./env.js";
import { checkWrite, describePolicy, expandUserPath, howToAllow, realish, resolveLevel, resolvePolicy, SANDBOX_LEVELS, type LevelInputs, type SandboxLevel, type SandboxPolicy } from "./policy.js";

export { checkWrite, resolvePolicy, describePolicy, SANDBOX_LEVELS, type SandboxLevel, type SandboxPolicy } from "./policy.js";
export { bwrapArgs, probeBwrap, findBwrap } from "./bwrap.js";

const STATUS_KEY = "sandbox";
const DEFAULT_ASK_TIMEOUT_MS = 60_000;
const READ_ONLY_FS = /Read-only file system|EROFS/;
const PRIVATE_TMP_MISS = /\/tmp\/[^\n]*(No such file or directory|ENOENT)/;
const NETWORK_FAILURE = /Network is unreachable|ENETUNREACH|Could not resolve host|Temporary failure in name resolution|Name or service not known|EAI_AGAIN|getaddrinfo|Connection refused|ECONNREFUSED/;

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    sandbox: SandboxService;
  }
}

export interface SandboxService {
  /** The policy in force now (settings and the flag are read at each call). */
  policy(): SandboxPolicy;
  /** The level in force now, without the policy's paths (cheap: asked on every tool call). */
  level(): SandboxLevel;
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

  const levelInputs = (): LevelInputs => ({
    global: kernel.settings.getGlobal() as Obj,
    project: kernel.settings.getProject() as Obj,
    projectTrusted: kernel.service("project-trust")?.isTrusted() ?? false,
    flag: kernel.service("argv")?.flags?.sandbox,
    globalPath: settingsPath,
    projectPath: kernel.settings.projectPath() ?? join(kernel.cwd, kernel.app.configDir, "settings.json"),
  });
  const level = (): SandboxLevel => resolveLevel(levelInputs()).level;
  const policy = (): SandboxPolicy =>
    resolvePolicy({
      ...levelInputs(),
      cwd: kernel.cwd,
      agentDir: kernel.agentDir,
      configDir: kernel.app.configDir,
      appName: kernel.app.name,
      codeFiles: loadedExtensionFiles(),
    });

  const loadedExtensionFiles = (): string[] => {
    const host = kernel.service("extensions") as unknown as { extensions?: ReadonlyArray<{ path?: unknown }> } | undefined;
    return (host?.extensions ?? []).map((e) => e.path).filter((p): p is string => typeof p === "string" && !p.startsWith("<"));
  };

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
    level,
    wrap(spec) {
      if (level() === "off") return undefined;
      const pol = policy();
      if (pol.level === "off") return undefined;
      const bwrap = usable(pol.level);
      const rt = sandboxRuntime();
      const launch = launchArgs(bwrap, [...bwrapArgs(pol, spec.cwd, rt), spec.file, ...spec.args], rt);
      return { file: launch.file, args: launch.args, cwd: spec.cwd, env: { ...sandboxEnv(spec.env), ...spec.explicitEnv } };
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
      if (PRIVATE_TMP_MISS.test(output)) {
        return `[sandbox] Commands in the sandbox (${pol.level}) have a private /tmp: the host's /tmp and what lies under it (outside the project) are not visible to them. ${describePolicy(pol)}`;
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

/** Is escalation allowed at all? Only the global settings can turn it on (a project cannot). */
function escalationAllowed(api: PluginApi): boolean {
  const g = (api.kernel.settings.getGlobal() as Obj).sandbox;
  return !!g && typeof g === "object" && (g as Obj).allowEscalation === true;
}

/** Why no one was asked, for the result text (undefined when the person was asked). */
function whyNotAsked(api: PluginApi): string | undefined {
  if (!escalationAllowed(api)) return `(Running outside the sandbox is off; "sandbox": {"allowEscalation": true} in the global settings lets a person allow it case by case.)`;
  const ui = api.service("ui");
  if (!ui?.confirmEscalation) return "(No person can be asked in this mode, so it stays blocked.)";
  return undefined;
}

/**
 * Ask a person once whether a blocked command or write may run outside the sandbox: its own
 * request (ExtensionUI.confirmEscalation), never a plain confirm, so no auto-confirming client or
 * approve-all mode answers it. Off unless `sandbox.allowEscalation` is true in the global
 * settings. False without a way to ask, on No, on timeout or on a failing request.
 */
async function askOutside(api: PluginApi, request: EscalationRequest, signal?: AbortSignal): Promise<boolean> {
  if (!escalationAllowed(api)) return false;
  const ui = api.service("ui");
  if (!ui?.confirmEscalation || signal?.aborted) return false;
  const t = Number(((api.kernel.settings.get() as Obj).permissions as Obj | undefined)?.askTimeoutMs);
  const timeout = Number.isFinite(t) && t > 0 ? t : DEFAULT_ASK_TIMEOUT_MS;
  const dismiss = new AbortController();
  const deadline = dialogDeadline<boolean>({ timeout: timeout + 500, signal }, false);
  try {
    return (await Promise.race([ui.confirmEscalation(request, { timeout, signal: dismiss.signal }), deadline.promise])) === true;
  } catch (error) {
    api.report("warning", "the sandbox escalation request failed; it stays blocked", error);
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
        const request: EscalationRequest = {
          kind: "command",
          toolName: tool.name,
          title: "Run outside the sandbox?",
          message: `${why.replace(/^\[sandbox\] /, "")}\n\nRun this command again outside the sandbox?\n\n${command}`,
          command,
        };
        const allowed = await askOutside(api, request, signal);
        if (!allowed) {
          const tail = whyNotAsked(api) ?? "(The user did not allow running it outside the sandbox.)";
          throw new Error(`${text}\n\n${why} ${tail}`);
        }
        api.report("info", `ran outside the sandbox with the user's permission: ${command}`);
        const r = await runUnwrapped(() => tool.execute(id, params, signal, onUpdate, ctx));
        return { ...r, content: [{ type: "text", text: "[sandbox] The user allowed this command to run outside the sandbox.\n" }, ...(r.content ?? [])] };
      }
    },
  });
}

/** Tool calls of write/edit the person allowed outside the sandbox (run without the file guard). */
const allowedOutside = new Set<string>();

/** write/edit middleware: a call the person allowed outside the sandbox runs without the file guard. */
function wrapFileTool() {
  return (tool: ToolDefinition): ToolDefinition => ({
    ...tool,
    async execute(id, params, signal, onUpdate, ctx) {
      if (!allowedOutside.delete(id)) return tool.execute(id, params, signal, onUpdate, ctx);
      return runUnguarded(() => tool.execute(id, params, signal, onUpdate, ctx));
    },
  });
}

/** The write and edit tools: the same writable folders, checked in-process. */
async function checkFileTool(api: PluginApi, sandbox: SandboxService, event: ToolCallEvent): Promise<ToolCallResult | undefined> {
  if (event.toolName !== "write" && event.toolName !== "edit") return undefined;
  if (sandbox.level() === "off") return undefined;
  const pol = sandbox.policy();
  if (pol.level === "off") return undefined;
  const raw = event.input.path ?? event.input.file_path;
  if (typeof raw !== "string" || raw === "") return undefined;
  const verdict = checkWrite(pol, expandUserPath(raw, api.kernel.cwd));
  if (verdict.ok) return undefined;
  const why = `The sandbox (${pol.level}) does not allow this ${event.toolName}: ${verdict.why}.`;
  const request: EscalationRequest = { kind: "write", toolName: event.toolName, title: "Write outside the sandbox?", message: `${why}\n\nAllow this ${event.toolName} anyway?`, path: raw };
  if (await askOutside(api, request)) {
    api.report("info", `${event.toolName} of ${raw} allowed outside the sandbox by the user`);
    allowedOutside.add(event.toolCallId);
    return undefined;
  }
  return { block: true, reason: `[sandbox] ${why} ${howToAllow("write", sandbox.settingsPath)} ${whyNotAsked(api) ?? "(The user did not allow it.)"}` };
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
    api.on("startup_check", () => {
      try {
        sandbox.check();
        wrapBashOnce(sandbox.policy());
      } catch (e) {
        return { error: e instanceof Error ? e.message : String(e) };
      }
      return undefined;
    });

    // Process-wide and never removed behind the person's back: with the level "off" it leaves commands alone.
    sandbox.uninstall = installCommandWrapper({ source: api.name, wrap: (spec) => sandbox.wrap(spec), explain: (out) => sandbox.explain(out) });
    api.on("tool_call", (event) => checkFileTool(api, sandbox, event), { stage: 50 });
    // The write and edit tools' local operations ask again where the write really lands, at the
    // moment they write (core/kernel/file-guard.ts); with it active, a message's tool calls run in turn.
    const removeGuard = installFileGuard({
      source: "sandbox",
      active: () => sandbox.level() !== "off",
      resolve: (abs) => realish(abs),
      refuse: (real) => {
        const pol = sandbox.policy();
        const v = checkWrite(pol, real);
        return v.ok ? undefined : `The sandbox (${pol.level}) does not allow this write: ${v.why}.`;
      },
    });
    const removeWrapper = sandbox.uninstall;
    sandbox.uninstall = () => {
      removeWrapper();
      removeGuard();
    };

    // The bash tool middleware (words, escalation) is added once the sandbox is on, so a run
    // without it lists and runs bash exactly as before.
    let wrapped = false;
    const wrapBashOnce = (pol: SandboxPolicy) => {
      if (wrapped || pol.level === "off") return;
      wrapped = true;
      api.wrapTool("bash", wrapBashTool(api, sandbox));
      api.wrapTool("write", wrapFileTool());
      api.wrapTool("edit", wrapFileTool());
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
