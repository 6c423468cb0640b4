/**
 * The stores' face: formats and persistence, importing only the kernel — session files (the
 * JSONL tree: entries, reading, writing, listing, paths), models (catalog, models.json,
 * credentials, resolution) and protocol I/O (the stdout guard, strict JSONL).
 *
 * Not here: models-schema and schema-files (TypeBox schemas, read by the schema generator only).
 */
import type { ModelRegistry } from "./models/model-registry.js";

export * from "./session/projection.js";
export * from "./session/raw-json.js";
export * from "./session/session-context.js";
export * from "./session/session-entries.js";
export * from "./session/session-file.js";
export * from "./session/session-list.js";
export * from "./session/session-manager.js";
export * from "./session/session-paths.js";
export * from "./session/session-writer.js";
export * from "./session/store.js";
export * from "./models/auth-storage.js";
export * from "./models/builtin-catalog.js";
export * from "./models/config-value.js";
export * from "./models/event-stream.js";
export * from "./models/model-registry.js";
export * from "./models/model-resolver.js";
export * from "./models/models-json-check.js";
export * from "./models/thinking.js";
export * from "./models/virtual-models.js";
export * from "./io/fd1-guard.js";
export * from "./io/jsonl.js";
export * from "./io/protocol-notices.js";
export * from "./io/stdout-guard.js";
export * from "./io/wire.js";
/** Two files name their error describer alike; the face gives the provider-stream one (session files use theirs internally). */
export { describeError } from "./models/event-stream.js";

declare module "../kernel/services.js" {
  interface KernelServices {
    /** The model registry of this process (catalog + models.json + registered providers; auth). */
    "model-registry": ModelRegistry;
  }
}
