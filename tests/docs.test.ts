/**
 * The documentation stays true to the code: every relative link in README.md and docs/ points at
 * a file that exists, docs/rpc.md names every RPC command the schema has, and docs/sdk.md names
 * every SDK function the package entry exports.
 */
import { describe, it, expect } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { buildRpcSchema } from "../modes/rpc/commands.js";

const ROOT = resolve(".");
const files = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`), "examples/README.md"];

describe("docs", () => {
  it("relative links resolve", () => {
    const broken: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), "utf8");
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(resolve(dirname(join(ROOT, f)), target))) broken.push(`${f}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(["docs/sdk.md", "docs/extensions.md", "docs/plugins.md", "docs/rpc.md", "docs/settings.md"]));
  });

  it("docs/rpc.md names every command of the schema and points at `pi rpc-schema`", () => {
    const rpc = readFileSync(join(ROOT, "docs", "rpc.md"), "utf8");
    const commands = Object.keys((buildRpcSchema() as { $defs: { commands: Record<string, unknown> } }).$defs.commands);
    expect(commands.length).toBeGreaterThan(30);
    expect(commands.filter((c) => !rpc.includes(`\`${c}\``))).toEqual([]);
    expect(rpc).toContain("pi rpc-schema");
  });

  it("docs/sdk.md names every SDK function and class of the package entry", async () => {
    const sdk = readFileSync(join(ROOT, "docs", "sdk.md"), "utf8");
    const entry = await import("../sdk/index.js");
    const names = ["createAgentSession", "createAgentSessionServices", "createAgentSessionFromServices", "createAgentSessionRuntime", "runPrintMode", "runRpcMode", "runInteractiveMode", "createCli", "runBinary", "builtinPlugins", "SdkSessionRuntime", "SdkAgentSession", "SessionManager", "SettingsManager", "AuthStorage", "ModelRegistry", "RpcClient", "getAgentDir", "createExtensionHarness", "FauxModel", "createFauxPlugin"];
    for (const n of names) expect(typeof (entry as Record<string, unknown>)[n]).toBe("function");
    expect(names.filter((n) => !sdk.includes(n))).toEqual([]);
  });
});
