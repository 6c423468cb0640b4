/**
 * The permission gate: built in, on by default, a tap on `tool_call`.
 *
 * Policy: settings `permissions: {allow, ask, deny}` (rule syntax in rules.ts and the README),
 * global and project layers combined (an untrusted project's `allow` rules and `yolo` are
 * ignored; its `deny` and `ask` rules always apply). Without a matching rule, dangerous bash
 * asks and everything else is allowed.
 *
 * `ask` goes to the mode's UI (kernel service "ui": the TUI's dialog, RPC's
 * extension_ui_request) with a deadline (`permissions.askTimeoutMs`, default 60 s). Without a
 * UI the call is blocked — fail closed — and the reason is both in the tool result the model
 * reads and in a diagnostic. `--yolo` (or the setting `yolo: true`) turns ask into allow; deny
 * always wins.
 */
import { definePlugin, type Kernel, type ToolCallEvent, type ToolCallResult, dialogDeadline } from "../../core/kernel/index.js";
import { compilePolicy, describeCall, evaluate, type CompiledPolicy, type Evaluation, type PermissionPolicy } from "./rules.js";

declare module "../../core/kernel/services.js" {
  interface KernelServices {
    "permission-gate": PermissionGate;
  }
}

export { compilePolicy, dangerousCommandReason, evaluate, parseRule, splitCommand, globToRegExp, describeCall } from "./rules.js";
export type { CompiledPolicy, Decision, Evaluation, PermissionPolicy } from "./rules.js";

export const DEFAULT_ASK_TIMEOUT_MS = 60_000;
const SOURCE = "permission-gate";

type Obj = Record<string, unknown>;

function rulesOf(v: unknown, kind: "allow" | "ask" | "deny"): unknown[] {
  if (!v || typeof v !== "object") return [];
  const list = (v as Obj)[kind];
  return Array.isArray(list) ? list : list === undefined ? [] : [list];
}

export interface GateState {
  policy: CompiledPolicy;
  yolo: boolean;
  askTimeoutMs: number;
}

/** The policy in force now (settings are read at every call, so a change applies at once). */
export function currentPolicy(kernel: Kernel): GateState {
  const trusted = kernel.service("project-trust")?.isTrusted() ?? false;
  const g = kernel.settings.getGlobal() as Obj;
  const p = kernel.settings.getProject() as Obj;
  const merged: Partial<PermissionPolicy> = { allow: [], ask: [], deny: [] };
  for (const kind of ["allow", "ask", "deny"] as const) {
    merged[kind]!.push(...(rulesOf(g.permissions, kind) as string[]));
    // An untrusted project may tighten the policy, never loosen it.
    if (trusted || kind !== "allow") merged[kind]!.push(...(rulesOf(p.permissions, kind) as string[]));
  }
  const over = kernel.settings.get();
  const argv = kernel.service("argv");
  const yoloSetting = trusted ? over.yolo === true : g.yolo === true;
  const timeout = Number((over.permissions as Obj | undefined)?.askTimeoutMs);
  return {
    policy: compilePolicy(merged),
    yolo: argv?.flags?.yolo === true || yoloSetting,
    askTimeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_ASK_TIMEOUT_MS,
  };
}

/** Warnings for rules whose tool part matches no registered tool (MCP tool names, which connect later, excepted). */
export function unknownToolRules(kernel: Kernel): string[] {
  const names = kernel.tools.names();
  if (!names.length) return [];
  const out: string[] = [];
  const { policy } = currentPolicy(kernel);
  for (const kind of ["allow", "ask", "deny"] as const) {
    for (const rule of policy[kind]) {
      const toolPart = rule.text.trim().split("(")[0]!.trim();
      if (toolPart.startsWith("mcp__") || names.some((n) => rule.tool.test(n))) continue;
      const lower = names.find((n) => n.toLowerCase() === toolPart.toLowerCase());
      out.push(
        `permissions.${kind}: rule "${rule.text}" names no known tool, so it matches nothing` +
          (lower ? ` (tool names are case-sensitive: did you mean "${rule.text.trim().replace(toolPart, lower)}"?)` : ` (tools: ${names.join(", ")})`),
      );
    }
  }
  return out;
}

export interface PermissionGate {
  /** What the gate would decide for a call (before asking). */
  check(toolName: string, input: Record<string, unknown>): Evaluation & { yolo: boolean };
  /** The tool_call tap itself. */
  onToolCall(event: ToolCallEvent): Promise<ToolCallResult | undefined>;
  // another policy source (a hook) answered for one call
  /** Skip the ask for this call (deny rules still apply when the gate's tap runs). */
  approve(toolCallId: string): void;
  /** Ask the person about this call through the gate's ask path (fails closed with no UI); deny rules win. */
  ask(event: ToolCallEvent, reason: string): Promise<ToolCallResult | undefined>;
  /** Called whenever the gate is about to show a permission dialog; returns an unsubscribe function. */
  onAsk(fn: (message: string) => void): () => void;
}

export function createPermissionGate(kernel: Kernel): PermissionGate {
  const reportedErrors = new Set<string>();
  const report = (level: "warning" | "info" | "error", message: string) =>
    kernel.diagnostics.report({ level, source: SOURCE, hook: "tool_call", message });

  const state = () => {
    const s = currentPolicy(kernel);
    for (const e of s.policy.errors) {
      if (reportedErrors.has(e)) continue;
      reportedErrors.add(e);
      report("error", `settings: ${e} (rule ignored)`);
    }
    return s;
  };

  const approved = new Set<string>();
  const askListeners = new Set<(message: string) => void>();

  const askUser = async (s: GateState, ev: { reason?: string }, what: string): Promise<ToolCallResult | undefined> => {
    if (s.yolo) return undefined;
    const ui = kernel.service("ui");
    if (!ui || ui.kind === "none") {
      report("warning", `blocked ${what}: it needs permission (${ev.reason}) and this mode has no UI to ask`);
      return {
        block: true,
        reason:
          `Blocked by the permission gate: ${what} needs permission (${ev.reason}), and there is no user interface to ask. ` +
          `Run with --yolo, or add a matching rule to "permissions.allow" in settings, to let it run.`,
      };
    }
    const wait = s.askTimeoutMs >= 1000 ? `${Math.round(s.askTimeoutMs / 1000)} s` : `${s.askTimeoutMs} ms`;
    const title = `Allow ${what}?\n(${ev.reason}; no answer in ${wait} means No)`;
    for (const l of askListeners) l(title);
    // The UI runs the timeout; our own deadline (a little later) also closes a dialog that ignored it.
    const dismiss = new AbortController();
    const deadline = dialogDeadline<string | undefined | "__timeout__">({ timeout: s.askTimeoutMs + 500 }, "__timeout__");
    let choice: string | undefined;
    try {
      choice = await Promise.race([ui.select(title, ["Yes", "No"], { timeout: s.askTimeoutMs, signal: dismiss.signal }), deadline.promise]);
      if (choice === "__timeout__") dismiss.abort();
    } catch (error) {
      report("warning", `blocked ${what}: the permission dialog failed (${error instanceof Error ? error.message : String(error)})`);
      return { block: true, reason: `Blocked by the permission gate: ${what} needs permission (${ev.reason}) and the dialog failed.` };
    } finally {
      deadline.cancel();
    }
    if (choice === "Yes") return undefined;
    if (choice === undefined || choice === "__timeout__") {
      report("warning", `blocked ${what}: no answer to the permission dialog within ${wait}`);
      return { block: true, reason: `Blocked by the permission gate: ${what} needs permission (${ev.reason}) and nobody answered within ${wait}.` };
    }
    report("info", `blocked ${what}: the user said no`);
    return { block: true, reason: `Blocked by the permission gate: the user did not allow ${what}.` };
  };

  const denied = (s: GateState, event: ToolCallEvent): ToolCallResult | undefined => {
    const ev = evaluate(s.policy, event.toolName, event.input, kernel.cwd);
    if (ev.decision !== "deny") return undefined;
    const what = describeCall(event.toolName, event.input);
    report("warning", `blocked ${what} (${ev.reason})`);
    return { block: true, reason: `Blocked by the permission gate: ${what} matches ${ev.reason}.` };
  };

  return {
    check(toolName, input) {
      const s = state();
      return { ...evaluate(s.policy, toolName, input, kernel.cwd), yolo: s.yolo };
    },
    async onToolCall(event) {
      const s = state();
      const preApproved = approved.delete(event.toolCallId);
      const ev = evaluate(s.policy, event.toolName, event.input, kernel.cwd);
      if (ev.decision === "allow") return undefined;
      if (ev.decision === "deny") return denied(s, event);
      if (preApproved) return undefined;
      return askUser(s, ev, describeCall(event.toolName, event.input));
    },
    approve(toolCallId) {
      approved.add(toolCallId);
    },
    async ask(event, reason) {
      const s = state();
      const deny = denied(s, event);
      if (deny) return deny;
      const r = await askUser(s, { reason }, describeCall(event.toolName, event.input));
      if (!r?.block) approved.add(event.toolCallId);
      return r;
    },
    onAsk(fn) {
      askListeners.add(fn);
      return () => askListeners.delete(fn);
    },
  };
}

export default definePlugin({
  name: "permission-gate",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Asks before dangerous tool calls; settings permissions {allow, ask, deny}; --yolo",
  setup(api) {
    api.registerFlag({
      name: "yolo",
      type: "boolean",
      description: "Let tool calls the permission gate would ask about run without asking (deny rules still apply)",
      group: "Prompt and tools",
    });
    const gate = createPermissionGate(api.kernel);
    api.provide("permission-gate", gate);
    // After extension taps (stage 0): the gate judges the arguments as they will run.
    api.on("tool_call", (event) => gate.onToolCall(event), { stage: 100 });
    // Rules naming no tool (`Bash(…)`, `Write(…)`) would silently match nothing: say so at start-up.
    let checked = false;
    api.on("session_start", () => {
      if (checked) return;
      checked = true;
      for (const message of unknownToolRules(api.kernel)) {
        api.kernel.diagnostics.report({ level: "warning", source: SOURCE, message });
      }
    });
  },
});
