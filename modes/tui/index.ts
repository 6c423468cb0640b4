/**
 * The interactive mode (`pi` on a terminal): a blessed TUI. Blessed and the UI code load only
 * inside run(), so `pi --version`, print, json and rpc never load them.
 *
 * Once the mode is chosen it provides the kernel service "ui" (the ExtensionUI extensions and
 * plugins draw through; calls made while the session starts are replayed when the screen is
 * up), and it answers "session-picker" (`pi -r`, /resume).
 */
import { definePlugin, type Kernel, type ModeContext } from "../../core/kernel/index.js";
import { DeferredUi } from "./deferred-ui.js";

/** The running app, if any (the session picker service needs it). */
let active: { pickSession(): Promise<string | undefined> } | undefined;
/** The "ui" service provided when the mode was chosen, per kernel. */
const early = new WeakMap<Kernel, DeferredUi>();
/** The app running for a kernel (the SDK's InteractiveMode.stop() ends it). */
const running = new WeakMap<Kernel, { quit(code?: number): Promise<void> }>();

/** End the TUI running for this kernel the way /quit does; false when none runs. */
export function quitInteractive(kernel: Kernel, code = 0): boolean {
  const app = running.get(kernel);
  if (!app) return false;
  void app.quit(code);
  return true;
}

export default definePlugin({
  name: "mode-interactive",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "interactive terminal UI (blessed)",
  setup(api) {
    // The CLI may declare it as well: whoever registers first owns it, the TUI reads it either way.
    if (!api.kernel.flags.has("tui-mode")) {
      api.registerFlag({ name: "tui-mode", type: "string", choices: ["fullscreen", "regular"], placeholder: "mode", description: "Interactive UI: fullscreen (alternate screen) or regular (keeps the terminal's scrollback)", group: "Interactive" });
    }
    api.registerMode({
      name: "interactive",
      description: "interactive terminal UI",
      // The fallback: a terminal on both sides and nothing else asked for.
      claims: () => true,
      priority: 0,
      hasUI: true,
      input: "interactive",
      // Sessions report "tui" (pi's name for this mode in ctx.mode).
      sessionMode: "tui",
      // session_start runs before the mode: extensions setting status or widgets there need a UI.
      prepare: () => {
        if (!early.has(api.kernel)) {
          const ui = new DeferredUi(api.kernel);
          early.set(api.kernel, ui);
          api.provide("ui", ui);
        }
      },
      run: (ctx) => runInteractive(ctx),
    });
    // `-r` needs this service to exist before the mode starts; the picker itself is the TUI's.
    api.provide("session-picker", async (): Promise<string | undefined> => {
      if (!active) throw new Error("the session picker needs the interactive mode (a terminal)");
      return active.pickSession();
    });
  },
});

export async function runInteractive(ctx: ModeContext): Promise<number> {
  const { TuiApp } = await import("./app.js");
  const deferred = early.get(ctx.kernel) ?? new DeferredUi(ctx.kernel);
  early.delete(ctx.kernel);
  const withdraw = ctx.kernel.provide("ui", deferred, "mode-interactive");
  const app = new TuiApp({
    kernel: ctx.kernel,
    runtime: ctx.runtime,
    argv: ctx.argv,
    messages: ctx.messages,
    images: ctx.images,
    processHooks: true,
  });
  active = app;
  running.set(ctx.kernel, app);
  try {
    app.start();
    deferred.attach(app.ui);
    return await app.run();
  } catch (e) {
    app.destroy();
    try {
      await ctx.runtime.dispose();
    } catch {
      /* already failing */
    }
    process.stderr.write(`${ctx.kernel.app.name}: the terminal UI failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  } finally {
    active = undefined;
    running.delete(ctx.kernel);
    deferred.detach();
    withdraw();
  }
}
