/**
 * /model and /scoped-models. /model picks a model for this session (recorded in the session file);
 * Ctrl+S in its selector also saves it as the default in settings.json. /scoped-models edits the
 * set Ctrl+P cycles through for this session; Ctrl+S there saves it as `enabledModels`.
 */
import { fuzzyFilter, resolveModelScope } from "../../core/stores/index.js";
import type { AnyModel } from "../../core/kernel/index.js";
import type { CommandHost } from "./host.js";
import type { KeyPress } from "./keys.js";
import { SelectLayer, type SelectItem } from "./layers.js";
import { ModelList, modelKey as key, modelSearchText, offeredModels } from "./model-list.js";

/** Ctrl+S (or what keybindings.json binds to app.models.save). */
function isSave(app: CommandHost, k: KeyPress): boolean {
  return app.keys.matches(k, "app.models.save") || k.id === "ctrl+s";
}

/** The models /model and /scoped-models offer: the available ones (all, when none has a key). */
async function offered(app: CommandHost): Promise<AnyModel[] | undefined> {
  const registry = app.kernel.service("model-registry");
  if (!registry) {
    app.addNotice("No model registry is installed", "error");
    return undefined;
  }
  const available: AnyModel[] = await registry.getAvailable();
  const models = offeredModels(available, available.length ? [] : registry.getAll(), app.session.model as AnyModel | undefined);
  if (!models.length) {
    app.addNotice(`No models are configured (see ${app.kernel.agentDir}/models.json)`, "warning");
    return undefined;
  }
  return models;
}

export async function selectModel(app: CommandHost, query: string): Promise<void> {
  const models = await offered(app);
  if (!models) return;
  // With a scope (--models, enabledModels, /scoped-models), a typed name is looked up in it first.
  const scoped = ((app.session.scopedModels ?? []) as Array<{ model: AnyModel }>).map((s) => s.model);
  const set = async (m: AnyModel, saveDefault: boolean) => {
    try {
      await app.session.setModel(m, "set", true, saveDefault);
    } catch (e) {
      return app.addNotice((e as Error).message, "error");
    }
    const thinking = m.reasoning ? ` (thinking ${app.session.thinkingLevel})` : "";
    app.addNotice(saveDefault ? `Default model: ${key(m)}${thinking}` : `Model: ${key(m)}${thinking}`, "success");
  };
  if (query) {
    const exact = [...scoped, ...models].find((m) => key(m) === query || m.id === query);
    if (exact) return set(exact, false);
    const hits = fuzzyFilter(models, query, (m) => modelSearchText(m));
    if (hits.length === 1) return set(hits[0]!, false);
  }
  const settings = app.kernel.settings.get();
  const list = new ModelList<AnyModel>({
    models,
    scoped,
    current: app.session.model as AnyModel | undefined,
    defaultModel: settings.defaultProvider && settings.defaultModel ? { provider: settings.defaultProvider, id: settings.defaultModel } : undefined,
  });
  const items = (): SelectItem<AnyModel>[] => list.shown.map((m) => ({ label: key(m), value: m, draw: (_w, sel) => list.drawRow(m, app.theme, sel) }));
  const title = () => (list.hasScope ? `Select a model\nScope: ${list.scope} (Tab: ${list.scope === "all" ? "scoped" : "all"})` : "Select a model");
  let saveDefault = false;
  // A name that picked no single model opens the list searching for it (as pi 1.6).
  const picked = await app.dialog<AnyModel | undefined>((finish) => {
    const layer: SelectLayer<AnyModel> = new SelectLayer<AnyModel>({
      title: title(),
      items: items(),
      search: true,
      cursor: "→ ",
      initialIndex: list.selected,
      maxVisible: 12,
      onDone: finish,
      hint: "↑↓ move · Enter this session · Ctrl+S set as default · Esc cancel · type to search",
      filter: (_items, q) => (list.filter(q), items()),
      onKey: (k, item) => {
        if (k.id === "tab") {
          list.query = layer.query;
          list.toggleScope();
          layer.title = title();
          layer.setItems(items(), false);
          layer.index = list.selected;
          app.requestRender();
          return true;
        }
        if (!isSave(app, k)) return false;
        if (item) {
          saveDefault = true;
          layer.finish(item.value);
        }
        return true;
      },
    });
    if (query) layer.setQuery(query);
    return layer;
  }, undefined);
  if (picked) await set(picked, saveDefault);
}

// ---- /scoped-models --------------------------------------------------------------------------------

export async function scopedModels(app: CommandHost): Promise<void> {
  const models = await offered(app);
  if (!models) return;
  const byKey = new Map(models.map((m) => [key(m), m]));
  const session = app.session;
  const configured = (app.kernel.settings.get().enabledModels as string[] | undefined) ?? [];
  const fromScope = ((session.scopedModels ?? []) as Array<{ model: AnyModel }>).map((s) => key(s.model));
  const fromSettings = configured.length ? resolveModelScope(configured, models).scoped.map((s) => key(s.model)) : [];
  // Enabled models in cycling order; null: no scope (Ctrl+P cycles every available model).
  let enabled: string[] | null = fromScope.length ? fromScope : fromSettings.length ? fromSettings : null;
  const isOn = (k: string) => enabled === null || enabled.includes(k);
  const order = (): string[] => {
    const rest = [...byKey.keys()].filter((k) => !enabled?.includes(k)).sort();
    return enabled ? [...enabled.filter((k) => byKey.has(k)), ...rest] : rest;
  };
  const apply = () => {
    const on = enabled?.filter((k) => byKey.has(k)) ?? [];
    const all = enabled === null || [...byKey.keys()].every((k) => on.includes(k));
    session.scopedModels = !all && on.length ? on.map((k) => ({ model: byKey.get(k)! })) : [];
  };
  const build = (): SelectItem<string>[] =>
    order().map((k) => ({
      label: `${isOn(k) ? "[x]" : "[ ]"} ${k}`,
      description: byKey.get(k)?.name && byKey.get(k)!.name !== byKey.get(k)!.id ? byKey.get(k)!.name : undefined,
      value: k,
      searchText: `${k} ${byKey.get(k)?.name ?? ""}`,
    }));
  const toggle = (keys: string[], on: boolean) => {
    const cur = enabled ?? [...byKey.keys()].sort();
    enabled = on ? [...cur, ...keys.filter((k) => !cur.includes(k))] : cur.filter((k) => !keys.includes(k));
    apply();
  };
  const move = (k: string, step: number) => {
    if (!enabled?.includes(k)) return;
    const i = enabled.indexOf(k);
    const j = i + step;
    if (j < 0 || j >= enabled.length) return;
    const next = [...enabled];
    [next[i], next[j]] = [next[j]!, next[i]!];
    enabled = next;
    apply();
  };
  await app.dialog<undefined>((finish) => {
    const layer: SelectLayer<string> = new SelectLayer<string>({
      title: "Models for Ctrl+P cycling (this session; Ctrl+S saves to settings)",
      items: build(),
      search: true,
      maxVisible: 14,
      onDone: () => finish(undefined),
      hint: "Enter toggle · Ctrl+A all · Ctrl+X clear · Ctrl+P provider · Alt+↑↓ reorder · Ctrl+S save · Esc close",
      onKey: (k, item) => {
        const refresh = () => (layer.setItems(build()), app.requestRender(), true);
        if (app.keys.matches(k, "tui.select.confirm")) {
          if (item) toggle([item.value], !isOn(item.value));
          return refresh();
        }
        if (k.id === "ctrl+a") {
          enabled = null;
          apply();
          return refresh();
        }
        if (k.id === "ctrl+x") {
          enabled = [];
          apply();
          return refresh();
        }
        if (k.id === "ctrl+p" && item) {
          const provider = byKey.get(item.value)?.provider;
          const keys = [...byKey.values()].filter((m) => m.provider === provider).map(key);
          toggle(keys, !keys.every(isOn));
          return refresh();
        }
        if ((k.id === "alt+up" || k.id === "alt+down") && item) {
          move(item.value, k.id === "alt+up" ? -1 : 1);
          return refresh();
        }
        if (isSave(app, k)) {
          const on = enabled?.filter((x) => byKey.has(x)) ?? [];
          const all = enabled === null || [...byKey.keys()].every((x) => on.includes(x));
          app.kernel.settings.update({ enabledModels: all ? [] : on });
          app.addNotice(all ? "Model selection saved to settings (every model cycles)" : `Model selection saved to settings: ${on.join(", ") || "none"}`, "success");
          return true;
        }
        return false;
      },
    });
    return layer;
  }, undefined);
}
