/**
 * Model-definition adapters: pi 1.6's catalog describes a model's needs in its definition
 * (`compat`, `thinkingLevelMap`); the 0.73.1 wire modules we stream with decide some of them by
 * model id. These wrappers carry the definition's word into the request, per API.
 *
 * - anthropic-messages, `compat.forceAdaptiveThinking` (Claude 4.8, 5, 5.5, Fable …): the model
 *   takes only adaptive thinking; 0.73.1 recognises adaptive models by id (Opus/Sonnet 4.6–4.7)
 *   and would send a token budget. The request's `thinking` becomes `{type: "adaptive"}` with
 *   the level's effort (the definition's `thinkingLevelMap`, else the level itself; minimal → low).
 */
import type { StreamFn } from "../../core/kernel/index.js";

type Payload = Record<string, unknown> & { thinking?: { type?: string; display?: string; budget_tokens?: number } };
type OnPayload = (payload: unknown, model: unknown) => unknown | Promise<unknown>;

const EFFORT: Readonly<Record<string, string>> = { minimal: "low", low: "low", medium: "medium", high: "high", xhigh: "xhigh" };

/** The effort for a thinking level, from the model's own map first. */
export function adaptiveEffort(model: { thinkingLevelMap?: Record<string, string | null | undefined> }, level: string): string {
  const mapped = model.thinkingLevelMap?.[level];
  return typeof mapped === "string" ? mapped : (EFFORT[level] ?? "high");
}

/** Wrap anthropic-messages' streamSimple so models whose definition forces adaptive thinking get it. */
export function withAdaptiveThinking(stream: StreamFn): StreamFn {
  return (model, context, options) => {
    const compat = (model as { compat?: { forceAdaptiveThinking?: boolean } }).compat;
    const level = (options as { reasoning?: string } | undefined)?.reasoning;
    if (!compat?.forceAdaptiveThinking || !level) return stream(model, context, options);
    const inner = (options as { onPayload?: OnPayload }).onPayload;
    const onPayload: OnPayload = async (payload, m) => {
      let p = payload as Payload;
      if (p?.thinking?.type === "enabled") {
        // 0.73.1 added the budget to max_tokens; adaptive thinking takes the answer's own limit.
        const budget = p.thinking.budget_tokens;
        const maxTokens = typeof p.max_tokens === "number" && typeof budget === "number" ? Math.max(1, p.max_tokens - budget) : p.max_tokens;
        p = { ...p, max_tokens: maxTokens, thinking: { type: "adaptive", ...(p.thinking.display ? { display: p.thinking.display } : {}) }, output_config: { effort: adaptiveEffort(model as never, level) } };
      }
      const next = inner ? await inner(p, m) : undefined;
      return next !== undefined ? next : p;
    };
    return stream(model, context, { ...options, onPayload } as never);
  };
}
