/**
 * pi 1.6's renderer registrations drawn in the chat (the kernel registries `toolRenderers` and
 * `entryRenderers`, which the extension plugin fills through each extension's PluginApi):
 *   registerToolRenderer(resolver)       — resolvers chosen per tool name, in load order, each
 *                                          given next() (the remaining resolvers, then the tool's own
 *                                          renderCall/renderResult/renderShell)
 *   registerEntryRenderer(type, render)  — custom session entries (pi.appendEntry) drawn in the
 *                                          transcript where they were appended; never sent to the model
 *   registerMarkdownTransformer(fn, opts) — markdown rewritten before the chat draws it, on the
 *                                          surfaces the options name (display only)
 * Entries appended while the TUI runs are found by walking from the session's leaf back to the
 * last entry seen (a few entries per frame at most); an `entry_appended` session event, where the
 * session emits one, adds them at once.
 */
import type { EntryRenderer, RegisteredMarkdownTransformer } from "../../core/kernel/index.js";
import type { TreeSessionStore } from "../../core/stores/index.js";
import type { AppView } from "./app-view.js";
import { Block, componentLines, rendererHints, type ChatContext } from "./chat.js";
import type { ToolRenderers } from "./tool-draw.js";
import { applyMarkdownTransformers, transformerSurfaces, type MarkdownTransformFn } from "./format.js";

/**
 * The extensions' markdown transformers as the chat runs them: in load order, each on the surfaces
 * its options name (default user, assistant and thinking text); undefined when none is registered.
 */
export function markdownTransformer(registered: readonly RegisteredMarkdownTransformer[]): ChatContext["transformMarkdown"] {
  if (!registered.length) return undefined;
  const list = registered.map((r) => ({ fn: r.transform as MarkdownTransformFn, surfaces: transformerSurfaces(r.options) }));
  return (markdown, context) =>
    applyMarkdownTransformers(
      markdown,
      context,
      list.filter((x) => x.surfaces.has(context.messageType)).map((x) => x.fn),
    );
}


/** The renderers for calls to `name`: the extensions' resolvers in load order, then the tool's own. */
export function resolveToolRenderers(app: AppView, name: string): ToolRenderers | undefined {
  const base = (): ToolRenderers | undefined => {
    const def = app.kernel.tools.get(name) as ToolRenderers | undefined;
    return def && (def.renderCall || def.renderResult || def.renderShell) ? { renderShell: def.renderShell, renderCall: def.renderCall, renderResult: def.renderResult } : undefined;
  };
  const list = app.kernel.toolRenderers.list();
  if (!list.length) return base();
  const resolve = (i: number): ToolRenderers | undefined => {
    if (i >= list.length) return base();
    const r = list[i]!;
    try {
      const out = r.value(name, () => resolve(i + 1));
      return out && typeof out === "object" ? (out as ToolRenderers) : undefined;
    } catch (error) {
      reportOnce(app, `${r.source}:${name}`, `tool renderer of ${r.source} failed for "${name}"`, error);
      return resolve(i + 1);
    }
  };
  return resolve(0);
}

const reported = new WeakMap<AppView, Set<string>>();
function reportOnce(app: AppView, key: string, message: string, error: unknown): void {
  let s = reported.get(app);
  if (!s) reported.set(app, (s = new Set()));
  if (s.has(key)) return;
  s.add(key);
  app.kernel.diagnostics.report({ level: "warning", source: "tui", message, error });
}

/** The entry renderer for `customType`: the last one registered. */
export function entryRenderer(app: AppView, customType: string): EntryRenderer["render"] | undefined {
  return app.kernel.entryRenderers.list().findLast((e) => e.value.customType === customType)?.value.render;
}

export interface CustomEntry {
  type: "custom";
  id: string;
  customType: string;
  data?: unknown;
  timestamp?: string;
}

/** A custom entry drawn by its extension's entry renderer (nothing when none is registered). */
export class CustomEntryBlock extends Block {
  constructor(readonly entry: CustomEntry) {
    super();
    // The renderer may be registered (or reloaded) after the entry: look it up on every frame.
    this.volatile = true;
  }
  render(width: number, ctx: ChatContext): string[] {
    const r = ctx.entryRenderer?.(this.entry.customType);
    if (!r) return [];
    const t = ctx.theme;
    try {
      const c = r(this.entry, { expanded: ctx.expandTools, ...rendererHints(ctx) }, t);
      return componentLines(c, width);
    } catch (e) {
      if (!this.failed) ctx.report?.(`entry renderer for "${this.entry.customType}" failed`, e);
      this.failed = true;
      return [t.fg("error", `[${this.entry.customType}] renderer failed: ${e instanceof Error ? e.message : String(e)}`)];
    }
  }
}

/** Finds custom entries appended since the last look and adds them to the chat. */
export class EntryTracker {
  private lastLeaf: string | null | undefined;
  private readonly shown = new Set<string>();

  constructor(private readonly app: AppView) {}

  private manager(): Partial<TreeSessionStore> | undefined {
    try {
      return this.app.session?.sessionManager;
    } catch {
      return undefined;
    }
  }

  /** The transcript was rebuilt: start from the current leaf; `shown` are the entries it drew. */
  reset(shown: Iterable<string>): void {
    this.shown.clear();
    for (const id of shown) this.shown.add(id);
    this.lastLeaf = this.manager()?.getLeafId?.() ?? null;
  }

  /** Custom entries of the branch keyed by the message they follow (undefined: before any message). */
  branchCustoms(): Map<unknown, CustomEntry[]> {
    const out = new Map<unknown, CustomEntry[]>();
    let after: unknown;
    for (const e of this.manager()?.getBranch?.() ?? []) {
      if (e?.type === "message") after = e.message;
      else if (e?.type === "custom" && typeof e.customType === "string") {
        const list = out.get(after) ?? [];
        list.push(e as CustomEntry);
        out.set(after, list);
      }
    }
    return out;
  }

  /** An entry the session reported (entry_appended). */
  add(entry: CustomEntry): void {
    if (!entry?.id || this.shown.has(entry.id)) return;
    this.shown.add(entry.id);
    const blk = new CustomEntryBlock(entry);
    const live = this.app.currentAssistant;
    // pi draws an entry appended mid-answer above the answer that is streaming.
    if (live && this.app.chat.blocks.includes(live)) this.app.chat.insertBefore(blk, live);
    else this.app.chat.add(blk);
  }

  /** Walk from the leaf back to the last leaf seen; add the custom entries found on the way. */
  sync(): void {
    const sm = this.manager();
    if (!sm?.getLeafId || !sm.getEntry) return;
    const leaf = sm.getLeafId();
    if (leaf === this.lastLeaf) return;
    const prev = this.lastLeaf;
    const found: CustomEntry[] = [];
    let id: string | null | undefined = leaf;
    let steps = 0;
    while (id && id !== prev && steps++ < 200) {
      const e = sm.getEntry(id);
      if (!e) break;
      if (e.type === "custom") found.push(e as CustomEntry);
      id = e.parentId;
    }
    this.lastLeaf = leaf;
    // Only a walk that met the last leaf seen is new entries; a jump to another branch (tree,
    // fork) rebuilds the chat itself.
    const reached = id === prev || (!id && !prev);
    if (!reached) return;
    for (const e of found.reverse()) this.add(e);
  }
}
