/**
 * pi 1.6's interactive-mode components from the host package: the message
 * components, ToolExecutionComponent, BashExecutionComponent, FooterComponent, the extension
 * dialogs, LoginDialogComponent and ArminComponent. A child process builds them from the bundle
 * (tests/fixtures/components-probe.mjs: pi-tui loads through require there), renders them
 * to lines at several widths and drives their input; this file checks what it saw.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/e2e.js";

const ENTRY = join(ROOT, "dist", "bundle", "index.js");
let probe: any;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "package-components-"));
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res, rej) => {
    const child = spawn(process.execPath, [join(ROOT, "tests", "fixtures", "components-probe.mjs"), ENTRY], { cwd: ROOT, env: { ...process.env, PROBE_DIR: dir, HOME: dir }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", rej);
    child.on("close", (code) => res({ code, stdout, stderr }));
  });
  if (r.code !== 0) throw new Error(`probe failed (${r.code}): ${r.stderr}`);
  probe = JSON.parse(r.stdout);
}, 120_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const lines = (s: string) => s.split("\n");

it("no component draws a line wider than the width it is given (12, 20, 37, 60, 100 columns)", () => {
  expect(Object.keys(probe.overflow).sort()).toEqual(
    ["armin", "assistant", "bash", "branch", "compaction", "custom", "editor", "footer", "input", "login", "selector", "skill", "tool-builtin", "tool-custom", "tool-fallback", "tool-generic", "user"].sort(),
  );
  for (const [name, over] of Object.entries(probe.overflow)) expect([name, over]).toEqual([name, []]);
});

it("they are pi-tui components of the host's pi-tui, and can be subclassed", () => {
  expect(probe.identity).toEqual({ container: true, box: true, own: true, subclass: true });
  expect(probe.assistant.isContainer).toBe(true);
});

describe("message components", () => {
  it("AssistantMessageComponent: thinking, markdown text, a hidden-thinking label, errors, transformers", () => {
    const a = probe.assistant;
    expect(lines(a.shown).slice(0, 7)).toEqual(["", " pondering the request", "", " Plan", "", " Use bold and code.", ""]);
    expect(a.shown).toContain(" - two word word");
    expect(a.hidden).toContain(" Thinking...");
    expect(a.hidden).not.toContain("pondering");
    expect(a.noLabel.startsWith("\n Plan")).toBe(true);
    expect(a.error).toBe("\n partial\n\n Error: boom");
    expect(a.aborted).toBe("\n Operation aborted");
    expect(a.length).toBe("\n cut\n\n Response was truncated before completion.");
    // a tool call shows its own error
    expect(a.withTool).toBe("");
    // transformers run in order (a throwing one is skipped) with the surface, streaming flag and width
    expect(a.transformed).toEqual(["", "  SHOUT THIS"]);
    expect(a.seen).toEqual(["assistant", true, 36]);
    // 0.73.1's four-argument form
    expect(a.old).toContain(" Hidden thoughts");
  });

  it("UserMessageComponent: the text on the user background, padded", () => {
    expect(lines(probe.user.text).slice(0, 4)).toEqual(["", " hello there", "", " 1. first"]);
    expect(probe.user.bg).toBe(true);
    expect(probe.user.padded).toBe("   x");
  });

  it("summaries collapse and expand", () => {
    expect(probe.branch.closed).toBe("\n [branch]\n\n Branch summary (ctrl+o to expand)\n");
    expect(lines(probe.branch.open).slice(0, 6)).toEqual(["", " [branch]", "", " Branch Summary", "", " We did X. word word word word word word word word word"]);
    expect(probe.branch.bg).toBe(true);
    expect(probe.compaction.closed).toBe("\n [compaction]\n\n Compacted from 123,456 tokens (ctrl+o to expand)\n");
    expect(probe.compaction.open).toBe("\n [compaction]\n\n Compacted from 123,456 tokens\n\n Earlier work\n");
    expect(probe.skill.closed).toBe("\n [skill] deploy (ctrl+o to expand)\n");
    expect(probe.skill.open).toBe("\n [skill]\n deploy\n\n Run the steps.\n");
  });

  it("CustomMessageComponent: the default box, an extension's renderer, a throwing renderer falls back", () => {
    expect(probe.custom.text).toBe("\n\n [note]\n\n A note\n");
    expect(probe.custom.own).toEqual(["\ncustom:body:false", "\ncustom:body:true"]);
    expect(probe.custom.calls).toEqual([
      { type: "mine", expanded: false, keyText: "ctrl+o", fg: "function" },
      { type: "mine", expanded: true, keyText: "ctrl+o", fg: "function" },
    ]);
    expect(probe.custom.broken).toBe("\n\n [oops]\n\n fallback body\n");
  });
});

describe("tool components", () => {
  it("ToolExecutionComponent without a definition: name, JSON arguments, output; pending then error background", () => {
    const g = probe.toolGeneric;
    expect(g.pending).toBe('\n\n mytool\n\n {\n   "path": "a.txt",\n   "n": 3\n }\n');
    expect(g.pendingBg).toBe(true);
    expect(g.done).toBe('\n\n mytool\n\n {\n   "path": "a.txt",\n   "n": 3\n }\n red line\n second\n');
    expect(g.errorBg).toBe(true);
  });

  it("a definition without renderers: key=value header, 10 output lines collapsed, all expanded; updateArgs shows at the next render", () => {
    const f = probe.toolFallback;
    expect(f.collapsed).toContain(' other query="word word');
    expect(f.collapsed).toContain(" out 9\n ... (5 more lines, ctrl+o to expand)");
    expect(f.collapsed).not.toContain("out 10");
    expect(f.expanded).toContain("   query: word word");
    expect(f.expanded).toContain(" out 14\n");
    expect(f.afterArgs).toContain("   query: changed");
  });

  it("a built-in tool's own definition (no renderers): the chat's drawing — title per tool, a read's text only expanded, diff, errors", () => {
    const b = probe.toolBuiltIn;
    expect(b.readPending).toContain(" ○ read src/a.ts:5-16");
    expect(b.readRunning).toContain(" ● read src/a.ts:5-16");
    expect(b.readDone).toContain(" ✓ read src/a.ts:5-16");
    // as pi 1.6: the file's text is not shown until the output is expanded
    expect(b.readDone).not.toContain("line 5");
    expect(b.readOpen).toContain(" line 5\n");
    expect(b.readOpen).toContain(" line 16");
    expect(b.edit).toContain("-3 let x = 1;\n +3 let x = 2;");
    expect(b.editInverse).toBe(true);
    expect(b.bash).toMatch(/✗ bash \$ make test\n boom/);
    expect(b.bashErrorBg).toBe(true);
  });

  it("renderCall/renderResult get 1.6's render context; self-framed and failing renderers; images as text", () => {
    const c = probe.toolCustom;
    expect(c.custom).toBe("\n\n  CALL 7\n  RESULT final shut\n");
    expect(c.open).toBe("\n\n  CALL 7\n  RESULT final open\n");
    expect(c.contexts[0]).toEqual({ call: true, cwd: "/cwd", id: "call-3", started: false, argsComplete: false, partial: true });
    expect(c.contexts[2]).toEqual({ call: true, cwd: "/cwd", id: "call-3", started: true, argsComplete: true, partial: true });
    expect(c.contexts).toContainEqual({ result: true, expanded: false, partial: true, isError: false });
    expect(c.contexts.at(-1)).toEqual({ result: true, expanded: true, partial: false, isError: false, durationMs: 1500, details: { k: 1 } });
    expect(c.self).toEqual(["", "SELF DRAWN"]);
    expect(c.throwing).toBe("\n\n thrower a=1\n");
    expect(c.image).toContain(" see\n [Image: [image/png]]");
  });

  it("images: drawn inline when the terminal can (PNG), else named in the output", () => {
    expect(probe.toolImages.kitty).toBeGreaterThan(0);
    expect(probe.toolImages.text).toContain("[Image: [image/jpeg]]");
    expect(probe.toolImages.text).not.toContain("image/png");
  });

  it("BashExecutionComponent: streamed output, exit status, collapse to the last 20 lines, expand, truncation note", () => {
    const b = probe.bash;
    expect(b.running).toContain(" $ make test\n\n compiling\n linking\n");
    expect(b.running).toContain("Running... (escape/ctrl+c to cancel)");
    expect(b.failed).toContain(" (exit 2)");
    expect(b.failed).not.toContain("Running...");
    expect(b.output).toBe("compiling\nlinking\n");
    expect(b.command).toBe("make test");
    expect(b.long).toContain(" $ seq 30\n n15\n");
    expect(b.long).not.toContain(" n14\n");
    expect(b.long).toContain(" ... 11 more lines (ctrl+o to expand)");
    expect(b.long).toContain(" Output truncated. Full output: /tmp/full.log");
    expect(b.longOpen).toContain("\n n1\n n2\n");
    expect(b.longOpen).toContain(" (ctrl+o to collapse)");
    expect(b.cancelled).toContain(" (cancelled)");
    expect(b.dim).toBe(true);
  });
});

describe("FooterComponent", () => {
  it("reads the session (1.6's state.model shape) and the footer data provider", () => {
    const f = probe.footer;
    // the cwd under HOME written with ~
    expect(f.wide[0]).toBe("~/proj (feature/x) • named one");
    expect(f.wide[1]).toMatch(/^↑2\.0k ↓500 R1\.0k CH55\.6% \$0\.013 \(sub\) 12\.3%\/200k \(auto\) +\(prov\) big-model • high$/);
    expect(f.wide[1]).toHaveLength(100);
    // statuses sorted by key, on one line
    expect(f.wide[2]).toBe("first last status");
    // over 90% in the error colour, auto-compaction off
    expect(f.full[1]).toContain("95.0%/200k ");
    expect(f.full[1]).not.toContain("(auto)");
    expect(f.fullRed).toBe(true);
    expect(f.narrow[1].endsWith("...")).toBe(true);
  });

  it("reads our session shape (model, thinkingLevel), with unknown context usage", () => {
    expect(probe.footer.ours[0]).toBe("~/proj • named one");
    expect(probe.footer.ours[1]).toMatch(/^↑2\.0k ↓500 R1\.0k CH55\.6% \$0\.013 \?\/128k \(auto\) +mock-model$/);
    expect(probe.footer.ours).toHaveLength(2);
  });

  it("reads this project's AgentSession (createAgentSession): model and thinking level, branch from the provider", () => {
    expect(probe.footer.real[0]).toBe("~/proj (main)");
    expect(probe.footer.real[1]).toMatch(/^0\.0%\/64k \(auto\) +think-model • medium$/);
  });
});

describe("dialogs take keys", () => {
  it("ExtensionSelectorComponent: arrows and j/k move, enter selects, ctrl+o toggles tools, escape cancels; long lists scroll", () => {
    const s = probe.selector;
    expect(s.first).toContain("\n Pick one\n\n choose wisely\n\n → alpha\n   beta\n   gamma\n");
    expect(s.first).toContain(" ↑↓ navigate  enter select  escape/ctrl+c cancel");
    expect(s.moved).toContain(" → gamma");
    expect(s.events).toEqual([["select", "beta"], ["toggle"], ["cancel"], ["select", "opt15"]]);
    expect(s.big).toContain(" → opt15");
    expect(s.big).toContain("  (15/25)");
    expect(s.big).not.toContain("opt9\n");
  });

  it("ExtensionInputComponent: typing, enter (and \\n) submit, ctrl+c cancels, a timeout counts down and cancels", () => {
    const i = probe.input;
    expect(i.typed).toContain("\n Your name?\n\n as on the passport\n\n> naAn\n");
    expect(i.got).toEqual([["submit", "naAn"], ["submit", "nAn"], ["cancel"]]);
    expect(i.timedTitle).toBe(" Quick (1s)");
    expect(i.expire).toEqual(["cancel"]);
  });

  it("ExtensionEditorComponent: prefill, typing, ctrl+g runs the external editor (TUI stopped and restarted), enter submits, escape cancels", () => {
    const e = probe.editor;
    expect(e.first).toContain("\n Edit the note\n\n markdown ok\n");
    expect(e.first).toContain("\nfirst line\n");
    expect(e.first).toContain("ctrl+g external editor");
    expect(e.afterExternal).toContain("\nfirst line! + edited\n");
    expect(e.edits).toEqual([["submit", "first line! + edited"], ["cancel"]]);
    expect(e.stops).toEqual([2, 2]);
    // the caller's keybindings choose the external-editor key; a failing editor is reported in the dialog
    expect(e.failing).toContain(' external editor "exit 4; true" exited with 4');
  });

  it("LoginDialogComponent: auth URL opened and copyable, prompt answered, 0.73.1's showInfo(lines), device code, escape cancels", () => {
    const l = probe.login;
    expect(l.auth).toContain("\n Login to Anthropic\n\n https://auth.example.com/authorize?x=1\n Ctrl+click to open • ctrl+x to copy\n\n Sign in, then paste the code\n");
    expect(l.opened).toBe("https://auth.example.com/authorize?x=1");
    expect(l.prompting).toContain("\n Paste the code:\n e.g., abc-123\n> c0de\n (escape/ctrl+c to cancel, enter to submit)");
    expect(l.answer).toBe("c0de");
    expect(l.answered).toContain("> c0de");
    expect(l.info073).toContain("\n Login to Anthropic\n\n line one\n line two\n");
    expect(l.device).toContain("\n https://device.example.com/activate\n Ctrl+click to open\n\n Enter code: ABCD-1234\n (enter to open browser)\n");
    expect(l.rejected).toBe("Login cancelled");
    expect(l.done).toEqual([[false, "Login cancelled"]]);
    expect(l.aborted).toBe(true);
  });

  it("ArminComponent: the picture appears frame by frame, then the animation stops", () => {
    const a = probe.armin;
    expect(a.earlyInk).toBe(0);
    expect(a.finalInk).toBeGreaterThan(50);
    expect(a.message).toBe(" ARMIN SAYS HI");
    expect(a.lines).toBe(8);
    expect(a.renders).toBeGreaterThan(5);
  });
});
