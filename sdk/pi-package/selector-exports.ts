/**
 * The package's selector components (the pi-tui ones in modes/tui/pi-components/) and
 * InteractiveMode (interactive-mode.ts), under the names pi exports them.
 */
export { ModelSelectorComponent, OAuthSelectorComponent, type AuthSelectorProvider, type ModelSource } from "../../modes/tui/pi-components/search-selectors.js";
export { ThinkingSelectorComponent, ThemeSelectorComponent, ShowImagesSelectorComponent, UserMessageSelectorComponent } from "../../modes/tui/pi-components/selectors.js";
export { SessionSelectorComponent } from "../../modes/tui/pi-components/session-selector.js";
export { TreeSelectorComponent, type FilterMode } from "../../modes/tui/pi-components/tree-selector.js";
export { SettingsSelectorComponent } from "../../modes/tui/pi-components/settings-selector.js";
export { InteractiveMode, type InteractiveModeOptions as InteractiveModeClassOptions } from "./interactive-mode.js";
