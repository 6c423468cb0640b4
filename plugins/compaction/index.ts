/**
 * compaction: keeps long sessions inside the model's context window.
 *
 * Provides the kernel services
 *   "compactor"          (core/engine/compaction-service.ts) — session.compact() and
 *                        session.runCompaction() call it;
 * taps the run hooks: after_turn (compact over the threshold) and provider_error (a context
 * overflow is answered {compactAndRetry}, once per prompt);
 *   "branch-summarizer"  (core/engine/tree.ts) — navigateTree({summarize: true}) calls it;
 * and the slash command /compact [instructions].
 *
 * A compaction appends a `compaction` entry (summary, firstKeptEntryId, tokensBefore, details
 * {readFiles, modifiedFiles}); the history stays in the file, only the context changes.
 * Settings: compaction.{enabled, reserveTokens, keepRecentTokens}, branchSummary.reserveTokens.
 */
import { definePlugin, type Kernel, type PluginApi, type AssistantMessage } from "../../core/kernel/index.js";
import { isContextOverflow, type AgentSession, type CompactionResult, type Compactor, type BranchSummarizer } from "../../core/engine/index.js";
import { type CompactionEntry, getLatestCompactionEntry, asTreeStore } from "../../core/stores/index.js";
import {
  DEFAULT_COMPACTION_SETTINGS,
  estimateContextTokens,
  estimateTokens,
  overThreshold,
  prepareCompaction,
  usageTokens,
  type CompactionSettings,
} from "./prepare.js";
// summarize.js is imported by the first summary, not at start-up.
type Summarize = typeof import("./summarize.js");
let summarize: Summarize | undefined;
const loadSummarize = async (): Promise<Summarize> => (summarize ??= await import("./summarize.js"));
/** An error is a SummaryAborted only if summarize.js was loaded to throw it. */
const isSummaryAborted = (error: unknown): boolean => summarize !== undefined && error instanceof summarize.SummaryAborted;

export * from "./prepare.js";

function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : fallback;
}

/**
 * The compaction settings for `model`: each token value from `compaction.modelOverrides["provider/id"]`
 * (exact key), else the ordinary setting, else the default (pi 1.6); `enabled` is global.
 */
export function compactionSettings(kernel: Kernel, model?: { provider: string; id: string }): CompactionSettings {
  const c = (kernel.settings.get().compaction ?? {}) as Partial<CompactionSettings> & { modelOverrides?: Record<string, unknown> };
  const raw = model && c.modelOverrides && typeof c.modelOverrides === "object" ? c.modelOverrides[`${model.provider}/${model.id}`] : undefined;
  const o = (raw && typeof raw === "object" ? raw : {}) as Partial<CompactionSettings>;
  return {
    enabled: c.enabled !== false,
    reserveTokens: num(o.reserveTokens, num(c.reserveTokens, DEFAULT_COMPACTION_SETTINGS.reserveTokens)),
    keepRecentTokens: num(o.keepRecentTokens, num(c.keepRecentTokens, DEFAULT_COMPACTION_SETTINGS.keepRecentTokens)),
  };
}

class Cancelled extends Error {
  constructor() {
    super("Compaction cancelled");
  }
}

function validHookResult(r: unknown): r is CompactionResult {
  const c = r as CompactionResult;
  return !!c && typeof c.summary === "string" && typeof c.firstKeptEntryId === "string" && typeof c.tokensBefore === "number";
}

export function createCompactor(kernel: Kernel): Compactor {
  return {
    async compact(session, { reason, customInstructions, willRetry, signal }) {
      await session.emit({ type: "compaction_start", reason });
      let fromHook = false;
      try {
        const store = asTreeStore(session.sessionManager, "compaction");
        if (!session.model) throw new Error("no model is selected to write the summary");
        const path = store.getBranch();
        const prep = prepareCompaction(path, compactionSettings(kernel, session.model));
        if (!prep) {
          throw new Error(path[path.length - 1]?.type === "compaction" ? "Already compacted" : "Nothing to compact (the context is smaller than compaction.keepRecentTokens)");
        }
        let result: CompactionResult | undefined;
        const hooks = kernel.hooks;
        if (hooks.session_before_compact.isUsed()) {
          const r = await hooks.session_before_compact.promise({
            type: "session_before_compact",
            preparation: prep,
            branchEntries: path,
            customInstructions,
            reason,
            willRetry: !!willRetry,
            signal,
          });
          if (r?.cancel) throw new Cancelled();
          if (r?.compaction) {
            if (!validHookResult(r.compaction)) throw new Error("a session_before_compact handler returned a compaction without summary, firstKeptEntryId and tokensBefore");
            if (!path.some((e) => e.id === r.compaction!.firstKeptEntryId)) {
              throw new Error(`a session_before_compact handler named firstKeptEntryId "${r.compaction.firstKeptEntryId}", which is not on the current branch`);
            }
            result = { ...r.compaction };
            fromHook = true;
          }
        }
        if (!result) {
          const s = await (await loadSummarize()).summarizeForCompaction(session, prep, signal, customInstructions, reason);
          result = { summary: s.summary, firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore, details: s.details, ...(s.usage ? { usage: s.usage } : {}) };
        }
        if (signal.aborted) throw new Cancelled();
        result = { ...result, summary: session.redactSecrets(result.summary), details: session.redactSecrets(result.details) };
        const id = store.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, result.details, fromHook, result.usage);
        session.reloadFromStore();
        // (pi 1.6) The compacted context, estimated from its text (its last usage predates the compaction).
        result = { ...result, estimatedTokensAfter: session.messages.reduce((n, m) => n + estimateTokens(m), 0) };
        if (hooks.session_compact.isUsed()) {
          await hooks.session_compact.promise({ type: "session_compact", compactionEntry: store.getEntry(id), fromExtension: fromHook, reason, willRetry: !!willRetry });
        }
        await session.emit({ type: "compaction_end", reason, result, aborted: false, willRetry: !!willRetry });
        return result;
      } catch (error) {
        const aborted = error instanceof Cancelled || isSummaryAborted(error) || signal.aborted;
        const msg = error instanceof Error ? error.message : String(error);
        // pi 1.6: session_compact_failed tells extensions a compaction failed or was cancelled
        if (kernel.hooks.session_compact_failed.taps.length) {
          await kernel.hooks.session_compact_failed.promise({
            type: "session_compact_failed",
            reason,
            aborted,
            willRetry: !!willRetry,
            fromExtension: fromHook,
            ...(aborted ? {} : { errorMessage: msg }),
          });
        }
        await session.emit({
          type: "compaction_end",
          reason,
          aborted,
          willRetry: false,
          errorMessage: aborted ? undefined : `${reason === "overflow" ? "Context overflow recovery failed" : "Compaction failed"}: ${msg}`,
        });
        throw aborted && !(error instanceof Cancelled) ? new Cancelled() : error;
      }
    },

    needsCompaction(session, message) {
      const settings = compactionSettings(kernel, session.model);
      if (!settings.enabled) return false;
      const window = session.model?.contextWindow ?? 0;
      if (!window) return false;
      let latest: CompactionEntry | null = null;
      try {
        latest = getLatestCompactionEntry(asTreeStore(session.sessionManager, "compaction").getBranch());
      } catch {
        return false;
      }
      const compactedAt = latest ? new Date(latest.timestamp).getTime() : -Infinity;
      // An answer from before the latest compaction measured the old, larger context.
      if (message.timestamp <= compactedAt) return false;
      let tokens: number;
      if (message.stopReason === "error") {
        const est = estimateContextTokens(session.messages);
        if (est.lastUsageIndex === null) return false;
        const src = session.messages[est.lastUsageIndex] as AssistantMessage;
        if (src.timestamp <= compactedAt) return false;
        tokens = est.tokens;
      } else {
        if (!message.usage) return false;
        tokens = usageTokens(message.usage);
      }
      return overThreshold(tokens, window, settings);
    },
  };
}

export function createBranchSummarizer(kernel: Kernel): BranchSummarizer {
  return async (session, entries, opts) => {
    const reserveTokens = num((kernel.settings.get().branchSummary as { reserveTokens?: unknown } | undefined)?.reserveTokens, 16384);
    try {
      const r = await (await loadSummarize()).summarizeBranch(session, entries, { ...opts, reserveTokens });
      return { summary: r.summary, details: r.details };
    } catch (error) {
      if (isSummaryAborted(error) || opts.signal.aborted) return { aborted: true };
      throw error;
    }
  };
}

/** A context-overflow error from the session's current model (one from another model says nothing about this one). */
function isOwnOverflow(session: AgentSession, a: AssistantMessage): boolean {
  const m = session.model;
  return !!m && a.provider === m.provider && a.model === m.id && isContextOverflow(a.errorMessage);
}

/**
 * Automatic compaction, driven by the kernel's run hooks:
 * - after_turn: compact when the context is over the threshold (mid-run too; never throws);
 * - provider_error: a context overflow from the current model is answered {compactAndRetry}
 *   once per prompt; a second overflow reports why it gives up.
 */
function tapAutomaticCompaction(api: PluginApi): void {
  const compactor = () => api.kernel.service("compactor");
  api.on("after_turn", async ({ session, message, signal }) => {
    if (!session.autoCompactionEnabled || session.isDisposed || session.isCompacting) return;
    const c = compactor();
    if (!c || (message as { role: string }).role !== "assistant") return;
    const a = message as AssistantMessage;
    if (a.stopReason === "aborted" || signal.aborted) return;
    if (a.stopReason === "error" && isOwnOverflow(session, a)) return; // provider_error answers it
    try {
      if (!c.needsCompaction(session, a)) return;
      await session.runCompaction("threshold");
    } catch (error) {
      // compaction_end carried the error; the run goes on with the uncompacted context
      api.report("warning", "automatic compaction failed", error, "after_turn");
    }
  });
  api.on("provider_error", async ({ session, message, compacted }) => {
    if (!isOwnOverflow(session, message as AssistantMessage)) return undefined;
    if (!session.autoCompactionEnabled || !compactor()) return undefined;
    if (compacted) {
      await session.emit({
        type: "compaction_end",
        reason: "overflow",
        aborted: false,
        willRetry: false,
        errorMessage: "The context is still too long after one compaction and retry; shorten the context or pick a model with a larger window",
      });
      return undefined;
    }
    return { compactAndRetry: true };
  });
}

export default definePlugin({
  name: "compaction",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Summarises old context when it grows too large (/compact, automatic) and summarises branches left by /tree",
  setup(api) {
    api.provide("compactor", createCompactor(api.kernel));
    api.provide("branch-summarizer", createBranchSummarizer(api.kernel));
    tapAutomaticCompaction(api);
    api.registerCommand({
      name: "compact",
      description: "Summarise older messages to free context (optional: what the summary should focus on)",
      source: "builtin",
      async handler(args, ctx) {
        const session: AgentSession = ctx?.session ?? api.kernel.bound("/compact").session;
        const r = await session.compact(args.trim() || undefined);
        ctx?.ui?.notify?.(`Compacted: ${r.tokensBefore} tokens summarised`, "info");
      },
    });
  },
});
