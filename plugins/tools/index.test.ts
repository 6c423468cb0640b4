import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineApp, Kernel, PluginHost, SettingsManager } from "../../core/kernel/index.js";
import toolsPlugin, { ALL_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, createAllToolDefinitions, createCodingTools, createReadOnlyTools, createToolDefinition } from "./index.js";

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-tools-plugin-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function kernelWith(settings: Record<string, unknown> = {}): Promise<Kernel> {
  const kernel = new Kernel({ app: defineApp("pi", "0.0.0-test"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory(settings as any) });
  await new PluginHost(kernel).load([{ manifest: toolsPlugin, origin: "builtin:tools", builtin: true }]);
  return kernel;
}
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? "").join("");

describe("tools plugin", () => {
  it("names the default and the complete tool sets like pi", () => {
    expect(DEFAULT_ACTIVE_TOOLS).toEqual(["read", "bash", "edit", "write"]);
    expect(ALL_TOOL_NAMES).toEqual(["read", "bash", "edit", "write", "grep", "find", "ls"]);
  });

  it("registers all seven tools, each with a schema, a prompt snippet and guidelines", async () => {
    const kernel = await kernelWith();
    expect(kernel.diagnostics.list()).toEqual([]);
    expect(kernel.tools.names().sort()).toEqual([...ALL_TOOL_NAMES].sort());
    for (const d of kernel.tools.describe()) expect(d.source).toBe("tools");
    for (const name of ALL_TOOL_NAMES) {
      const tool = kernel.tools.get(name)!;
      expect(tool.parameters).toMatchObject({ type: "object" });
      expect(typeof tool.description).toBe("string");
      expect(tool.promptSnippet).toBeTruthy();
      expect(tool.promptGuidelines?.length).toBeGreaterThan(0);
    }
  });

  it("uses the parameter names of pi", async () => {
    const kernel = await kernelWith();
    const props = (n: string) => Object.keys((kernel.tools.get(n)!.parameters as any).properties).sort();
    const required = (n: string) => ((kernel.tools.get(n)!.parameters as any).required ?? []).sort();
    expect(props("read")).toEqual(["limit", "offset", "path"]);
    expect(required("read")).toEqual(["path"]);
    expect(props("bash")).toEqual(["command", "timeout"]);
    expect(props("edit")).toEqual(["edits", "path"]);
    expect(Object.keys((kernel.tools.get("edit")!.parameters as any).properties.edits.items.properties).sort()).toEqual(["newText", "oldText"]);
    expect(props("write")).toEqual(["content", "path"]);
    expect(props("grep")).toEqual(["context", "glob", "ignoreCase", "limit", "literal", "path", "pattern"]);
    expect(required("grep")).toEqual(["pattern"]);
    expect(props("find")).toEqual(["limit", "path", "pattern"]);
    expect(props("ls")).toEqual(["limit", "path"]);
  });

  it("runs tools in the kernel's working folder", async () => {
    const kernel = await kernelWith();
    await kernel.tools.get("write")!.execute("1", { path: "made.txt", content: "made" }, undefined, undefined, undefined);
    expect(readFileSync(join(dir, "made.txt"), "utf8")).toBe("made");
    expect(text(await kernel.tools.get("bash")!.execute("2", { command: "pwd" }, undefined, undefined, undefined))).toBe(`${dir}\n`);
  });

  it("takes shellPath and shellCommandPrefix from the settings when a command runs", async () => {
    const kernel = await kernelWith({ shellPath: "/bin/sh", shellCommandPrefix: "PREFIXED=yes" });
    const bash = kernel.tools.get("bash")!;
    expect(text(await bash.execute("1", { command: 'echo "$0 $PREFIXED"' }, undefined, undefined, undefined))).toBe("/bin/sh yes\n");
    kernel.settings.setOverride("shellCommandPrefix", "PREFIXED=changed");
    expect(text(await bash.execute("2", { command: "echo $PREFIXED" }, undefined, undefined, undefined))).toBe("changed\n");
  });

  it("offers the factory helpers", () => {
    expect(createCodingTools(dir).map((t) => t.name)).toEqual(["read", "bash", "edit", "write"]);
    expect(createReadOnlyTools(dir).map((t) => t.name)).toEqual(["read", "grep", "find", "ls"]);
    expect(Object.keys(createAllToolDefinitions(dir))).toEqual([...ALL_TOOL_NAMES]);
    expect(() => createToolDefinition("nope" as any, dir)).toThrow(/Unknown tool "nope"/);
  });
});
