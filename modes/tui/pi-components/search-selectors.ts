/**
 * pi 1.6's searchable list selectors as pi-tui components (constructor signatures and callbacks
 * of its dist/modes/interactive/components/*.d.ts, and pi 0.73.1's older forms), on this
 * project's data: ModelSelectorComponent (our model registry and settings) and
 * OAuthSelectorComponent (providers with their auth status, or our auth storage). Each class is
 * built on first use (see selector-kit.ts).
 */
import type { Container, Input, TUI } from "@earendil-works/pi-tui";
import { ModelList, type ModelLike } from "../model-list.js";
import { DynamicBorder } from "../pi-theme.js";
import { keyIs, keyText, lazyClass, moveSelection, piTui, row, rowsBox, theme, windowOf } from "./selector-kit.js";


// ---- ModelSelectorComponent -------------------------------------------------------------------

/**
 * What the model selector reads: pi 1.6's ModelRuntime (getAvailableSnapshot) or this project's
 * ModelRegistry (getAvailable, resolved when the selector opens); getError for models.json errors.
 */
export interface ModelSource {
  getAvailableSnapshot?(): ModelLike[];
  getAvailable?(): Promise<ModelLike[]> | ModelLike[];
  getModel?(provider: string, id: string): ModelLike | undefined;
  find?(provider: string, id: string): ModelLike | undefined;
  getError?(): string | undefined;
}
interface ScopedModelItem {
  model: ModelLike;
  thinkingLevel?: string;
}

export interface ModelSelectorComponent extends Container {
  readonly capturesViewportInput: boolean;
  focused: boolean;
  handleInput(data: string): void;
  getSearchInput(): Input;
  dispose(): void;
}

const MODEL_ROWS = 10;

/** What the 0.73.1 form's settings manager offers (ours or pi 0.73.1's): the default model, read and saved. */
interface DefaultModelSettings {
  get?(): { defaultProvider?: string; defaultModel?: string };
  getDefaultProvider?(): string | undefined;
  getDefaultModel?(): string | undefined;
  setDefaultModelAndProvider?(provider: string, modelId: string): void;
  update?(patch: Record<string, unknown>): unknown;
}

export interface ModelSelectorConstructor {
  /** pi 1.6. */
  new (
    tui: TUI,
    currentModel: ModelLike | undefined,
    modelRuntime: ModelSource,
    scopedModels: ReadonlyArray<ScopedModelItem>,
    onSelect: (model: any) => void,
    onCancel: () => void,
    initialSearchInput?: string,
    onSelectAsDefault?: (model: any) => void,
    defaultModel?: { provider: string; id: string },
  ): ModelSelectorComponent;
  /** pi 0.73.1: the default model is read from the settings manager, and a selection is saved there as the new default. */
  new (
    tui: TUI,
    currentModel: ModelLike | undefined,
    settingsManager: DefaultModelSettings,
    modelRegistry: ModelSource,
    scopedModels: ReadonlyArray<ScopedModelItem>,
    onSelect: (model: any) => void,
    onCancel: () => void,
    initialSearchInput?: string,
  ): ModelSelectorComponent;
}

export const ModelSelectorComponent: ModelSelectorConstructor = lazyClass("ModelSelectorComponent", () => {
  const { Container: PiContainer, Input: PiInput, Spacer } = piTui();
  class ModelSelector extends PiContainer {
    readonly capturesViewportInput = true;
    private readonly search = new PiInput();
    private readonly list: ModelList<ModelLike>;
    private error?: string;
    private loading = false;
    private closed = false;
    private _focused = false;

    private readonly tui: TUI;
    private readonly source: ModelSource;
    private readonly onSelect: (model: any) => void;
    private readonly onCancel: () => void;
    private readonly onSelectAsDefault?: (model: any) => void;
    /** The 0.73.1 form's settings manager: a selection becomes the saved default. */
    private readonly saveTo?: DefaultModelSettings;

    constructor(...args: any[]) {
      super();
      // pi 0.73.1 passes (tui, current, settingsManager, modelRegistry, scopedModels, onSelect, onCancel, search)
      const old = args[3] && typeof args[3] === "object" && !Array.isArray(args[3]) && Array.isArray(args[4]);
      const [tui, current] = args as [TUI, ModelLike | undefined];
      const [source, scopedModels, onSelect, onCancel, initialSearchInput] = (old ? args.slice(3, 8) : args.slice(2, 7)) as [ModelSource, ReadonlyArray<ScopedModelItem>, (m: any) => void, () => void, string | undefined];
      this.tui = tui;
      this.source = source;
      this.onSelect = onSelect;
      this.onCancel = onCancel;
      let defaultModel: { provider: string; id: string } | undefined;
      if (old) {
        const sm = args[2] as DefaultModelSettings;
        this.saveTo = sm;
        const provider = sm.getDefaultProvider?.() ?? sm.get?.().defaultProvider;
        const id = sm.getDefaultModel?.() ?? sm.get?.().defaultModel;
        defaultModel = provider && id ? { provider, id } : undefined;
      } else {
        this.onSelectAsDefault = args[7];
        defaultModel = args[8];
      }
      if (typeof onSelect !== "function" || typeof onCancel !== "function") throw new TypeError("ModelSelectorComponent: onSelect and onCancel must be functions");
      if (!source || typeof source !== "object") throw new TypeError("ModelSelectorComponent: modelRuntime must be a model registry (getAvailable) or model runtime (getAvailableSnapshot)");
      this.list = new ModelList<ModelLike>({ models: [], scoped: (scopedModels ?? []).map((s) => s.model), current, defaultModel });
      if (initialSearchInput) this.search.setValue(initialSearchInput);
      this.search.onSubmit = () => this.choose();
      const t = theme();
      this.addChild(new DynamicBorder());
      this.addChild(new Spacer(1));
      this.addChild(
        rowsBox(() => {
          const scope = this.list.scopeLine(t);
          return scope ? [scope, t.fg("dim", keyText("tui.input.tab")) + t.fg("muted", " scope (all/scoped)")] : [t.fg("warning", "Only showing models from configured providers. Use /login to add providers.")];
        }),
      );
      this.addChild(new Spacer(1));
      this.addChild(this.search);
      this.addChild(new Spacer(1));
      this.addChild(rowsBox(() => this.listLines()));
      this.addChild(new Spacer(1));
      if (this.onSelectAsDefault) {
        this.addChild(row(t.fg("dim", `  ${keyText("tui.select.confirm")} to select · ${keyText("app.models.save")} to set as default · ${keyText("tui.select.cancel")} to cancel`)));
      }
      this.addChild(new DynamicBorder());
      this.load();
    }

    get focused(): boolean {
      return this._focused;
    }
    set focused(v: boolean) {
      this._focused = v;
      this.search.focused = v;
    }

    private load(): void {
      const fresh = (m: ModelLike) => this.source.getModel?.(m.provider, m.id) ?? this.source.find?.(m.provider, m.id) ?? m;
      const apply = (models: ModelLike[]) => {
        this.list.query = this.search.getValue();
        this.list.setModels(models, this.list.scoped.map(fresh));
        this.error = this.source.getError?.();
      };
      if (typeof this.source.getAvailableSnapshot === "function") return apply(this.source.getAvailableSnapshot());
      if (typeof this.source.getAvailable !== "function") throw new TypeError("ModelSelectorComponent: modelRuntime has neither getAvailableSnapshot() nor getAvailable()");
      this.loading = true;
      this.list.filter(this.search.getValue());
      void Promise.resolve(this.source.getAvailable()).then(
        (models) => {
          if (this.closed) return;
          this.loading = false;
          apply(models);
          this.tui.requestRender();
        },
        (e: unknown) => {
          if (this.closed) return;
          this.loading = false;
          this.error = `Could not list the models: ${e instanceof Error ? e.message : String(e)}`;
          this.tui.requestRender();
        },
      );
    }

    private listLines(): string[] {
      const t = theme();
      const out: string[] = [];
      const { shown, selected } = this.list;
      const [start, end] = windowOf(selected, shown.length, MODEL_ROWS);
      for (let i = start; i < end; i++) out.push((i === selected ? t.fg("accent", "→ ") : "  ") + this.list.drawRow(shown[i]!, t, i === selected));
      if (start > 0 || end < shown.length) out.push(t.fg("muted", `  (${selected + 1}/${shown.length})`));
      if (this.error) out.push(...this.error.split("\n").map((l) => t.fg("error", l)));
      else if (this.loading) out.push(t.fg("muted", "  Loading models…"));
      else if (!shown.length) out.push(t.fg("muted", "  No matching models"));
      else out.push("", t.fg("muted", `  ${this.list.detail()}`));
      return out;
    }

    handleInput(data: string): void {
      if (keyIs(data, "tui.input.tab")) {
        this.list.toggleScope();
        return;
      }
      const moved = moveSelection(data, this.list.selected, this.list.shown.length, MODEL_ROWS);
      if (moved !== undefined) this.list.selected = moved;
      else if (keyIs(data, "tui.select.confirm")) this.choose();
      else if (keyIs(data, "tui.select.cancel")) {
        this.dispose();
        this.onCancel();
      } else if (keyIs(data, "app.models.save") && this.onSelectAsDefault) {
        const m = this.list.selectedModel;
        if (m) {
          this.dispose();
          this.onSelectAsDefault(m);
        }
      } else if (!keyIs(data, "tui.select.up") && !keyIs(data, "tui.select.down")) {
        const before = this.search.getValue();
        this.search.handleInput(data);
        if (this.search.getValue() !== before) this.list.filter(this.search.getValue());
      }
    }

    private choose(): void {
      const m = this.list.selectedModel;
      if (!m) return;
      this.dispose();
      if (this.saveTo?.setDefaultModelAndProvider) this.saveTo.setDefaultModelAndProvider(m.provider, m.id);
      else this.saveTo?.update?.({ defaultProvider: m.provider, defaultModel: m.id });
      this.onSelect(m);
    }

    getSearchInput(): Input {
      return this.search;
    }
    dispose(): void {
      this.closed = true;
    }
  }
  return ModelSelector as never;
});

// ---- OAuthSelectorComponent -------------------------------------------------------------------

export interface AuthSelectorProvider {
  id: string;
  name: string;
  authType: "oauth" | "api_key";
  method?: { name?: string };
  /** How the provider is configured now (type and where the credential comes from), if it is. */
  status?: { type: "oauth" | "api_key"; source?: string };
  subscription?: boolean;
}

function authTypeLabel(type: "oauth" | "api_key", subscription?: boolean): string {
  return type === "api_key" ? "API key" : subscription === false ? "account" : "subscription";
}

function authStatus(p: AuthSelectorProvider): string {
  const t = theme();
  if (!p.status) return t.fg("muted", " • not configured");
  if (p.status.type !== p.authType) return t.fg("muted", " • ") + t.fg("warning", `${authTypeLabel(p.status.type, p.subscription)} configured`);
  const src = p.status.source;
  if (!src || src === "OAuth" || src === "stored credential" || src === "stored") return t.fg("success", " ✓ configured");
  return t.fg("success", ` ✓ ${/^[A-Z][A-Z0-9_]*(, [A-Z][A-Z0-9_]*)*$/.test(src) ? `env: ${src}` : src}`);
}

export interface OAuthSelectorComponent extends Container {
  readonly capturesViewportInput: boolean;
  focused: boolean;
  handleInput(data: string): void;
  dispose(): void;
}

const AUTH_ROWS = 8;

/** What the 0.73.1 form reads the providers' status from (our AuthStorage or pi 0.73.1's). */
interface AuthStatusSource {
  get(providerId: string): { type: string } | undefined;
  getAuthStatus?(providerId: string): AuthStatusLike | Promise<AuthStatusLike>;
}
type AuthStatusLike = { configured?: boolean; source?: string; label?: string };

export interface OAuthSelectorConstructor {
  /** pi 1.6: the providers carry their status. */
  new (
    mode: "login" | "logout",
    providers: AuthSelectorProvider[],
    onSelect: (providerId: string, authType: "oauth" | "api_key") => void,
    onCancel: () => void,
    initialSearchInput?: string,
    tui?: TUI,
  ): OAuthSelectorComponent;
  /** pi 0.73.1: the status comes from the auth storage (or `getAuthStatus`). */
  new (
    mode: "login" | "logout",
    authStorage: AuthStatusSource,
    providers: AuthSelectorProvider[],
    onSelect: (providerId: string) => void,
    onCancel: () => void,
    getAuthStatus?: (providerId: string) => AuthStatusLike | Promise<AuthStatusLike>,
  ): OAuthSelectorComponent;
}

const STATUS_SOURCES: Record<string, string> = { runtime: "runtime API key", fallback: "custom API key", models_json_key: "key in models.json", models_json_command: "command in models.json" };

/** A provider's status the 0.73.1 way: its stored credential, else (API keys) where a key would come from. */
function statusFrom(auth: AuthStatusSource, p: AuthSelectorProvider, st: AuthStatusLike | undefined): AuthSelectorProvider["status"] {
  const cred = auth.get(p.id);
  if (cred?.type === "oauth" || cred?.type === "api_key") return { type: cred.type, source: "stored credential" };
  if (p.authType !== "api_key" || !st?.configured) return undefined;
  if (st.source === "environment") return { type: "api_key", source: st.label ?? "environment" };
  return { type: "api_key", source: STATUS_SOURCES[st.source ?? ""] ?? st.label ?? st.source };
}

export const OAuthSelectorComponent: OAuthSelectorConstructor = lazyClass("OAuthSelectorComponent", () => {
  const { Container: PiContainer, Input: PiInput, Spacer, fuzzyFilter } = piTui();
  class OAuthSelector extends PiContainer {
    readonly capturesViewportInput = true;
    private readonly search = new PiInput();
    private shown: AuthSelectorProvider[];
    private selected = 0;
    private readonly labels: boolean;
    private _focused = false;

    private readonly mode: "login" | "logout";
    private readonly providers: AuthSelectorProvider[];
    private readonly onSelect: (providerId: string, authType: "oauth" | "api_key") => void;
    private readonly onCancel: () => void;

    constructor(mode: "login" | "logout", ...args: any[]) {
      super();
      // pi 0.73.1 passes (mode, authStorage, providers, onSelect, onCancel, getAuthStatus?)
      const old = !Array.isArray(args[0]) && Array.isArray(args[1]);
      let providers = (old ? args[1] : args[0]) as AuthSelectorProvider[];
      const initialSearchInput = old ? undefined : (args[3] as string | undefined);
      this.mode = mode;
      this.onSelect = old ? args[2] : args[1];
      this.onCancel = old ? args[3] : args[2];
      if (old && Array.isArray(providers)) {
        const auth = args[0] as AuthStatusSource;
        const ask = (args[4] as ((id: string) => AuthStatusLike | Promise<AuthStatusLike>) | undefined) ?? ((id: string) => auth.getAuthStatus?.(id) ?? {});
        providers = providers.map((p) => ({ ...p }));
        for (const p of providers) {
          const st = auth.get(p.id) || p.authType !== "api_key" ? undefined : ask(p.id);
          if (st && typeof (st as Promise<AuthStatusLike>).then === "function") void (st as Promise<AuthStatusLike>).then((v) => (p.status = statusFrom(auth, p, v)), () => undefined);
          else p.status = statusFrom(auth, p, st as AuthStatusLike | undefined);
        }
      }
      this.providers = providers;
      if (typeof this.onSelect !== "function" || typeof this.onCancel !== "function") throw new TypeError("OAuthSelectorComponent: onSelect and onCancel must be functions");
      if (mode !== "login" && mode !== "logout") throw new TypeError(`OAuthSelectorComponent: mode must be "login" or "logout" (got ${JSON.stringify(mode)})`);
      if (!Array.isArray(providers)) throw new TypeError("OAuthSelectorComponent: providers must be a list");
      this.shown = providers;
      this.labels = new Set(providers.map((p) => p.authType)).size > 1;
      const t = theme();
      this.addChild(new DynamicBorder());
      this.addChild(new Spacer(1));
      this.addChild(row(" " + t.fg("accent", t.bold(mode === "login" ? "Select provider to configure:" : "Select provider to logout:"))));
      this.addChild(new Spacer(1));
      if (initialSearchInput) this.search.setValue(initialSearchInput);
      this.search.onSubmit = () => this.choose();
      this.addChild(this.search);
      this.addChild(new Spacer(1));
      this.addChild(rowsBox(() => this.listLines()));
      this.addChild(new Spacer(1));
      this.addChild(new DynamicBorder());
      this.filter(initialSearchInput ?? "");
    }

    get focused(): boolean {
      return this._focused;
    }
    set focused(v: boolean) {
      this._focused = v;
      this.search.focused = v;
    }

    private filter(query: string): void {
      this.shown = query ? fuzzyFilter(this.providers, query, (p) => `${p.name} ${p.id} ${p.authType} ${p.method?.name ?? ""}`) : this.providers;
      this.selected = query ? 0 : Math.min(this.selected, Math.max(0, this.shown.length - 1));
    }

    private listLines(): string[] {
      const t = theme();
      const out: string[] = [];
      const [start, end] = windowOf(this.selected, this.shown.length, AUTH_ROWS);
      for (let i = start; i < end; i++) {
        const p = this.shown[i]!;
        const type = this.labels ? t.fg("muted", ` [${authTypeLabel(p.authType, p.subscription)}]`) : "";
        out.push(" " + (i === this.selected ? t.fg("accent", "→ ") + t.fg("accent", p.name) : "  " + p.name) + type + authStatus(p));
      }
      if (start > 0 || end < this.shown.length) out.push(t.fg("muted", `   (${this.selected + 1}/${this.shown.length})`));
      if (!this.shown.length) {
        const none = this.providers.length ? "No matching providers" : this.mode === "login" ? "No providers available" : "No providers logged in. Use /login first.";
        out.push(t.fg("muted", `   ${none}`));
      }
      return out;
    }

    private choose(): void {
      const p = this.shown[this.selected];
      if (p) this.onSelect(p.id, p.authType);
    }

    handleInput(data: string): void {
      const moved = moveSelection(data, this.selected, this.shown.length, AUTH_ROWS, false);
      if (moved !== undefined) this.selected = moved;
      else if (keyIs(data, "tui.select.confirm")) this.choose();
      else if (keyIs(data, "tui.select.cancel")) this.onCancel();
      else if (!keyIs(data, "tui.select.up") && !keyIs(data, "tui.select.down")) {
        const before = this.search.getValue();
        this.search.handleInput(data);
        if (this.search.getValue() !== before) this.filter(this.search.getValue());
      }
    }

    dispose(): void {}
  }
  return OAuthSelector as never;
});
