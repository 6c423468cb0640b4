import { describe, it, expect } from "@jest/globals";
import { getPath, SETTINGS_CATALOG } from "../../core/kernel/lazy.js";
import { configArgument, configCallback, configField, configRows, settingRows, settingsFromConfig } from "./settings-rows.js";

const entry = (id: string) => SETTINGS_CATALOG.find((e) => e.id === id)!;

/** pi 1.6's SettingsConfig with a value for every field the catalog maps to. */
const fullConfig: Record<string, unknown> = {
  autoCompact: false,
  autoResizeImages: true,
  blockImages: false,
  enableSkillCommands: true,
  showHardwareCursor: false,
  editorPaddingX: 2,
  outputPad: 1,
  autocompleteMaxVisible: 7,
  clearOnShrink: false,
  showTerminalProgress: false,
  steeringMode: "all",
  followUpMode: "one-at-a-time",
  transport: "sse",
  sessionShareDestination: "auto",
  httpIdleTimeoutMs: 60_000,
  cacheWarmingMode: "off",
  hideThinkingBlock: true,
  mermaidRenderingMode: "final",
  showCacheMissNotices: false,
  collapseChangelog: false,
  quietStartup: "header",
  enableInstallTelemetry: true,
  defaultProjectTrust: "ask",
  doubleEscapeAction: "fork",
  treeFilterMode: "no-tools",
  warnings: { anthropicExtraUsage: false, other: true },
  tuiMode: "regular",
  fullscreenExitOutput: "transcript",
  fullscreenScrollbar: "auto",
  fullscreenCopyOnSelect: true,
  fullscreenWheelScrollLines: "auto",
  currentTheme: "light",
  availableThemes: ["dark", "light", "ocean"],
};

describe("settings rows", () => {
  it("/settings lists every catalog entry in the catalog's order; the project file leaves out the global-only ones", () => {
    expect(settingRows({}).map((r) => r.id)).toEqual(SETTINGS_CATALOG.map((e) => e.id));
    const project = settingRows({}, { scope: "project" }).map((r) => r.id);
    expect(project).not.toContain("default-project-trust");
    expect(project).toContain("autocompact");
  });

  it("the value shown is among the values cycled; the theme cycles through the themes there are", () => {
    const rows = settingRows({ editorPaddingX: 7, theme: "mine" }, { themes: ["dark", "light"] });
    expect(rows.find((r) => r.id === "editor-padding")).toMatchObject({ value: "7", values: ["7", "0", "1", "2", "3"] });
    expect(rows.find((r) => r.id === "theme")).toMatchObject({ value: "mine", values: ["dark", "light", "mine"] });
    expect(rows.find((r) => r.id === "model-thinking")!.values).toBeUndefined();
  });

  it("the component's rows are the same rows: every catalog entry with values and a SettingsConfig field, same label, description and values", () => {
    const fromConfig = configRows(fullConfig);
    const mapped = SETTINGS_CATALOG.filter((e) => e.values && configField(e));
    expect(fromConfig.map((r) => r.id)).toEqual(mapped.map((e) => e.id));
    const screen = settingRows(settingsFromConfig(fullConfig), { themes: ["dark", "light", "ocean"] });
    for (const r of fromConfig) {
      const s = screen.find((x) => x.id === r.id)!;
      expect([r.id, r.label, r.description, r.value, r.values]).toEqual([s.id, s.label, s.description, s.value, s.values]);
    }
    // Every catalog entry pi's config can carry is there (this build's own and the picker entries are not).
    expect(SETTINGS_CATALOG.filter((e) => !mapped.includes(e)).map((e) => e.id)).toEqual(["model-thinking", "auto-retry", "default-thinking"]);
  });

  it("reads the config's values under the catalog's keys", () => {
    const rows = configRows(fullConfig);
    const value = (id: string) => rows.find((r) => r.id === id)?.value;
    expect([value("autocompact"), value("http-idle-timeout"), value("mermaid-rendering"), value("warnings"), value("quiet-startup"), value("theme")]).toEqual(["false", "1 min", "final", "false", "header", "light"]);
    expect(configRows({ steeringMode: "all" }).map((r) => r.id)).toEqual(["steering-mode"]);
  });

  it("a change goes to pi's callback for the field, typed as the setting is", () => {
    const call = (id: string, v: string) => [configCallback(entry(id)), configArgument(entry(id), v, fullConfig)];
    expect(call("autocompact", "true")).toEqual(["onAutoCompactChange", true]);
    expect(call("editor-padding", "3")).toEqual(["onEditorPaddingXChange", 3]);
    expect(call("http-idle-timeout", "disabled")).toEqual(["onHttpIdleTimeoutMsChange", 0]);
    expect(call("quiet-startup", "header")).toEqual(["onQuietStartupChange", "header"]);
    expect(call("cache-warming-mode", "idle")).toEqual(["onCacheWarmingModeChange", "idle"]);
    expect(call("mermaid-rendering", "off")).toEqual(["onMermaidRenderingModeChange", "off"]);
    expect(call("warnings", "true")).toEqual(["onWarningsChange", { anthropicExtraUsage: true, other: true }]);
    expect(configCallback(entry("theme"))).toBe("onThemeChange");
    expect(getPath(settingsFromConfig(fullConfig), "compaction.enabled")).toBe(false);
  });
});
