/**
 * The published JSON Schemas (schemas/*.schema.json): generated from the TypeBox definitions
 * (scripts/gen-schemas.mjs), a full settings.json and models.json validate, bad ones fail naming
 * the key.
 */
import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Value } from "typebox/value";
import { schemaFiles } from "../core/stores/schema-files.js";
import { ROOT } from "./helpers/e2e.js";

const published = (name: string) => JSON.parse(readFileSync(join(ROOT, "schemas", name), "utf8"));
const errors = (schema: object, value: unknown) => [...Value.Errors(schema as never, value)].map((e) => `${e.instancePath} ${e.message}`);

/** Every key docs/settings.md lists, with a valid value. */
const FULL_SETTINGS = {
  $schema: "./node_modules/pi-kernel/schemas/settings.schema.json",
  defaultProvider: "anthropic",
  defaultModel: "claude-sonnet-4-5",
  defaultThinkingLevel: "medium",
  modelThinkingLevels: { "anthropic/claude-sonnet-4-5": "high", "openai/gpt-5": "max" },
  thinkingBudgets: { minimal: 1024, low: 4096, medium: 10240, high: 32768 },
  enabledModels: ["claude-*", "gpt-5:high"],
  hideThinkingBlock: false,
  theme: "dark",
  quietStartup: "header",
  doubleEscapeAction: "tree",
  treeFilterMode: "default",
  compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
  branchSummary: { reserveTokens: 16384, skipPrompt: false },
  retry: { enabled: true, maxRetries: 3, baseDelayMs: 2000, maxAgentDelayMs: 60000, provider: { timeoutMs: 600000, maxRetries: 0, maxRetryDelayMs: 60000 } },
  steeringMode: "one-at-a-time",
  followUpMode: "all",
  transport: "sse",
  httpProxy: "http://proxy.example:3128",
  httpIdleTimeoutMs: "disabled",
  terminal: { showImages: true, imageWidthCells: 60, clearOnShrink: false },
  images: { autoResize: true, blockImages: false },
  shellPath: "/bin/bash",
  shellCommandPrefix: "set -e",
  npmCommand: ["npm"],
  sessionDir: "~/sessions",
  extensionHandlerTimeoutMs: 600000,
  rpc: { maxLineLength: 1048576 },
  markdown: { codeBlockIndent: "  " },
  packages: ["npm:@scope/pkg", { source: "git:github.com/a/b", skills: ["!skills/x"] }],
  extensions: ["./ext.ts", "-builtin:mcp", "!builtin:*"],
  skills: [],
  prompts: [],
  themes: [],
  enableSkillCommands: true,
  defaultTools: ["+grep", "-bash"],
  defaultProjectTrust: "ask",
  warnings: { anthropicExtraUsage: false },
  permissions: { allow: ["read"], ask: ["bash(git push*)"], deny: ["bash(rm -rf *)"] },
  yolo: false,
  sandbox: "workspace-write",
  trustedProjects: ["~/work"],
  mcpServers: { demo: { command: "node", args: ["server.mjs"] } },
  plugins: ["./plugin.ts"],
  faux: { script: "./script.json" },
  "my-extension": { anything: true },
};

describe("published schemas", () => {
  it("the checked-in files are what the TypeBox definitions generate (node scripts/gen-schemas.mjs)", () => {
    for (const [name, text] of Object.entries(schemaFiles())) {
      expect(readFileSync(join(ROOT, "schemas", name), "utf8")).toBe(text);
    }
  });

  it("a full settings.json validates; every documented key is in the schema", () => {
    const schema = published("settings.schema.json");
    expect(errors(schema, FULL_SETTINGS)).toEqual([]);
    const doc = readFileSync(join(ROOT, "docs", "settings.md"), "utf8");
    const keysSection = doc.slice(doc.indexOf("### Keys"), doc.indexOf("## models.json"));
    const documented = keysSection.match(/^\| `[a-zA-Z]+/gm)!.map((m) => m.slice(3));
    expect(documented.length).toBeGreaterThan(30);
    const missing = documented.filter((k) => !(k in schema.properties));
    expect(missing).toEqual([]);
  });

  it("a bad settings.json fails, naming the key", () => {
    const schema = published("settings.schema.json");
    expect(errors(schema, { retry: { maxRetries: "three" } }).join("\n")).toMatch(/^\/retry\/maxRetries /m);
    expect(errors(schema, { defaultThinkingLevel: "extreme" }).join("\n")).toMatch(/^\/defaultThinkingLevel /m);
    expect(errors(schema, { httpIdleTimeoutMs: -5 }).join("\n")).toMatch(/^\/httpIdleTimeoutMs /m);
    expect(errors(schema, { modelThinkingLevels: { "a/b": "hot" } }).join("\n")).toMatch(/^\/modelThinkingLevels\/a~1b /m);
  });

  it("models.json: the documented example validates; a bad one fails naming the field", () => {
    const schema = published("models.schema.json");
    const good = {
      $schema: "x",
      providers: {
        local: {
          baseUrl: "http://localhost:11434/v1",
          api: "openai-completions",
          apiKey: "LOCAL_API_KEY",
          headers: { "x-team": "!cat team.txt" },
          compat: { supportsDeveloperRole: false },
          models: [{ id: "qwen3-coder", contextWindow: 131072, maxTokens: 8192, reasoning: true, thinkingLevelMap: { xhigh: "max", minimal: null }, input: ["text", "image"], cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } }],
        },
        anthropic: { modelOverrides: { "claude-sonnet-4-5": { maxTokens: 32000, cost: { input: 3 } } } },
      },
    };
    expect(errors(schema, good)).toEqual([]);
    expect(errors(schema, { providers: { local: { models: [{ id: "m", contextWindow: "big" }] } } }).join("\n")).toMatch(/^\/providers\/local\/models\/0\/contextWindow /m);
    expect(errors(schema, { providers: { local: { models: [{ name: "no id" }] } } }).join("\n")).toMatch(/^\/providers\/local\/models\/0 .*id/m);
    expect(errors(schema, {}).join("\n")).toMatch(/providers/);
  });
});
