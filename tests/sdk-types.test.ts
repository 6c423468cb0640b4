/**
 * The package's types work for a TypeScript consumer: a small program importing "pi-kernel" and
 * "pi-kernel/sdk" (resolved through package.json "exports" to dist/sdk/index.d.ts) type-checks
 * with tsc under NodeNext, and misuse is a type error (the types are not `any`). Needs a fresh build.
 */
import { describe, it, expect, afterAll } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/e2e.js";

const dir = mkdtempSync(join(tmpdir(), "pi-sdk-types-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONSUMER = `
import {
  builtinPlugins,
  createAgentSession,
  createAgentSessionRuntime,
  createCli,
  createReadTool,
  defineTool,
  runPrintMode,
  SessionManager,
  SettingsManager,
  Type,
  type AgentSessionEvent,
  type CreateAgentSessionResult,
  type ExtensionAPI,
  type ExtensionFactory,
} from "pi-kernel";
import { createAgentSessionServices, createAgentSessionFromServices, type SdkSessionRuntime } from "pi-kernel/sdk";

const tool = defineTool({
  name: "stamp",
  label: "Stamp",
  description: "Stamp a text",
  parameters: Type.Object({ text: Type.String() }),
  async execute(_id, params) {
    const text: string = params.text;
    return { content: [{ type: "text", text }], details: {} };
  },
});

const ext: ExtensionFactory = (pi: ExtensionAPI) => {
  pi.on("session_start", async (event, ctx) => {
    const reason: string = event.reason;
    ctx.ui.notify(reason, "info");
  });
};

export async function main(): Promise<number> {
  const result: CreateAgentSessionResult = await createAgentSession({
    cwd: "/tmp",
    settings: { compaction: { enabled: false } },
    customTools: [tool, createReadTool("/tmp")],
    tools: ["read", "stamp"],
    extensionFactories: [ext],
    sessionManager: SessionManager.inMemory("/tmp"),
    model: "faux/faux-1",
    thinkingLevel: "low",
  });
  result.session.subscribe((event: AgentSessionEvent) => {
    if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
  });
  await result.session.bindExtensions({ onError: (e) => console.error(e.extensionPath, e.error) });
  await result.session.prompt("hi");
  const services = await createAgentSessionServices({ cwd: "/tmp", settingsManager: SettingsManager.inMemory() });
  const other = await createAgentSessionFromServices({ services });
  const rt: SdkSessionRuntime = await createAgentSessionRuntime({ services });
  await rt.newSession();
  await other.runtime.dispose();
  const cli = createCli({ name: "mycli", version: "1.0.0", plugins: builtinPlugins(), extensionFactories: [ext] });
  await cli.run(["--version"]);
  // @ts-expect-error thinkingLevel is a ThinkingLevel
  await createAgentSession({ thinkingLevel: "extreme" });
  // @ts-expect-error the mode is "text" or "json"
  await runPrintMode(rt, { mode: "xml" });
  return runPrintMode(rt, { mode: "json", initialMessage: "hello" });
}
`;

describe("package types for consumers", () => {
  it("a consumer importing pi-kernel and pi-kernel/sdk type-checks under NodeNext", () => {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "pi-kernel"), "dir");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
    writeFileSync(join(dir, "consumer.ts"), CONSUMER);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: ["node"], typeRoots: [join(ROOT, "node_modules", "@types")] },
        files: ["consumer.ts"],
      }),
    );
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { cwd: dir, encoding: "utf8", timeout: 170_000 });
    expect([r.status, r.stdout + r.stderr]).toEqual([0, ""]);
  });
});
