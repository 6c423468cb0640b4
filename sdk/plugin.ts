/**
 * The package's plugin entry, `pi-kernel/plugin`: the kernel's face (core/kernel/index.ts), the
 * very module the built-in plugins import, so a plugin of yours is written against the same
 * names and gets the same instances (one bundle, code-split: this entry shares its chunks with
 * the `pi` binary). The package root (`pi-kernel`) is the surface pi extensions import.
 *
 * The engine's and the stores' types come along for the declaration merging that widens the
 * kernel's handles and services (`SessionHandle` is the engine's AgentSession to a plugin).
 */
export * from "../core/kernel/index.js";
export type { AgentSession, AgentSessionRuntime } from "../core/engine/index.js";
export type { ModelRegistry } from "../core/stores/index.js";
