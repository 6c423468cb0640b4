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
import type { TreeHost } from "./host.js";
import { forkAt } from "./fork.js";
import { applyFiles, chooseFiles } from "./restore-files.js";
import { SelectLayer, type SelectItem } from "./layers.js";
import { contentText, isUserRow, treeFilterNamed, TreeModel, type TreeRow } from "./tree-model.js";

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
  const filter = treeFilterNamed((app.kernel.settings.get() as { treeFilterMode?: unknown }).treeFilterMode ?? "default") ?? "default";
  const model = new TreeModel(sm.getTree(), sm.getLeafId?.() ?? null, filter, initialId);
  if (!model.shown.length) return app.addNotice("The session is empty: nothing to navigate yet", "info");
  const title = () => `Session Tree${model.marks()}`;
  const items = (): SelectItem<TreeRow>[] => model.shown.map((r) => ({ label: model.drawRow(r, app.theme), value: r }));
  const keyText = (ids: string[]) => compactKeys(ids.map((id) => app.keys.hint(id))).replace(/\bLeft\b/g, "←").replace(/\bRight\b/g, "→");
  // The list shows, and ←/→ move, half the terminal's height (at least 5 rows), as pi 1.6 does.
  const page = Math.max(5, Math.floor(app.terminalRows / 2));
  const picked = await app.dialog<TreeRow | undefined>((finish) => {
    /** Show the model's rows, search and selection. */
    const show = () => {
      layer.query = model.query;
      layer.setItems(items(), false);
      layer.title = title();
      layer.index = model.selected;
      app.requestRender();
    };
    const layer: SelectLayer<TreeRow> = new SelectLayer<TreeRow>({
      title: title(),
      items: items(),
      search: true,
      // The model searches (pi 1.6's words); the layer shows what it left.
      filter: (rows) => rows,
      initialIndex: model.selected,
      maxVisible: page,
      centered: true,
      onDone: finish,
      // pi 1.6's frame: the hint above the list, › on the selected row, (n/m) under it.
      hintAbove: true,
      cursor: "› ",
      hint: `Enter jump · ${keyText(["tui.editor.cursorLeft", "tui.editor.cursorRight"])} page · ${keyText(["app.tree.foldOrUp", "app.tree.unfoldOrDown"])} branch · ${keyText(["app.tree.editLabel"])} label · ${keyText(["app.tree.toggleLabelTimestamp"])} label time · ${keyText(["app.message.copy"])} copy · ${keyText(["app.tree.forkFromUser"])} fork · filters Ctrl+D/T/U/L/A (Ctrl+O cycles) · Esc close`,
      onKey: (k, item) => {
        const kb = app.keys;
        model.selected = layer.index;
        if (kb.matches(k, "app.tree.editLabel")) {
          if (!item) return true;
          void (async () => {
            const label = await app.input(`Label for ${item.value.id}`, { prefill: item.value.node.label ?? "", placeholder: "empty clears the label" });
            if (label === undefined) return;
            try {
              if (typeof s.setLabel === "function") s.setLabel(item.value.id, label.trim() || undefined);
              else sm.appendLabelChange(item.value.id, label.trim() || undefined);
              model.setLabel(item.value.id, label.trim() || undefined);
              show();
            } catch (e) {
              app.addNotice((e as Error).message, "error");
            }
            app.requestRender();
          })();
          return true;
        }
        if (kb.matches(k, "app.message.copy")) {
          if (!item) return true;
          const text = model.copyText(item.value.entry);
          if (text === undefined) {
            app.addNotice("Selected entry has no text to copy", "error");
            return true;
          }
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
          if (!isUserRow(item.value)) {
            app.addNotice("Fork from a user message (the new session ends just before it)", "info");
            return true;
          }
          finish(undefined);
          const text = contentText((item.value.entry as any).message?.content);
          void forkAt(app, item.value.id, text).catch((e: Error) => app.addNotice(e.message, "error"));
          return true;
        }
        const done = model.handleKey((id) => kb.matches(k, id), k.text, page);
        if (done === "changed") show();
        else if (done === "moved") layer.index = model.selected;
        return done !== undefined;
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
  // The leaf now, not when the tree opened: entries (the answer, a checkpoint) may have landed since.
  if (row.id === s.sessionManager.getLeafId?.()) return app.addNotice("Already at this point", "info");
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
    // A draft in the editor stays (pi 1.6): the jumped-from prompt comes back only into an empty one.
    if (r?.editorText && !app.editor.getText().trim()) app.editor.setText(r.editorText);
    app.addNotice("Navigated to selected point", "info");
    await applyFiles(app, files);
    return;
  }
  // Without navigateTree: move the leaf in the store (no summary, no tree hooks).
  const files = await chooseFiles(app, row.id);
  if (!files) return openTree(app, row.id);
  const sm = s.sessionManager;
  let editorText: string | undefined;
  if (isUserRow(row)) {
    editorText = contentText((row.entry as any).message?.content);
    const parent = (row.entry as { parentId: string | null }).parentId;
    if (parent) sm.branch(parent);
    else sm.resetLeaf();
  } else sm.branch(row.id);
  s.reloadFromStore();
  app.rebuildChat();
  if (editorText !== undefined) app.editor.setText(editorText);
  await applyFiles(app, files);
  app.addNotice(`Moved to ${isUserRow(row) ? "before the selected message" : "the selected entry"}; the next message starts a new branch there`, "info");
}
