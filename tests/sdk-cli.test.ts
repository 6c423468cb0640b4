/**
 * createCli() for a team CLI, in process: its own name decides the project folder (`.mycli/`),
 * the agent dir variable (MYCLI_CODING_AGENT_DIR → extensions there), and inline extensions come
 * from extensionFactories; builtinPlugins() is the list `pi` is made of.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createCli } from "../sdk/main.js";
import { builtinPlugins } from "../sdk/builtins.js";
import type { ExtensionAPI } from "../plugins/extensions/types.js";

const root = mkdtempSync(join(tmpdir(), "pi-sdk-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sink() {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

const toolExt = (name: string) => `export default function (pi: any) {
  pi.registerTool({ name: "${name}", description: "${name}", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) });
}
`;

describe("createCli for a team", () => {
  it("uses .mycli/, MYCLI_CODING_AGENT_DIR and inline extensions; pi's folders are not read", async () => {
    const agentDir = join(root, "mycli-agent");
    const piAgentDir = join(root, "pi-agent");
    const cwd = join(root, "project");
    for (const d of [join(agentDir, "extensions"), join(piAgentDir, "extensions"), join(cwd, ".mycli", "extensions"), join(cwd, ".pi", "extensions")]) mkdirSync(d, { recursive: true });
    writeFileSync(join(agentDir, "extensions", "global.ts"), toolExt("from_mycli_agent_dir"));
    writeFileSync(join(cwd, ".mycli", "extensions", "project.ts"), toolExt("from_mycli_project"));
    writeFileSync(join(piAgentDir, "extensions", "pi.ts"), toolExt("from_pi_agent_dir"));
    writeFileSync(join(cwd, ".pi", "extensions", "pi.ts"), toolExt("from_pi_project"));
    const inline = (pi: ExtensionAPI) => pi.registerTool({ name: "from_inline", label: "x", description: "x", parameters: { type: "object", properties: {} } as any, execute: async () => ({ content: [], details: {} }) });

    const cli = createCli({ name: "mycli", version: "2.3.4", plugins: builtinPlugins(), extensionFactories: [inline] });
    expect(cli.app).toMatchObject({ name: "mycli", configDir: ".mycli", agentDirEnv: "MYCLI_CODING_AGENT_DIR" });
    const env = { MYCLI_CODING_AGENT_DIR: agentDir, PI_CODING_AGENT_DIR: piAgentDir, PI_OFFLINE: "1" };

    const v = sink();
    expect(await cli.run(["--version"], { stdout: v.stream, stderr: v.stream, cwd, env })).toBe(0);
    expect(v.text()).toBe("2.3.4\n");

    const out = sink();
    const err = sink();
    expect(await cli.run(["--trust", "--list-tools"], { stdout: out.stream, stderr: err.stream, cwd, env })).toBe(0);
    for (const name of ["from_mycli_agent_dir", "from_mycli_project", "from_inline", "read", "bash"]) expect(out.text()).toContain(name);
    expect(out.text()).not.toContain("from_pi_");
    expect(err.text()).toBe("");
  });
});
