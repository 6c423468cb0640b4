/**
 * pi 1.6's selector components and InteractiveMode: the package exports of
 * sdk/pi16/{search-selectors,selectors,session-selector,tree-selector,settings-selector,interactive-mode}.ts.
 */
export { ModelSelectorComponent, OAuthSelectorComponent, type AuthSelectorProvider, type ModelSource } from "./search-selectors.js";
export { ThinkingSelectorComponent, ThemeSelectorComponent, ShowImagesSelectorComponent, UserMessageSelectorComponent } from "./selectors.js";
export { SessionSelectorComponent } from "./session-selector.js";
export { TreeSelectorComponent, type FilterMode } from "./tree-selector.js";
export { SettingsSelectorComponent } from "./settings-selector.js";
export { InteractiveMode, type InteractiveModeOptions as InteractiveModeClassOptions } from "./interactive-mode.js";
