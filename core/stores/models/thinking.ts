/**
 * Which thinking levels a model takes, read from the model definition only (`reasoning` and
 * `thinkingLevelMap`, the fields pi-ai's catalog and models.json carry): a model without
 * reasoning takes "off"; a level mapped to null is not offered (pi 1.6's catalog maps "off" to
 * null for models that always think); "xhigh" and "max" are offered only where the definition
 * maps them to a provider value. No model ids are matched here: a new model says what it takes in
 * its definition (models.json `thinkingLevelMap`, or a modelOverrides entry).
 */
import type { AnyModel, ThinkingLevel } from "../../kernel/types.js";
import { THINKING_LEVELS } from "../../kernel/types.js";

export function supportedThinkingLevels(model: AnyModel | undefined): ThinkingLevel[] {
  if (!model || !model.reasoning) return ["off"];
  const map = (model as { thinkingLevelMap?: Record<string, string | null | undefined> }).thinkingLevelMap;
  const levels = THINKING_LEVELS.filter((level) => {
    const mapped = map?.[level];
    if (mapped === null) return false;
    return (level !== "xhigh" && level !== "max") || mapped !== undefined;
  });
  return levels.length ? levels : ["off"];
}

/**
 * The level itself when the model takes it, else (as pi 1.6) the nearest higher one it takes
 * (off → low on a model that always thinks, medium → high where medium is not offered), else the
 * nearest lower one (max → xhigh or high).
 */
export function clampThinkingLevel(model: AnyModel | undefined, level: ThinkingLevel): ThinkingLevel {
  const levels = supportedThinkingLevels(model);
  if (levels.includes(level)) return level;
  const want = THINKING_LEVELS.indexOf(level);
  const up = THINKING_LEVELS.slice(want + 1).find((l) => levels.includes(l));
  const down = THINKING_LEVELS.slice(0, Math.max(0, want)).reverse().find((l) => levels.includes(l));
  return up ?? down ?? levels[0]!;
}
