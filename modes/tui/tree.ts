/**
 * /tree: the session's entries as a tree (indented at branch points, the active path bright,
 * labels shown). Enter jumps there (a user message: its parent, with the text back in the
 * editor), Shift+L labels the entry, Ctrl+X copies its text, Ctrl+F forks a new session from a
 * user message; the filters are pi 1.6's: Ctrl+D default, Ctrl+T no tool results, Ctrl+U user
 * messages, Ctrl+L labeled entries, Ctrl+A every entry (Ctrl+O / Ctrl+Shift+O step through
 * them). Jumping uses AgentSession.navigateTree when the session has it (branch summaries,
 * hooks); otherwise it moves the store's leaf directly.
 */
import type { SessionEntry, SessionTreeNode } from "../../core/stores/index.js";
import type { TreeHost } from "./host.js";
import { forkAt } from "./commands.js";
import { applyFiles, chooseFiles } from "./restore-files.js";
import { SelectLayer, type SelectItem } from "./layers.js";

export interface TreeRow {
  id: string;
  depth: number;
  text: string;
  kind: "user" | "assistant" | "tool" | "other";
  onPath: boolean;
  isLeaf: boolean;
  label?: string;
  entry: SessionEntry;
}

type Filter = "default" | "no-tools" | "user" | "labeled" | "all";
/** The filter keys, as pi 1.6's tree binds them; Ctrl+O steps through them in this order. */
const FILTER_KEYS: Array<[string, Filter]> = [["ctrl+d", "default"], ["ctrl+t", "no-tools"], ["ctrl+u", "user"], ["ctrl+l", "labeled"], ["ctrl+a", "all"]];

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
  const stack: Array<{ node: SessionTreeNode; depth: number }> = roots.map((n) => ({ node: n, depth: roots.length > 1 ? 1 : 0 })).reverse();
  while (stack.length) {
    const { node, depth } = stack.pop()!;
    const d = describeEntry(node.entry);
    if (visible(node.entry, d?.kind, node.label)) {
      rows.push({
        id: node.entry.id,
        depth,
        text: (d?.text ?? node.entry.type).replace(/\s+/g, " ").trim(),
        kind: d?.kind ?? "other",
        onPath: pathIds.has(node.entry.id),
        isLeaf: node.entry.id === leafId,
        label: node.label,
        entry: node.entry,
      });
    }
    const kids = node.children;
    const childDepth = kids.length > 1 ? depth + 1 : depth;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i]!, depth: childDepth });
  }
  return rows;
}

export async function openTree(app: TreeHost, initialId?: string): Promise<void> {
  const s = app.session;
  const sm = s.sessionManager;
  if (typeof sm?.getTree !== "function") return app.addNotice("This session has no tree", "warning");
  // The filter it starts with: the treeFilterMode setting (pi 1.6's names).
  const wanted = String((app.kernel.settings.get() as { treeFilterMode?: unknown }).treeFilterMode ?? "default").replace(/-only$/, "");
  let filter: Filter = FILTER_KEYS.find(([, f]) => f === wanted)?.[1] ?? "default";
  const build = (): SelectItem<TreeRow>[] => {
    const leaf = sm.getLeafId?.() ?? null;
    const path = new Set<string>((sm.getBranch?.() ?? []).map((e: SessionEntry) => e.id));
    const rows = treeRows(sm.getTree(), leaf, path, filter);
    // The leaf may be a hidden entry (a model change): mark the last visible entry on the path.
    if (!rows.some((r) => r.isLeaf)) {
      const last = [...rows].reverse().find((r) => r.onPath);
      if (last) last.isLeaf = true;
    }
    const t = app.theme;
    return rows.map((r) => {
      const indent = "  ".repeat(Math.min(r.depth, 12));
      const mark = r.isLeaf ? t.fg("accent", "● ") : r.onPath ? t.fg("muted", "│ ") : t.fg("dim", "· ");
      const body = r.kind === "user" ? t.fg("accent", r.text) : r.onPath ? r.text : t.fg("dim", r.text);
      const label = r.label ? t.fg("warning", ` [${r.label}]`) : "";
      return { label: indent + mark + body + label, value: r, searchText: `${r.text} ${r.label ?? ""}` };
    });
  };
  const items = build();
  if (!items.length) return app.addNotice("The session is empty: nothing to navigate yet", "info");
  const leafIdx = Math.max(0, items.findIndex((i) => (initialId ? i.value.id === initialId : i.value.isLeaf)));
  const picked = await app.dialog<TreeRow | undefined>((finish) => {
    const layer: SelectLayer<TreeRow> = new SelectLayer<TreeRow>({
      title: "Session tree",
      items,
      search: true,
      initialIndex: leafIdx,
      maxVisible: 30,
      onDone: finish,
      hint: "Enter jump · Shift+L label · Ctrl+X copy · Ctrl+F fork · filters Ctrl+D/T/U/L/A (Ctrl+O cycles) · Esc close",
      onKey: (k, item) => {
        if (app.keys.matches(k, "app.tree.editLabel") || k.id === "shift+l") {
          if (!item) return true;
          void (async () => {
            const label = await app.input(`Label for ${item.value.id}`, { prefill: item.value.label ?? "", placeholder: "empty clears the label" });
            if (label === undefined) return;
            try {
              if (typeof s.setLabel === "function") s.setLabel(item.value.id, label.trim() || undefined);
              else sm.appendLabelChange(item.value.id, label.trim() || undefined);
              layer.setItems(build());
            } catch (e) {
              app.addNotice((e as Error).message, "error");
            }
            app.requestRender();
          })();
          return true;
        }
        if (app.keys.matches(k, "app.message.copy")) {
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
        if (k.id === "ctrl+f") {
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
        const byKey = FILTER_KEYS.find(([key]) => key === k.id);
        if (byKey || k.id === "ctrl+o" || k.id === "ctrl+shift+o") {
          const at = FILTER_KEYS.findIndex(([, f]) => f === filter);
          const step = k.id === "ctrl+shift+o" ? FILTER_KEYS.length - 1 : 1;
          filter = byKey ? (filter === byKey[1] ? "default" : byKey[1]) : FILTER_KEYS[(at + step) % FILTER_KEYS.length]![1];
          layer.setItems(build());
          app.requestRender();
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
