/**
 * /tree: the session's entries as a tree (indented at branch points, the active path bright,
 * labels shown). Enter jumps there (a user message: its parent, with the text back in the
 * editor), Shift+L labels the entry, Ctrl+X copies its text, Ctrl+K forks a new session from a
 * user message; the filters are pi 1.6's: Ctrl+D default, Ctrl+T no tool results, Ctrl+U user
 * messages, Ctrl+L labeled entries, Ctrl+A every entry (Ctrl+O / Ctrl+Shift+O step through
 * them). ←/→ (Ctrl+B/Ctrl+F) move a page of half the terminal's height, Ctrl+←/→ (Alt+←/→) fold
 * and unfold a branch or step between branch starts, Shift+T shows when each label was set. Every
 * key is a keybinding id (app.tree.*). Jumping uses AgentSession.navigateTree when the session has
 * it (branch summaries, hooks); otherwise it moves the store's leaf directly.
 */
import type { SessionEntry, SessionTreeNode } from "../../core/stores/index.js";
import type { TreeHost } from "./host.js";
import { forkAt } from "./fork.js";
import { applyFiles, chooseFiles } from "./restore-files.js";
import { SelectLayer, type SelectItem } from "./layers.js";
import { branchPrefixes, branchStep, canFold, labelTime, listShape, unfoldedRows } from "./tree-nav.js";

export interface TreeRow {
  id: string;
  depth: number;
  text: string;
  kind: "user" | "assistant" | "tool" | "other";
  onPath: boolean;
  isLeaf: boolean;
  label?: string;
  /** When the label was set (ISO time), shown by Shift+T. */
  labelTimestamp?: string;
  /** The nearest ancestor the filter shows (null at a root). */
  parentId: string | null;
  entry: SessionEntry;
}

type Filter = "default" | "no-tools" | "user" | "labeled" | "all";
/** The filters in pi 1.6's order (Ctrl+O steps through them), each with its keybinding id and its mark in the title. */
const FILTERS: Array<{ filter: Filter; id: string; mark: string }> = [
  { filter: "default", id: "app.tree.filter.default", mark: "" },
  { filter: "no-tools", id: "app.tree.filter.noTools", mark: "[no-tools]" },
  { filter: "user", id: "app.tree.filter.userOnly", mark: "[user]" },
  { filter: "labeled", id: "app.tree.filter.labeledOnly", mark: "[labeled]" },
  { filter: "all", id: "app.tree.filter.all", mark: "[all]" },
];

function contentText(c: unknown): string {
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c.map((b: any) => (b?.type === "text" ? b.text : b?.type === "image" ? "[image]" : "")).join("");
}

export function describeEntry(e: SessionEntry): { text: string; kind: TreeRow["kind"] } | undefined {
  switch (e.type) {
    case "message": {
      const m = e.message as any;
      if (m.role === "user") return { text: `user: ${contentText(m.content)}`, kind: "user" };
      if (m.role === "assistant") {
        const text = contentText(m.content);
        const calls = (m.content ?? []).filter((b: any) => b?.type === "toolCall").map((b: any) => b.name);
        const err = m.stopReason === "error" ? ` (error: ${m.errorMessage ?? ""})` : m.stopReason === "aborted" ? " (aborted)" : "";
        return { text: `assistant: ${text || (calls.length ? `→ ${calls.join(", ")}` : "")}${err}`, kind: "assistant" };
      }
      if (m.role === "toolResult") return { text: `tool ${m.toolName}${m.isError ? " (error)" : ""}: ${contentText(m.content)}`, kind: "tool" };
      if (m.role === "bashExecution") return { text: `! ${m.command}`, kind: "other" };
      if (m.role === "custom") return { text: `[${m.customType}] ${contentText(m.content)}`, kind: "other" };
      return { text: String(m.role), kind: "other" };
    }
    case "compaction":
      return { text: `compaction (${e.tokensBefore} tokens before)`, kind: "other" };
    case "branch_summary":
      return { text: `branch summary: ${e.summary}`, kind: "other" };
    case "custom_message":
      return { text: `[${e.customType}] ${contentText(e.content)}`, kind: "other" };
    case "model_change":
      return { text: `model → ${(e as any).provider}/${(e as any).modelId}`, kind: "other" };
    case "thinking_level_change":
      return { text: `thinking → ${e.thinkingLevel}`, kind: "other" };
    default:
      return undefined;
  }
}

/** Flatten the tree into rows; indentation grows where the tree branches. */
export function treeRows(roots: SessionTreeNode[], leafId: string | null, pathIds: Set<string>, filter: Filter): TreeRow[] {
  const rows: TreeRow[] = [];
  const visible = (e: SessionEntry, kind: TreeRow["kind"] | undefined, label: string | undefined): boolean => {
    if (filter === "all") return true;
    if (filter === "labeled") return Boolean(label);
    if (!kind) return false;
    if (filter === "user") return kind === "user";
    if (filter === "no-tools" && kind === "tool") return false;
    return e.type !== "model_change" && e.type !== "thinking_level_change";
  };
  const ordered = [...roots].sort((a, b) => Number(pathIds.has(b.entry.id)) - Number(pathIds.has(a.entry.id)));
  const stack: Array<{ node: SessionTreeNode; depth: number; parentId: string | null }> = ordered.map((n) => ({ node: n, depth: roots.length > 1 ? 1 : 0, parentId: null })).reverse();
  while (stack.length) {
    const { node, depth, parentId } = stack.pop()!;
    const d = describeEntry(node.entry);
    const shown = visible(node.entry, d?.kind, node.label);
    if (shown) {
      rows.push({
        id: node.entry.id,
        depth,
        text: (d?.text ?? node.entry.type).replace(/\s+/g, " ").trim(),
        kind: d?.kind ?? "other",
        onPath: pathIds.has(node.entry.id),
        isLeaf: node.entry.id === leafId,
        label: node.label,
        labelTimestamp: node.labelTimestamp,
        parentId,
        entry: node.entry,
      });
    }
    // The branch the active path goes through comes first (as pi 1.6 lists it); the rest keep their order.
    const kids = [...node.children].sort((a, b) => Number(pathIds.has(b.entry.id)) - Number(pathIds.has(a.entry.id)));
    const childDepth = kids.length > 1 ? depth + 1 : depth;
    const childParent = shown ? node.entry.id : parentId;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i]!, depth: childDepth, parentId: childParent });
  }
  return rows;
}

/** "Ctrl+Left", "Ctrl+Right" → "Ctrl+Left/Right" (one modifier written once). */
function compactKeys(keys: string[]): string {
  const cut = (k: string) => k.lastIndexOf("+", k.length - 2);
  const prefix = keys[0]!.slice(0, cut(keys[0]!) + 1);
  return prefix && keys.every((k) => k.slice(0, cut(k) + 1) === prefix) ? prefix + keys.map((k) => k.slice(prefix.length)).join("/") : keys.join("/");
}

export async function openTree(app: TreeHost, initialId?: string): Promise<void> {
  const s = app.session;
  const sm = s.sessionManager;
  if (typeof sm?.getTree !== "function") return app.addNotice("This session has no tree", "warning");
  // The filter it starts with: the treeFilterMode setting (pi 1.6's names).
  const wanted = String((app.kernel.settings.get() as { treeFilterMode?: unknown }).treeFilterMode ?? "default").replace(/-only$/, "");
  let filter: Filter = FILTERS.find((f) => f.filter === wanted)?.filter ?? "default";
  const folded = new Set<string>();
  let labelTimes = false;
  let filtered: TreeRow[] = [];
  const title = () => ["Session tree", FILTERS.find((f) => f.filter === filter)!.mark, labelTimes ? "[+label time]" : ""].filter(Boolean).join(" ");
  const build = (): SelectItem<TreeRow>[] => {
    const leaf = sm.getLeafId?.() ?? null;
    const path = new Set<string>((sm.getBranch?.() ?? []).map((e: SessionEntry) => e.id));
    filtered = treeRows(sm.getTree(), leaf, path, filter);
    // The leaf may be a hidden entry (a model change): mark the last visible entry on the path.
    if (!filtered.some((r) => r.isLeaf)) {
      const last = [...filtered].reverse().find((r) => r.onPath);
      if (last) last.isLeaf = true;
    }
    const t = app.theme;
    const shown = unfoldedRows(filtered, folded);
    const shape = listShape(shown, filtered);
    const prefixes = branchPrefixes(shown, filtered, (id) => (folded.has(id) ? "folded" : canFold(id, shape) ? "foldable" : undefined));
    // As pi 1.6 draws a row: the branch lines, `•` on the active path, the label, then the entry.
    return shown.map((r) => {
      const p = prefixes.get(r.id) ?? { prefix: "", connector: false };
      const fold = folded.has(r.id) && !p.connector ? t.fg("accent", "⊞ ") : "";
      const mark = r.onPath ? t.fg("accent", "• ") : "";
      const when = labelTimes && r.label && r.labelTimestamp ? labelTime(r.labelTimestamp) : "";
      const label = r.label ? t.fg("warning", `[${r.label}] `) + (when ? t.fg("muted", `${when} `) : "") : "";
      const body = r.kind === "user" ? t.fg("accent", r.text) : r.onPath ? r.text : t.fg("dim", r.text);
      return { label: t.fg("dim", p.prefix) + fold + mark + label + body, value: r, searchText: `${r.text} ${r.label ?? ""}` };
    });
  };
  const items = build();
  if (!items.length) return app.addNotice("The session is empty: nothing to navigate yet", "info");
  const leafIdx = Math.max(0, items.findIndex((i) => (initialId ? i.value.id === initialId : i.value.isLeaf)));
  const keyText = (ids: string[]) => compactKeys(ids.map((id) => app.keys.hint(id))).replace(/\bLeft\b/g, "←").replace(/\bRight\b/g, "→");
  // The list shows, and ←/→ move, half the terminal's height (at least 5 rows), as pi 1.6 does.
  const page = Math.max(5, Math.floor(app.terminalRows / 2));
  const picked = await app.dialog<TreeRow | undefined>((finish) => {
    /** Rebuild the rows and keep the selection on entry `id` (or the nearest row still shown). */
    const refresh = (id: string | undefined) => {
      layer.setItems(build());
      layer.title = title();
      const at = id === undefined ? -1 : layer.visible.findIndex((i) => i.value.id === id);
      if (at >= 0) layer.index = at;
      app.requestRender();
    };
    const layer: SelectLayer<TreeRow> = new SelectLayer<TreeRow>({
      title: title(),
      items,
      search: true,
      initialIndex: leafIdx,
      maxVisible: page,
      centered: true,
      onDone: finish,
      wrapHint: true,
      hint: `Enter jump · ${keyText(["tui.editor.cursorLeft", "tui.editor.cursorRight"])} page · ${keyText(["app.tree.foldOrUp", "app.tree.unfoldOrDown"])} branch · ${keyText(["app.tree.editLabel"])} label · ${keyText(["app.tree.toggleLabelTimestamp"])} label time · ${keyText(["app.message.copy"])} copy · ${keyText(["app.tree.forkFromUser"])} fork · filters Ctrl+D/T/U/L/A (Ctrl+O cycles) · Esc close`,
      onKey: (k, item) => {
        const kb = app.keys;
        if (kb.matches(k, "app.tree.editLabel")) {
          if (!item) return true;
          void (async () => {
            const label = await app.input(`Label for ${item.value.id}`, { prefill: item.value.label ?? "", placeholder: "empty clears the label" });
            if (label === undefined) return;
            try {
              if (typeof s.setLabel === "function") s.setLabel(item.value.id, label.trim() || undefined);
              else sm.appendLabelChange(item.value.id, label.trim() || undefined);
              refresh(item.value.id);
            } catch (e) {
              app.addNotice((e as Error).message, "error");
            }
            app.requestRender();
          })();
          return true;
        }
        if (kb.matches(k, "app.message.copy")) {
          if (!item) return true;
          const text = contentText((item.value.entry as { message?: { content?: unknown } }).message?.content) || item.value.text;
          void import("./clipboard.js")
            .then((m) => m.copyText(text, { env: process.env, platform: process.platform, writeTerminal: (d) => process.stdout.write(d) }))
            .then(
              () => app.addNotice("Copied the entry to the clipboard", "success"),
              (e: Error) => app.addNotice(e.message, "error"),
            );
          return true;
        }
        if (kb.matches(k, "app.tree.forkFromUser")) {
          if (!item) return true;
          if (item.value.kind !== "user") {
            app.addNotice("Fork from a user message (the new session ends just before it)", "info");
            return true;
          }
          finish(undefined);
          const text = contentText((item.value.entry as any).message?.content);
          void forkAt(app, item.value.id, text).catch((e: Error) => app.addNotice(e.message, "error"));
          return true;
        }
        if (kb.matches(k, "app.tree.toggleLabelTimestamp")) {
          labelTimes = !labelTimes;
          refresh(item?.value.id);
          return true;
        }
        const fold = kb.matches(k, "app.tree.foldOrUp");
        if (fold || kb.matches(k, "app.tree.unfoldOrDown")) {
          if (!item) return true;
          const id = item.value.id;
          const shown = layer.visible.map((i) => i.value);
          const shape = listShape(shown, filtered);
          if (fold && !folded.has(id) && canFold(id, shape)) {
            folded.add(id);
            refresh(id);
          } else if (!fold && folded.has(id)) {
            folded.delete(id);
            refresh(id);
          } else {
            layer.index = branchStep(fold ? "up" : "down", layer.index, shown, shape);
            app.requestRender();
          }
          return true;
        }
        // ←/→ (Ctrl+B/Ctrl+F, PageUp/PageDown) move a page.
        const last = Math.max(0, layer.visible.length - 1);
        if (kb.matches(k, "tui.editor.cursorLeft") || kb.matches(k, "tui.select.pageUp")) {
          layer.index = Math.max(0, layer.index - page);
          return true;
        }
        if (kb.matches(k, "tui.editor.cursorRight") || kb.matches(k, "tui.select.pageDown")) {
          layer.index = Math.min(last, layer.index + page);
          return true;
        }
        const direct = FILTERS.find((f) => kb.matches(k, f.id));
        const forward = kb.matches(k, "app.tree.filter.cycleForward");
        if (direct || forward || kb.matches(k, "app.tree.filter.cycleBackward")) {
          const at = FILTERS.findIndex((f) => f.filter === filter);
          const step = forward ? 1 : FILTERS.length - 1;
          filter = direct ? (filter === direct.filter ? "default" : direct.filter) : FILTERS[(at + step) % FILTERS.length]!.filter;
          folded.clear();
          refresh(item?.value.id);
          return true;
        }
        return false;
      },
    });
    return layer;
  }, undefined);
  if (!picked) return;
  await navigateTo(app, picked);
}

/**
 * "Summarize the branch you leave?": no summary first (a reflexive Enter costs no model call), a
 * plain summary, or one with instructions typed here. Esc on the instructions asks again;
 * undefined means Esc on the question.
 */
async function askSummary(app: TreeHost): Promise<{ summarize: boolean; customInstructions?: string } | undefined> {
  for (;;) {
    const choice = await app.select("Summarize the branch you leave?", [
      { label: "No summary", value: "none" as const },
      { label: "Summarize", value: "summary" as const },
      { label: "Summarize with custom prompt", value: "custom" as const },
    ]);
    if (choice === undefined) return undefined;
    if (choice === "none") return { summarize: false };
    if (choice === "summary") return { summarize: true };
    const text = await app.input("Custom summarization instructions", { multiline: true });
    if (text === undefined) continue;
    return { summarize: true, customInstructions: text.trim() || undefined };
  }
}

async function navigateTo(app: TreeHost, row: TreeRow): Promise<void> {
  const s = app.session;
  if (s.isStreaming) return app.addNotice("Wait for the agent to finish (or press Esc) before moving in the tree", "warning");
  if (row.isLeaf) return;
  if (typeof s.navigateTree === "function") {
    let summarize = false;
    let customInstructions: string | undefined;
    const settings = app.kernel.settings.get();
    if (!settings.branchSummary?.skipPrompt && app.kernel.hasService("branch-summarizer")) {
      const choice = await askSummary(app);
      if (choice === undefined) return openTree(app, row.id); // Esc: back to the tree, same entry
      summarize = choice.summarize;
      customInstructions = choice.customInstructions;
    }
    const files = await chooseFiles(app, row.id);
    if (!files) return openTree(app, row.id);
    if (summarize) app.setStatusLine("Summarizing the branch you leave…");
    app.cancelBusy = () => s.abortBranchSummary?.();
    let r: { cancelled?: boolean; aborted?: boolean; editorText?: string } | undefined;
    try {
      r = await s.navigateTree(row.id, { summarize, customInstructions });
    } finally {
      app.cancelBusy = undefined;
      if (summarize) app.setStatusLine(undefined);
    }
    if (r?.aborted) return app.addNotice("Branch summary cancelled; you stay where you were", "warning");
    if (r?.cancelled) return app.addNotice("Tree navigation cancelled", "warning");
    app.rebuildChat();
    if (r?.editorText) app.editor.setText(r.editorText);
    await applyFiles(app, files);
    return;
  }
  // Without navigateTree: move the leaf in the store (no summary, no tree hooks).
  const files = await chooseFiles(app, row.id);
  if (!files) return openTree(app, row.id);
  const sm = s.sessionManager;
  let editorText: string | undefined;
  if (row.kind === "user") {
    editorText = contentText((row.entry as any).message?.content);
    const parent = (row.entry as { parentId: string | null }).parentId;
    if (parent) sm.branch(parent);
    else sm.resetLeaf();
  } else sm.branch(row.id);
  s.reloadFromStore();
  app.rebuildChat();
  if (editorText !== undefined) app.editor.setText(editorText);
  await applyFiles(app, files);
  app.addNotice(`Moved to ${row.kind === "user" ? "before the selected message" : "the selected entry"}; the next message starts a new branch there`, "info");
}
