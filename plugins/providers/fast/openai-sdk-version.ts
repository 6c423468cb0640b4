/**
 * The version of the `openai` package pi-ai itself loads (its dependency, not ours), which the
 * direct path sends in the client identity headers as the SDK would. Read from the installed
 * package; the bundle (scripts/bundle.mjs) replaces this module with the version it inlined.
 * Required, not imported: importing a CommonJS file from ESM first parses it for its export
 * names (cjs-module-lexer), ~9 ms on the first prompt (measured, Node 22).
 */
import { createRequire } from "node:module";

export function openaiSdkVersion(): unknown {
  // Resolved, not loaded: the `openai` package pi-ai uses is found from its chat-completions module.
  const piAiRequire = createRequire(import.meta.resolve("@earendil-works/pi-ai/api/openai-completions"));
  return (piAiRequire(piAiRequire.resolve("openai/version")) as { VERSION?: unknown }).VERSION;
}
