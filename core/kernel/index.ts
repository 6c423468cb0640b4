/**
 * The kernel's face: what a plugin — built-in or third-party — imports from the kernel. The
 * mechanism only (hooks, registries, plugin host, services, settings, modes, the UI contract,
 * the shared types, the session/runtime handles the engine implements) and small utilities;
 * nothing here loads a heavy package at start-up (tapable is the one dependency it loads).
 *
 * Not here: open-url and settings-catalog, which only code loaded on demand uses (/login, the
 * settings screen): they are in core/kernel/lazy.ts, the face for such code, so that a face in
 * the start-up chunk does not carry them; pi-ai-view (the module the loader hands to extensions that import pi-ai; it loads
 * pi-ai) and settings-schema (TypeBox; read by the schema generator only).
 */
export * from "./builtin-extensions.js";
export * from "./command-wrapper.js";
export * from "./config.js";
export * from "./contracts.js";
export * from "./deadline.js";
export * from "./file-guard.js";
export * from "./fs-utils.js";
export * from "./hook-events.js";
export * from "./hook-spec.js";
export * from "./hooks.js";
export * from "./kernel.js";
export * from "./loader.js";
export * from "./modes.js";
export * from "./ordered-registry.js";
export * from "./plugin.js";
export * from "./plugin-host.js";
export * from "./plugin-teardown.js";
export * from "./project-files.js";
export * from "./redact.js";
export * from "./registry.js";
export * from "./resource-walk.js";
export * from "./services.js";
export * from "./settings.js";
export * from "./settings-accessors.js";
export * from "./settings-compat.js";
export * from "./tool-registry.js";
export * from "./tool-selection.js";
export * from "./turn-boundary-state.js";
export * from "./types.js";
export * from "./ui.js";
