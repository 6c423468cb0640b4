/**
 * Session and compaction functions the pi 1.6 package exports: the compaction-aware entry list
 * and projection of a session branch, the turn boundary finder, and the summarisers (compact,
 * generateSummary, generateBranchSummary) as standalone calls on a model and key, the way an
 * extension's session_before_compact handler uses them. The summaries are written by the
 * compaction plugin's own prompts; the request goes through the host's pi-ai (loaded on the
 * first call).
 */
import type { AgentMessage, AnyModel, AssistantMessage, Message } from "../../core/kernel/types.js";
import type { SessionEntry } from "../../core/stores/session/session-entries.js";
import type { AgentSession } from "../../core/engine/agent-session.js";
import { buildContextEntries as coreContextEntries, buildSessionProjection as coreProjection, type ProjectedSessionEntry, type SessionProjection } from "../../core/stores/session/projection.js";
import { createFileOps, entryMessage, DEFAULT_COMPACTION_SETTINGS, type CompactionPreparation } from "../../plugins/compaction/prepare.js";
import { summarizeBranch, summarizeForCompaction } from "../../plugins/compaction/summarize.js";

type Usage = { input: number; output: number; cacheRead: number; cacheWrite: number; totalTokens: number; cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number } };

// ---- the branch as context ---------------------------------------------------------------------

function pathTo(entries: readonly SessionEntry[], leafId: string | null | undefined, byId?: ReadonlyMap<string, SessionEntry>): SessionEntry[] {
  if (leafId === null) return [];
  const index = byId ?? new Map(entries.map((e) => [e.id, e] as const));
  let cur: SessionEntry | undefined = leafId ? index.get(leafId) : entries[entries.length - 1];
  cur ??= entries[entries.length - 1];
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    path.push(cur);
    cur = cur.parentId ? index.get(cur.parentId) : undefined;
  }
  return path.reverse();
}

/** The messages one entry puts in the model's context (none for state-only entries such as custom, label, model_change). */
export function sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[] {
  const m = entryMessage(entry, true);
  return m ? [m] : [];
}

/**
 * The entries of the branch ending at `leafId` (the last entry by default) that make up the
 * context, and their projection: core/stores/session/projection.ts on that branch (the same views
 * ctx.sessionManager offers extensions).
 */
export function buildContextEntries(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionEntry[] {
  return coreContextEntries(pathTo(entries, leafId, byId));
}

export type { ProjectedSessionEntry, SessionProjection };

/** The context entries with the messages each contributes, plus the branch's thinking level and model. */
export function buildSessionProjection(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionProjection {
  return coreProjection(pathTo(entries, leafId, byId));
}

function startsTurn(e: SessionEntry): boolean {
  if (e.type === "branch_summary" || e.type === "custom_message") return true;
  return e.type === "message" && (e.message.role === "user" || e.message.role === "bashExecution");
}

/** The index of the entry that starts the turn holding `entries[entryIndex]` (searching down to startIndex), or -1. */
export function findTurnStartIndex(entries: SessionEntry[], entryIndex: number, startIndex: number): number {
  for (let i = Math.min(entryIndex, entries.length - 1); i >= Math.max(0, startIndex); i--) if (startsTurn(entries[i]!)) return i;
  return -1;
}

// ---- summaries -----------------------------------------------------------------------------------

const ZERO = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

function addUsage(sum: Usage, u: Partial<Usage> | undefined): void {
  if (!u) return;
  for (const k of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const) sum[k] += u[k] ?? 0;
  if (u.cost) for (const k of ["input", "output", "cacheRead", "cacheWrite", "total"] as const) sum.cost[k] += u.cost[k] ?? 0;
}

/** What the summarisers need of a session: one completion on `model`, through pi-ai 1.6's compat API. */
function summarizerOn(model: AnyModel, apiKey: string | undefined, headers: Record<string, string> | undefined, usage: Usage): AgentSession {
  const completeOnce = async (systemPrompt: string, messages: Message[], signal?: AbortSignal, opts: { maxTokens?: number } = {}): Promise<AssistantMessage> => {
    const { complete } = (await import("@earendil-works/pi-ai/compat")) as unknown as {
      complete(m: unknown, c: unknown, o: unknown): Promise<AssistantMessage>;
    };
    const reply = await complete(model, { systemPrompt, messages }, { apiKey, headers, signal, maxTokens: opts.maxTokens });
    addUsage(usage, reply.usage as Partial<Usage>);
    return reply;
  };
  return { model, completeOnce } as unknown as AgentSession;
}

function requireModel(model: unknown, fn: string): AnyModel {
  if (!model || typeof model !== "object" || typeof (model as { api?: unknown }).api !== "string") throw new Error(`${fn}: a model (with provider, id and api) is required`);
  return model as AnyModel;
}

export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  usage?: Usage;
  details?: unknown;
}

/** Summarise a compaction preparation (as session_before_compact gets it) with `model`. */
export async function compact(
  preparation: CompactionPreparation,
  model: AnyModel,
  apiKey: string | undefined,
  headers?: Record<string, string>,
  customInstructions?: string,
  signal?: AbortSignal,
): Promise<CompactionResult> {
  const usage = ZERO();
  // pi's preparation tracks written and edited files apart; ours as one "modified" set
  const ops = (preparation.fileOps ?? {}) as Partial<Record<"read" | "modified" | "written" | "edited", Iterable<string>>>;
  const fileOps = { read: new Set(ops.read ?? []), modified: new Set([...(ops.modified ?? []), ...(ops.written ?? []), ...(ops.edited ?? [])]) };
  const r = await summarizeForCompaction(summarizerOn(requireModel(model, "compact"), apiKey, headers, usage), { ...preparation, fileOps }, signal ?? new AbortController().signal, customInstructions);
  return { summary: r.summary, firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: preparation.tokensBefore, usage, details: r.details };
}

/** A summary of `currentMessages` (an update of `previousSummary` when given) and the request's usage. */
export async function generateSummaryWithUsage(
  currentMessages: AgentMessage[],
  model: AnyModel,
  reserveTokens: number | undefined,
  apiKey: string | undefined,
  headers?: Record<string, string>,
  signal?: AbortSignal,
  customInstructions?: string,
  previousSummary?: string,
): Promise<{ text: string; usage: Usage }> {
  const usage = ZERO();
  const prep: CompactionPreparation = {
    firstKeptEntryId: "",
    messagesToSummarize: currentMessages,
    turnPrefixMessages: [],
    isSplitTurn: false,
    tokensBefore: 0,
    previousSummary,
    fileOps: createFileOps(),
    settings: { ...DEFAULT_COMPACTION_SETTINGS, reserveTokens: reserveTokens ?? DEFAULT_COMPACTION_SETTINGS.reserveTokens },
  };
  const r = await summarizeForCompaction(summarizerOn(requireModel(model, "generateSummary"), apiKey, headers, usage), prep, signal ?? new AbortController().signal, customInstructions);
  return { text: r.summary, usage };
}

/** generateSummaryWithUsage's text. */
export async function generateSummary(...args: Parameters<typeof generateSummaryWithUsage>): Promise<string> {
  return (await generateSummaryWithUsage(...args)).text;
}

export interface GenerateBranchSummaryOptions {
  model: AnyModel;
  apiKey?: string;
  headers?: Record<string, string>;
  signal: AbortSignal;
  customInstructions?: string;
  replaceInstructions?: boolean;
  reserveTokens?: number;
}
export interface BranchSummaryResult {
  summary?: string;
  readFiles?: string[];
  modifiedFiles?: string[];
  aborted?: boolean;
  error?: string;
}

/** A summary of the entries of an abandoned branch (chronological order). Failures come back as `error`, an abort as `aborted`. */
export async function generateBranchSummary(entries: SessionEntry[], options: GenerateBranchSummaryOptions): Promise<BranchSummaryResult> {
  const usage = ZERO();
  try {
    const r = await summarizeBranch(summarizerOn(requireModel(options.model, "generateBranchSummary"), options.apiKey, options.headers, usage), entries, {
      customInstructions: options.customInstructions,
      replaceInstructions: options.replaceInstructions,
      signal: options.signal,
      reserveTokens: options.reserveTokens ?? 16384,
    });
    return { summary: r.summary, readFiles: r.details.readFiles, modifiedFiles: r.details.modifiedFiles };
  } catch (e) {
    if (options.signal.aborted) return { aborted: true };
    return { error: e instanceof Error ? e.message : String(e) };
  }
}
