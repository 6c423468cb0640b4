/**
 * The interactive mode in process: blessed on fake streams, the faux model, the real session
 * runtime; assertions read blessed's screen buffer.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { PassThrough, Writable } from "node:stream";
import { createTestKernel, echoTool } from "../../tests/helpers/test-kernel.js";
import { createSessionRuntime } from "../../sdk/session-setup.js";
import type { FauxStep } from "../../plugins/faux/index.js";
import type { Kernel, PluginManifest } from "../../core/kernel/index.js";
import { TuiApp } from "./app.js";
import { SessionManager } from "../../core/stores/index.js";
import { join } from "node:path";

interface Harness {
  app: TuiApp;
  tk: Awaited<ReturnType<typeof createTestKernel>>;
  runtime: any;
  input: PassThrough;
  output: Writable & { columns: number; rows: number };
  done: Promise<number>;
  screen(): string;
  type(s: string): Promise<void>;
  key(bytes: string): Promise<void>;
  waitFor(re: RegExp | ((s: string) => boolean), ms?: number): Promise<string>;
  resize(cols: number, rows: number): Promise<void>;
}

const open: Harness[] = [];

async function harness(
  opts: { steps?: FauxStep[]; settings?: Record<string, unknown>; plugins?: PluginManifest[]; cols?: number; rows?: number; tools?: any[]; persist?: boolean; before?: (tk: any) => void; argv?: Record<string, unknown>; term?: string; frameMs?: number } = {},
): Promise<Harness> {
  const tk = await createTestKernel({
    steps: opts.steps,
    settings: { defaultProvider: "faux", defaultModel: "faux-1", ...opts.settings } as any,
    plugins: opts.plugins,
    tools: opts.tools,
    mode: "tui",
  });
  opts.before?.(tk);
  const runtime = await createSessionRuntime({
    kernel: tk.kernel,
    parsed: { flags: opts.persist ? {} : { "no-session": true }, positionals: [], unknown: [] },
    cwd: tk.cwd,
    mode: "interactive",
  });
  const input = Object.assign(new PassThrough(), { isTTY: true, isRaw: false, setRawMode() {} });
  const output = Object.assign(new Writable({ write: (_c, _e, cb) => cb() }), { columns: opts.cols ?? 100, rows: opts.rows ?? 30, isTTY: true });
  const app = new TuiApp({ kernel: tk.kernel, runtime, input, output, env: { TERM: opts.term ?? "xterm-256color" }, frameMs: opts.frameMs ?? 5, argv: opts.argv });
  tk.kernel.provide("ui", app.ui, "test");
  app.start();
  const done = app.run();
  const screen = () => {
    app.renderNow();
    return app.screenText();
  };
  const tick = (ms = 15) => new Promise((r) => setTimeout(r, ms));
  const h: Harness = {
    app,
    tk,
    runtime,
    input,
    output: output as any,
    done,
    screen,
    async type(s) {
      for (const ch of s) input.write(ch);
      await tick();
    },
    async key(bytes) {
      input.write(bytes);
      await tick();
    },
    async waitFor(re, ms = 60_000) {
      const t0 = Date.now();
      let s = "";
      while (Date.now() - t0 < ms) {
        s = screen();
        if (typeof re === "function" ? re(s) : re.test(s)) return s;
        await tick(10);
      }
      throw new Error(`timed out waiting for ${re}\n--- screen ---\n${s}`);
    },
    async resize(cols, rows) {
      (output as any).columns = cols;
      (output as any).rows = rows;
      output.emit("resize");
      await tick(60);
    },
  };
  open.push(h);
  return h;
}

afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.app.quit(0);
    await h.done;
    h.tk.cleanup();
  }
});

describe("interactive mode", () => {
  it("shows a streamed markdown answer for a typed prompt", async () => {
    const h = await harness({ steps: [{ text: "# Title\n\nSome **bold** text and `code`.\n\n- one\n- two\n\n```ts\nconst x = 1;\n```\n" }] });
    await h.type("hello there");
    await h.key("\r");
    const s = await h.waitFor(/const x = 1;/);
    expect(s).toContain("hello there");
    expect(s).toContain("Title");
    expect(s).toContain("• one");
    expect(s).toContain("• two");
    expect(s).not.toContain("**bold**");
    if (process.env.PEEK) console.log(s);
  });

  it("puts its built-in commands in the kernel's command registry while it runs", async () => {
    const h = await harness();
    const entry = h.tk.kernel.commands.get("hotkeys");
    expect(entry?.source).toBe("builtin");
    expect(entry?.description).toMatch(/shortcuts/i);
    // A /hotkeys sent through the session (as an extension would) runs the TUI's own command.
    await entry!.handler("", h.app.session.contextFactory());
    await h.waitFor(/Complete a file name/);
    await h.app.quit(0);
    expect(h.tk.kernel.commands.get("hotkeys")).toBeUndefined();
  });

  it("reports OSC 7501 program status when PI_PROGRAM_STATUS=1: working, blocked by a dialog, done", async () => {
    const prev = process.env.PI_PROGRAM_STATUS;
    process.env.PI_PROGRAM_STATUS = "1";
    let h: Harness;
    try {
      h = await harness({ steps: [{ text: "answer" }] });
    } finally {
      if (prev === undefined) delete process.env.PI_PROGRAM_STATUS;
      else process.env.PI_PROGRAM_STATUS = prev;
    }
    const seen: string[] = [];
    const orig = h.output.write.bind(h.output);
    (h.output as any).write = (chunk: any, ...rest: any[]) => {
      const text = String(chunk);
      for (const m of text.matchAll(/\x1b\]7501;([^\x1b]*)\x1b\\/g)) seen.push(m[1]!);
      return orig(chunk, ...rest);
    };
    const until = async (re: RegExp) => {
      const t0 = Date.now();
      while (!seen.some((x) => re.test(x))) {
        if (Date.now() - t0 > 5000) throw new Error(`no ${re} in ${JSON.stringify(seen)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await h.type("hi");
    await h.key("\r");
    await until(/^state=working:app=pi\b/);
    await until(/^state=done:app=pi\b/);
    const answer = h.app.ui.confirm("Proceed?", "really");
    await until(/^state=blocked:app=pi:kind=dialog/);
    await h.key("y");
    await expect(answer).resolves.toBe(true);
    await until(/state=done.*$/);
    expect(seen.filter((x) => x.startsWith("state=blocked")).length).toBe(1);
    // Nothing of the prompt or the answer is reported.
    const messages = seen.flatMap((x) => [...x.matchAll(/msg=([^:]*)/g)].map((m) => Buffer.from(m[1]!, "base64").toString("utf8")));
    expect(messages.join(" ")).not.toMatch(/\bhi\b|answer/);
  });

  it("writes each frame as one synchronized update (DEC 2026), as pi 1.6 does", async () => {
    const h = await harness({ steps: [{ text: "a synchronized answer" }] });
    const writes: string[] = [];
    const orig = h.output.write.bind(h.output);
    (h.output as any).write = (chunk: any, ...rest: any[]) => {
      writes.push(String(chunk));
      return orig(chunk, ...rest);
    };
    await h.type("hi");
    await h.key("\r");
    await h.waitFor(/a synchronized answer/);
    // The screen holds the answer as soon as the frame is laid out; blessed writes it to the
    // terminal on its next tick, so wait for the write itself.
    const t0 = Date.now();
    while (!/synchronized/.test(writes.join(""))) {
      if (Date.now() - t0 > 10_000) throw new Error(`the answer was never written: ${JSON.stringify(writes.join(""))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    // However the answer was split over frames (a busy machine draws it in more of them, each
    // writing only what changed), every write that draws ends with whole synchronized updates
    // (the first one starts by setting the terminal up), and the answer is drawn only inside them.
    const drawing = writes.filter((w) => w.includes("\x1b[?2026h"));
    expect(drawing.length).toBeGreaterThan(0);
    for (const w of drawing) {
      expect(w.endsWith("\x1b[?2026l")).toBe(true);
      expect(w.split("\x1b[?2026h").length).toBe(w.split("\x1b[?2026l").length);
    }
    const all = writes.join("");
    const inside = [...all.matchAll(/\x1b\[\?2026h([\s\S]*?)\x1b\[\?2026l/g)].map((m) => m[1]!).join("");
    const outside = all.replace(/\x1b\[\?2026h[\s\S]*?\x1b\[\?2026l/g, "");
    expect(inside).toMatch(/synchronized|answer/);
    expect(outside).not.toMatch(/synchronized|answer/);
  });

  it("asks the terminal for OSC 7501 support (as pi 1.6 does) and reports only after it confirms", async () => {
    const prev = process.env.PI_PROGRAM_STATUS;
    delete process.env.PI_PROGRAM_STATUS;
    let yes: Harness, no: Harness;
    try {
      yes = await harness({ steps: [{ text: "answer" }] });
      no = await harness({ steps: [{ text: "answer" }] });
    } finally {
      if (prev !== undefined) process.env.PI_PROGRAM_STATUS = prev;
    }
    const watch = (h: Harness) => {
      const seen: string[] = [];
      const orig = h.output.write.bind(h.output);
      (h.output as any).write = (chunk: any, ...rest: any[]) => {
        for (const m of String(chunk).matchAll(/\x1b\]7501;([^\x1b]*)\x1b\\/g)) seen.push(m[1]!);
        return orig(chunk, ...rest);
      };
      return seen;
    };
    expect(yes.app.programStatus.probing).toBe(true);
    expect(yes.app.programStatus.supported).toBe(false);
    const seenYes = watch(yes);
    const seenNo = watch(no);
    // A supporting terminal answers the query before the DA reply; neither is typed into the editor.
    await yes.key("\x1b]7501;?\x1b\\\x1b[?62;22c");
    await no.key("\x1b[?1;2c");
    expect(yes.app.programStatus.supported).toBe(true);
    expect(no.app.programStatus.supported).toBe(false);
    expect(no.app.programStatus.probing).toBe(false);
    for (const h of [yes, no]) {
      expect(h.app.editor.getText()).toBe("");
      await h.type("hi");
      await h.key("\r");
      await h.waitFor(/answer/);
    }
    const t0 = Date.now();
    while (!seenYes.some((x) => x.startsWith("state=done")) && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
    expect(seenYes.some((x) => x.startsWith("state=working"))).toBe(true);
    expect(seenYes.some((x) => x.startsWith("state=done"))).toBe(true);
    expect(seenNo).toEqual([]);
  });

  it("PI_PROGRAM_STATUS=0 neither asks nor reports", async () => {
    const prev = process.env.PI_PROGRAM_STATUS;
    process.env.PI_PROGRAM_STATUS = "0";
    let h: Harness;
    try {
      h = await harness({ steps: [{ text: "answer" }] });
    } finally {
      if (prev === undefined) delete process.env.PI_PROGRAM_STATUS;
      else process.env.PI_PROGRAM_STATUS = prev;
    }
    expect(h.app.programStatus.probing).toBe(false);
    await h.key("\x1b]7501;?\x1b\\\x1b[?62;22c");
    expect(h.app.programStatus.supported).toBe(false);
  });

  it("draws custom entries with their entry renderer live and in place after a rebuild; a tool renderer resolver draws a tool", async () => {
    const tool = { ...echoTool("lister") };
    const before = (tk: { kernel: Kernel }) => {
      const api = tk.kernel.scope("t");
      api.registerToolRenderer((name, next) => (name === "lister" ? { renderCall: (a: { text: string }) => ({ render: () => [`RESOLVED ${a.text}`] }) } : next()));
      api.registerEntryRenderer({ customType: "card", render: (e) => ({ render: () => [`CARD-${(e as { data: { n: number } }).data.n}`] }) });
    };
    const h = await harness({ tools: [tool], steps: [{ text: "Listing.", toolCalls: [{ name: "lister", arguments: { text: "abc" } }] }, "ANSWER-ONE"], before });
    const sm = h.runtime.session.sessionManager;
    sm.appendCustomEntry("card", { n: 1 });
    sm.appendCustomEntry("other-type", { n: 9 }); // no renderer: no line
    await h.waitFor(/CARD-1/);
    await h.type("first prompt");
    await h.key("\r");
    let s = await h.waitFor(/ANSWER-ONE/);
    expect(s).toContain("RESOLVED abc");
    sm.appendCustomEntry("card", { n: 2 });
    s = await h.waitFor(/CARD-2/);
    const order = (x: string) => ["CARD-1", "first prompt", "ANSWER-ONE", "CARD-2"].map((m) => x.indexOf(m));
    expect(order(s)).toEqual([...order(s)].sort((a, b) => a - b));
    expect(s).not.toContain("n: 9");
    // Rebuilt from the session (as after a resume): the entries where they were appended, once each.
    h.app.rebuildChat();
    s = h.screen();
    expect(order(s).every((i) => i >= 0)).toBe(true);
    expect(order(s)).toEqual([...order(s)].sort((a, b) => a - b));
    expect(s.split("CARD-2").length).toBe(2);
  });

  it("shows a tool call from pending to done with its result, and expands it with a key", async () => {
    const long = Array.from({ length: 30 }, (_, i) => `row-${i}`).join("\n");
    const tool = { ...echoTool("lister"), execute: async () => ({ content: [{ type: "text" as const, text: long }] }) };
    const h = await harness({ tools: [tool], steps: [{ text: "Listing.", toolCalls: [{ name: "lister", arguments: { text: "x" } }] }, "All listed."] });
    await h.type("list");
    await h.key("\r");
    let s = await h.waitFor(/All listed\./);
    expect(s).toMatch(/✓ lister/);
    expect(s).toContain("row-0");
    expect(s).not.toContain("row-29");
    expect(s).toMatch(/more lines below/);
    await h.key("\x0f"); // Ctrl+O
    s = await h.waitFor(/row-29/);
    expect(s).not.toMatch(/more lines below/);
  });

  it("renders an edit's diff", async () => {
    const { default: tools } = await import("../../plugins/tools/index.js");
    const { writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const h = await harness({
      plugins: [tools],
      before: (tk) => writeFileSync(join(tk.cwd, "f.txt"), "alpha\nbeta\ngamma\n"),
      steps: [{ toolCalls: [{ name: "edit", arguments: { path: "f.txt", edits: [{ oldText: "beta", newText: "BETA-NEW" }] } }] }, "edited"],
      settings: { yolo: true },
    });
    await h.type("edit it");
    await h.key("\r");
    const s = await h.waitFor(/edited/);
    expect(s).toMatch(/✓ edit f\.txt/);
    expect(s).toMatch(/-\s*2 beta/);
    expect(s).toMatch(/\+\s*2 BETA-NEW/);
  });

  it("steers with Enter and queues a follow-up with Alt+Enter while streaming; Esc returns the queue to the editor", async () => {
    const h = await harness({ steps: [{ text: "word ".repeat(400), delayMs: 3 }, "after"] });
    await h.type("start");
    await h.key("\r");
    await h.waitFor(/Working/);
    await h.type("steer this");
    await h.key("\r");
    await h.type("later that");
    await h.key("\x1b\r");
    const s = await h.waitFor(/follow-up: later that/);
    expect(s).toContain("↳ steer: steer this");
    expect(h.app.session.getQueue()).toEqual({ steering: ["steer this"], followUp: ["later that"] });
    await h.key("\x1b");
    await h.waitFor((x) => /Aborted/.test(x) && !/Working/.test(x));
    expect(h.app.editor.getText()).toBe("steer this\n\nlater that");
    expect(h.app.session.getQueue()).toEqual({ steering: [], followUp: [] });
  });

  it("delivers a steering message as the next turn", async () => {
    const seen: string[] = [];
    const h = await harness({
      steps: [
        { text: "word ".repeat(200), delayMs: 2 },
        (ctx: any) => {
          seen.push(JSON.stringify(ctx.messages));
          return "steered answer";
        },
      ],
    });
    await h.type("go");
    await h.key("\r");
    await h.waitFor(/Working/);
    await h.type("turn left");
    await h.key("\r");
    const s = await h.waitFor(/steered answer/);
    expect(s).toContain("turn left");
    expect(seen[0]).toContain("turn left");
  });

  it("runs !cmd and !!cmd through the session's bash", async () => {
    const { spawn } = await import("node:child_process");
    const executor = (command: string, opts: { cwd: string; onData?: (c: string) => void }) =>
      new Promise((resolve) => {
        const child = spawn("sh", ["-c", command], { cwd: opts.cwd });
        let output = "";
        child.stdout.on("data", (d: Buffer) => {
          output += d.toString();
          opts.onData?.(d.toString());
        });
        child.on("close", (code: number) => resolve({ output, exitCode: code, cancelled: false, truncated: false }));
      });
    const h = await harness({ before: (tk) => tk.kernel.provide("bash-executor", executor, "test") });
    await h.type("!echo visible-out");
    await h.key("\r");
    await h.waitFor(/^ visible-out/m);
    await h.type("!!echo hidden-out");
    await h.key("\r");
    const s = await h.waitFor(/hidden-out/);
    expect(s).toContain("(not sent to the model)");
    const bashMsgs = () => h.app.session.messages.filter((m: any) => m.role === "bashExecution");
    await h.waitFor(() => bashMsgs().length === 2);
    const msgs = bashMsgs();
    expect(msgs.map((m: any) => [m.command, !!m.excludeFromContext])).toEqual([
      ["echo visible-out", false],
      ["echo hidden-out", true],
    ]);
  });

  it("completes /commands with Tab and lists extension commands", async () => {
    const h = await harness({
      before: (tk) => tk.kernel.scope("ext").registerCommand({ name: "deploy-now", description: "ship it", handler: () => {} }),
    });
    await h.type("/dep");
    let s = h.screen();
    expect(s).toMatch(/\/deploy-now\s+ship it/);
    await h.key("\t");
    expect(h.app.editor.getText()).toBe("/deploy-now ");
    await h.key("\x15"); // Ctrl+U clears the line
    await h.type("/mo");
    s = h.screen();
    expect(s).toContain("/model");
  });

  it("switches the model with /model and fuzzy search", async () => {
    const h = await harness({ before: (tk) => tk.faux.addModel({ id: "faux-large", name: "Faux Large", reasoning: true }) });
    await h.type("/model");
    await h.key("\r");
    let s = await h.waitFor(/Select a model/);
    expect(s).toMatch(/✓ faux-1 \[faux\]/);
    expect(s).toMatch(/ {4}faux-large \[faux\]/);
    await h.type("large");
    await h.key("\r");
    s = await h.waitFor(/Model: faux\/faux-large/);
    expect(h.app.session.model.id).toBe("faux-large");
    expect(s).toMatch(/faux\/faux-large • /);
  });

  it("answers an extension select dialog with a visible countdown", async () => {
    const h = await harness();
    const answer = h.app.ui.select("Allow the thing?", ["Allow", "Deny"], { timeout: 20_000 });
    let s = await h.waitFor(/Allow the thing\?/);
    expect(s).toMatch(/cancels in (20|19)s/);
    await h.key("\x1b[B"); // Down
    await h.key("\r");
    await expect(answer).resolves.toBe("Deny");
    s = h.screen();
    expect(s).not.toContain("Allow the thing?");
  });

  it("resolves dialogs to their defaults when the timeout runs out", async () => {
    const h = await harness();
    await expect(h.app.ui.confirm("Sure?", "really", { timeout: 150 })).resolves.toBe(false);
    await expect(h.app.ui.input("Name?", "type", { timeout: 100 })).resolves.toBeUndefined();
    const ac = new AbortController();
    const p = h.app.ui.select("Pick", ["a"], { signal: ac.signal });
    await h.waitFor(/Pick/);
    ac.abort();
    await expect(p).resolves.toBeUndefined();
    expect(h.screen()).not.toContain("Pick");
  });

  it("takes text in input and editor dialogs", async () => {
    const h = await harness();
    const p = h.app.ui.input("Your name", "placeholder");
    await h.waitFor(/Your name/);
    await h.type("Ada");
    await h.key("\r");
    await expect(p).resolves.toBe("Ada");
    const q = h.app.ui.editor("Notes", "line one");
    await h.waitFor(/Notes/);
    await h.key("\n"); // Ctrl+J: new line
    await h.type("line two");
    await h.key("\r");
    await expect(q).resolves.toBe("line one\nline two");
  });

  it("hosts custom components in an overlay and routes keys to them", async () => {
    const h = await harness();
    const got: string[] = [];
    const result = h.app.ui.custom<string>((tui: any, theme: any, _kb: any, done: (v: string) => void) => ({
      render: (w: number) => [theme.fg("accent", "CUSTOM PANEL"), `width ${w}`, `keys ${got.join(",")}`],
      handleInput: (data: string) => {
        got.push(JSON.stringify(data));
        if (data === "\r") done("closed");
        tui.requestRender();
      },
    }), { overlay: true });
    let s = await h.waitFor(/CUSTOM PANEL/);
    // As pi-tui draws overlays: the component's own lines, no frame, 80 columns wide, centred.
    expect(s).not.toMatch(/╭─+╮/);
    expect(s).toMatch(/^ {10}width 80\b/m);
    if (process.env.PEEK) console.log(JSON.stringify(s));
    await h.type("x");
    s = await h.waitFor(/keys "x"/);
    await h.key("\r");
    await expect(result).resolves.toBe("closed");
    expect(h.screen()).not.toContain("CUSTOM PANEL");
  });

  it("shows status, widgets, notifications, a custom footer and a custom header", async () => {
    const h = await harness();
    h.app.ui.setStatus("ext", "STATUS-ONE");
    h.app.ui.setWidget("todo", ["WIDGET-ABOVE"]);
    h.app.ui.setWidget("below", () => ({ render: () => ["WIDGET-BELOW"] }), { placement: "belowEditor" });
    h.app.ui.notify("NOTIFIED", "warning");
    let s = await h.waitFor(/STATUS-ONE/);
    const lines = s.split("\n");
    const above = lines.findIndex((l) => l.includes("WIDGET-ABOVE"));
    const below = lines.findIndex((l) => l.includes("WIDGET-BELOW"));
    const rules = lines.map((l, i) => (l.startsWith("────") ? i : -1)).filter((i) => i >= 0);
    expect(above).toBeLessThan(rules[0]!);
    expect(below).toBeGreaterThan(rules[1]!);
    expect(s).toContain("! NOTIFIED");
    h.app.ui.setFooter(() => ({ render: (w: number) => [`MY FOOTER ${w}`] }));
    h.app.ui.setHeader(() => ({ render: () => ["MY HEADER"] }));
    s = await h.waitFor(/MY FOOTER 100/);
    expect(s).toContain("MY HEADER");
    expect(s).not.toContain("STATUS-ONE");
    h.app.ui.setFooter(undefined);
    h.app.ui.setStatus("ext", undefined);
    s = await h.waitFor((x) => !/MY FOOTER/.test(x));
    expect(s).not.toContain("STATUS-ONE");
  });

  it("draws custom messages with a registered renderer and falls back to a labelled box", async () => {
    const h = await harness({
      before: (tk) =>
        tk.kernel.scope("ext").registerMessageRenderer({
          customType: "note",
          render: (msg: any, opts: any) => ({ render: (w: number) => [`NOTE(${w}): ${msg.content}${opts.expanded ? " [expanded]" : ""}`] }),
        }),
    });
    await h.app.session.sendCustomMessage({ customType: "note", content: "rendered by ext", display: true });
    await h.app.session.sendCustomMessage({ customType: "plain", content: "no renderer here", display: true });
    const s = await h.waitFor(/no renderer here/);
    expect(s).toContain("NOTE(100): rendered by ext");
    expect(s).toContain("[plain]");
  });

  it("shows thinking blocks, collapses them by setting and toggles with Ctrl+T", async () => {
    const h = await harness({ settings: { hideThinkingBlock: true }, steps: [{ thinking: "deep thought here", text: "answer text" }] });
    await h.type("think");
    await h.key("\r");
    let s = await h.waitFor(/answer text/);
    expect(s).toMatch(/Thinking… \(1 line/);
    expect(s).not.toContain("deep thought here");
    await h.key("\x14"); // Ctrl+T
    s = await h.waitFor(/deep thought here/);
  });

  it("shows provider errors", async () => {
    const h = await harness({ steps: [{ text: "partial", error: "upstream exploded" }] , settings: { retry: { enabled: false, maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } } });
    await h.type("x");
    await h.key("\r");
    await h.waitFor(/Error: upstream exploded/);
  });

  it("draws a /skill:name message as the skill, collapsed, then the user's own text", async () => {
    const h = await harness({ steps: ["on it"] });
    await h.key('\x1b[200~<skill name="deploy" location="/s/SKILL.md">\nRun the deploy steps.\n</skill>\n\nship it now\x1b[201~');
    await h.key("\r");
    const s = await h.waitFor(/on it/);
    expect(s).toMatch(/\[skill\] deploy \(Ctrl\+O to show\)/);
    expect(s).toContain("ship it now");
    expect(s).not.toContain("<skill");
    expect(s).not.toContain("Run the deploy steps.");
  });

  it("handles a bracketed paste without submitting and expands a large paste on submit", async () => {
    const h = await harness({ steps: ["got it"] });
    await h.key("\x1b[200~line a\nline b\x1b[201~");
    expect(h.app.editor.getText()).toBe("line a\nline b");
    expect(h.app.session.messages).toHaveLength(0);
    await h.key("\x15\x0b"); // clear
    h.app.editor.clear();
    const big = Array.from({ length: 40 }, (_, i) => `pasted ${i}`).join("\n");
    await h.key(`\x1b[200~${big}\x1b[201~`);
    expect(h.screen()).toContain("[paste #1 +40 lines]");
    await h.key("\r");
    await h.waitFor(/got it/);
    const user = h.app.session.messages.find((m: any) => m.role === "user") as any;
    expect(JSON.stringify(user.content)).toContain("pasted 39");
  });

  it("re-wraps on resize and keeps wide characters aligned", async () => {
    const h = await harness({ steps: ["你好世界 🎉🚀✅ end-marker " + "wrap me ".repeat(30)] });
    await h.type("wide");
    await h.key("\r");
    await h.waitFor(/end-marker/);
    await h.resize(40, 20);
    const s = await h.waitFor(/end-marker/);
    const rows = (h.app.screen as any).lines as Array<Array<[number, string]>>;
    expect(rows).toHaveLength(20);
    for (const row of rows) expect(row).toHaveLength(40);
    const cells = rows.find((r) => r.map((c) => c[1]).join("").includes("end-marker"))!;
    const chars = cells.map((c) => c[1]);
    const ni = chars.indexOf("你");
    // 你好世界 take 8 columns, a space, three emoji 6 more, a space: "end-marker" starts 16 columns on.
    expect(chars.slice(ni + 16, ni + 26).join("")).toBe("end-marker");
    const col = chars.indexOf("🎉");
    expect(chars[col + 1]).toBe("\x03"); // the emoji's second cell is blessed's filler
    expect(chars[col + 2]).toBe("🚀");
    expect(chars[col + 4]).toBe("✅");
    for (const l of s.split("\n")) expect(l.length).toBeLessThanOrEqual(40);
  });

  it("renders a 10,000-line conversation and coalesces frames while a long answer streams", async () => {
    const h = await harness({ steps: [{ text: "chunk ".repeat(2000), chunkSize: 6 }], rows: 40, cols: 120, frameMs: 33 });
    const big = Array.from({ length: 10_000 }, (_, i) => `history line ${i}`).join("\n");
    await h.app.session.sendCustomMessage({ customType: "history", content: big, display: true });
    let s = await h.waitFor(/history line 9999/);
    expect(s).not.toContain("history line 9000\n");
    let updates = 0;
    let settled = false;
    h.app.session.subscribe((e: any) => {
      if (e.type === "message_update") updates++;
      if (e.type === "agent_settled") settled = true;
    });
    await h.type("stream");
    const before = h.app.stats.frames;
    const t0 = Date.now();
    await h.key("\r");
    // Wait for the run to settle without drawing (screen() draws a frame of its own).
    while (!settled) await new Promise((r) => setTimeout(r, 10));
    const elapsed = Date.now() - t0;
    const frames = h.app.stats.frames - before;
    // Coalescing: at most one frame per frameMs however fast or slow the machine delivered the
    // updates (a busy machine stretches both sides alike), far fewer frames than updates.
    expect(updates).toBeGreaterThan(1000);
    expect(frames).toBeLessThanOrEqual(Math.ceil(elapsed / 33) + 3);
    s = await h.waitFor((x) => !/Working/.test(x) && /chunk chunk/.test(x));
    // PgUp scrolls back into the history; typing returns to the end.
    for (let i = 0; i < 20 && !/history line 9999/.test(h.screen()); i++) await h.key("\x1b[5~");
    s = h.screen();
    expect(s).toContain("history line 9999");
    expect(h.app.chat.scroll).toBeGreaterThan(0);
    await h.type("x");
    expect(h.app.chat.scroll).toBe(0);
  });

  it("navigates /tree: jumping to an earlier user message puts it back in the editor", async () => {
    const h = await harness({ steps: ["first answer", "second answer"] });
    await h.type("first question");
    await h.key("\r");
    await h.waitFor(/first answer/);
    await h.type("second question");
    await h.key("\r");
    await h.waitFor(/second answer/);
    await h.type("/tree");
    await h.key("\r");
    let s = await h.waitFor(/Session Tree/);
    expect(s).toMatch(/user: first question/);
    expect(s).toMatch(/• assistant: second answer/);
    await h.type("second question"); // search
    await h.key("\r");
    s = await h.waitFor((x) => !/Session Tree/.test(x) && !/second answer/.test(x));
    expect(s).toContain("first answer");
    expect(h.app.editor.getText()).toBe("second question");
    expect(h.app.session.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant"]); // (pi 1.6 system message entry)
  });

  it("labels a tree entry with Shift+L", async () => {
    const h = await harness({ steps: ["an answer"] });
    await h.type("question");
    await h.key("\r");
    await h.waitFor(/an answer/);
    await h.type("/tree");
    await h.key("\r");
    await h.waitFor(/Session Tree/);
    await h.key("L");
    await h.waitFor(/Label for/);
    await h.type("checkpoint");
    await h.key("\r");
    const s = await h.waitFor(/\[checkpoint\]/);
    expect(s).toContain("[checkpoint]");
    const leaf = h.app.session.sessionManager.getLeafId();
    expect(h.app.session.sessionManager.getLabel(h.app.session.sessionManager.getBranch().find((e: any) => e.type === "message" && e.message.role === "assistant").id)).toBe("checkpoint");
    expect(leaf).toBeTruthy();
  });

  it("starts a new session with /new and resumes the old one with /resume", async () => {
    const h = await harness({ persist: true, steps: ["saved answer", "other answer"] });
    await h.type("remember this");
    await h.key("\r");
    await h.waitFor(/saved answer/);
    const first = h.app.session.sessionFile;
    await h.type("/new");
    await h.key("\r");
    let s = await h.waitFor(/New session/);
    expect(s).not.toContain("saved answer");
    await h.type("/resume");
    await h.key("\r");
    s = await h.waitFor(/remember this/);
    await h.type("remember");
    s = await h.waitFor(/Resume a session .*1 session/);
    await h.key("\r");
    s = await h.waitFor(/saved answer/);
    expect(h.app.session.sessionFile).toBe(first);
  });

  it("uses keybindings.json and the light theme", async () => {
    const { writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const h = await harness({
      settings: { theme: "light" },
      before: (tk) => writeFileSync(join(tk.agentDir, "keybindings.json"), JSON.stringify({ "app.tools.expand": "ctrl+x" })),
    });
    expect(h.app.theme.name).toBe("light");
    expect(h.app.expandTools).toBe(false);
    await h.key("\x18"); // Ctrl+X
    expect(h.app.expandTools).toBe(true);
    await h.key("\x0f"); // Ctrl+O no longer bound
    expect(h.app.expandTools).toBe(true);
  });

  it("quits on Ctrl+D with an empty editor after disposing the runtime", async () => {
    const h = await harness();
    await h.key("\x04");
    await expect(h.done).resolves.toBe(0);
    expect(h.app.session.isDisposed).toBe(true);
  });

  it("quits on Ctrl+C twice and on /quit", async () => {
    const h = await harness();
    await h.type("some text");
    await h.key("\x03");
    expect(h.app.editor.getText()).toBe("");
    await h.key("\x03");
    await expect(h.done).resolves.toBe(0);
    const h2 = await harness();
    await h2.type("/quit");
    await h2.key("\r");
    await expect(h2.done).resolves.toBe(0);
  });

  it("falls back to xterm-256color on an odd TERM and says so", async () => {
    const h = await harness({ term: "weird-term" });
    const s = await h.waitFor(/TERM=weird-term/);
    expect(s).toContain("using xterm-256color");
  });

  it("asks whether to trust a project that carries its own code", async () => {
    const calls: unknown[] = [];
    const h = await harness({
      before: (tk) =>
        tk.kernel.provide(
          "project-trust",
          {
            isTrusted: () => false,
            hasProjectCode: () => true,
            skipped: () => [{ kind: "extension", path: "/repo/.pi/extensions/tool.ts" }],
            trust: (cwd: string, o: unknown) => void calls.push([cwd, o]),
          },
          "test",
        ),
    });
    let s = await h.waitFor(/Trust the project/);
    expect(s).toContain("extension: /repo/.pi/extensions/tool.ts");
    await h.key("\x1b[A"); // up from "No" to "Yes, this time only"
    await h.key("\r");
    s = await h.waitFor(/Project trusted for this run/);
    expect(calls).toEqual([[h.tk.cwd, { persist: false }]]);
  });

  it("opens the session picker first with -r and resumes the chosen session", async () => {
    const h = await harness({
      persist: true,
      argv: { resume: true },
      before: (tk) => {
        SessionManager.setDefaultRoot(join(tk.agentDir, "sessions"));
        const sm = SessionManager.create(tk.cwd);
        sm.appendMessage({ role: "user", content: [{ type: "text", text: "an old question" }], timestamp: Date.now() } as any);
        sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "the old answer" }], api: "faux", provider: "faux", model: "faux-1", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() } as any);
      },
    });
    let s = await h.waitFor(/Resume a session \(this folder\) Sort: Threaded — 1 session/);
    expect(s).toContain("an old question");
    await h.key("\r");
    s = await h.waitFor(/the old answer/);
    expect(h.app.session.messages).toHaveLength(2);
  });

  it("forks from an earlier user message with /fork", async () => {
    const h = await harness({ persist: true, steps: ["answer one", "answer two"] });
    await h.type("question one");
    await h.key("\r");
    await h.waitFor(/answer one/);
    await h.type("question two");
    await h.key("\r");
    await h.waitFor(/answer two/);
    const original = h.app.session.sessionFile;
    await h.type("/fork");
    await h.key("\r");
    await h.waitFor(/Fork from a user message/);
    await h.key("\r"); // newest first: "question two"
    const s = await h.waitFor(/Forked to new session/);
    expect(s).toContain("answer one");
    expect(s).not.toContain("answer two");
    expect(h.app.editor.getText()).toBe("question two");
    expect(h.app.session.sessionFile).not.toBe(original);
  });

  it("quitting answers an open dialog with its default so a waiting run can end", async () => {
    let answer: unknown = "unset";
    let h: Harness;
    const asking = {
      ...echoTool("asker"),
      execute: async () => {
        answer = await h.app.ui.select("Proceed?", ["Yes", "No"], { timeout: 60_000 });
        return { content: [{ type: "text" as const, text: "asked" }] };
      },
    };
    h = await harness({ tools: [asking], steps: [{ toolCalls: [{ name: "asker", arguments: { text: "x" } }] }, "after"] });
    await h.type("go");
    await h.key("\r");
    await h.waitFor(/Proceed\?/);
    await h.key("\x1b[A"); // some key in the dialog, not an answer
    await h.app.quit(0);
    await expect(h.done).resolves.toBe(0);
    expect(answer).toBeUndefined();
    expect(h.app.session.isDisposed).toBe(true);
  });

  it("edits the message in $VISUAL with Ctrl+G", async () => {
    const h = await harness();
    const saved = process.env.VISUAL;
    process.env.VISUAL = `sh -c 'printf "%s edited-by-editor" "$(cat "$1")" > "$1"' sh`;
    try {
      await h.type("draft");
      await h.key("\x07"); // Ctrl+G
      expect(h.app.editor.getText()).toBe("draft edited-by-editor");
      expect(h.screen()).toContain("draft edited-by-editor");
    } finally {
      if (saved === undefined) delete process.env.VISUAL;
      else process.env.VISUAL = saved;
    }
  });
});
