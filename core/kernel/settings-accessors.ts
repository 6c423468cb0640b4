/**
 * pi's named settings accessors (getTheme/setTheme, getCompactionSettings, …) over the settings
 * this build keeps: each getter reads the merged value (falling back to pi's documented default)
 * and each setter writes the user's settings file (or the project's, for the setProject… forms).
 * Installed on SettingsManager's prototype, so SDK hosts written against pi's SettingsManager
 * find every member it declares, synchronous like pi's.
 */
import { randomUUID } from "node:crypto";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

/** The part of SettingsManager the accessors use. */
export interface SettingsCore {
  get(): object;
  getGlobal(): Obj;
  getProject(): Obj;
  update(patch: Obj, scope?: "global" | "project"): boolean;
  setOverride(key: string, value: unknown): void;
}

/** [method suffix, key path, default, has a setter]; `getX()` reads, `setX(v)` writes. */
const PLAIN = [
  ["LastChangelogVersion", "lastChangelogVersion", undefined, true],
  ["SessionDir", "sessionDir", undefined, false],
  ["DefaultProvider", "defaultProvider", undefined, true],
  ["DefaultModel", "defaultModel", undefined, true],
  ["SteeringMode", "steeringMode", "one-at-a-time", true],
  ["FollowUpMode", "followUpMode", "one-at-a-time", true],
  ["ThemeSetting", "theme", undefined, false],
  ["Theme", "theme", undefined, true],
  ["DefaultThinkingLevel", "defaultThinkingLevel", undefined, true],
  ["Transport", "transport", "sse", true],
  ["SessionShareDestination", "sessionShareDestination", "auto", true],
  ["CompactionEnabled", "compaction.enabled", true, true],
  ["CompactionReserveTokens", "compaction.reserveTokens", 16384, false],
  ["CompactionKeepRecentTokens", "compaction.keepRecentTokens", 20000, false],
  ["BranchSummarySkipPrompt", "branchSummary.skipPrompt", false, false],
  ["RetryEnabled", "retry.enabled", true, true],
  ["HttpIdleTimeoutMs", "httpIdleTimeoutMs", 300000, true],
  ["CacheWarmingMode", "cacheWarming", "idle", true],
  ["WebSocketConnectTimeoutMs", "websocketConnectTimeoutMs", 15000, false],
  ["HideThinkingBlock", "hideThinkingBlock", false, true],
  ["ShowCacheMissNotices", "showCacheMissNotices", false, true],
  ["ShellPath", "shellPath", undefined, true],
  ["QuietStartup", "quietStartup", false, true],
  ["DefaultProjectTrust", "defaultProjectTrust", "ask", true],
  ["ShellCommandPrefix", "shellCommandPrefix", undefined, true],
  ["NpmCommand", "npmCommand", undefined, true],
  ["CollapseChangelog", "collapseChangelog", false, true],
  ["EnableInstallTelemetry", "enableInstallTelemetry", true, true],
  ["EnableAnalytics", "enableAnalytics", false, true],
  ["TrackingId", "trackingId", undefined, false],
  ["Packages", "packages", [], true],
  ["ExtensionPaths", "extensions", [], true],
  ["SkillPaths", "skills", [], true],
  ["PromptTemplatePaths", "prompts", [], true],
  ["ThemePaths", "themes", [], true],
  ["EnableSkillCommands", "enableSkillCommands", true, true],
  ["ThinkingBudgets", "thinkingBudgets", undefined, false],
  ["ShowImages", "terminal.showImages", true, true],
  ["ImageWidthCells", "terminal.imageWidthCells", 60, true],
  ["ClearOnShrink", "terminal.clearOnShrink", false, true],
  ["ShowTerminalProgress", "terminal.showTerminalProgress", false, true],
  ["TuiMode", "tuiMode", "fullscreen", true],
  ["FullscreenExitOutput", "fullscreenExitOutput", "transcript", true],
  ["FullscreenScrollbar", "fullscreenScrollbar", "auto", true],
  ["FullscreenCopyOnSelect", "fullscreenCopyOnSelect", true, true],
  ["FullscreenWheelScrollLines", "fullscreenWheelScrollLines", "auto", true],
  ["ImageAutoResize", "images.autoResize", true, true],
  ["BlockImages", "images.blockImages", false, true],
  ["EnabledModels", "enabledModels", undefined, true],
  ["DefaultTools", "defaultTools", undefined, false],
  ["DoubleEscapeAction", "doubleEscapeAction", "tree", true],
  ["TreeFilterMode", "treeFilterMode", "default", true],
  ["ShowHardwareCursor", "showHardwareCursor", false, true],
  ["EditorPaddingX", "editorPaddingX", 0, true],
  ["OutputPad", "outputPad", 1, true],
  ["AutocompleteMaxVisible", "autocompleteMaxVisible", 5, true],
  ["CodeBlockIndent", "markdown.codeBlockIndent", "  ", false],
  ["MermaidRenderingMode", "markdown.mermaid", "streaming", true],
  ["Warnings", "warnings", {}, true],
] as const;

/** Lists that also have a project-scope setter (setProjectPackages, …). */
const PROJECT_LISTS = [
  ["Packages", "packages"],
  ["ExtensionPaths", "extensions"],
  ["SkillPaths", "skills"],
  ["PromptTemplatePaths", "prompts"],
  ["ThemePaths", "themes"],
] as const;

function read(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const k of path.split(".")) cur = isObj(cur) ? cur[k] : undefined;
  return cur;
}
function patchOf(path: string, value: unknown): Obj {
  return path
    .split(".")
    .reverse()
    .reduce<unknown>((acc, k) => ({ [k]: acc }), value) as Obj;
}
const copy = (v: unknown) => (Array.isArray(v) ? [...v] : isObj(v) ? { ...v } : v);

type Methods = Record<string, (this: SettingsCore, ...args: never[]) => unknown>;

function accessors(): Methods {
  const m: Methods = {};
  for (const [name, path, fallback, settable] of PLAIN) {
    m[`get${name}`] = function () {
      return copy(read(this.get(), path) ?? fallback);
    };
    if (settable)
      m[`set${name}`] = function (value: unknown) {
        this.update(patchOf(path, value));
      };
  }
  for (const [name, key] of PROJECT_LISTS)
    m[`setProject${name}`] = function (value: unknown) {
      this.update({ [key]: value }, "project");
    };
  Object.assign(m, EXTRAS);
  return m;
}

const EXTRAS = {
    getSettings(this: SettingsCore) {
      return structuredClone(this.get());
    },
    getGlobalSettings(this: SettingsCore) {
      return structuredClone(this.getGlobal());
    },
    getProjectSettings(this: SettingsCore) {
      return structuredClone(this.getProject());
    },
    applyOverrides(this: SettingsCore, overrides: Obj) {
      for (const [k, v] of Object.entries(overrides ?? {})) this.setOverride(k, v);
    },
    async flush() {
      // Writes here are synchronous: nothing is pending.
    },
    drainErrors(this: SettingsCore & { diagnostics?: Array<{ level: string; source: string; message: string }> }) {
      const errs = (this.diagnostics ?? []).filter((d) => d.level === "error" || d.level === "warning");
      if (this.diagnostics) this.diagnostics.length = 0;
      return errs.map((d) => ({ scope: d.source.includes("/.pi/") ? "project" : "global", path: d.source, error: new Error(d.message) }));
    },
    getExtensionChangelogVersion(this: SettingsCore, key: string) {
      const all = read(this.get(), "extensionChangelogVersions");
      return isObj(all) && typeof all[key] === "string" ? all[key] : undefined;
    },
    setExtensionChangelogVersion(this: SettingsCore, key: string, version: string) {
      this.update({ extensionChangelogVersions: { [key]: version } });
    },
    setDefaultModelAndProvider(this: SettingsCore, provider: string, modelId: string) {
      this.update({ defaultProvider: provider, defaultModel: modelId });
    },
    getModelThinkingLevel(this: SettingsCore, provider: string, modelId: string) {
      const all = read(this.get(), "modelThinkingLevels");
      return isObj(all) ? (all[`${provider}/${modelId}`] as string | undefined) : undefined;
    },
    getAllModelThinkingLevels(this: SettingsCore) {
      const all = read(this.get(), "modelThinkingLevels");
      return isObj(all) ? { ...all } : {};
    },
    setModelThinkingLevel(this: SettingsCore, provider: string, modelId: string, level: string) {
      this.update({ modelThinkingLevels: { [`${provider}/${modelId}`]: level } });
    },
    removeModelThinkingLevel(this: SettingsCore, provider: string, modelId: string) {
      // An undefined value is dropped when the file is written.
      this.update({ modelThinkingLevels: { [`${provider}/${modelId}`]: undefined } });
    },
    getCompactionSettings(this: SettingsCore & Methods) {
      return { enabled: this.getCompactionEnabled!(), reserveTokens: this.getCompactionReserveTokens!(), keepRecentTokens: this.getCompactionKeepRecentTokens!() };
    },
    getBranchSummarySettings(this: SettingsCore) {
      return { reserveTokens: (read(this.get(), "branchSummary.reserveTokens") as number) ?? 16384, skipPrompt: (read(this.get(), "branchSummary.skipPrompt") as boolean) ?? false };
    },
    getRetrySettings(this: SettingsCore) {
      const r = (read(this.get(), "retry") ?? {}) as Obj;
      return { enabled: r.enabled ?? true, maxRetries: r.maxRetries ?? 3, baseDelayMs: r.baseDelayMs ?? 2000, maxAgentDelayMs: r.maxAgentDelayMs ?? r.maxDelayMs ?? 60000 };
    },
    getProviderRetrySettings(this: SettingsCore) {
      const p = (read(this.get(), "retry.provider") ?? {}) as Obj;
      return { timeoutMs: p.timeoutMs, maxRetries: p.maxRetries ?? 0, maxRetryDelayMs: p.maxRetryDelayMs ?? 60000 };
    },
    getExternalEditorCommand(this: SettingsCore) {
      const set = read(this.get(), "externalEditor");
      return typeof set === "string" && set ? set : process.env.VISUAL || process.env.EDITOR || (process.platform === "win32" ? "notepad" : "vi");
    },
    getTerminalCapabilityOverrides(this: SettingsCore) {
      const c = read(this.get(), "terminal.capabilities");
      return isObj(c) ? { ...c } : {};
    },
    getOrCreateDeviceId(this: SettingsCore) {
      const id = read(this.getGlobal(), "deviceId");
      if (typeof id === "string" && id) return id;
      const fresh = randomUUID();
      this.update({ deviceId: fresh });
      return fresh;
    },
};

/** Adds pi's accessors to a class's prototype (members the class defines itself are kept). */
export function installPiSettingsAccessors(proto: object): void {
  for (const [name, fn] of Object.entries(accessors())) {
    if (Object.prototype.hasOwnProperty.call(proto, name)) continue;
    Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
  }
}

type Row = (typeof PLAIN)[number];
/** The members the accessors add, for the type SettingsManager merges in. */
export type PiSettingsAccessors = { [R in Row as `get${R[0]}`]: () => unknown } & {
  [R in Extract<Row, readonly [string, string, unknown, true]> as `set${R[0]}`]: (value: unknown) => void;
} & { [R in (typeof PROJECT_LISTS)[number] as `setProject${R[0]}`]: (value: unknown) => void } & {
  [K in keyof typeof EXTRAS]: OmitThisParameter<(typeof EXTRAS)[K]>;
};
