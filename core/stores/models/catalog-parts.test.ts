/**
 * Finding one built-in model reads only its provider's part of the generated catalog
 * (dist/model-catalog/providers.json locates it in models.json). This file has its own module
 * state: the steps below run in order, and the whole catalog must not be loaded until the last.
 */
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthStorage } from "./auth-storage.js";
import { ModelRegistry } from "./model-registry.js";
import { isCatalogLoaded, loadCatalogProviderSync, loadCatalogSync } from "./builtin-catalog.js";

let dir: string;
let modelsPath: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-catalog-parts-"));
  modelsPath = join(dir, "models.json");
  writeFileSync(
    modelsPath,
    JSON.stringify({
      providers: {
        anthropic: {
          baseUrl: "https://proxy.example/anthropic",
          modelOverrides: { "claude-opus-5-5": { name: "Opus via proxy" } },
          models: [{ id: "house-model", name: "House" }],
        },
      },
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("one provider's part of the catalog", () => {
  it("answers find() with the provider's overrides and custom models, without loading the whole catalog", () => {
    const r = ModelRegistry.create(AuthStorage.inMemory(), modelsPath);
    const opus = r.find("anthropic", "claude-opus-5-5");
    expect(opus).toMatchObject({ provider: "anthropic", id: "claude-opus-5-5", name: "Opus via proxy", baseUrl: "https://proxy.example/anthropic", api: "anthropic-messages" });
    expect(r.find("anthropic", "house-model")).toMatchObject({ name: "House", baseUrl: "https://proxy.example/anthropic", api: "anthropic-messages" });
    expect(r.find("anthropic", "no-such-model")).toBeUndefined();
    expect(r.find("no-such-provider", "x")).toBeUndefined();
    expect(r.find("openai", "gpt-6.2-sol")?.api).toBe("openai-responses");
    expect(isCatalogLoaded()).toBe(false);

    // The whole list (it loads the catalog) has the same models.
    const all = ModelRegistry.create(AuthStorage.inMemory(), modelsPath).getAll();
    expect(isCatalogLoaded()).toBe(true);
    for (const [p, id] of [["anthropic", "claude-opus-5-5"], ["anthropic", "house-model"], ["openai", "gpt-6.2-sol"]] as const) {
      expect(r.find(p, id)).toEqual(all.find((m) => m.provider === p && m.id === id));
    }
  });

  it("a part parses to what the whole catalog holds for that provider", () => {
    const whole = loadCatalogSync();
    for (const p of ["anthropic", "openai", "google"]) expect(loadCatalogProviderSync(p)).toEqual(whole[p]);
    expect(loadCatalogProviderSync("no-such-provider")).toBeUndefined();
    expect(loadCatalogProviderSync("constructor")).toBeUndefined();
  });

  it("find() takes one part; with an OAuth login stored it takes the whole list (an OAuth provider may adjust any model)", () => {
    const calls: string[] = [];
    const whole = loadCatalogSync();
    const opts = { catalog: () => (calls.push("whole"), whole), catalogPart: (p: string) => (calls.push(p), whole[p]) };
    expect(ModelRegistry.create(AuthStorage.inMemory(), modelsPath, opts).find("anthropic", "claude-opus-5-5")?.name).toBe("Opus via proxy");
    expect(calls).toEqual(["anthropic"]);
    calls.length = 0;
    const auth = AuthStorage.inMemory({ anthropic: { type: "oauth", access: "a", refresh: "r", expires: Date.now() + 3_600_000 } as never });
    expect(ModelRegistry.create(auth, modelsPath, opts).find("anthropic", "claude-opus-5-5")?.name).toBe("Opus via proxy");
    expect(calls).toEqual(["whole"]);
  });
});
