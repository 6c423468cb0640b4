import { describe, it, expect, beforeEach, afterEach, jest } from "@jest/globals";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import { AuthStorage } from "./auth-storage.js";
import { ModelRegistry, CUSTOM_MODEL_DEFAULTS, stripJsonComments } from "./model-registry.js";
import { findInitialModel } from "./model-resolver.js";
import type { CatalogData } from "./builtin-catalog.js";
import { Kernel } from "../../kernel/kernel.js";
import { defineApp } from "../../kernel/config.js";
import { SettingsManager } from "../../kernel/settings.js";

type M = Model<Api>;
const cost = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
function m(provider: string, id: string, extra: Partial<M> = {}): M {
  const api = provider === "anthropic" ? "anthropic-messages" : "openai-completions";
  const baseUrl = provider === "anthropic" ? "https://api.anthropic.com" : "https://api.openai.com/v1";
  return { id, name: id.toUpperCase(), api, provider, baseUrl, reasoning: true, input: ["text", "image"], cost, contextWindow: 200000, maxTokens: 64000, ...extra };
}
function fakeCatalog(): CatalogData {
  return {
    anthropic: { "claude-a": m("anthropic", "claude-a"), "claude-b": m("anthropic", "claude-b") },
    openai: { "gpt-6.2-sol": m("openai", "gpt-6.2-sol"), "gpt-mini": m("openai", "gpt-mini") },
  };
}

let dir: string;
let modelsPath: string;
const savedEnv: Record<string, string | undefined> = {};
function setEnv(name: string, value: string | undefined) {
  if (!(name in savedEnv)) savedEnv[name] = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
function writeModels(data: unknown) {
  writeFileSync(modelsPath, typeof data === "string" ? data : JSON.stringify(data, null, 2));
}
function registry(opts: { catalog?: () => CatalogData; auth?: AuthStorage; keylessProviders?: string[] } = {}) {
  return ModelRegistry.create(opts.auth ?? AuthStorage.inMemory(), modelsPath, { catalog: opts.catalog ?? fakeCatalog, keylessProviders: opts.keylessProviders });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-models-"));
  modelsPath = join(dir, "models.json");
  for (const k of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"]) setEnv(k, undefined);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    delete savedEnv[k];
  }
});

describe("models.json custom providers", () => {
  it("applies the reference's defaults to a minimal model", () => {
    writeModels({ providers: { ollama: { baseUrl: "http://localhost:11434/v1", api: "openai-completions", apiKey: "ollama", models: [{ id: "llama3.1:8b" }] } } });
    const model = registry().find("ollama", "llama3.1:8b");
    expect(model).toEqual({
      id: "llama3.1:8b",
      name: "llama3.1:8b",
      api: "openai-completions",
      provider: "ollama",
      baseUrl: "http://localhost:11434/v1",
      reasoning: CUSTOM_MODEL_DEFAULTS.reasoning,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 128000,
      maxTokens: 16384,
    });
  });

  it("answers lookups of complete custom models without loading the catalog; listing loads it once", () => {
    writeModels({ providers: { ollama: { baseUrl: "http://x/v1", api: "openai-completions", apiKey: "ollama", models: [{ id: "qwen", reasoning: true }] } } });
    const catalog = jest.fn(fakeCatalog);
    const r = registry({ catalog });
    expect(r.find("ollama", "qwen")?.reasoning).toBe(true);
    expect(catalog).not.toHaveBeenCalled();
    // a miss may need the catalog ("ollama" could be a built-in provider too)
    expect(r.find("ollama", "missing")).toBeUndefined();
    expect(catalog).toHaveBeenCalledTimes(1);
    expect(r.getAll()).toHaveLength(5);
    r.refresh();
    expect(r.getAll()).toHaveLength(5);
    expect(catalog).toHaveBeenCalledTimes(1);
  });

  it("a provider entry with only baseUrl redirects every built-in model of that provider", () => {
    writeModels({ providers: { anthropic: { baseUrl: "https://proxy.example.com" } } });
    const all = registry().getAll();
    const anthropic = all.filter((x) => x.provider === "anthropic");
    expect(anthropic.map((x) => x.id)).toEqual(["claude-a", "claude-b"]);
    expect(anthropic.every((x) => x.baseUrl === "https://proxy.example.com")).toBe(true);
    expect(all.filter((x) => x.provider === "openai").every((x) => x.baseUrl === "https://api.openai.com/v1")).toBe(true);
  });

  it("upserts custom models into a built-in provider, inheriting its api and baseUrl", () => {
    writeModels({ providers: { anthropic: { models: [{ id: "claude-a", name: "Mine" }, { id: "claude-new", contextWindow: 1000 }] } } });
    const r = registry();
    const a = r.find("anthropic", "claude-a")!;
    expect(a.name).toBe("Mine");
    expect(a.api).toBe("anthropic-messages");
    expect(a.baseUrl).toBe("https://api.anthropic.com");
    expect(a.contextWindow).toBe(128000); // a replacement, not a merge
    expect(r.find("anthropic", "claude-new")?.contextWindow).toBe(1000);
    expect(r.find("anthropic", "claude-b")?.name).toBe("CLAUDE-B");
  });

  it("modelOverrides patch built-in models (cost merged field by field)", () => {
    writeModels({ providers: { openai: { modelOverrides: { "gpt-mini": { name: "Mini!", cost: { output: 1 }, compat: { supportsStore: false } }, unknown: { name: "x" } } } } });
    const mini = registry().find("openai", "gpt-mini")!;
    expect(mini.name).toBe("Mini!");
    expect(mini.cost).toEqual({ ...cost, output: 1 });
    expect(mini.compat).toEqual({ supportsStore: false });
  });

  it("accepts comments and trailing commas, keeping error positions true to the file", () => {
    writeModels(`{
  // my local models
  "providers": {
    "lm": { "baseUrl": "http://l/v1", "api": "openai-completions", "apiKey": "x", "models": [{ "id": "a", }], },
  },
}`);
    expect(registry().find("lm", "a")?.id).toBe("a");
    const text = '{ "a": 1, /* c */ "b": [1,2,], }';
    const stripped = stripJsonComments(text);
    expect(stripped).toHaveLength(text.length);
    expect(JSON.parse(stripped)).toEqual({ a: 1, b: [1, 2] });
    expect(stripJsonComments('{"u": "http://x//y,]"}')).toBe('{"u": "http://x//y,]"}');
  });
});

describe("models.json problems", () => {
  it("malformed JSON: a diagnostic with file and position, built-in models still work", () => {
    writeModels('{\n  "providers": {\n    "x": { "baseUrl": "u" }\n    "y": {}\n  }\n}');
    const reports: string[] = [];
    const r = ModelRegistry.create(AuthStorage.inMemory(), modelsPath, { catalog: fakeCatalog, report: (d) => reports.push(`${d.source}: ${d.message}`) });
    const d = r.diagnostics[0]!;
    expect(d.level).toBe("error");
    expect(d.source).toBe(modelsPath);
    expect(d.message).toMatch(/malformed JSON at line 4, column 5/);
    expect(r.getError()).toContain(modelsPath);
    expect(reports).toHaveLength(1);
    expect(r.getAll()).toHaveLength(4);
    r.refresh(); // the same problem is not reported twice
    expect(reports).toHaveLength(1);
  });

  it("an invalid provider entry is skipped alone, with the field named", () => {
    writeModels({
      providers: {
        bad: { baseUrl: "http://b", api: "openai-completions", apiKey: "k", models: [{ id: "m", contextWindow: -5 }] },
        good: { baseUrl: "http://g", api: "openai-completions", apiKey: "k", models: [{ id: "m" }] },
      },
    });
    const r = registry();
    expect(r.find("bad", "m")).toBeUndefined();
    expect(r.find("good", "m")).toBeDefined();
    expect(r.getError()).toMatch(/providers\.bad\.models\[0\]\.contextWindow: must be a positive number/);
  });

  it("a custom model without an api is skipped with a warning", () => {
    writeModels({ providers: { noapi: { baseUrl: "http://n", apiKey: "k", models: [{ id: "m" }] } } });
    const r = registry();
    expect(r.getAll().some((x) => x.provider === "noapi")).toBe(false);
    expect(r.diagnostics.some((d) => d.level === "warning" && /noapi.*no "api"/.test(d.message))).toBe(true);
  });
});

describe("availability, keys and headers", () => {
  it("getAvailable lists models whose provider has a key; faux needs none", async () => {
    setEnv("OPENAI_API_KEY", "sk-env");
    // A provider is keyless because it says so (the faux plugin registers {keyless: true}); this catalog-only one is declared here.
    const r = registry({ keylessProviders: ["faux"], catalog: () => ({ ...fakeCatalog(), faux: { "faux-1": m("faux", "faux-1", { api: "faux" }) } }) });
    const ids = (await r.getAvailable()).map((x) => `${x.provider}/${x.id}`);
    expect(ids.sort()).toEqual(["faux/faux-1", "openai/gpt-6.2-sol", "openai/gpt-mini"]);
  });

  it("a models.json apiKey makes its provider available without running commands", async () => {
    const marker = join(dir, "ran.txt");
    writeModels({ providers: { c: { baseUrl: "http://c", api: "openai-completions", apiKey: `!touch '${marker}'; echo k`, models: [{ id: "m" }] } } });
    const r = registry();
    expect((await r.getAvailable()).map((x) => x.provider)).toEqual(["c"]);
    expect(existsSync(marker)).toBe(false);
    expect(await r.getApiKey(r.find("c", "m")!)).toBe("k");
    expect(existsSync(marker)).toBe(true);
  });

  it("resolves provider and model headers and adds Authorization with authHeader", async () => {
    setEnv("PI_TEST_PORTKEY", "pk-123");
    writeModels({
      providers: {
        proxy: {
          baseUrl: "http://p",
          api: "anthropic-messages",
          apiKey: "literal-key",
          authHeader: true,
          headers: { "x-portkey-api-key": "PI_TEST_PORTKEY", "x-static": "v" },
          models: [{ id: "m", headers: { "x-model": "!printf mh" } }],
        },
      },
    });
    const r = registry();
    const res = await r.getApiKeyAndHeaders(r.find("proxy", "m")!);
    expect(res).toEqual({
      ok: true,
      apiKey: "literal-key",
      headers: { "x-portkey-api-key": "pk-123", "x-static": "v", "x-model": "mh", Authorization: "Bearer literal-key" },
    });
  });

  it("a failing key command is an error result, not a throw", async () => {
    writeModels({ providers: { f: { baseUrl: "http://f", api: "openai-completions", apiKey: "!exit 1", models: [{ id: "m" }] } } });
    const r = registry();
    const res = await r.getApiKeyAndHeaders(r.find("f", "m")!);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error).toMatch(/cannot resolve the API key for provider "f" from command: exit 1/);
    expect(await r.getApiKey(r.find("f", "m")!)).toBeUndefined();
  });
});

describe("plugin-registered providers (kernel.models)", () => {
  function kernel() {
    return new Kernel({ app: defineApp("pi", "0.0.0"), cwd: dir, agentDir: dir, settings: SettingsManager.inMemory() });
  }

  it("adds a provider, redirects a built-in one and follows unregistration", async () => {
    const k = kernel();
    const r = ModelRegistry.forKernel(k, { authStorage: AuthStorage.inMemory(), catalog: fakeCatalog });
    const api = k.scope("my-plugin");
    api.registerModels({ name: "mine", api: "openai-completions", baseUrl: "http://mine/v1", apiKey: "MINE_KEY", models: [{ id: "m1", reasoning: true }] });
    expect(r.find("mine", "m1")).toMatchObject({ provider: "mine", api: "openai-completions", baseUrl: "http://mine/v1", reasoning: true, maxTokens: 16384 });
    const undo = api.registerModels({ name: "anthropic", baseUrl: "https://plugin-proxy" })!;
    expect(r.getAll().filter((x) => x.provider === "anthropic").map((x) => x.baseUrl)).toEqual(["https://plugin-proxy", "https://plugin-proxy"]);
    undo();
    expect(r.find("anthropic", "claude-a")?.baseUrl).toBe("https://api.anthropic.com");
    // a plugin provider with models replaces the built-in provider's list
    api.registerModels({ name: "openai", api: "openai-responses", baseUrl: "http://o", apiKey: "k", models: [{ id: "only" }] });
    expect(r.getAll().filter((x) => x.provider === "openai").map((x) => x.id)).toEqual(["only"]);
    expect((await r.getAvailable()).map((x) => x.provider).sort()).toEqual(["mine", "openai"]);
  });

  it("resolveStream prefers the provider's own streamSimple, else the API's provider", () => {
    const k = kernel();
    const r = ModelRegistry.forKernel(k, { authStorage: AuthStorage.inMemory(), catalog: fakeCatalog });
    const apiStream = jest.fn() as any;
    const ownStream = jest.fn() as any;
    k.scope("p").registerApiProvider({ api: "openai-completions", stream: apiStream });
    k.scope("x").registerModels({ name: "custom", api: "custom-api", baseUrl: "", apiKey: "k", streamSimple: ownStream, models: [{ id: "c" }] });
    expect(r.resolveStream(r.find("openai", "gpt-mini")!)).toBe(apiStream);
    expect(r.resolveStream(r.find("custom", "c")!)).toBe(ownStream);
    expect(r.resolveStream(r.find("anthropic", "claude-a")!)).toBeUndefined();
  });

  it("registerProvider validates like the reference and can be undone", () => {
    const r = registry();
    expect(() => r.registerProvider({ name: "s", streamSimple: (() => {}) as any })).toThrow(/"api" is required/);
    expect(() => r.registerProvider({ name: "s", baseUrl: "u", apiKey: "k", models: [{ id: "x" }] })).toThrow(/no "api"/);
    const undo = r.registerProvider({ name: "s", api: "openai-completions", baseUrl: "u", apiKey: "k", models: [{ id: "x" }] });
    expect(r.find("s", "x")).toBeDefined();
    undo();
    expect(r.find("s", "x")).toBeUndefined();
  });
});

describe("findInitialModel", () => {
  it("settings default, then known provider defaults with a key, then the first available, else none", async () => {
    const auth = AuthStorage.inMemory();
    const r = registry({ auth });
    expect((await findInitialModel({ modelRegistry: r, defaultProvider: "anthropic", defaultModel: "claude-b", defaultThinkingLevel: "high" })).model?.id).toBe("claude-b");
    expect((await findInitialModel({ modelRegistry: r })).model).toBeUndefined();
    auth.set("anthropic", { type: "api_key", key: "k" });
    expect((await findInitialModel({ modelRegistry: r })).model?.id).toBe("claude-a"); // first available
    auth.set("openai", { type: "api_key", key: "k" });
    const pick = await findInitialModel({ modelRegistry: r, defaultProvider: "anthropic", defaultModel: "gone" });
    expect(`${pick.model?.provider}/${pick.model?.id}`).toBe("openai/gpt-6.2-sol"); // openai's known default
    expect(pick.thinkingLevel).toBe("medium");
  });

  it("a --model that does not resolve is an error, not an exit", async () => {
    const r = registry();
    const res = await findInitialModel({ modelRegistry: r, cliModel: "nothing-like-this" });
    expect(res.model).toBeUndefined();
    expect(res.error).toMatch(/Model "nothing-like-this" not found/);
    const ok = await findInitialModel({ modelRegistry: r, cliModel: "claude-b:low" });
    expect(ok.model?.id).toBe("claude-b");
    expect(ok.thinkingLevel).toBe("low");
  });
});

describe("the real pi-ai catalog", () => {
  it("loads lazily from pi-ai's generated file and honours a baseUrl override", () => {
    writeModels({ providers: { anthropic: { baseUrl: "https://proxy.example.com" } } });
    const r = ModelRegistry.create(AuthStorage.inMemory(), modelsPath);
    const all = r.getAll();
    expect(new Set(all.map((x) => x.provider)).size).toBeGreaterThan(5);
    const anthropic = all.filter((x) => x.provider === "anthropic");
    expect(anthropic.length).toBeGreaterThan(0);
    expect(anthropic.every((x) => x.baseUrl === "https://proxy.example.com")).toBe(true);
    const first = anthropic[0]!;
    expect(r.find("anthropic", first.id)).toBe(first);
  });
});
