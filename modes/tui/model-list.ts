/**
 * The model list, the one model behind the TUI's /model picker and the exported
 * ModelSelectorComponent: which models are offered, their order (pi 1.6's: the current model
 * first, the default model second, then by provider, the registry's order kept within a
 * provider), the scope (every available model, or the session's scoped models; Tab switches),
 * the fuzzy search over provider, provider/id, id and name (and "default" for the default
 * model, which a query that starts the word "default" puts first), the selection kept on a
 * model across changes, and the text of one row. The hosts only frame it.
 */
import { fuzzyFilter } from "../../core/stores/index.js";
import type { Painter } from "./tree-model.js";

export interface ModelLike {
  provider: string;
  id: string;
  name?: string;
}

export const modelKey = (m: ModelLike): string => `${m.provider}/${m.id}`;
export const sameModel = (a: ModelLike | undefined, b: ModelLike | undefined): boolean => !!a && !!b && a.provider === b.provider && a.id === b.id;

/**
 * The models offered from what the registry has: the available ones (every one when none has a
 * key); the scripted faux models are for tests and demos, listed only when one is in use.
 */
export function offeredModels<M extends ModelLike>(available: readonly M[], all: readonly M[], current: ModelLike | undefined): M[] {
  const pool = available.length ? available : all;
  return current?.provider === "faux" ? [...pool] : pool.filter((m) => m.provider !== "faux");
}

const words = (s: string) =>
  s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * The model's name when it says something its id does not ("Fast Coder" for "m-1"); undefined
 * when every word of the name is already in the id ("Claude Sonnet 4" for "claude-sonnet-4").
 * A one-character word counts only as a whole word of the id.
 */
export function distinctModelName(m: ModelLike): string | undefined {
  const name = m.name?.trim();
  if (!name) return undefined;
  const idWords = words(m.id);
  const whole = new Set(idWords);
  const joined = idWords.join("");
  return words(name).every((w) => whole.has(w) || (w.length > 1 && joined.includes(w))) ? undefined : name;
}

/** The text a search matches: the provider before the bare id, so "openai/gpt" ranks the provider's own models first. */
export function modelSearchText(m: ModelLike, isDefault = false): string {
  return `${m.provider} ${modelKey(m)} ${m.provider} ${m.id}${m.name ? ` ${m.name}` : ""}${isDefault ? " default" : ""}`;
}

export type ModelScope = "all" | "scoped";

export interface ModelListOptions<M extends ModelLike> {
  models: readonly M[];
  /** The session's scoped models (Ctrl+P's cycle); when there are some, the list opens on them. */
  scoped?: readonly M[];
  current?: ModelLike;
  defaultModel?: { provider: string; id: string };
}

export class ModelList<M extends ModelLike> {
  all: M[] = [];
  scoped: M[] = [];
  scope: ModelScope;
  /** The models the scope and the search leave, in the order shown. */
  shown: M[] = [];
  selected = 0;
  query = "";
  readonly current?: ModelLike;
  readonly defaultModel?: { provider: string; id: string };

  constructor(opts: ModelListOptions<M>) {
    this.current = opts.current;
    this.defaultModel = opts.defaultModel;
    this.scope = opts.scoped?.length ? "scoped" : "all";
    this.setModels(opts.models, opts.scoped);
  }

  isCurrent(m: ModelLike): boolean {
    return sameModel(m, this.current);
  }
  isDefault(m: ModelLike): boolean {
    return !!this.defaultModel && sameModel(m, this.defaultModel);
  }

  /** The current model first, the default second, then by provider (a stable sort keeps the registry's order within one). */
  sort(list: readonly M[]): M[] {
    const rank = (m: M) => (this.isCurrent(m) ? 0 : this.isDefault(m) ? 1 : 2);
    return [...list].sort((a, b) => rank(a) - rank(b) || a.provider.localeCompare(b.provider));
  }

  /**
   * New models (a refreshed registry): the selection stays on the model it was on; on the first
   * models, on the current model (or, with a search typed, on the best match).
   */
  setModels(models: readonly M[], scoped: readonly M[] = this.scoped): void {
    const keep = this.shown[this.selected] ?? (this.query.trim() ? undefined : this.current);
    this.all = this.sort(models);
    this.scoped = [...scoped];
    if (!this.scoped.length) this.scope = "all";
    this.filter(this.query, keep);
  }

  get selectedModel(): M | undefined {
    return this.shown[this.selected];
  }

  get hasScope(): boolean {
    return this.scoped.length > 0;
  }

  /** Tab: the other scope (when there are scoped models), the selection on the current model where it is listed. */
  toggleScope(): void {
    if (!this.hasScope) return;
    this.scope = this.scope === "all" ? "scoped" : "all";
    const pool = this.pool();
    const i = pool.findIndex((m) => this.isCurrent(m));
    this.selected = i >= 0 ? i : 0;
    this.filter(this.query);
  }

  private pool(): M[] {
    return this.scope === "scoped" ? this.scoped : this.all;
  }

  /**
   * Search: the best matches first (the default model first when the query starts "default"),
   * the selection on `preferred` when it is still listed, else on the first match (or kept in
   * range when the search was cleared).
   */
  filter(query: string, preferred?: ModelLike): void {
    this.query = query;
    const pool = this.pool();
    const q = query.trim();
    if (!q) this.shown = pool;
    else {
      const hits = fuzzyFilter(pool, q, (m) => modelSearchText(m, this.isDefault(m)));
      this.shown = "default".startsWith(q.toLowerCase()) ? [...pool.filter((m) => this.isDefault(m)), ...hits.filter((m) => !this.isDefault(m))] : hits;
    }
    const at = preferred ? this.shown.findIndex((m) => sameModel(m, preferred)) : -1;
    this.selected = at >= 0 ? at : q ? 0 : Math.min(this.selected, Math.max(0, this.shown.length - 1));
  }

  /** Up/down, wrapping at the ends. */
  move(step: number): void {
    const n = this.shown.length;
    if (n) this.selected = (((this.selected + step) % n) + n) % n;
  }

  /** One row without the cursor: the current mark, the id (accented when selected), a distinct name, the provider, the default mark. */
  drawRow(m: M, t: Painter, selected = false): string {
    const name = distinctModelName(m);
    return (
      (this.isCurrent(m) ? t.fg("accent", "✓ ") : "  ") +
      (selected ? t.fg("accent", m.id) : m.id) +
      (name ? t.fg("muted", ` (${name})`) : "") +
      " " +
      t.fg("muted", `[${m.provider}]`) +
      (this.isDefault(m) ? t.fg("muted", " · default") : "")
    );
  }

  /** The line under the list: the selected model's name. */
  detail(): string | undefined {
    const m = this.selectedModel;
    return m ? `Model Name: ${m.name ?? m.id}` : undefined;
  }

  /** The scope line ("Scope: all | scoped", the active one accented), when there are scoped models. */
  scopeLine(t: Painter): string | undefined {
    if (!this.hasScope) return undefined;
    const part = (s: ModelScope) => t.fg(this.scope === s ? "accent" : "muted", s);
    return t.fg("muted", "Scope: ") + part("all") + t.fg("muted", " | ") + part("scoped");
  }
}
