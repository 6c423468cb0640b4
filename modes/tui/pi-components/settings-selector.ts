/**
 * pi 1.6's SettingsSelectorComponent as a pi-tui component: a searchable pi-tui SettingsList of
 * the settings in `config` (pi 1.6's SettingsConfig fields), each change reported through its
 * callback of `callbacks` (pi 1.6's SettingsCallbacks) with the value typed as the setting is
 * (boolean, number, name). A setting the config does not carry is not listed, so a host passes
 * what its settings have. The theme opens a list of `availableThemes` (previewed while moving).
 */
import type { Component, Container, SettingItem, SettingsList } from "@earendil-works/pi-tui";
import { DynamicBorder, getSelectListTheme, getSettingsListTheme } from "../pi-theme.js";
import { TREE_FILTERS } from "../tree-model.js";
import { lazyClass, piTui } from "./selector-kit.js";

type Kind = "bool" | "int" | "text";
interface Row {
  id: string;
  key: string;
  label: string;
  description: string;
  values: string[] | ((config: Record<string, unknown>) => string[]);
  kind: Kind;
  callback: string;
}

const BOOL = ["true", "false"];
const MODES = ["one-at-a-time", "all"];
const FILTERS = TREE_FILTERS.map((f) => f.mode);

/** The settings listed, in pi 1.6's order. */
const ROWS: Row[] = [
  { id: "autocompact", key: "autoCompact", label: "Auto-compact", description: "Compact the context automatically when it nears the window", values: BOOL, kind: "bool", callback: "onAutoCompactChange" },
  { id: "show-images", key: "showImages", label: "Show images", description: "Draw images inline (terminals that can)", values: BOOL, kind: "bool", callback: "onShowImagesChange" },
  { id: "image-width-cells", key: "imageWidthCells", label: "Image width", description: "Width of inline images in terminal cells", values: (c) => [...new Set(["60", "80", "120", String(c.imageWidthCells)])], kind: "int", callback: "onImageWidthCellsChange" },
  { id: "auto-resize-images", key: "autoResizeImages", label: "Auto-resize images", description: "Scale large images down before sending them to the model", values: BOOL, kind: "bool", callback: "onAutoResizeImagesChange" },
  { id: "block-images", key: "blockImages", label: "Block images", description: "Never send images to the model", values: BOOL, kind: "bool", callback: "onBlockImagesChange" },
  { id: "skill-commands", key: "enableSkillCommands", label: "Skill commands", description: "Offer /skill:name commands for the loaded skills", values: BOOL, kind: "bool", callback: "onEnableSkillCommandsChange" },
  { id: "steering-mode", key: "steeringMode", label: "Steering mode", description: "Messages typed while the agent works: delivered one at a time, or all at once", values: MODES, kind: "text", callback: "onSteeringModeChange" },
  { id: "follow-up-mode", key: "followUpMode", label: "Follow-up mode", description: "Follow-up messages queued until the agent stops: one at a time, or all at once", values: MODES, kind: "text", callback: "onFollowUpModeChange" },
  { id: "transport", key: "transport", label: "Transport", description: "Preferred transport where a provider offers several", values: ["sse", "websocket", "websocket-cached", "auto"], kind: "text", callback: "onTransportChange" },
  { id: "cache-warming-mode", key: "cacheWarmingMode", label: "Cache warming", description: "Keep the provider's prompt cache warm between turns", values: (c) => [...new Set(["off", "auto", String(c.cacheWarmingMode)])], kind: "text", callback: "onCacheWarmingModeChange" },
  { id: "hide-thinking", key: "hideThinkingBlock", label: "Hide thinking", description: "Collapse the model's thinking in the chat", values: BOOL, kind: "bool", callback: "onHideThinkingBlockChange" },
  { id: "cache-miss-notices", key: "showCacheMissNotices", label: "Cache miss notices", description: "Say when a turn missed the prompt cache", values: BOOL, kind: "bool", callback: "onShowCacheMissNoticesChange" },
  { id: "collapse-changelog", key: "collapseChangelog", label: "Collapse changelog", description: "Show a one-line changelog notice after updates", values: BOOL, kind: "bool", callback: "onCollapseChangelogChange" },
  { id: "quiet-startup", key: "quietStartup", label: "Quiet startup", description: "Leave out the start-up listing of loaded resources", values: ["false", "header", "true"], kind: "text", callback: "onQuietStartupChange" },
  { id: "default-project-trust", key: "defaultProjectTrust", label: "Project trust", description: "What to do with a project that carries its own code", values: (c) => [...new Set(["ask", "always", "never", String(c.defaultProjectTrust)])], kind: "text", callback: "onDefaultProjectTrustChange" },
  { id: "double-escape-action", key: "doubleEscapeAction", label: "Double escape", description: "What Escape twice on an empty editor opens", values: ["tree", "fork", "none"], kind: "text", callback: "onDoubleEscapeActionChange" },
  { id: "tree-filter-mode", key: "treeFilterMode", label: "Tree filter", description: "The filter /tree opens with", values: FILTERS, kind: "text", callback: "onTreeFilterModeChange" },
  { id: "show-hardware-cursor", key: "showHardwareCursor", label: "Hardware cursor", description: "Show the terminal's own cursor in the editor", values: BOOL, kind: "bool", callback: "onShowHardwareCursorChange" },
  { id: "editor-padding", key: "editorPaddingX", label: "Editor padding", description: "Columns of padding left and right of the editor", values: ["0", "1", "2", "3"], kind: "int", callback: "onEditorPaddingXChange" },
  { id: "output-padding", key: "outputPad", label: "Output padding", description: "Column of padding around the chat output", values: ["0", "1"], kind: "int", callback: "onOutputPadChange" },
  { id: "autocomplete-max-visible", key: "autocompleteMaxVisible", label: "Completion rows", description: "Rows the completion menu shows at most", values: ["3", "5", "7", "10", "15", "20"], kind: "int", callback: "onAutocompleteMaxVisibleChange" },
  { id: "clear-on-shrink", key: "clearOnShrink", label: "Clear on shrink", description: "Redraw the whole screen when the output shrinks", values: BOOL, kind: "bool", callback: "onClearOnShrinkChange" },
  { id: "terminal-progress", key: "showTerminalProgress", label: "Terminal progress", description: "Report progress to the terminal (tab/taskbar indicator)", values: BOOL, kind: "bool", callback: "onShowTerminalProgressChange" },
  { id: "tui-mode", key: "tuiMode", label: "TUI mode", description: "Fullscreen (alternate screen) or regular (keeps the terminal's scrollback)", values: ["regular", "fullscreen"], kind: "text", callback: "onTuiModeChange" },
  { id: "fullscreen-exit-output", key: "fullscreenExitOutput", label: "Fullscreen exit output", description: "What fullscreen mode leaves on the terminal when it ends", values: (c) => [...new Set(["none", "last", "all", String(c.fullscreenExitOutput)])], kind: "text", callback: "onFullscreenExitOutputChange" },
  { id: "fullscreen-copy-on-select", key: "fullscreenCopyOnSelect", label: "Copy on select", description: "Copy text selected with the mouse in fullscreen mode", values: BOOL, kind: "bool", callback: "onFullscreenCopyOnSelectChange" },
];

const valueText = (v: unknown) => (typeof v === "boolean" ? String(v) : v === undefined || v === null ? "" : String(v));

function parse(row: Row, value: string): unknown {
  if (row.kind === "bool") return value === "true";
  if (row.kind === "int") return parseInt(value, 10);
  if (row.id === "quiet-startup") return value === "header" ? "header" : value === "true";
  return value;
}

export interface SettingsSelectorComponent extends Container {
  getSettingsList(): SettingsList;
  handleInput(data: string): void;
}

export const SettingsSelectorComponent: new (config: Record<string, any>, callbacks: Record<string, any>) => SettingsSelectorComponent = lazyClass("SettingsSelectorComponent", () => {
  const { Container: PiContainer, SelectList, SettingsList: PiSettingsList } = piTui();

  /** The theme list a theme item opens: moving previews, Enter picks, Escape restores. */
  function themeMenu(current: string, names: string[], callbacks: Record<string, any>, done: (v?: string) => void): Component {
    const box = new PiContainer();
    const list = new SelectList(
      names.map((n) => ({ value: n, label: n, description: n === current ? "(current)" : undefined })),
      10,
      getSelectListTheme(),
      { minPrimaryColumnWidth: 12, maxPrimaryColumnWidth: 32 },
    );
    const at = names.indexOf(current);
    if (at >= 0) list.setSelectedIndex(at);
    list.onSelectionChange = (item) => callbacks.onThemePreview?.(item.value);
    list.onSelect = (item) => done(item.value);
    list.onCancel = () => {
      callbacks.onThemePreview?.(current);
      done();
    };
    box.addChild(list);
    return Object.assign(box, { handleInput: (d: string) => list.handleInput(d) });
  }

  class SettingsSelector extends PiContainer {
    private readonly list: SettingsList;
    constructor(config: Record<string, any>, callbacks: Record<string, any>) {
      super();
      if (!config || typeof config !== "object") throw new TypeError("SettingsSelectorComponent: config must be an object of setting values (pi's SettingsConfig)");
      if (!callbacks || typeof callbacks !== "object") throw new TypeError("SettingsSelectorComponent: callbacks must be an object of change handlers (pi's SettingsCallbacks)");
      const rows = ROWS.filter((r) => config[r.key] !== undefined);
      const items: SettingItem[] = rows.map((r) => {
        const current = valueText(config[r.key]);
        const values = typeof r.values === "function" ? r.values(config) : r.values;
        return { id: r.id, label: r.label, description: r.description, currentValue: current, values: values.includes(current) ? values : [current, ...values] };
      });
      if (typeof config.currentTheme === "string") {
        const names: string[] = Array.isArray(config.availableThemes) && config.availableThemes.length ? config.availableThemes : [config.currentTheme];
        items.push({ id: "theme", label: "Theme", description: "Colour theme of the interface", currentValue: config.currentTheme, submenu: (cur, done) => themeMenu(cur, names, callbacks, done) });
      }
      this.addChild(new DynamicBorder());
      this.list = new PiSettingsList(
        items,
        10,
        getSettingsListTheme(),
        (id, value) => {
          if (id === "theme") return void callbacks.onThemeChange?.(value);
          const row = rows.find((r) => r.id === id);
          const fn = row && callbacks[row.callback];
          if (typeof fn === "function") fn(parse(row!, value));
        },
        () => callbacks.onCancel?.(),
        { enableSearch: true },
      );
      this.addChild(this.list);
      this.addChild(new DynamicBorder());
    }
    handleInput(data: string): void {
      this.list.handleInput(data);
    }
    getSettingsList(): SettingsList {
      return this.list;
    }
  }
  return SettingsSelector as never;
});
