/**
 * Typed kernel services: values plugins provide to each other through the kernel
 * (`api.provide(name, value)`, `kernel.service(name)`), typed by their key.
 *
 * `KernelServices` maps each service name to its type. The services below are contracts more
 * than one part of the program relies on (the provider is one plugin, the consumers are others
 * or the CLI), so their types live here, in the kernel, like the hook payloads. A plugin adds
 * its own services by declaration merging (Fastify's decorator pattern):
 *
 * ```ts
 * declare module "pi-kernel/plugin" {          // or the path of core/kernel/services.js
 *   interface KernelServices { "my-cache": MyCache }
 * }
 * ```
 *
 * The stores and the engine declare the services typed by their own classes the same way
 * (`model-registry` in core/stores/index.ts; `system-prompt`, `bash-executor`, `compactor`,
 * `branch-summarizer` in core/engine/index.ts), so this file imports neither.
 *
 * A plugin lists the services it cannot work without in its manifest (`requires`); the plugin
 * host checks them at registration, like `dependsOn`.
 */
import type { ExtensionUI } from "./ui.js";
import type { ModuleLoader } from "./loader.js";
import type { SessionHandle } from "./contracts.js";

/** The tools a new session has active when nothing else says (settings, --tools). */
export const DEFAULT_ACTIVE_TOOLS: readonly string[] = Object.freeze(["read", "bash", "edit", "write"]);

/** The parsed command line (pass 2), as the CLI provides it. */
export interface ParsedArgv {
  flags: Record<string, unknown>;
  positionals: string[];
  /** Options no flag table knows. */
  unknown?: string[];
}

/** Which projects may run their own code (extensions, plugins, packages, project settings). */
export interface ProjectTrust {
  /** Whether project code from `cwd` (default: the kernel's cwd) may run. */
  isTrusted(cwd?: string): boolean;
  /** Whether the interactive UI must not ask (the command line, a saved decision or defaultProjectTrust decided). */
  promptSuppressed?(cwd?: string): boolean;
  /** Trust `cwd` (default: the kernel's cwd); `persist` (default true) adds it to the global `trustedProjects`. */
  trust(cwd?: string, opts?: { persist?: boolean }): void;
  /** Decline `cwd` for this process; `persist` saves the refusal in the trust store (pi 1.6 project_trust "no"). */
  decline?(cwd?: string, opts?: { persist?: boolean }): void;
  /** Whether the project carries code that trust would let run. */
  hasProjectCode(cwd?: string): boolean;
  /** Record project code that was not loaded because the project is not trusted. */
  noteSkipped(item: SkippedItem, cwd?: string): void;
  skipped(cwd?: string): SkippedItem[];
  /** Called after `trust()`; returns an unsubscribe function. */
  onTrust(fn: (cwd: string) => void | Promise<void>): () => void;
}
export interface SkippedItem {
  kind: "extension" | "plugin" | "package" | "settings" | string;
  path: string;
}

/** Start-up timing (PI_TIMING). */
export interface TimingRecorder {
  record(label: string, ms: number): void;
}

/** What installed packages contribute (the packages plugin; the resources and extensions plugins read it). */
export interface PackageResourcePaths {
  extensions: string[];
  skills: string[];
  prompts: string[];
  themes: string[];
  /** Skills, prompts and themes of packages loaded for this run only (pi -e npm:…). */
  temporary: { skills: string[]; prompts: string[]; themes: string[] };
}
export type PackageResources = (opts?: { reload?: boolean }) => Promise<PackageResourcePaths>;
/** Turns an `npm:` / `git:` / path source into a local path (installing it when needed). */
export type ResolvePackageSource = (source: string) => Promise<string>;
/** A pi extension factory (`export default function (pi) {…}`) given in code. */
export type ExtensionFactory = (pi: any) => unknown;

/** Writes a session file as a self-contained HTML page; resolves with the output path. */
export type ExportHtml = (inputPath: string, outputPath?: string) => Promise<string>;
/** Exports a live session (its file, or its in-memory entries) as HTML. */
export type ExportSession = (session: SessionHandle, outputPath?: string) => Promise<string>;

export interface KernelServices {
  // -- provided by the CLI / SDK before plugins load
  /** The parsed command line. */
  argv: ParsedArgv;
  /** The jiti loader with the host aliases (plugins, extensions, TS config). */
  loader: ModuleLoader;
  timing: TimingRecorder;
  /** Session storage is available (the session flags work). */
  sessions: boolean;
  /** Extension factories given in code (SDK, a custom CLI). */
  "extension-factories": ExtensionFactory[];
  // -- provided by the mode when it is chosen
  /** The UI of the running mode (dialogs, status, widgets); absent means no user. */
  ui: ExtensionUI;
  /** Ends the process the way the running mode does (RPC: after the pending output). */
  shutdown: () => unknown;
  /** Shows the sessions and resolves with the chosen file (the interactive mode). */
  "session-picker": () => Promise<string | undefined>;
  /**
   * Runs background preparation (a project's first checkpoint capture) once the mode says the
   * process is free for it: RPC holds it until its client has been quiet for a moment or starts a
   * prompt, so the commands a client sends at start are answered without child processes being
   * spawned in between. Absent: run it at once.
   */
  "background-work": (work: () => void) => void;
  // -- provided by plugins, used by the session, the CLI or other plugins
  /** Expands /template and /skill:name input. */
  "expand-prompt": (text: string) => string | Promise<string>;
  "project-trust": ProjectTrust;
  "package-resources": PackageResources;
  "resolve-package-source": ResolvePackageSource;
  /** The tools a new session starts with (the tools plugin's defaults). */
  "default-active-tools": string[];
  /** pi 1.6's built-in extensions turned on for this run (mcp, codemode, tool-search, …). */
  "builtin-extensions-enabled": Set<string>;
  "export-html": ExportHtml;
  "export-session": ExportSession;
  /** Theme files found by the resource loader. */
  "theme-paths": () => string[];
  /** Theme support is installed (the --theme flag works). */
  themes: () => string[];
  /** MCP servers a run mode adds for this process (an ACP client's session/new mcpServers), settings format. */
  "mcp-extra-servers": () => Record<string, unknown> | undefined;
}

export type ServiceName = keyof KernelServices;
