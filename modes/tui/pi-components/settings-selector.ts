/**
 * pi 1.6's SettingsSelectorComponent as a pi-tui component: a searchable pi-tui SettingsList of
 * the settings in `config` (pi 1.6's SettingsConfig fields), the rows of the settings catalog
 * that /settings shows too (settings-rows.ts: label, description, values, order), each change
 * reported through its callback of `callbacks` (pi 1.6's SettingsCallbacks) with the value typed
 * as the setting is (boolean, number, name). A setting the config does not carry is not listed,
 * so a host passes what its settings have. The theme opens a list of `availableThemes`
 * (previewed while moving).
 */
import type { Component, Container, SettingItem, SettingsList } from "@earendil-works/pi-tui";
import { DynamicBorder, getSelectListTheme, getSettingsListTheme } from "../pi-theme.js";
import { configArgument, configCallback, configRows, NO_EFFECT_NOTE } from "../settings-rows.js";
import { lazyClass, piTui } from "./selector-kit.js";

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
      const rows = configRows(config);
      const items: SettingItem[] = rows.map((r) => {
        const item: SettingItem = { id: r.id, label: r.label, description: r.description + (r.noEffect ? NO_EFFECT_NOTE : ""), currentValue: r.value };
        if (r.id === "theme") item.submenu = (cur, done) => themeMenu(cur, r.values ?? [cur], callbacks, done);
        else item.values = r.values;
        return item;
      });
      this.addChild(new DynamicBorder());
      this.list = new PiSettingsList(
        items,
        10,
        getSettingsListTheme(),
        (id, value) => {
          const row = rows.find((r) => r.id === id);
          const fn = row && callbacks[configCallback(row.entry) ?? ""];
          if (row && typeof fn === "function") fn(row.id === "theme" ? value : configArgument(row.entry, value, config));
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
