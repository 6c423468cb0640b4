/** The generated catalog (dist/model-catalog/, written by `npm run build`) and its environment-key table. */
import { describe, it, expect, afterEach } from "@jest/globals";
import { envKeys, loadCatalogSync, loadedCatalogSource } from "./builtin-catalog.js";

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

function clearKeys() {
  for (const k of Object.keys(process.env)) if (/_API_KEY$|^ANTHROPIC_|^CLOUDFLARE_|^AWS_|^GOOGLE_/.test(k)) delete process.env[k];
}

describe("built-in catalog", () => {
  it("holds pi 1.6's models under 1.6's provider names, with their thinking maps", () => {
    const c = loadCatalogSync();
    expect(loadedCatalogSource()).toMatch(/^@earendil-works\/pi-ai@\d+\.\d+\.\d+/);
    expect(c.openai?.["gpt-6.2-sol"]?.api).toBe("openai-responses");
    expect(c.anthropic?.["claude-opus-5-5"]?.name).toBe("Claude Opus 5.5");
    expect(c.anthropic?.["claude-haiku-5-5"]?.api).toBe("anthropic-messages");
    expect(Object.keys(c.azure ?? {}).length).toBeGreaterThan(0);
    expect(c["azure-openai-responses"]).toBeUndefined();
    expect(c.anthropic?.["claude-opus-5-5"]?.thinkingLevelMap).toMatchObject({ off: null });
  });
});

describe("environment keys", () => {
  it("a provider's key variable, in priority order; ANTHROPIC_AUTH_TOKEN shows as configured but is not an API key", () => {
    clearKeys();
    expect(envKeys.getEnvApiKey("azure")).toBeUndefined();
    process.env.AZURE_OPENAI_API_KEY = "az";
    expect(envKeys.getEnvApiKey("azure")).toBe("az");
    expect(envKeys.getEnvApiKey("azure-openai-responses")).toBe("az"); // the 0.73.1 name keeps working
    process.env.ANTHROPIC_AUTH_TOKEN = "bearer";
    expect(envKeys.findEnvKeys("anthropic")).toEqual(["ANTHROPIC_AUTH_TOKEN"]);
    expect(envKeys.getEnvApiKey("anthropic")).toBeUndefined();
    process.env.ANTHROPIC_API_KEY = "ak";
    expect(envKeys.getEnvApiKey("anthropic")).toBe("ak");
  });

  it("a provider that needs more than its key (Cloudflare's account id) is not configured without it", () => {
    clearKeys();
    process.env.CLOUDFLARE_API_KEY = "cf";
    expect(envKeys.findEnvKeys("cloudflare-workers-ai")).toBeUndefined();
    expect(envKeys.getEnvApiKey("cloudflare-workers-ai")).toBeUndefined();
    process.env.CLOUDFLARE_ACCOUNT_ID = "acct";
    expect(envKeys.getEnvApiKey("cloudflare-workers-ai")).toBe("cf");
    expect(envKeys.getEnvApiKey("cloudflare-ai-gateway")).toBeUndefined(); // needs CLOUDFLARE_GATEWAY_ID too
  });

  it("Amazon Bedrock counts ambient credentials", () => {
    clearKeys();
    expect(envKeys.getEnvApiKey("amazon-bedrock")).toBeUndefined();
    process.env.AWS_PROFILE = "work";
    expect(envKeys.getEnvApiKey("amazon-bedrock")).toBe("<authenticated>");
  });
});
