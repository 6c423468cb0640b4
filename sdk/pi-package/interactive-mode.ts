/**
 * pi 1.6's InteractiveMode for hosts: `new InteractiveMode(runtime, options)`, then `run()` puts
 * this project's terminal UI (the interactive mode plugin, modes/tui) on the terminal for that
 * session runtime — the same mode `pi` runs, through the mode registry (sdk/run-modes.ts) — sends
 * the initial messages, and resolves when the user quits (pi 1.6 ends the process instead; here
 * the host decides, with the exit code in `exitCode`). `stop()` ends a running UI as /quit does.
 * Nothing here loads the UI code until run().
 */
import type { AgentSessionRuntime } from "../../core/engine/runtime.js";
import { modeForFlag } from "../../core/kernel/modes.js";
import type { ImageContent } from "../../core/kernel/types.js";
import { quitInteractive } from "../../modes/tui/index.js";
import { runModeByFlag } from "../run-modes.js";
import { chooseTheme } from "../theme-choice.js";

export interface InteractiveModeOptions {
  /** Providers whose credentials moved to auth.json (shown as a warning). */
  migratedProviders?: string[];
  /** Problems found before the UI started (shown as warnings or errors). */
  startupDiagnostics?: Array<{ type?: string; level?: string; message: string }>;
  /** Why the session's saved model could not be restored (shown as a warning). */
  modelFallbackMessage?: string;
  autoTrustOnReloadCwd?: string;
  /** The first prompt, sent when the UI is up (with `initialImages`). */
  initialMessage?: string;
  initialImages?: ImageContent[];
  /** More prompts, sent in order after the first. */
  initialMessages?: string[];
  verbose?: boolean;
  /** "fullscreen" (alternate screen) or "regular". */
  tuiMode?: "fullscreen" | "regular";
  /** A theme name (or `light/dark` pair) for this run only; the `theme` setting is not changed. */
  initialThemeSetting?: string;
  /** pi 1.6 takes a pi-tui Terminal here; this UI always draws on the process's terminal. */
  terminal?: unknown;
}

export class InteractiveMode {
  /** The UI's exit code once run() has resolved. */
  exitCode: number | undefined;
  private initialized = false;
  private running = false;

  constructor(
    private readonly runtimeHost: AgentSessionRuntime,
    private readonly options: InteractiveModeOptions = {},
  ) {
    if (!runtimeHost || typeof runtimeHost !== "object" || !(runtimeHost as { kernel?: unknown }).kernel) {
      throw new TypeError("InteractiveMode: pass the session runtime (createAgentSessionRuntime() or createAgentSession().runtime)");
    }
    if (options.tuiMode !== undefined && options.tuiMode !== "fullscreen" && options.tuiMode !== "regular") {
      throw new TypeError(`InteractiveMode: tuiMode must be "fullscreen" or "regular" (got ${JSON.stringify(options.tuiMode)})`);
    }
    if (options.terminal !== undefined) throw new TypeError("InteractiveMode: a custom terminal is not supported; the UI draws on the process's terminal");
  }

  /** Check that the runtime has the interactive mode, apply this run's theme, and queue the start-up warnings. */
  async init(): Promise<void> {
    if (this.initialized) return;
    const kernel = this.runtimeHost.kernel;
    if (!modeForFlag(kernel, "interactive")) throw new Error("InteractiveMode: the interactive mode is not installed: its plugin is not among this runtime's plugins");
    const theme = this.options.initialThemeSetting?.trim();
    if (theme) kernel.settings.setOverride("theme", chooseTheme(theme, process.env));
    const warn = (message: string, level: "warning" | "error" = "warning") => kernel.diagnostics.report({ level, source: "interactive-mode", message });
    for (const d of this.options.startupDiagnostics ?? []) warn(d.message, d.type === "error" || d.level === "error" ? "error" : "warning");
    if (this.options.migratedProviders?.length) warn(`Migrated credentials to auth.json: ${this.options.migratedProviders.join(", ")}`);
    if (this.options.modelFallbackMessage) warn(this.options.modelFallbackMessage);
    this.initialized = true;
  }

  /** Run the terminal UI on this runtime until the user quits (the runtime is disposed then). */
  async run(): Promise<void> {
    if (this.running) throw new Error("InteractiveMode: run() is already running");
    this.running = true;
    try {
      await this.init();
      const o = this.options;
      const messages = [...(o.initialMessage !== undefined ? [o.initialMessage] : []), ...(o.initialMessages ?? [])];
      const flags = { ...(this.runtimeHost.kernel.service("argv")?.flags ?? {}), ...(o.tuiMode ? { "tui-mode": o.tuiMode } : {}), ...(o.verbose ? { verbose: true } : {}) };
      this.exitCode = await runModeByFlag(this.runtimeHost, "interactive", { messages, images: o.initialImages ?? [], flags });
    } finally {
      this.running = false;
    }
  }

  /** Show an error in the running UI. */
  showError(message: string): void {
    this.notify(message, "error");
  }
  /** Show a warning in the running UI. */
  showWarning(message: string): void {
    this.notify(message, "warning");
  }

  private notify(message: string, type: "error" | "warning"): void {
    const ui = this.runtimeHost.kernel.service("ui");
    if (ui) ui.notify(message, type);
    else this.runtimeHost.kernel.diagnostics.report({ level: type, source: "interactive-mode", message });
  }

  /** End the running UI as /quit does (run() then resolves). */
  stop(): void {
    quitInteractive(this.runtimeHost.kernel, 0);
  }
}
