import { describe, it, expect } from "@jest/globals";
import { distinctModelName, ModelList, offeredModels, type ModelLike } from "./model-list.js";
import type { Painter } from "./tree-model.js";

/** Colours left out: the rows' text as a terminal shows it. */
const plain: Painter = { fg: (_t, s) => s, bold: (s) => s, italic: (s) => s };

const m = (provider: string, id: string, name?: string): ModelLike => ({ provider, id, name });
const models = [m("zed", "zeta", "Zeta Fast"), m("anthropic", "claude-sonnet-4", "Claude Sonnet 4"), m("openai", "gpt-5", "GPT-5"), m("anthropic", "claude-haiku", "Haiku Small"), m("openai", "gpt-4o")];
const ids = (l: ModelList<ModelLike>) => l.shown.map((x) => `${x.provider}/${x.id}`);
const rows = (l: ModelList<ModelLike>) => l.shown.map((x, i) => l.drawRow(x, plain, i === l.selected));

describe("ModelList", () => {
  it("puts the current model first, the default second, then the rest by provider in the registry's order, selected on the current", () => {
    const l = new ModelList({ models, current: m("openai", "gpt-4o"), defaultModel: { provider: "zed", id: "zeta" } });
    expect(ids(l)).toEqual(["openai/gpt-4o", "zed/zeta", "anthropic/claude-sonnet-4", "anthropic/claude-haiku", "openai/gpt-5"]);
    expect(l.selected).toBe(0);
    expect(rows(l)).toEqual(["✓ gpt-4o [openai]", "  zeta (Zeta Fast) [zed] · default", "  claude-sonnet-4 [anthropic]", "  claude-haiku (Haiku Small) [anthropic]", "  gpt-5 [openai]"]);
    expect(l.detail()).toBe("Model Name: gpt-4o");
  });

  it("a name shows only when it says more than the id", () => {
    expect(distinctModelName(m("a", "claude-sonnet-4", "Claude Sonnet 4"))).toBeUndefined();
    expect(distinctModelName(m("a", "mistral-small-2603", "Mistral Small 4"))).toBe("Mistral Small 4");
    expect(distinctModelName(m("a", "m-1", "  "))).toBeUndefined();
  });

  it("searches provider, id and name, best first; a query starting 'default' puts the default model first; clearing keeps the selection in range", () => {
    const l = new ModelList({ models, current: m("openai", "gpt-4o"), defaultModel: { provider: "zed", id: "zeta" } });
    l.filter("haiku");
    expect(ids(l)).toEqual(["anthropic/claude-haiku"]);
    l.filter("openai/gpt-5");
    expect(ids(l)[0]).toBe("openai/gpt-5");
    expect(l.selected).toBe(0);
    l.filter("def");
    expect(ids(l)[0]).toBe("zed/zeta");
    l.filter("nothing-like-it");
    expect(l.shown).toEqual([]);
    expect(l.selectedModel).toBeUndefined();
    l.filter("");
    expect(l.shown).toHaveLength(5);
    expect(l.selected).toBe(0);
  });

  it("opens on the scoped models when there are some; Tab switches scope and selects the current model where it is listed", () => {
    const scoped = [m("openai", "gpt-5"), m("openai", "gpt-4o")];
    const l = new ModelList({ models, scoped, current: m("openai", "gpt-4o") });
    expect(l.scope).toBe("scoped");
    expect(ids(l)).toEqual(["openai/gpt-5", "openai/gpt-4o"]);
    expect(l.selected).toBe(1);
    expect(l.scopeLine(plain)).toBe("Scope: all | scoped");
    l.toggleScope();
    expect(l.scope).toBe("all");
    expect(ids(l)[l.selected]).toBe("openai/gpt-4o");
    const none = new ModelList({ models });
    none.toggleScope();
    expect(none.scope).toBe("all");
    expect(none.scopeLine(plain)).toBeUndefined();
  });

  it("new models keep the selection on the model it was on; moving wraps", () => {
    const l = new ModelList({ models });
    l.move(-1);
    expect(ids(l)[l.selected]).toBe("zed/zeta");
    l.setModels([m("aaa", "new"), ...models]);
    expect(ids(l)[0]).toBe("aaa/new");
    expect(ids(l)[l.selected]).toBe("zed/zeta");
    l.move(1);
    expect(l.selected).toBe(0);
  });

  it("a search typed before the first models arrive selects the best match, not the current model", () => {
    const l = new ModelList<ModelLike>({ models: [], current: m("openai", "gpt-4o") });
    l.query = "gpt-5";
    l.setModels(models);
    expect(ids(l)[l.selected]).toBe("openai/gpt-5");
  });

  it("offers the available models (all of them when none is), the faux ones only while one is in use", () => {
    const faux = m("faux", "faux-1");
    expect(offeredModels([models[0]!, faux], models, undefined)).toEqual([models[0]]);
    expect(offeredModels([], [faux, models[1]!], undefined)).toEqual([models[1]]);
    expect(offeredModels([models[0]!, faux], [], faux)).toEqual([models[0], faux]);
  });
});
