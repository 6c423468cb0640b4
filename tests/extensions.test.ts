/**
 * pi extensions on the kernel, in process: each fixture extension (tests/fixtures/extensions)
 * loaded through the real loader into a kernel with the built-in tools, the permission gate
 * and the faux model (sdk/extension-harness.ts).
 */
import { describe, it, expect } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createExtensionHarness, type ExtensionHarness } from "../sdk/extension-harness.js";
import { formatToolList } from "../plugins/extensions/list-tools.js";
import type { Context } from "@mariozechner/pi-ai";
import type { ExtensionUI } from "../core/kernel/ui.js";
import { createNoopUI } from "../core/kernel/ui.js";

const FIX = resolve("tests/fixtures/extensions");
const fx = (name: string) => join(FIX, name);

async function withHarness(opts: Parameters<typeof createExtensionHarness>[0], fn: (h: ExtensionHarness) => Promise<void>) {
  const h = await createExtensionHarness(opts);
  try {
    await fn(h);
  } finally {
    await h.dispose();
  }
}

const errors = (h: ExtensionHarness) => h.diagnostics.filter((d) => d.level === "error");
const entries = (h: ExtensionHarness) => (h.session.sessionManager as any).getEntries() as any[];
const host = (h: ExtensionHarness) => h.kernel.service("extensions")!;

/** A UI for tests: dialogs answer from a queue, notifications are recorded. */
function testUi(answers: unknown[] = []) {
  const notes: string[] = [];
  const asked: string[] = [];
  const base = createNoopUI();
  const ui: ExtensionUI = {
    ...base,
    kind: "rpc",
    notify: (m: string) => void notes.push(m),
    select: async (title: string) => {
      asked.push(title);
      return answers.shift() as string | undefined;
    },
    confirm: async (title: string) => {
      asked.push(title);
      return answers.shift() as boolean;
    },
  };
  return { ui, notes, asked };
}

describe("registration: tool, command, flag, appendEntry", () => {
  it("the model calls the extension's tool; the flag's value reaches it; state survives /reload", async () => {
    await withHarness(
      {
        extensions: [fx("greeter.ts")],
        flags: { greeting: "Ahoy" },
        steps: [{ toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] }, "greeted", { toolCalls: [{ name: "greet", arguments: { name: "Bo" } }] }, "again"],
      },
      async (h) => {
        await h.prompt("greet Ada");
        expect(h.toolResults()[0]!.content).toEqual([{ type: "text", text: "Ahoy, Ada! (#1)" }]);
        expect(entries(h).filter((e) => e.type === "custom" && e.customType === "greeter-state").map((e) => e.data)).toEqual([{ count: 1 }]);
        // /reload runs the factory again (count back to 0) and session_start restores it from the entries.
        await h.prompt("/reload");
        await h.prompt("greet Bo");
        expect(h.toolResults()[1]!.content).toEqual([{ type: "text", text: "Ahoy, Bo! (#2)" }]);
        expect(errors(h)).toEqual([]);
      },
    );
  });

  it("a command runs with the command ctx and can send a custom message", async () => {
    const { ui, notes } = testUi();
    await withHarness({ extensions: [fx("greeter.ts")], ui }, async (h) => {
      await h.prompt("/greet-count");
      expect(notes).toEqual(["greetings: 0"]);
      const custom = h.session.messages.find((m: any) => m.role === "custom");
      expect(custom).toMatchObject({ customType: "greeter-count", content: "greetings: 0" });
      expect(h.kernel.commands.get("greet-count")?.source).toBe("extension");
    });
  });

  it("during the factory only registration works; actions throw until the session binds", async () => {
    let during: string | undefined;
    let after: string | undefined;
    await withHarness(
      {
        extensions: [
          (pi) => {
            try {
              pi.sendMessage({ customType: "x", content: "y", display: false });
            } catch (e) {
              during = (e as Error).message;
            }
            pi.on("session_start", () => {
              after = pi.getSessionName() ?? "no name";
            });
          },
        ],
      },
      async () => {
        expect(during).toMatch(/^Extension runtime not initialized/);
        expect(after).toBe("no name");
      },
    );
  });

  it("a module without a default factory is refused with a diagnostic naming the file", async () => {
    await withHarness({ extensions: [fx("no-factory.ts"), fx("greeter.ts")] }, async (h) => {
      const d = errors(h).find((x) => x.source.endsWith("no-factory.ts"));
      expect(d?.message).toMatch(/does not export a valid factory function/);
      expect(h.kernel.tools.has("greet")).toBe(true);
    });
  });
});

describe("event semantics", () => {
  it("input: transform and handled", async () => {
    const { ui, notes } = testUi();
    const seen: string[] = [];
    await withHarness(
      {
        extensions: [fx("shaper.ts")],
        ui,
        steps: [
          (ctx: Context) => {
            const last = ctx.messages.filter((m) => m.role === "user").at(-1)!;
            seen.push(typeof last.content === "string" ? last.content : (last.content[0] as { text: string }).text);
            return "ok";
          },
        ],
      },
      async (h) => {
        await h.prompt("ping");
        expect(notes).toEqual(["pong"]);
        expect(h.faux.callCount).toBe(0);
        await h.prompt("?short what is a kernel");
        expect(seen).toEqual(["Answer briefly: what is a kernel"]);
      },
    );
  });

  it("before_agent_start changes the system prompt and injects a message; context hides it from the model", async () => {
    let system = "";
    let sent = "";
    await withHarness(
      {
        extensions: [fx("shaper.ts")],
        steps: [
          (ctx: Context) => {
            system = ctx.systemPrompt ?? "";
            sent = JSON.stringify(ctx.messages);
            return "RAW answer";
          },
        ],
      },
      async (h) => {
        await h.prompt("hello");
        expect(system).toContain("SHAPER-SYSTEM-MARKER");
        expect(sent).not.toContain("SHAPER-EPHEMERAL-NOTE");
        // ...but the message is in the session
        expect(JSON.stringify(h.session.messages)).toContain("SHAPER-EPHEMERAL-NOTE");
        // message_end replaced the finished answer (same role), in the transcript and the file
        expect(h.lastAssistantText()).toBe("POLISHED answer");
      },
    );
  });

  it("tool_result rewrites content and details; tool_call may patch the arguments", async () => {
    await withHarness(
      {
        extensions: [fx("guard.ts"), fx("shaper.ts")],
        steps: [{ toolCalls: [{ name: "bash", arguments: { command: "say token SECRET-abc123" } }] }, "done"],
      },
      async (h) => {
        await h.prompt("run");
        const r = h.toolResults()[0]!;
        expect(r.isError).toBe(false);
        expect((r.content[0] as { text: string }).text).toContain("token [redacted]");
        expect(r.details).toEqual({ rewritten: true });
      },
    );
  });

  it("tool_call blocks: always, with a UI that says no, and without a UI", async () => {
    const steps = [
      { toolCalls: [{ name: "bash", arguments: { command: "echo forbidden" } }] },
      "a",
      { toolCalls: [{ name: "bash", arguments: { command: "echo ask-me" } }] },
      "b",
    ];
    await withHarness({ extensions: [fx("guard.ts")], steps: [...steps] }, async (h) => {
      await h.prompt("1");
      await h.prompt("2");
      const [a, b] = h.toolResults();
      expect(a).toMatchObject({ isError: true, content: [{ type: "text", text: "guard: forbidden word" }] });
      expect(b).toMatchObject({ isError: true, content: [{ type: "text", text: "guard: no UI to confirm" }] });
    });
    const { ui, asked } = testUi([false, true]);
    await withHarness({ extensions: [fx("guard.ts")], ui, steps: [...steps.slice(2), ...steps.slice(2)] }, async (h) => {
      await h.prompt("no");
      await h.prompt("yes");
      const [no, yes] = h.toolResults();
      expect(asked).toEqual(["Run it?", "Run it?"]);
      expect(no).toMatchObject({ isError: true, content: [{ type: "text", text: "guard: the user said no" }] });
      expect(yes!.isError).toBe(false);
      expect((yes!.content[0] as { text: string }).text).toContain("ask-me");
    });
  });

  it("session_before_switch {cancel: true} keeps the session; {cancel: false} does not stop it", async () => {
    await withHarness({ extensions: [fx("session-lock.ts")], flags: { "lock-session": true } }, async (h) => {
      const before = h.session;
      expect(await h.runtime.newSession()).toEqual({ cancelled: true });
      expect(h.session).toBe(before);
    });
    await withHarness({ extensions: [fx("session-lock.ts")] }, async (h) => {
      const before = h.session;
      expect(await h.runtime.newSession()).toEqual({ cancelled: false });
      expect(h.session).not.toBe(before);
    });
  });
});

describe("life cycle and ctx", () => {
  it("session_start and session_shutdown carry pi's reasons across /new and /reload", async () => {
    const log: string[] = [];
    await withHarness(
      {
        extensions: [
          (pi) => {
            pi.on("session_start", (e) => void log.push(`start:${e.reason}`));
            pi.on("session_shutdown", (e) => void log.push(`shutdown:${e.reason}`));
          },
        ],
      },
      async (h) => {
        await h.runtime.newSession();
        await h.prompt("/reload");
        // the reloaded instance logs too (same closure array)
        expect(log).toEqual(["start:startup", "shutdown:new", "start:new", "shutdown:reload", "start:reload"]);
      },
    );
  });

  it("ctx.getSystemPrompt() follows the chain during before_agent_start; a tool registered later is active at once", async () => {
    let seen = "";
    await withHarness(
      {
        extensions: [
          (pi) => {
            pi.on("before_agent_start", (e) => ({ systemPrompt: `${e.systemPrompt}\nFIRST-MARK` }));
          },
          (pi) => {
            pi.on("before_agent_start", (_e, ctx) => {
              seen = ctx.getSystemPrompt();
            });
            pi.registerCommand("add-tool", {
              handler: async () => {
                pi.registerTool({
                  name: "late",
                  label: "Late",
                  description: "registered by a command",
                  parameters: { type: "object", properties: {} } as any,
                  async execute() {
                    return { content: [{ type: "text", text: "late tool ran" }] };
                  },
                });
              },
            });
          },
        ],
        steps: [{ toolCalls: [{ name: "late", arguments: {} }] }, "ok"],
      },
      async (h) => {
        await h.prompt("/add-tool");
        expect(h.session.getActiveToolNames()).toContain("late");
        await h.prompt("use it");
        expect(seen).toMatch(/FIRST-MARK$/);
        expect(h.toolResults()[0]!.content).toEqual([{ type: "text", text: "late tool ran" }]);
      },
    );
  });

  it("without a UI, ctx.hasUI is false, display calls are quiet and a dialog answering its default is reported once", async () => {
    let hasUI: boolean | undefined;
    await withHarness(
      {
        extensions: [
          (pi) => {
            pi.on("session_start", async (_e, ctx) => {
              hasUI = ctx.hasUI;
              ctx.ui.setWidget("w", ["a"]);
              ctx.ui.setWidget("w", ["b"]);
              expect(await ctx.ui.select("pick", ["a", "b"])).toBeUndefined();
              expect((ctx.ui.theme as { fg(c: string, t: string): string }).fg("accent", "plain text")).toBe("plain text");
            });
          },
        ],
      },
      async (h) => {
        expect(hasUI).toBe(false);
        const ui = h.diagnostics.filter((d) => d.source === "<inline:1>" && /has no effect/.test(d.message)).map((d) => d.message);
        // setWidget is a quiet no-op (as in pi 1.6); a dialog that answers its default is reported.
        expect(ui).toEqual([expect.stringContaining("ctx.ui.select()")]);
      },
    );
  });
});

describe("actions", () => {
  it("sendMessage with triggerTurn and sendUserMessage start turns", async () => {
    const got: string[] = [];
    const step = (ctx: Context) => {
      got.push(JSON.stringify(ctx.messages.at(-1)));
      return "answered";
    };
    await withHarness({ extensions: [fx("messenger.ts")], steps: [step, step] }, async (h) => {
      await h.prompt("/note remember the milk");
      await h.prompt("/ask what is up");
      expect(got).toHaveLength(2);
      expect(got[0]).toContain("NOTE: remember the milk");
      expect(got[1]).toContain("ASKED: what is up");
      const users = h.session.messages.filter((m: any) => m.role === "user");
      expect(users).toHaveLength(1); // the note is a custom message, the ask a user message
    });
  });

  it("a provider with its own stream function serves its models; setModel switches to it", async () => {
    await withHarness({ extensions: [fx("provider.ts")] }, async (h) => {
      await h.prompt("/use-fixture-model");
      expect(entries(h).find((e) => e.customType === "fixture-model-switch")?.data).toEqual({ ok: true });
      expect(h.session.model?.provider).toBe("fixture-llm");
      await h.prompt("hi there");
      expect(h.lastAssistantText()).toBe("FIXTURE-PROVIDER(fixture-literal-key): hi there");
      expect(h.faux.callCount).toBe(0);
    });
  });

  it("setActiveTools from a flag and a command; the event bus reaches other extensions; a throwing listener is reported", async () => {
    await withHarness({ extensions: [fx("toolbox.ts"), fx("bus-listener.ts")], flags: { readonly: true } }, async (h) => {
      expect(h.session.getActiveToolNames()).toEqual(["read", "ls"]);
      h.session.setActiveTools(["read", "bash"]);
      await h.prompt("/readonly");
      expect(h.session.getActiveToolNames()).toEqual(["read", "ls"]);
      expect(entries(h).find((e) => e.customType === "bus-heard")?.data).toEqual({ tools: ["read", "ls"] });
      expect(errors(h).find((d) => d.hook === "events:toolbox:changed")?.error).toMatchObject({ message: "listener exploded" });
    });
  });

  it("exec runs a program and kills it at the timeout", async () => {
    let fast: any;
    let slow: any;
    await withHarness(
      {
        extensions: [
          (pi) => {
            pi.on("session_start", async () => {
              fast = await pi.exec(process.execPath, ["-e", "process.stdout.write('out'); process.stderr.write('err'); process.exit(3)"]);
              slow = await pi.exec(process.execPath, ["-e", "setTimeout(() => {}, 20000)"], { timeout: 200 });
            });
          },
        ],
      },
      async () => {
        expect(fast).toEqual({ stdout: "out", stderr: "err", code: 3, killed: false });
        expect(slow.killed).toBe(true);
      },
    );
  });
});

describe("tools: override, wrappers, conflicts, --list-tools", () => {
  it("an extension tool named like a built-in replaces it; between extensions the first wins, reported", async () => {
    const mk = (label: string) => (pi: any) =>
      pi.registerTool({
        name: "read",
        label,
        description: `read by ${label}`,
        parameters: { type: "object", properties: {} },
        async execute() {
          return { content: [{ type: "text", text: `read from ${label}` }] };
        },
      });
    await withHarness({ extensions: [mk("first"), mk("second")], steps: [{ toolCalls: [{ name: "read", arguments: {} }] }, "ok"] }, async (h) => {
      await h.prompt("read");
      expect(h.toolResults()[0]!.content).toEqual([{ type: "text", text: "read from first" }]);
      const conflict = h.diagnostics.find((d) => d.level === "warning" && /tool "read"/.test(d.message));
      expect(conflict?.source).toBe("<inline:2>");
      expect(h.diagnostics.some((d) => d.level === "info" && /tool "read" from <inline:1> replaces the one from tools/.test(d.message))).toBe(true);
    });
  });

  it("wrapTool decorates a built-in; --list-tools shows source and wrappers", async () => {
    await withHarness({ extensions: [fx("toolbox.ts"), fx("greeter.ts")], steps: [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, "ok"] }, async (h) => {
      await h.prompt("go");
      expect((h.toolResults()[0]!.content[0] as { text: string }).text).toBe("[toolbox] ");
      const list = formatToolList(h.kernel, { base: host(h).baseToolSources });
      expect(list).toMatch(/^bash\s+built-in\s+.*toolbox\.ts$/m);
      expect(list).toMatch(/^greet\s+.*greeter\.ts\s+-$/m);
    });
  });
});

/** The events tests/fixtures/extensions/thrower.ts throws in. */
const THROWER_EVENTS = [
  "session_start", "input", "before_agent_start", "agent_start", "turn_start", "context", "message_start", "message_update",
  "message_end", "tool_execution_start", "tool_call", "tool_result", "tool_execution_end", "turn_end", "agent_end",
  "agent_settled", "session_shutdown", "session_before_switch", "session_switch", "model_select",
];

describe("error isolation", () => {
  it("a handler throwing in each event is reported with the extension path and the event; the run completes", async () => {
    await withHarness(
      {
        extensions: [fx("thrower.ts")],
        steps: [{ toolCalls: [{ name: "bash", arguments: { command: "echo block" } }, { name: "bash", arguments: { command: "echo ran" } }] }, "final answer"],
      },
      async (h) => {
        await h.prompt("go");
        expect(h.lastAssistantText()).toBe("final answer");
        // the throwing tool_call handler blocked its tool (fail closed); the other call ran
        const [r, ran] = h.toolResults();
        expect(ran).toMatchObject({ isError: false, content: [{ type: "text", text: "ran\n" }] });
        expect(r!.isError).toBe(true);
        expect((r!.content[0] as { text: string }).text).toMatch(/tool_call handler .*thrower\.ts.* failed: (Error: )?boom-tool_call/);
        await h.runtime.newSession();
        await h.session.setModel(h.session.model!);
        await h.dispose();
        const reported = new Set(errors(h).filter((d) => d.source === fx("thrower.ts")).map((d) => d.hook));
        for (const e of THROWER_EVENTS) expect([e, reported.has(e)]).toEqual([e, true]);
        const one = errors(h).find((d) => d.hook === "turn_start")!;
        expect((one.error as Error).message).toBe("boom-turn_start");
      },
    );
  });
});

describe("discovery and trust", () => {
  it("project extensions load only in a trusted project; the refusal names what was skipped", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-ext-trust-"));
    try {
      const ext = join(root, ".pi", "extensions");
      mkdirSync(ext, { recursive: true });
      writeFileSync(join(ext, "local.ts"), `export default function (pi) { pi.registerCommand("local-cmd", { handler: async () => {} }); }\n`);
      await withHarness({ cwd: root, flags: { "no-extensions": false } }, async (h) => {
        expect(h.kernel.commands.has("local-cmd")).toBe(false);
        const d = h.diagnostics.find((x) => x.level === "warning" && /not trusted/.test(x.message));
        expect(d?.message).toContain(join(".pi", "extensions", "local.ts"));
        // Trusting it (the TUI's prompt) loads it at once.
        h.kernel.service("project-trust")!.trust(root, { persist: false });
        await host(h).reload();
        expect(h.kernel.commands.has("local-cmd")).toBe(true);
      });
      await withHarness({ cwd: root, flags: { "no-extensions": false, trust: true } }, async (h) => {
        expect(h.kernel.commands.has("local-cmd")).toBe(true);
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
