import { describe, it, expect } from "@jest/globals";
import { CORE_FLAGS, parseArgs, renderHelp } from "./args.js";

describe("argument parsing", () => {
  it("parses the reference flags", () => {
    const p = parseArgs(
      ["-p", "--mode", "json", "--model", "openai/gpt:high", "-e", "a.ts", "-e", "b.ts", "--no-session", "--tools", "read,ls", "hello", "world"],
      CORE_FLAGS,
    );
    expect(p.flags.print).toBe(true);
    expect(p.flags.mode).toBe("json");
    expect(p.flags.model).toBe("openai/gpt:high");
    expect(p.flags.extension).toEqual(["a.ts", "b.ts"]);
    expect(p.flags["no-session"]).toBe(true);
    expect(p.flags.tools).toBe("read,ls");
    expect(p.positionals).toEqual(["hello", "world"]);
  });

  it("an unknown flag never swallows the following message", () => {
    const p = parseArgs(["--frobnicate", "fix the bug", "-p"], CORE_FLAGS);
    expect(p.unknown).toEqual(["--frobnicate"]);
    expect(p.positionals).toEqual(["fix the bug"]);
    expect(p.flags.print).toBe(true);
  });

  it("knows flags registered by plugins in pass 2", () => {
    const flags = [...CORE_FLAGS, { name: "plan", type: "boolean" as const, description: "plan mode" }, { name: "budget", type: "string" as const, description: "b" }];
    const p = parseArgs(["--plan", "--budget", "5", "go"], flags);
    expect(p.flags.plan).toBe(true);
    expect(p.flags.budget).toBe("5");
    expect(p.positionals).toEqual(["go"]);
    expect(p.unknown).toEqual([]);
  });

  it("keeps words after -- as messages, even with dashes", () => {
    const p = parseArgs(["-p", "--", "-not a flag"], CORE_FLAGS);
    expect(p.positionals).toEqual(["-not a flag"]);
  });

  it("renders help from the registries", async () => {
    const text = await renderHelp({
      name: "pi", version: "1.2.3",
      flags: [...CORE_FLAGS, { name: "plan", type: "boolean", description: "Enter plan mode", source: "ext.ts" }],
      subcommands: [{ name: "install", description: "Install a package", usage: "install <source>" }],
      envVar: "PI_CODING_AGENT_DIR",
    });
    expect(text).toContain("pi 1.2.3");
    expect(text).toContain("-p, --print");
    expect(text).toContain("--plan");
    expect(text).toContain("Enter plan mode");
    expect(text).toContain("install <source>");
    expect(text).toContain("PI_CODING_AGENT_DIR");
  });
});

describe("short flags", () => {
  it("multi-letter aliases (-ne, -ns, -np, -nc) are whole flags, not letter groups", () => {
    const flags = [...CORE_FLAGS, { name: "no-context-files", alias: "nc", type: "boolean" as const, description: "x" }];
    const p = parseArgs(["-nc", "-ns", "keep this message", "-ne", "-np"], flags);
    expect(p.flags["no-context-files"]).toBe(true);
    expect(p.flags["no-skills"]).toBe(true);
    expect(p.flags["no-extensions"]).toBe(true);
    expect(p.flags["no-prompt-templates"]).toBe(true);
    expect(p.flags.continue).toBeUndefined();
    expect(p.positionals).toEqual(["keep this message"]);
  });

  it("groups of known one-letter booleans still work; unknown groups are reported, not split", () => {
    const p = parseArgs(["-pc", "-xyz", "message"], CORE_FLAGS);
    expect(p.flags.print).toBe(true);
    expect(p.flags.continue).toBe(true);
    expect(p.unknown).toEqual(["-xyz"]);
    expect(p.positionals).toEqual(["message"]);
  });
});
