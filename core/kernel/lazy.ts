/**
 * The kernel's second face, for plugin and mode code that loads on demand (a dynamic import
 * away from start-up: /login, the settings screen). What is here would otherwise be bundled
 * with core/kernel/index.ts into the start-up chunk; import it only from such code.
 */
export * from "./open-url.js";
export * from "./settings-catalog.js";
