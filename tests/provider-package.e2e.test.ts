/**
 * End to end: a pi package (installed from a local folder through settings "packages") whose
 * extension registers a provider at session_start after checking ctx.modelRegistry.getAvailable()
 * synchronously, as provider packages written for pi 1.6 do (`getAvailable().some(…)`); the
 * provider's model is then listed and answers over RPC.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { CLI, makeE2eEnv, type E2eEnv } from "./helpers/e2e.js";
import { RpcClient } from "../sdk/rpc-client.js";

let server: LlmServer;
let e: E2eEnv;

const EXTENSION = `
export default function (pi) {
  pi.on("session_start", async (_e, ctx) => {
    const available = ctx.modelRegistry.getAvailable();
    if (available.some((m) => m.provider === "pkg-provider")) return;
    pi.registerProvider("pkg-provider", {
      baseUrl: process.env.PKG_PROVIDER_URL,
      apiKey: "PKG_KEY",
      api: "openai-completions",
      models: [{ id: "pkg-model", name: "Package model", reasoning: false, input: ["text"], contextWindow: 32000, maxTokens: 1000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
    });
  });
}
`;

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "from the package provider" } } });
  e = makeE2eEnv(server.url);
  const pkg = join(e.root, "provider-pkg");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "provider-pkg", version: "1.0.0", type: "module", keywords: ["pi-package"], peerDependencies: { "@earendil-works/pi-coding-agent": "*" }, pi: { extensions: ["./index.js"] } }));
  writeFileSync(join(pkg, "index.js"), EXTENSION);
  const settingsPath = join(e.agentDir, "settings.json");
  writeFileSync(settingsPath, JSON.stringify({ ...JSON.parse(readFileSync(settingsPath, "utf8")), packages: [pkg] }));
});
afterAll(async () => {
  await server.close();
  e.cleanup();
});

describe("a provider package registering at session_start", () => {
  it("getAvailable() is an array there; the registered model is listed and answers", async () => {
    const client = new RpcClient({ cliPath: CLI, cwd: e.cwd, env: { ...e.env, PKG_PROVIDER_URL: `${server.url}/v1` }, inheritEnv: false, args: ["--no-session"] });
    const errors: unknown[] = [];
    client.onEvent((ev: any) => ev.type === "extension_error" && errors.push(ev));
    await client.start();
    try {
      const models = await client.getAvailableModels();
      expect(models.map((m: any) => `${m.provider}/${m.id}`)).toContain("pkg-provider/pkg-model");
      await client.setModel("pkg-provider", "pkg-model");
      await client.promptAndWait("hello");
      expect(await client.getLastAssistantText()).toBe("from the package provider");
      expect(server.stats().requests.at(-1)!.body.model).toBe("pkg-model");
      expect(errors).toEqual([]);
    } finally {
      await client.stop();
    }
  });
});
