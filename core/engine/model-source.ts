/**
 * What AgentSession needs from the model layer (core/models/ModelRegistry implements it).
 */
import type { AnyModel } from "../kernel/types.js";

export interface ModelSource {
  /** The key to call this model with, or undefined when none is configured. */
  getApiKey(model: AnyModel): Promise<string | undefined>;
  /** Models that need no key at all (the faux provider, local servers). */
  isKeyless(model: AnyModel): boolean;
  /** Models whose provider has a key. */
  getAvailable(): Promise<AnyModel[]>;
  find(provider: string, modelId: string): AnyModel | undefined;
  /** Key and extra request headers (models.json headers, resolved) in one step. */
  getApiKeyAndHeaders?(model: AnyModel): Promise<{ ok: boolean; apiKey?: string; headers?: Record<string, string>; error?: string }>;
  /** Environment variables that can hold a key for this provider (for error messages). */
  envVarNames?(provider: string): Promise<string[]>;
}
