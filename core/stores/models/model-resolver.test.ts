import { describe, it, expect } from "@jest/globals";
import type { Api, Model } from "@mariozechner/pi-ai";
import {
  findExactModelReferenceMatch,
  formatModelTable,
  formatTokenCount,
  fuzzyFilter,
  globToRegExp,
  listModels,
  parseModelList,
  parseModelPattern,
  resolveCliModel,
  resolveModelScope,
} from "./model-resolver.js";
import { ModelRegistry } from "./model-registry.js";
import { AuthStorage } from "./auth-storage.js";

type M = Model<Api>;
function m(provider: string, id: string, extra: Partial<M> = {}): M {
  return {
    id,
    name: extra.name ?? id,
    api: "openai-completions",
    provider,
    baseUrl: "http://x",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 16384,
    ...extra,
  };
}

const models: M[] = [
  m("anthropic", "claude-sonnet-4-5", { name: "Claude Sonnet 4.5", reasoning: true, input: ["text", "image"], contextWindow: 200000, maxTokens: 64000 }),
  m("anthropic", "claude-sonnet-4-5-20250929", { name: "Claude Sonnet 4.5 (dated)" }),
  m("anthropic", "claude-haiku-4-5-20251001", { name: "Claude Haiku 4.5" }),
  m("anthropic", "claude-haiku-4-5-20250101", { name: "Claude Haiku 4.5 old" }),
  m("openai", "gpt-4o"),
  m("openrouter", "openai/gpt-4o:extended"),
  m("openrouter", "anthropic/claude-sonnet-4-5"),
  m("zai", "glm-5"),
  m("vercel-ai-gateway", "zai/glm-5"),
];

describe("--model patterns", () => {
  it("provider/id and exact ids resolve exactly, case-insensitively", () => {
    expect(resolveCliModel({ cliModel: "anthropic/claude-sonnet-4-5", models }).model?.id).toBe("claude-sonnet-4-5");
    expect(resolveCliModel({ cliModel: "GPT-4o", models }).model?.provider).toBe("openai");
    expect(findExactModelReferenceMatch("openrouter/openai/gpt-4o:extended", models)?.provider).toBe("openrouter");
  });

  it("a known provider prefix wins over an id that contains a slash", () => {
    const r = resolveCliModel({ cliModel: "zai/glm-5", models });
    expect(`${r.model?.provider}/${r.model?.id}`).toBe("zai/glm-5");
  });

  it("partial matches prefer the alias over dated ids, else the latest date", () => {
    expect(resolveCliModel({ cliModel: "sonnet", models, cliProvider: "anthropic" }).model?.id).toBe("claude-sonnet-4-5");
    expect(resolveCliModel({ cliModel: "haiku", models }).model?.id).toBe("claude-haiku-4-5-20251001");
  });

  it("splits a :thinking suffix only when the whole text is no model", () => {
    const r = resolveCliModel({ cliModel: "anthropic/sonnet:high", models });
    expect(r.model?.id).toBe("claude-sonnet-4-5");
    expect(r.thinkingLevel).toBe("high");
    // the colon is part of this id
    const ex = resolveCliModel({ cliModel: "openai/gpt-4o:extended", models });
    expect(`${ex.model?.provider}/${ex.model?.id}`).toBe("openrouter/openai/gpt-4o:extended");
    expect(ex.thinkingLevel).toBeUndefined();
    const ex2 = resolveCliModel({ cliModel: "openai/gpt-4o:extended:low", models });
    expect(ex2.model?.id).toBe("openai/gpt-4o:extended");
    expect(ex2.thinkingLevel).toBe("low");
  });

  it("an invalid thinking suffix fails --model (strict) but only warns in scope lists", () => {
    expect(resolveCliModel({ cliModel: "gpt-4o:turbo", models }).error).toMatch(/not found/);
    const p = parseModelPattern("gpt-4o:turbo", models);
    expect(p.model?.id).toBe("gpt-4o");
    expect(p.warning).toMatch(/Invalid thinking level "turbo"/);
  });

  it("unknown provider is an error; an unknown id under a known provider becomes a custom id", () => {
    expect(resolveCliModel({ cliProvider: "nope", cliModel: "x", models }).error).toMatch(/Unknown provider "nope"/);
    const r = resolveCliModel({ cliProvider: "openai", cliModel: "gpt-9-preview", models });
    expect(r.model).toMatchObject({ provider: "openai", id: "gpt-9-preview", name: "gpt-9-preview", api: "openai-completions" });
    expect(r.warning).toMatch(/Using custom model id/);
    expect(resolveCliModel({ cliModel: "nothing-matches-this", models }).error).toMatch(/Model "nothing-matches-this" not found/);
  });
});

describe("--models scopes", () => {
  it("splits comma lists", () => {
    expect(parseModelList("a, b,,c")).toEqual(["a", "b", "c"]);
    expect(parseModelList(["a,b", "c"])).toEqual(["a", "b", "c"]);
    expect(parseModelList(undefined)).toEqual([]);
  });

  it("globs match provider/id or id; * stays within a segment; :level applies to every match", () => {
    const { scoped, warnings } = resolveModelScope(["*sonnet*", "anthropic/*haiku*:low"], models);
    expect(scoped.map((s) => `${s.model.provider}/${s.model.id}:${s.thinkingLevel ?? "-"}`)).toEqual([
      "anthropic/claude-sonnet-4-5:-",
      "anthropic/claude-sonnet-4-5-20250929:-",
      "anthropic/claude-haiku-4-5-20251001:low",
      "anthropic/claude-haiku-4-5-20250101:low",
    ]);
    expect(warnings).toEqual([]);
    expect(globToRegExp("openrouter/**").test("openrouter/anthropic/claude-sonnet-4-5")).toBe(true);
    expect(globToRegExp("claude-[sh]*").test("claude-haiku")).toBe(true);
    expect(globToRegExp("claude-[!s]*").test("claude-sonnet")).toBe(false);
  });

  it("plain patterns keep order, skip duplicates and warn about misses", () => {
    const { scoped, warnings } = resolveModelScope(["gpt-4o:high", "sonnet", "anthropic/claude-sonnet-4-5", "zzz", "glm-5:bad"], models);
    expect(scoped.map((s) => `${s.model.id}:${s.thinkingLevel ?? "-"}`)).toEqual(["gpt-4o:high", "claude-sonnet-4-5:-", "glm-5:-"]);
    expect(warnings).toEqual([`No models match pattern "zzz"`, `Invalid thinking level "bad" in pattern "glm-5:bad". Using the default instead.`]);
  });
});

describe("--list-models", () => {
  it("formats token counts like the reference", () => {
    expect([999, 1000, 1500, 200000, 1_000_000, 1_048_576].map(formatTokenCount)).toEqual(["999", "1K", "1.5K", "200K", "1M", "1.0M"]);
  });

  it("prints an aligned table sorted by provider then id", () => {
    const table = formatModelTable([models[4]!, models[0]!]);
    expect(table.split("\n")).toEqual([
      "provider   model              context  max-out  thinking  images",
      "anthropic  claude-sonnet-4-5  200K     64K      yes       yes   ",
      "openai     gpt-4o             128K     16.4K    no        no    ",
      "",
    ]);
  });

  it("fuzzy search matches characters in order across provider and id, every token", () => {
    const hits = fuzzyFilter(models, "ant son", (x) => `${x.provider} ${x.id}`);
    expect(hits[0]).toMatchObject({ provider: "anthropic", id: "claude-sonnet-4-5" });
    expect(hits.some((x) => x.id === "gpt-4o" || x.id === "glm-5")).toBe(false);
    expect(hits.every((x) => `${x.provider} ${x.id}`.includes("son"))).toBe(true);
    expect(fuzzyFilter(models, "qqq", (x) => x.id)).toEqual([]);
  });

  it("lists the available models of a registry, or says why there are none", async () => {
    const auth = AuthStorage.inMemory();
    const catalog = () => ({ openai: { "gpt-4o": m("openai", "gpt-4o") }, zai: { "glm-5": m("zai", "glm-5") } });
    const r = ModelRegistry.inMemory(auth, { catalog });
    expect((await listModels(r)).stdout).toMatch(/^No models available/);
    auth.setRuntimeApiKey("zai", "k");
    const out = await listModels(r);
    expect(out.count).toBe(1);
    expect(out.stdout.split("\n")[1]).toMatch(/^zai\s+glm-5\s+128K/);
    expect((await listModels(r, "gpt")).stdout).toBe(`No models matching "gpt"\n`);
  });
});
