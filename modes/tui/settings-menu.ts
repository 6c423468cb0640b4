/**
 * /settings: the settings screen over the global settings, with the entries that change the
 * running session applied at once (theme, thinking display, queue modes, auto-compaction,
 * auto-retry, the session's thinking level) and saved for the next start.
 */
import type { ThinkingLevel } from "../../core/kernel/index.js";
import { supportedThinkingLevels } from "../../core/stores/index.js";
import type { CommandHost } from "./host.js";
import { catalogEntries, saveEntry, SettingsLayer, type ScreenEntry } from "./settings-screen.js";

/** Apply a chosen value to the running session where the setting is live. */
function applyLive(app: CommandHost, id: string, value: string): void {
  const on = value === "true";
  switch (id) {
    case "theme": {
      const t = app.themes.get(value);
      if (t) app.setTheme(t);
      break;
    }
    case "hide-thinking":
      app.setShowThinking(!on);
      break;
    case "steering-mode":
      app.session.steeringMode = value;
      break;
    case "follow-up-mode":
      app.session.followUpMode = value;
      break;
    case "autocompact":
      app.session.autoCompactionEnabled = on;
      break;
    case "auto-retry":
      app.session.autoRetryEnabled = on;
      break;
  }
}

/** Pick a model, then its start-up thinking level (or clear it). */
async function modelThinking(app: CommandHost): Promise<void> {
  const registry = app.kernel.service("model-registry");
  const models = registry ? await registry.getAvailable() : [];
  if (!models.length) {
    app.addNotice("No models are available to configure", "warning");
    return;
  }
  const map = (app.kernel.settings.get() as Record<string, any>).modelThinkingLevels ?? {};
  const key = await app.select(
    "Default thinking level for which model?",
    models.map((m) => ({ label: `${m.provider}/${m.id}`, value: `${m.provider}/${m.id}`, description: map[`${m.provider}/${m.id}`] })),
    { search: true, maxVisible: 12 },
  );
  if (!key) return;
  // The levels the picked model offers (as pi 1.6's per-model list).
  const levels: ThinkingLevel[] = supportedThinkingLevels(models.find((m) => `${m.provider}/${m.id}` === key));
  const level = await app.select(
    `Thinking level ${key} starts with`,
    [...levels.map((l) => ({ label: l, value: l as string, description: map[key] === l ? "✓ current" : undefined })), { label: "(clear)", value: "", description: "use defaultThinkingLevel" }],
    { initialIndex: Math.max(0, levels.indexOf(map[key])) },
  );
  if (level === undefined) return;
  const next = { ...map };
  if (level) next[key] = level;
  else delete next[key];
  // update() merges objects, so a cleared entry needs the whole map replaced.
  app.kernel.settings.update({ modelThinkingLevels: null });
  app.kernel.settings.update({ modelThinkingLevels: next });
}

export async function openSettings(app: CommandHost): Promise<void> {
  const settings = app.kernel.settings;
  const entries = catalogEntries(settings, "global", [...app.themes.keys()]);
  let reopenState: { index: number; query: string } | undefined;
  for (;;) {
    let reopen: ScreenEntry | undefined;
    let lastIndex = 0;
    let lastQuery = "";
    await app.dialog<void>((finish) => {
      const layer = new SettingsLayer({
        title: "Settings",
        entries,
        change: (e, value) => {
          const entry = entries.find((x) => x.id === e.id)!.entry;
          if (saveEntry(settings, entry, value, "global")) applyLive(app, e.id, value);
          else app.addNotice(`Could not save ${entry.key}`, "error");
          app.requestRender();
        },
        open: (e) => {
          reopen = e;
          lastIndex = layer.index;
          lastQuery = layer.query;
          finish();
        },
        close: () => finish(),
      });
      if (reopenState) {
        layer.setQuery(reopenState.query);
        layer.index = reopenState.index;
      }
      return layer;
    }, undefined);
    if (!reopen) return;
    if (reopen.id === "model-thinking") await modelThinking(app);
    reopenState = { index: lastIndex, query: lastQuery };
  }
}
