/**
 * The resources plugin through a test kernel: the system prompt it builds, discovery order,
 * commands, expansion in AgentSession.prompt, the resources_discover hook and reload.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "@mariozechner/pi-ai";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import type { ExtensionUI } from "../../core/kernel/index.js";
import type { Settings, ToolDefinition } from "../../core/kernel/index.js";
import resources from "./index.js";

type Env = Awaited<ReturnType<typeof createTestKernel>>;
let env: Env | undefined;
afterEach(() => {
  env?.cleanup();
  env = undefined;
});

const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  description: `${name} tool`,
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: "ok" }] }),
  ...extra,
});

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}
const skillMd = (name: string, description: string, body = "Steps.") => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

async function start(opts: { settings?: Partial<Settings>; flags?: Record<string, unknown>; prepare?: (e: { cwd: string; agentDir: string; root: string }) => void; tools?: ToolDefinition[]; activeTools?: string[]; steps?: any[] } = {}) {
  env = await createTestKernel({
    plugins: [resources],
    settings: opts.settings,
    tools: opts.tools ?? [tool("read", { promptSnippet: "Read files", promptGuidelines: ["Read before editing"] }), tool("bash")],
    activeTools: opts.activeTools,
    steps: opts.steps,
  });
  const root = join(env.cwd, "..");
  if (opts.flags) env.kernel.provide("argv", { flags: opts.flags, positionals: [], unknown: [] }, "cli");
  opts.prepare?.({ cwd: env.cwd, agentDir: env.agentDir, root });
  return env;
}

describe("system prompt", () => {
  it("holds the head, tools, append text, context files in order, skills, date and cwd", async () => {
    const e = await start({
      prepare: ({ cwd, agentDir, root }) => {
        write(join(agentDir, "AGENTS.md"), "GLOBAL-CONTEXT");
        write(join(root, "AGENTS.md"), "OUTER-CONTEXT");
        write(join(cwd, "CLAUDE.md"), "PROJECT-CONTEXT");
        write(join(agentDir, "APPEND_SYSTEM.md"), "GLOBAL-APPEND");
        write(join(cwd, ".pi", "APPEND_SYSTEM.md"), "PROJECT-APPEND");
        write(join(agentDir, "skills", "lint", "SKILL.md"), skillMd("lint", "Runs the linter"));
      },
    });
    e.session.appendSystemPrompt = "FLAG-APPEND";
    const prompt = await e.session.getSystemPrompt();
    const order = ["You are an expert coding assistant", "- read: Read files", "Read before editing", "PROJECT-APPEND", "FLAG-APPEND", "# Project Context", "GLOBAL-CONTEXT", "OUTER-CONTEXT", "PROJECT-CONTEXT", "<available_skills>", "<name>lint</name>", "Current date:", `Current working directory: ${e.cwd}`];
    let at = -1;
    for (const part of order) {
      const i = prompt.indexOf(part);
      expect({ part, found: i > at }).toEqual({ part, found: true });
      at = i;
    }
    // The project's APPEND_SYSTEM.md shadows the global one.
    expect(prompt).not.toContain("GLOBAL-APPEND");
    expect(prompt).toContain(`## ${join(e.cwd, "CLAUDE.md")}`);
    expect(prompt).toMatch(/Current date: \d{4}-\d{2}-\d{2}\n/);
    expect(prompt).toContain(join(e.agentDir, "skills", "lint", "SKILL.md"));
  });

  it("SYSTEM.md replaces the default head, and --system-prompt replaces SYSTEM.md", async () => {
    const e = await start({
      prepare: ({ cwd, agentDir }) => {
        write(join(agentDir, "SYSTEM.md"), "GLOBAL-SYSTEM");
        write(join(cwd, ".pi", "SYSTEM.md"), "PROJECT-SYSTEM");
      },
    });
    let prompt = await e.session.getSystemPrompt();
    expect(prompt.startsWith("PROJECT-SYSTEM")).toBe(true);
    expect(prompt).not.toContain("You are an expert");
    expect(prompt).toContain("- read: Read files");
    e.session.customSystemPrompt = "CUSTOM-HEAD";
    e.session.invalidateSystemPrompt();
    prompt = await e.session.getSystemPrompt();
    expect(prompt.startsWith("CUSTOM-HEAD")).toBe(true);
    expect(prompt).not.toContain("PROJECT-SYSTEM");
  });

  it("leaves the skills block out when the read tool is not active, and context files out with --no-context-files", async () => {
    const e = await start({
      activeTools: ["bash"],
      flags: { "no-context-files": true },
      prepare: ({ cwd, agentDir }) => {
        write(join(cwd, "AGENTS.md"), "PROJECT-CONTEXT");
        write(join(agentDir, "skills", "lint", "SKILL.md"), skillMd("lint", "Runs the linter"));
      },
    });
    const prompt = await e.session.getSystemPrompt();
    expect(prompt).not.toContain("available_skills");
    expect(prompt).not.toContain("PROJECT-CONTEXT");
    expect(e.kernel.service("resources")!.skills().map((s) => s.name)).toEqual(["lint"]);
  });
});

describe("discovery", () => {
  it("prefers project skills over global ones and reports the collision", async () => {
    const e = await start({
      prepare: ({ cwd, agentDir }) => {
        write(join(agentDir, "skills", "deploy", "SKILL.md"), skillMd("deploy", "global deploy"));
        write(join(cwd, ".pi", "skills", "deploy", "SKILL.md"), skillMd("deploy", "project deploy"));
        write(join(cwd, ".agents", "skills", "review", "SKILL.md"), skillMd("review", "from .agents"));
        write(join(cwd, ".agents", "skills", "loose.md"), "---\ndescription: ignored in .agents\n---\n");
      },
    });
    const res = e.kernel.service("resources")!;
    await res.ready();
    const skills = res.skills();
    expect(skills.map((s) => `${s.name}:${s.description}:${s.location}`)).toEqual(["deploy:project deploy:project", "review:from .agents:project"]);
    const collision = e.kernel.diagnostics.list().find((d) => d.message.includes('"deploy" is taken'));
    expect(collision?.source).toBe(join(e.agentDir, "skills", "deploy", "SKILL.md"));
  });

  it("--no-skills drops discovered skills but keeps --skill paths; settings patterns disable single files", async () => {
    const e = await start({
      settings: { skills: ["../extra", "-../extra/off/SKILL.md"], prompts: ["!prompts/secret.md"] } as Partial<Settings>,
      flags: { "no-skills": false, skill: ["cli-skill"], "prompt-template": ["tpl/one.md"] },
      prepare: ({ cwd, agentDir, root }) => {
        write(join(root, "extra", "on", "SKILL.md"), skillMd("on", "from settings"));
        write(join(root, "extra", "off", "SKILL.md"), skillMd("off", "disabled by a -path pattern"));
        write(join(cwd, "cli-skill", "SKILL.md"), skillMd("cli-skill", "from --skill"));
        write(join(agentDir, "prompts", "secret.md"), "hidden by !pattern");
        write(join(agentDir, "prompts", "visible.md"), "shown");
        write(join(cwd, "tpl", "one.md"), "from --prompt-template");
      },
    });
    const res = e.kernel.service("resources")!;
    await res.ready();
    expect(res.skills().map((s) => s.name).sort()).toEqual(["cli-skill", "on"]);
    expect(res.promptTemplates().map((t) => t.name).sort()).toEqual(["one", "visible"]);

    e.kernel.provide("argv", { flags: { "no-skills": true, skill: ["cli-skill"] }, positionals: [], unknown: [] }, "cli");
    await res.reload();
    expect(res.skills().map((s) => s.name)).toEqual(["cli-skill"]);
  });

  it("adds paths from resources_discover taps, on start-up and again on reload", async () => {
    const reasons: string[] = [];
    const e = await start({
      prepare: ({ root }) => {
        write(join(root, "ext-skills", "ext-skill", "SKILL.md"), skillMd("ext-skill", "from an extension"));
        write(join(root, "ext-prompts", "ext-prompt.md"), "Extension template $1");
        write(join(root, "ext-themes", "mine.json"), "{}");
      },
    });
    const root = join(e.cwd, "..");
    e.kernel.scope("ext").on("resources_discover", (ev) => {
      reasons.push(ev.reason);
      ev.results.push({ source: "ext", skillPaths: [join(root, "ext-skills")], promptPaths: [join(root, "ext-prompts")], themePaths: [join(root, "ext-themes", "mine.json")] });
    });
    const res = e.kernel.service("resources")!;
    await res.ready();
    expect(res.skills().map((s) => s.name)).toEqual(["ext-skill"]);
    expect(res.promptTemplates().map((t) => t.name)).toEqual(["ext-prompt"]);
    expect(e.kernel.service("theme-paths")!()).toEqual([join(root, "ext-themes", "mine.json")]);
    await e.kernel.service("reload-resources")!();
    expect(reasons).toEqual(["startup", "reload"]);
  });

  it("takes package resources from the package-resources service", async () => {
    const e = await start({
      prepare: ({ root }) => {
        write(join(root, "pkg", "skills", "pkg-skill", "SKILL.md"), skillMd("pkg-skill", "from a package"));
        write(join(root, "pkg", "prompts", "pkg-prompt.md"), "package prompt");
      },
    });
    const root = join(e.cwd, "..");
    let calls = 0;
    e.kernel.provide("package-resources", async () => {
      calls++;
      return { extensions: [], skills: [join(root, "pkg", "skills", "pkg-skill", "SKILL.md")], prompts: [join(root, "pkg", "prompts", "pkg-prompt.md")], themes: [] } as never;
    }, "packages");
    const res = e.kernel.service("resources")!;
    await res.ready();
    expect(res.skills().map((s) => `${s.name}:${s.location}`)).toEqual(["pkg-skill:path"]);
    expect(res.promptTemplates().map((t) => t.name)).toEqual(["pkg-prompt"]);
    expect(calls).toBe(1);
  });
});

describe("commands and expansion", () => {
  it("registers templates and skills as commands and expands them in prompts", async () => {
    const seen: Context[] = [];
    const e = await start({
      steps: [
        (ctx: Context) => {
          seen.push(ctx);
          return "done";
        },
        (ctx: Context) => {
          seen.push(ctx);
          return "done again";
        },
      ],
      prepare: ({ cwd, agentDir }) => {
        write(join(cwd, ".pi", "prompts", "fix.md"), "---\ndescription: Fix an issue\nargument-hint: <issue>\n---\nFix issue $1 in ${@:2}.");
        write(join(agentDir, "skills", "deploy", "SKILL.md"), skillMd("deploy", "Deploys the app", "Run deploy.sh"));
      },
    });
    await e.kernel.service("resources")!.ready();
    const fix = e.kernel.commands.entry("fix")!;
    expect(fix.value).toMatchObject({ source: "prompt", location: "project", path: join(e.cwd, ".pi", "prompts", "fix.md") });
    expect(fix.value.description).toBe("Fix an issue");
    expect(e.kernel.commands.get("skill:deploy")).toMatchObject({ source: "skill", location: "user", description: "Deploys the app" });

    await e.session.prompt(`/fix 42 "src/a.ts" b.ts`);
    const userText = (ctx: Context) => JSON.stringify(ctx.messages.filter((m) => m.role === "user").at(-1)!.content);
    expect(userText(seen[0]!)).toContain("Fix issue 42 in src/a.ts b.ts.");
    await e.session.prompt("/skill:deploy to prod");
    const t = userText(seen[1]!);
    expect(t).toContain('<skill name=\\"deploy\\"');
    expect(t).toContain("Run deploy.sh");
    expect(t).toContain("to prod");
  });

  it("does not register skill commands when enableSkillCommands is false, and /reload picks up new files", async () => {
    const e = await start({
      settings: { enableSkillCommands: false } as Partial<Settings>,
      prepare: ({ agentDir }) => write(join(agentDir, "skills", "a", "SKILL.md"), skillMd("a", "first")),
    });
    const res = e.kernel.service("resources")!;
    await res.ready();
    expect(e.kernel.commands.has("skill:a")).toBe(false);
    expect(res.skills()).toHaveLength(1);
    // session_start registers /reload when nobody else did.
    await e.kernel.hooks.session_start.promise({ type: "session_start", reason: "startup" });
    expect(e.kernel.commands.get("reload")?.source).toBe("builtin");
    write(join(e.agentDir, "prompts", "later.md"), "added after start-up");
    write(join(e.cwd, "AGENTS.md"), "LATE-CONTEXT");
    const before = await e.session.getSystemPrompt();
    expect(before).not.toContain("LATE-CONTEXT");
    const notes: string[] = [];
    await e.kernel.commands.get("reload")!.handler("", { ...e.session.contextFactory(), ui: { notify: (m: string) => notes.push(m) } as unknown as ExtensionUI });
    expect(e.kernel.commands.get("later")?.source).toBe("prompt");
    expect(await e.session.getSystemPrompt()).toContain("LATE-CONTEXT");
    expect(notes[0]).toContain("Reloaded");
  });

  it("leaves /reload to another plugin that registered it", async () => {
    const e = await start();
    const mine = { name: "reload", source: "extension" as const, handler: () => undefined };
    e.kernel.scope("extensions").registerCommand(mine);
    await e.kernel.hooks.session_start.promise({ type: "session_start", reason: "startup" });
    expect(e.kernel.commands.get("reload")).toBe(mine);
    expect(e.kernel.diagnostics.list().some((d) => d.message.includes('"reload"'))).toBe(false);
    // That plugin's reload ends with session_start {reason: "reload"}: resources are read again.
    write(join(e.cwd, ".pi", "prompts", "fresh.md"), "new template");
    expect(e.kernel.commands.has("fresh")).toBe(false);
    await e.kernel.hooks.session_start.promise({ type: "session_start", reason: "reload" });
    expect(e.kernel.commands.get("fresh")?.source).toBe("prompt");
  });
});
