/**
 * The built-in model catalog is pi 1.6's (issue #17 point 7): `--list-models` shows 1.6's models
 * under 1.6's provider names, and a model new in 1.6 answers a prompt through our provider layer
 * (its provider's baseUrl redirected to the scripted server by a models.json override), with
 * thinking levels and the adaptive-thinking need taken from its definition.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlmServer, type LlmServer } from "./fixtures/llm-server.mjs";
import { makeE2eEnv, runCli, type E2eEnv } from "./helpers/e2e.js";

let server: LlmServer;
const envs: E2eEnv[] = [];

beforeAll(async () => {
  server = await startLlmServer({ script: { default: { text: "hello from the catalog" } } });
});
afterEach(() => {
  for (const e of envs.splice(0)) e.cleanup();
});
afterAll(async () => {
  await server.close();
});

function env(): E2eEnv {
  const e = makeE2eEnv(server.url, { noDefaultModel: true });
  envs.push(e);
  return e;
}

/** The table's rows as "provider/id". */
const rows = (stdout: string) =>
  stdout
    .split("\n")
    .slice(1)
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/).slice(0, 2).join("/"));

describe("--list-models: pi 1.6's catalog", () => {
  it("lists 1.6's models for the providers with a key, under 1.6's names (azure, not azure-openai-responses)", async () => {
    const e = env();
    const keys = { OPENAI_API_KEY: "k1", ANTHROPIC_API_KEY: "k2", AZURE_OPENAI_API_KEY: "k3" };
    const r = await runCli(["--list-models"], e, { env: keys });
    expect(r.code).toBe(0);
    const listed = rows(r.stdout);
    expect(listed).toEqual(expect.arrayContaining(["openai/gpt-6.2-sol", "anthropic/claude-opus-5-5", "anthropic/claude-haiku-5-5", "azure/gpt-6.2-sol"]));
    expect(listed.filter((x) => x.startsWith("azure-openai-responses/"))).toEqual([]);
    // Providers without a key are not listed (nvidia is new in 1.6).
    expect(listed.filter((x) => x.startsWith("nvidia/"))).toEqual([]);
    // The reasoning and image columns come from the definition.
    const opus = r.stdout.split("\n").find((l) => /^anthropic\s+claude-opus-5-5\s/.test(l))!;
    expect(opus.trim().split(/\s+/).slice(2)).toEqual(["1M", "128K", "yes", "yes"]);
  });

  it("a provider that needs more than its key is listed only when it has it (Cloudflare's account id)", async () => {
    const e = env();
    const without = await runCli(["--list-models", "cloudflare"], e, { env: { CLOUDFLARE_API_KEY: "cf" } });
    expect(rows(without.stdout).filter((x) => x.startsWith("cloudflare-workers-ai/"))).toEqual([]);
    const withId = await runCli(["--list-models", "cloudflare"], e, { env: { CLOUDFLARE_API_KEY: "cf", CLOUDFLARE_ACCOUNT_ID: "acct" } });
    expect(rows(withId.stdout).filter((x) => x.startsWith("cloudflare-workers-ai/")).length).toBeGreaterThan(0);
    expect(rows(withId.stdout).filter((x) => x.startsWith("cloudflare-ai-gateway/"))).toEqual([]);
  });
});

describe("a model new in 1.6 answers through our provider layer", () => {
  it("anthropic/claude-opus-5-5 (anthropic-messages) with its baseUrl overridden in models.json", async () => {
    const e = env();
    const modelsJson = join(e.agentDir, "models.json");
    const json = JSON.parse(readFileSync(modelsJson, "utf8"));
    json.providers.anthropic = { baseUrl: server.url };
    writeFileSync(modelsJson, JSON.stringify(json));
    server.reset();
    // The definition maps "off" to null (the model always thinks): --thinking off becomes its lowest level.
    const r = await runCli(["-p", "--no-session", "--model", "anthropic/claude-opus-5-5", "--thinking", "off", "say hi"], e, { env: { ANTHROPIC_API_KEY: "test-anthropic-key" } });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("hello from the catalog\n");
    expect(r.code).toBe(0);
    const reqs = server.stats().requests.filter((q) => q.api === "anthropic");
    expect(reqs).toHaveLength(1);
    expect(reqs[0]!.body.model).toBe("claude-opus-5-5");
    // Its definition forces adaptive thinking (compat.forceAdaptiveThinking): no token budget.
    expect(reqs[0]!.body.thinking).toMatchObject({ type: "adaptive" });
    expect(reqs[0]!.body.output_config).toEqual({ effort: "low" });
  });

  it("nvidia (a provider 0.73.1 did not have, openai-completions) with its baseUrl overridden in models.json", async () => {
    const e = env();
    const modelsJson = join(e.agentDir, "models.json");
    const json = JSON.parse(readFileSync(modelsJson, "utf8"));
    json.providers.nvidia = { baseUrl: `${server.url}/v1` };
    writeFileSync(modelsJson, JSON.stringify(json));
    server.reset();
    const r = await runCli(["-p", "--no-session", "--model", "nvidia/nvidia/nemotron-3.5-super-vl-120b-a12b", "say hi"], e, { env: { NVIDIA_API_KEY: "test-nvidia-key" } });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("hello from the catalog\n");
    const reqs = server.stats().requests.filter((q) => q.api === "openai");
    expect(reqs).toHaveLength(1);
    expect(reqs[0]!.body.model).toBe("nvidia/nemotron-3.5-super-vl-120b-a12b");
  });
});
