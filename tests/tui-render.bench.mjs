/**
 * Render cost of the interactive mode while an answer streams into a long conversation.
 * Not a test (no assertions on time): run after a build with
 *
 *   node tests/tui-render.bench.mjs [historyLines=10000] [chunks=5000]
 *
 * A 120x40 screen writes to a discarding stream. The session is preloaded with about
 * `historyLines` rendered lines (user prompts and markdown answers), then the faux model
 * streams `chunks` chunks of ~20 characters (a line break every 5th chunk), twice: as fast as
 * the model can emit them, and paced at 500 chunks/s. Prints frames, render time per frame
 * and per chunk, and process CPU. Then the paced stream once more on a component-heavy screen:
 * a pi-tui footer that changes with every chunk and two pi-tui widgets (a boxed status text
 * and a Markdown list) above and below the editor, as extensions draw them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";

const dist = new URL("../dist/", import.meta.url);
const load = (p) => import(new URL(p, dist).href);
const { Kernel } = await load("core/kernel/kernel.js");
const { PluginHost } = await load("core/kernel/plugin-host.js");
const { SettingsManager } = await load("core/kernel/settings.js");
const { defineApp } = await load("core/kernel/config.js");
const { FauxModel, createFauxPlugin } = await load("plugins/faux/index.js");
const { createSessionRuntime } = await load("sdk/session-setup.js");
const { TuiApp } = await load("modes/tui/app.js");

const HISTORY = Number(process.argv[2] ?? 10_000);
const CHUNKS = Number(process.argv[3] ?? 5_000);

const root = mkdtempSync(join(tmpdir(), "pi-tui-bench-"));
try {
  const settings = SettingsManager.inMemory({ defaultProvider: "faux", defaultModel: "faux-1" });
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0-bench"), cwd: root, agentDir: join(root, "agent"), settings });
  const faux = new FauxModel({ steps: [] });
  await new PluginHost(kernel).load([{ manifest: createFauxPlugin(faux), origin: "bench", builtin: true }]);
  const runtime = await createSessionRuntime({ kernel, parsed: { flags: { "no-session": true }, positionals: [], unknown: [] }, cwd: root, mode: "interactive" });

  // History: pairs of a prompt and a markdown answer (~17 rendered lines each at 120 columns).
  const sm = runtime.sessionManager;
  const answer = (i) =>
    `## Step ${i}\n\nHere is what happened in step ${i}, with **bold** text, \`inline code\` and a list:\n\n` +
    `- first point of ${i}\n- second point that is a little longer so that it wraps on narrow screens\n- third\n\n` +
    "```ts\n" + `const value${i} = compute(${i});\nconsole.log(value${i});\n` + "```\n\nDone with this step.";
  const usage = { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const pairs = Math.ceil(HISTORY / 17);
  for (let i = 0; i < pairs; i++) {
    sm.appendMessage({ role: "user", content: [{ type: "text", text: `Please do step ${i}` }], timestamp: Date.now() });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: answer(i) }], api: "faux", provider: "faux", model: "faux-1", usage, stopReason: "stop", timestamp: Date.now() });
  }
  runtime.session.reloadFromStore();

  const text = Array.from({ length: CHUNKS }, (_, i) => `chunk ${String(i).padStart(5, "0")} text ${(i + 1) % 5 === 0 ? "\n" : " "}`).join("");
  const chunkSize = Math.ceil(text.length / CHUNKS);

  // Baseline: the same paced stream with no UI attached (the agent loop, events, the faux model).
  {
    faux.setScript([{ text, chunkSize, delayMs: 2 }]);
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    await runtime.session.prompt("baseline");
    const wall = performance.now() - w0;
    const cpu = process.cpuUsage(cpu0);
    console.log(`baseline without UI, paced: ${(wall / 1000).toFixed(2)} s, process CPU ${((cpu.user + cpu.system) / CHUNKS).toFixed(1)} µs per chunk (${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(0)}% of a core)`);
    // Drop the baseline exchange again so the conversation is the same size below.
    sm.branch(sm.getBranch().at(-3)?.id ?? sm.getLeafId());
    runtime.session.reloadFromStore();
  }

  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode() {} });
  const output = Object.assign(new Writable({ write: (_c, _e, cb) => cb() }), { columns: 120, rows: 40, isTTY: true });
  const app = new TuiApp({ kernel, runtime, input, output, env: { TERM: "xterm-256color" } });
  const t0 = performance.now();
  app.start();
  const startMs = performance.now() - t0;
  // Count the rendered lines of the whole conversation at this width.
  const ctx = app.chatContext();
  const total = app.chat.blocks.reduce((n, b) => n + b.lines(120, ctx, app.chat.uiVersion).length + 1, 0);
  const done = app.run();

  async function stream(label, delayMs) {
    faux.setScript([{ text, chunkSize, delayMs }]);
    let updates = 0;
    const un = runtime.session.subscribe((e) => void (e.type === "message_update" && updates++));
    const f0 = app.stats.frames;
    const r0 = app.stats.renderMs;
    let maxFrame = 0;
    const watch = setInterval(() => (maxFrame = Math.max(maxFrame, app.stats.lastFrameMs)), 5);
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    await runtime.session.prompt("stream it");
    app.renderNow();
    const wall = performance.now() - w0;
    const cpu = process.cpuUsage(cpu0);
    clearInterval(watch);
    un();
    const frames = app.stats.frames - f0;
    const renderMs = app.stats.renderMs - r0;
    console.log(
      `${label}: ${updates} chunks in ${(wall / 1000).toFixed(2)} s, ${frames} frames (${(frames / (wall / 1000)).toFixed(1)} fps), ` +
        `render ${(renderMs / frames).toFixed(2)} ms/frame avg (max ${maxFrame.toFixed(1)}), ` +
        `render ${((renderMs * 1000) / updates).toFixed(1)} µs per chunk, ` +
        `process CPU ${((cpu.user + cpu.system) / 1000 / updates * 1000).toFixed(1)} µs per chunk (${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(0)}% of a core)`,
    );
  }

  console.log(`conversation: ${total} rendered lines at 120 columns (${app.chat.blocks.length} blocks); first frame after ${startMs.toFixed(0)} ms`);
  await stream("as fast as possible", 0);
  await stream("paced, 500 chunks/s", 2);
  {
    const tui = await import("@earendil-works/pi-tui");
    const { getMarkdownTheme } = await load("modes/tui/pi-theme.js");
    let n = 0;
    const un = runtime.session.subscribe((e) => void (e.type === "message_update" && n++));
    app.ui.setFooter((handle, theme) => ({
      render: (w) => [tui.truncateToWidth(theme.fg("accent", `chunks ${n}`) + theme.fg("dim", ` · ${"status ".repeat(30)}`), w), tui.truncateToWidth(`model faux-1 · ${n % 7} tools · 你好 cost $0.00${n % 10}`, w)],
      invalidate() {},
    }));
    app.ui.setWidget("status", (_h, theme) => {
      const box = new tui.Box(1, 0, (t) => theme.bg("customMessageBg", t));
      box.addChild(new tui.Text(theme.fg("success", "● build green · tests 412/412 · 3 todo items · 漢字 wide text"), 0, 0));
      return box;
    });
    app.ui.setWidget("todo", () => new tui.Markdown("- [x] split app.ts\n- [ ] host components\n- [ ] **benchmark** the `footer`", 1, 0, getMarkdownTheme()), { placement: "belowEditor" });
    await stream("paced, 500 chunks/s, pi-tui footer + 2 widgets", 2);
    un();
  }
  const heap = process.memoryUsage().heapUsed / 1024 / 1024;
  console.log(`heap used: ${heap.toFixed(0)} MB`);
  await app.quit(0);
  await done;
} finally {
  rmSync(root, { recursive: true, force: true });
}
