/**
 * Claude-Code-compatible hooks: the `hooks` block of settings files (Claude Code's format:
 * event → matcher groups → command handlers) runs shell commands on our lifecycle hooks, so a
 * team's existing hook scripts work unchanged. See docs/hooks.md for the event table.
 *
 *   PreToolUse          tool_call (stage 50: after extension taps, before the permission gate)
 *   PostToolUse(Failure) tool_result
 *   UserPromptSubmit    input + before_agent_start (context)
 *   Stop                agent_before_settle (one more run, loop guard)
 *   SessionStart        session_start, session_compact (source "compact")
 *   SessionEnd          session_shutdown
 *   PreCompact          compaction_start + session_before_compact
 *   Notification        the permission gate's dialogs (permission_prompt)
 *
 * Hook commands run unconfined (they are the user's or a trusted project's own configuration).
 */
import { definePlugin, type Kernel, type PluginApi, type SubcommandContext, type SessionStartReason, type SessionShutdownEvent, type ToolCallEvent } from "../../core/kernel/index.js";
import { validateToolArguments } from "../../core/engine/index.js";
import { HookEngine, blockReason, contexts, hso, SOURCE, stopRequest } from "./engine.js";
import { ccToolName, fromCcInput, matchNames, toCcInput } from "./tools.js";
import { DEFAULT_TIMEOUT_S } from "./runner.js";

type Obj = Record<string, unknown>;
/** How many times in a row Stop hooks may send the agent back to work. */
export const STOP_LOOP_LIMIT = 3;
const CONTEXT_CAP = 10_000;

const SESSION_START_SOURCE: Partial<Record<SessionStartReason, string>> = {
  startup: "startup",
  new: "clear",
  resume: "resume",
  import: "resume",
  fork: "fork",
  clone: "fork",
};

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c: { type?: string; text?: string }) => (c?.type === "text" ? (c.text ?? "") : "")).join("");
}
const cap = (s: string) => (s.length > CONTEXT_CAP ? `${s.slice(0, CONTEXT_CAP)}\n[hook output cut at ${CONTEXT_CAP} characters]` : s);

export function setupHooks(kernel: Kernel, on: PluginApi): HookEngine {
  const engine = new HookEngine(kernel);
  const report = (level: "warning" | "info", message: string, hook?: string) => kernel.diagnostics.report({ level, source: SOURCE, hook, message });
  const pendingContext: string[] = [];
  const toolContext = new Map<string, string[]>();
  let stopStreak = 0;
  let compactTrigger = "manual";

  const trust = kernel.service("project-trust");
  trust?.onTrust(() => engine.reset());

  // ---- SessionStart / SessionEnd ----
  const sessionStart = async (source: string) => {
    const hooks = engine.handlers("SessionStart", [source]);
    const answers = await engine.run("SessionStart", hooks, { source, model: kernel.isBound ? ((engine.session() as Obj | undefined)?.model as Obj | undefined)?.id : undefined });
    pendingContext.push(...contexts(answers, true).map((c) => `SessionStart hook context:\n${cap(c)}`));
  };
  on.on("session_start", async (e) => {
    engine.current(); // report problems and skipped files once, at start
    listenToGate();
    let source = SESSION_START_SOURCE[e.reason];
    // -c / --session at start-up continue a saved conversation: Claude Code calls that a resume.
    if (source === "startup" && (engine.session()?.messages.length ?? 0) > 0) source = "resume";
    if (source) await sessionStart(source);
  });
  on.on("session_compact", () => sessionStart("compact"));
  on.on("session_shutdown", async (e: SessionShutdownEvent) => {
    const reason = e.reason === "exit" ? "prompt_input_exit" : e.reason === "switch" ? ((e as unknown as Obj).targetSessionFile ? "resume" : "clear") : "other";
    await engine.run("SessionEnd", engine.handlers("SessionEnd", [reason]), { reason });
  });

  // ---- UserPromptSubmit ----
  on.on("input", async (e) => {
    if (e.source === "extension") return undefined;
    stopStreak = 0;
    const hooks = engine.handlers("UserPromptSubmit");
    if (!hooks.length) return undefined;
    const answers = await engine.run("UserPromptSubmit", hooks, { prompt: e.text });
    const block = blockReason(answers, "UserPromptSubmit") ?? stopRequest(answers);
    if (block) {
      // Shown to the person, never to the model; the prompt is not sent.
      report("warning", `UserPromptSubmit hook blocked the prompt: ${block}`, "UserPromptSubmit");
      return { action: "handled" };
    }
    pendingContext.push(...contexts(answers, true).map((c) => `UserPromptSubmit hook context:\n${cap(c)}`));
    return undefined;
  });
  on.on("before_agent_start", (e) => {
    if (!pendingContext.length) return undefined;
    for (const c of pendingContext.splice(0)) e.messages.push({ customType: "cc-hooks", content: c, display: false });
    return e;
  });

  // ---- PreToolUse ----
  on.on(
    "tool_call",
    async (e) => {
      const names = matchNames(e.toolName, e.input);
      const hooks = engine.handlers("PreToolUse", names);
      if (!hooks.length) return undefined;
      const answers = await engine.run("PreToolUse", hooks, {
        tool_name: ccToolName(e.toolName, e.input),
        tool_input: toCcInput(e.toolName, e.input, kernel.cwd),
        tool_use_id: e.toolCallId,
      });
      let deny: string | undefined;
      let ask: string | undefined;
      let allow = false;
      let updated: { input: Obj; by: string } | undefined;
      for (const a of answers) {
        if (a.blocking) {
          deny ??= a.blocking;
          continue;
        }
        const out = hso(a.json);
        const legacy = a.json?.decision === "block" ? "deny" : a.json?.decision === "approve" ? "allow" : undefined;
        const decision = (out.permissionDecision as string | undefined) ?? legacy;
        const reason = (out.permissionDecisionReason as string | undefined) ?? (a.json?.reason as string | undefined);
        if (decision === "deny") deny ??= reason || `PreToolUse hook "${a.hook.command}" denied the call`;
        else if (decision === "ask") ask ??= reason || `PreToolUse hook "${a.hook.command}" asks for approval`;
        else if (decision === "allow") allow = true;
        if (out.updatedInput && typeof out.updatedInput === "object" && !Array.isArray(out.updatedInput)) {
          if (updated) report("warning", `two PreToolUse hooks rewrote the input of ${e.toolName}; the later one ("${a.hook.command}") wins`, "PreToolUse");
          updated = { input: out.updatedInput as Obj, by: a.hook.command };
        }
      }
      const stop = stopRequest(answers);
      if (stop) {
        report("warning", `a PreToolUse hook stopped the run: ${stop}`, "PreToolUse");
        void (engine.session() as { abort?: () => Promise<void> } | undefined)?.abort?.();
        return { block: true, reason: `Stopped by a PreToolUse hook: ${stop}` };
      }
      if (deny) return { block: true, reason: `Blocked by a PreToolUse hook: ${deny}` };
      if (updated) {
        const bad = await replaceInput(kernel, e, updated.input);
        if (bad) return { block: true, reason: `Blocked: PreToolUse hook "${updated.by}" rewrote the input of ${e.toolName} into something the tool does not accept: ${bad}` };
      }
      const ctx = contexts(answers, false);
      if (ctx.length) toolContext.set(e.toolCallId, ctx);
      const gate = kernel.service("permission-gate");
      if (ask) {
        if (!gate) return { block: true, reason: `Blocked: a PreToolUse hook asked for approval (${ask}) and no permission gate is loaded to ask` };
        return gate.ask(e, `PreToolUse hook: ${ask}`);
      }
      if (allow) gate?.approve(e.toolCallId);
      return undefined;
    },
    { stage: 50 },
  );

  // ---- PostToolUse / PostToolUseFailure ----
  on.on("tool_result", async (e) => {
    const event = e.isError ? "PostToolUseFailure" : "PostToolUse";
    const names = matchNames(e.toolName, e.input);
    const hooks = engine.handlers(event, names);
    const extra: string[] = toolContext.get(e.toolCallId) ?? [];
    toolContext.delete(e.toolCallId);
    let content = e.content;
    if (hooks.length) {
      const text = textOf(e.content);
      const answers = await engine.run(event, hooks, {
        tool_name: ccToolName(e.toolName, e.input),
        tool_input: toCcInput(e.toolName, e.input, kernel.cwd),
        tool_use_id: e.toolCallId,
        ...(e.isError ? { error: text } : { tool_response: { content: text, details: e.details ?? null } }),
      });
      for (const a of answers) {
        const replaced = hso(a.json).updatedToolOutput;
        if (!e.isError && typeof replaced === "string") content = [{ type: "text", text: replaced }];
      }
      const block = blockReason(answers, event);
      if (block) extra.push(block);
      extra.push(...contexts(answers, false));
    }
    if (!extra.length && content === e.content) return undefined;
    const add = extra.length ? [{ type: "text" as const, text: cap(`[hook] ${extra.join("\n")}`) }] : [];
    return { ...e, content: [...content, ...add] };
  });

  // ---- Stop ----
  on.on("agent_before_settle", async (e) => {
    const hooks = engine.handlers("Stop");
    if (!hooks.length || e.outcome === "aborted") return undefined;
    const s = engine.session();
    const lastAssistant = [...(s?.messages ?? [])].reverse().find((m) => (m as Obj).role === "assistant") as Obj | undefined;
    const answers = await engine.run("Stop", hooks, { stop_hook_active: stopStreak > 0, last_assistant_message: textOf(lastAssistant?.content) });
    const reason = stopRequest(answers) ? undefined : blockReason(answers, "Stop");
    if (!reason) {
      stopStreak = 0;
      return undefined;
    }
    if (stopStreak >= STOP_LOOP_LIMIT) {
      report("warning", `Stop hooks asked the agent to go on ${STOP_LOOP_LIMIT} times in a row; stopping here (loop guard). Last reason: ${reason}`, "Stop");
      stopStreak = 0;
      return undefined;
    }
    stopStreak++;
    e.followUp = { customType: "cc-hooks-stop", content: `Stop hook feedback: ${cap(reason)}`, display: false };
    return undefined;
  });

  // ---- PreCompact ----
  on.on("compaction_start", (e) => {
    compactTrigger = e.reason === "manual" ? "manual" : "auto";
  });
  on.on("session_before_compact", async (e) => {
    const trigger = compactTrigger;
    const answers = await engine.run("PreCompact", engine.handlers("PreCompact", [trigger]), { trigger, custom_instructions: e.customInstructions ?? "" });
    const block = blockReason(answers, "PreCompact");
    if (!block) return undefined;
    report("warning", `PreCompact hook cancelled the compaction: ${block}`, "PreCompact");
    return { cancel: true };
  });

  // ---- Notification: the permission gate's dialogs ----
  let listening = false;
  const listenToGate = () => {
    if (listening) return;
    listening = true;
    kernel.service("permission-gate")?.onAsk?.((message) => {
      const hooks = engine.handlers("Notification", ["permission_prompt"]);
      if (hooks.length) void engine.run("Notification", hooks, { message, title: "Permission needed", notification_type: "permission_prompt" });
    });
  };

  return engine;
}

/** Translate a hook's updatedInput to our shape, re-validate it with the tool's schema and put it in place. Returns the problem, if any. */
async function replaceInput(kernel: Kernel, e: ToolCallEvent, updated: Obj): Promise<string | undefined> {
  const tool = kernel.tools.get(e.toolName);
  if (!tool) return `unknown tool ${e.toolName}`;
  let args: Obj;
  try {
    args = fromCcInput(e.toolName, updated);
    if (tool.prepareArguments) args = tool.prepareArguments(args) as Obj;
  } catch (error) {
    return (error as Error).message;
  }
  const v = await validateToolArguments(tool, { type: "toolCall", id: e.toolCallId, name: e.toolName, arguments: args } as never);
  if (!v.ok) return v.error;
  for (const k of Object.keys(e.input)) delete e.input[k];
  Object.assign(e.input, v.args);
  return undefined;
}

/** `pi hooks list`: the hooks in effect, their source files, skipped files and problems. */
export function listHooks(engine: HookEngine, ctx: SubcommandContext): number {
  const loaded = engine.current(false);
  if (!loaded.hooks.length) ctx.stdout("No hooks in effect.\n");
  for (const h of loaded.hooks) {
    ctx.stdout(
      `${h.event}  matcher ${JSON.stringify(h.matcher || "*")}  ${h.command}  (timeout ${h.timeout ?? DEFAULT_TIMEOUT_S} s)\n` +
        `    from ${h.source} at ${h.where}\n`,
    );
  }
  for (const f of loaded.skipped) ctx.stdout(`Not run (project not trusted; use --trust or "trustedProjects"): ${f}\n`);
  for (const p of loaded.problems) ctx.stderr(`${p.level}: ${p.file}: ${p.message}\n`);
  return loaded.problems.some((p) => p.level === "error") ? 1 : 0;
}

export default definePlugin({
  name: SOURCE,
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Claude-Code-compatible hooks: shell commands on lifecycle events, from `hooks` in settings and .claude/settings.json",
  setup(api) {
    const engine = setupHooks(api.kernel, api);
    api.registerSubcommand({
      name: "hooks",
      description: "Show the Claude-Code-style hooks in effect and the files they come from",
      usage: "hooks list",
      run(args, ctx) {
        const sub = args[0] ?? "list";
        if (sub !== "list") {
          ctx.stderr(`${api.kernel.app.name} hooks: unknown action "${sub}"; use: ${api.kernel.app.name} hooks list\n`);
          return 2;
        }
        return listHooks(engine, ctx);
      },
    });
  },
});
