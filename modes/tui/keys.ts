/**
 * Keybindings: key strings as the reference writes them ("ctrl+shift+p", "alt+enter", "pageUp";
 * key-parser.ts turns terminal input into them), the default bindings of the app and the editor
 * (reference ids such as "app.interrupt", "tui.editor.cursorLeft"), and
 * `<agentDir>/keybindings.json` overrides (one key or a list per id; old un-namespaced ids are
 * migrated).
 */
import { existsSync, readFileSync } from "node:fs";
import type { KeyPress } from "./key-parser.js";
export type { KeyPress } from "./key-parser.js";
export { keyFromData } from "./key-parser.js";

const NAME_MAP: Record<string, string> = {
  return: "enter",
  enter: "enter",
  escape: "escape",
  esc: "escape",
  pageup: "pageUp",
  pagedown: "pageDown",
  backspace: "backspace",
  delete: "delete",
  insert: "insert",
  tab: "tab",
  space: "space",
  up: "up",
  down: "down",
  left: "left",
  right: "right",
  home: "home",
  end: "end",
  clear: "clear",
};

/** Canonical form of a key string from config or code: "Shift+Ctrl+P" → "ctrl+shift+p". */
export function canonicalKey(spec: string): string {
  const raw = spec.trim();
  if (!raw) return "";
  // "+" itself may be the key ("ctrl++" or "+").
  const parts = raw === "+" ? ["+"] : raw.endsWith("++") ? [...raw.slice(0, -2).split("+"), "+"] : raw.split("+");
  let ctrl = false, alt = false, shift = false, sup = false;
  let key = "";
  parts.forEach((p, idx) => {
    const l = p.toLowerCase();
    const last = idx === parts.length - 1;
    if (!last && (l === "ctrl" || l === "control")) ctrl = true;
    else if (!last && (l === "alt" || l === "meta" || l === "option")) alt = true;
    else if (!last && l === "shift") shift = true;
    else if (!last && (l === "super" || l === "cmd" || l === "win")) sup = true;
    else key = NAME_MAP[l] ?? l;
  });
  if (key === "return") key = "enter";
  const mods = [ctrl && "ctrl", alt && "alt", shift && "shift", sup && "super"].filter(Boolean);
  return [...mods, key].join("+");
}

// ---- bindings -------------------------------------------------------------------------------

export const DEFAULT_BINDINGS: Record<string, string[]> = {
  "tui.editor.cursorUp": ["up"],
  "tui.editor.cursorDown": ["down"],
  "tui.editor.cursorLeft": ["left", "ctrl+b"],
  "tui.editor.cursorRight": ["right", "ctrl+f"],
  "tui.editor.cursorWordLeft": ["alt+left", "ctrl+left", "alt+b"],
  "tui.editor.cursorWordRight": ["alt+right", "ctrl+right", "alt+f"],
  "tui.editor.cursorLineStart": ["home", "ctrl+a"],
  "tui.editor.cursorLineEnd": ["end", "ctrl+e"],
  "tui.editor.pageUp": ["pageUp"],
  "tui.editor.pageDown": ["pageDown"],
  "tui.editor.deleteCharBackward": ["backspace"],
  "tui.editor.deleteCharForward": ["delete", "ctrl+d"],
  "tui.editor.deleteWordBackward": ["ctrl+w", "alt+backspace"],
  "tui.editor.deleteWordForward": ["alt+d", "alt+delete"],
  "tui.editor.deleteToLineStart": ["ctrl+u"],
  "tui.editor.deleteToLineEnd": ["ctrl+k"],
  "tui.editor.yank": ["ctrl+y"],
  "tui.editor.yankPop": ["alt+y"],
  "tui.editor.jumpForward": ["ctrl+]"],
  "tui.editor.jumpBackward": ["ctrl+alt+]"],
  "tui.editor.historyPrevious": [],
  "tui.editor.historyNext": [],
  "tui.editor.undo": ["ctrl+-"],
  // Shift+Enter arrives as its own key once the terminal speaks the kitty protocol or
  // modifyOtherKeys (negotiated at start); Ctrl+J (a line feed) works everywhere.
  "tui.input.newLine": ["shift+enter", "ctrl+j"],
  "tui.input.submit": ["enter"],
  "tui.input.tab": ["tab"],
  "tui.select.up": ["up"],
  "tui.select.down": ["down"],
  "tui.select.pageUp": ["pageUp"],
  "tui.select.pageDown": ["pageDown"],
  "tui.select.confirm": ["enter"],
  "tui.select.cancel": ["escape", "ctrl+c"],
  "app.interrupt": ["escape"],
  "app.clear": ["ctrl+c"],
  "app.exit": ["ctrl+d"],
  "app.suspend": ["ctrl+z"],
  "app.editor.external": ["ctrl+g"],
  "app.message.copy": ["ctrl+x"],
  "app.clipboard.pasteImage": process.platform === "win32" || process.env.WSL_DISTRO_NAME ? ["alt+v", "ctrl+v"] : ["ctrl+v"],
  "app.session.new": [],
  "app.session.tree": [],
  "app.session.fork": [],
  "app.session.resume": [],
  "app.session.togglePath": ["ctrl+p"],
  "app.session.toggleNamedFilter": ["ctrl+n"],
  "app.session.toggleSort": ["ctrl+s"],
  "app.session.rename": ["ctrl+r"],
  "app.session.delete": ["ctrl+d"],
  "app.session.deleteNoninvasive": ["ctrl+backspace"],
  "app.model.select": ["ctrl+l"],
  "app.model.cycleForward": ["ctrl+p"],
  "app.model.cycleBackward": ["ctrl+shift+p"],
  "app.thinking.cycle": ["shift+tab"],
  "app.thinking.toggle": ["ctrl+t"],
  "app.tools.expand": ["ctrl+o"],
  "app.message.followUp": ["alt+enter"],
  "app.message.dequeue": ["alt+up"],
  "app.chat.scrollUp": ["shift+up", "pageUp"],
  "app.chat.scrollDown": ["shift+down", "pageDown"],
  "app.tree.editLabel": ["shift+l"],
  "app.tree.foldOrUp": ["ctrl+left", "alt+left"],
  "app.tree.unfoldOrDown": ["ctrl+right", "alt+right"],
  "app.tree.toggleLabelTimestamp": ["shift+t"],
  "app.tree.forkFromUser": ["ctrl+k"],
  "app.tree.filter.default": ["ctrl+d"],
  "app.tree.filter.noTools": ["ctrl+t"],
  "app.tree.filter.userOnly": ["ctrl+u"],
  "app.tree.filter.labeledOnly": ["ctrl+l"],
  "app.tree.filter.all": ["ctrl+a"],
  "app.tree.filter.cycleForward": ["ctrl+o"],
  "app.tree.filter.cycleBackward": ["ctrl+shift+o"],
  "tui.altScreen.search": process.platform === "win32" || process.env.WSL_DISTRO_NAME ? ["ctrl+f"] : ["ctrl+shift+f"],
  "tui.altScreen.searchNext": ["enter", "ctrl+g"],
  "tui.altScreen.searchPrevious": ["shift+enter", "ctrl+shift+g"],
  "tui.altScreen.searchClose": ["escape"],
  "tui.altScreen.top": ["ctrl+home"],
  "tui.altScreen.bottom": ["ctrl+end"],
};

export const BINDING_DESCRIPTIONS: Record<string, string> = {
  "app.interrupt": "Cancel / abort (restores queued messages)",
  "app.clear": "Clear editor (twice: quit)",
  "app.exit": "Quit (when the editor is empty)",
  "app.suspend": "Suspend to background",
  "app.editor.external": "Open the editor text in $VISUAL / $EDITOR",
  "app.message.copy": "Copy the last assistant message",
  "app.clipboard.pasteImage": "Paste an image (as a file path) or text from the clipboard",
  "app.model.select": "Open model selector",
  "app.model.cycleForward": "Next model",
  "app.model.cycleBackward": "Previous model",
  "app.thinking.cycle": "Cycle thinking level",
  "app.thinking.toggle": "Collapse or expand thinking blocks",
  "app.tools.expand": "Collapse or expand tool output",
  "app.message.followUp": "Queue a follow-up message (while streaming)",
  "app.message.dequeue": "Restore queued messages to the editor",
  "app.chat.scrollUp": "Scroll the conversation up",
  "tui.altScreen.search": "Search the transcript",
  "tui.altScreen.searchNext": "Next search match (while searching)",
  "tui.altScreen.searchPrevious": "Previous search match (while searching)",
  "tui.altScreen.searchClose": "Close transcript search",
  "tui.altScreen.top": "Scroll to the beginning of the transcript",
  "tui.altScreen.bottom": "Scroll to the latest message and follow new output",
  "app.chat.scrollDown": "Scroll the conversation down",
  "app.session.new": "New session",
  "app.session.tree": "Session tree",
  "app.session.fork": "Fork session",
  "app.session.resume": "Resume a session",
  "tui.input.submit": "Send (while streaming: steer)",
  "tui.input.newLine": "New line",
  "tui.input.tab": "Complete /commands, @files and paths",
  "tui.editor.cursorWordLeft": "Word left",
  "tui.editor.cursorWordRight": "Word right",
  "tui.editor.cursorLineStart": "Line start",
  "tui.editor.cursorLineEnd": "Line end",
  "tui.editor.deleteWordBackward": "Delete word backward",
  "tui.editor.deleteToLineStart": "Delete to line start",
  "tui.editor.deleteToLineEnd": "Delete to line end",
  "tui.editor.yank": "Paste the last deleted text",
  "tui.editor.yankPop": "Right after a paste of deleted text: the text deleted before it instead",
  "tui.editor.jumpForward": "Jump forward to the character typed next",
  "tui.editor.jumpBackward": "Jump backward to the character typed next",
  "tui.editor.historyPrevious": "Previous prompt from the history",
  "tui.editor.historyNext": "Next prompt from the history",
  "tui.editor.undo": "Undo",
};

/** Keys that act inside one dialog, by dialog, each with a short label (/hotkeys gives each dialog one line). */
export const DIALOG_BINDINGS: Array<{ dialog: string; keys: Array<[id: string, label: string]> }> = [
  {
    dialog: "/tree",
    keys: [
      ["app.tree.editLabel", "label"],
      ["app.tree.toggleLabelTimestamp", "label time"],
      ["app.tree.foldOrUp", "fold / previous branch"],
      ["app.tree.unfoldOrDown", "unfold / next branch"],
      ["app.tree.forkFromUser", "fork from a user message"],
      ["app.tree.filter.default", "default"],
      ["app.tree.filter.noTools", "no tools"],
      ["app.tree.filter.userOnly", "user"],
      ["app.tree.filter.labeledOnly", "labeled"],
      ["app.tree.filter.all", "all"],
      ["app.tree.filter.cycleForward", "next filter"],
      ["app.tree.filter.cycleBackward", "previous filter"],
    ],
  },
  {
    dialog: "/resume",
    keys: [
      ["app.session.toggleSort", "sort"],
      ["app.session.toggleNamedFilter", "named only"],
      ["app.session.togglePath", "path"],
      ["app.session.rename", "rename"],
      ["app.session.delete", "delete"],
      ["app.session.deleteNoninvasive", "delete (empty search)"],
    ],
  },
];

/** Pre-namespaced ids of older configs. */
const LEGACY: Record<string, string> = {
  cursorUp: "tui.editor.cursorUp", cursorDown: "tui.editor.cursorDown", cursorLeft: "tui.editor.cursorLeft",
  cursorRight: "tui.editor.cursorRight", cursorWordLeft: "tui.editor.cursorWordLeft", cursorWordRight: "tui.editor.cursorWordRight",
  cursorLineStart: "tui.editor.cursorLineStart", cursorLineEnd: "tui.editor.cursorLineEnd",
  deleteCharBackward: "tui.editor.deleteCharBackward", deleteCharForward: "tui.editor.deleteCharForward",
  deleteWordBackward: "tui.editor.deleteWordBackward", deleteWordForward: "tui.editor.deleteWordForward",
  deleteToLineStart: "tui.editor.deleteToLineStart", deleteToLineEnd: "tui.editor.deleteToLineEnd",
  newLine: "tui.input.newLine", submit: "tui.input.submit", tab: "tui.input.tab",
  interrupt: "app.interrupt", clear: "app.clear", exit: "app.exit", suspend: "app.suspend", externalEditor: "app.editor.external",
  selectModel: "app.model.select", cycleModelForward: "app.model.cycleForward", cycleModelBackward: "app.model.cycleBackward",
  cycleThinkingLevel: "app.thinking.cycle", toggleThinking: "app.thinking.toggle", expandTools: "app.tools.expand",
  followUp: "app.message.followUp", dequeue: "app.message.dequeue",
};

export class Keybindings {
  private byId = new Map<string, Set<string>>();
  readonly errors: string[] = [];

  constructor(overrides: Record<string, unknown> = {}, source = "keybindings.json") {
    for (const [id, keys] of Object.entries(DEFAULT_BINDINGS)) this.byId.set(id, new Set(keys.map(canonicalKey)));
    for (const [rawId, value] of Object.entries(overrides)) {
      if (rawId.startsWith("$")) continue; // "$schema" and other editor hints
      const id = LEGACY[rawId] ?? rawId;
      if (id !== rawId && Object.hasOwn(overrides, id)) continue; // the namespaced id wins over its old name
      const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : undefined;
      if (!list || list.some((k) => typeof k !== "string")) {
        this.errors.push(`${source}: "${rawId}" must be a key string or a list of key strings`);
        continue;
      }
      this.byId.set(id, new Set((list as string[]).map(canonicalKey).filter(Boolean)));
    }
  }

  /** Load `<agentDir>/keybindings.json`; a broken file is reported and the defaults stay. */
  static load(path: string): Keybindings {
    if (!existsSync(path)) return new Keybindings();
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
    } catch (e) {
      const kb = new Keybindings();
      kb.errors.push(`${path}: not valid JSON (${(e as Error).message}); using the default keys`);
      return kb;
    }
    if (!data || typeof data !== "object" || Array.isArray(data)) {
      const kb = new Keybindings();
      kb.errors.push(`${path}: must be a JSON object of {"action.id": "key" | ["keys"]}`);
      return kb;
    }
    return new Keybindings(data as Record<string, unknown>, path);
  }

  /** Does the key press trigger the action `id`? */
  matches(key: KeyPress | string, id: string): boolean {
    const k = typeof key === "string" ? canonicalKey(key) : key.id;
    return this.byId.get(id)?.has(k) ?? false;
  }

  getKeys(id: string): string[] {
    return [...(this.byId.get(id) ?? [])];
  }

  /** All action ids with their keys (for /hotkeys). */
  entries(): Array<[string, string[]]> {
    return [...this.byId.entries()].map(([id, keys]) => [id, [...keys]]);
  }

  /** "ctrl+o" → "Ctrl+O" style hint text for the first key of an action. */
  hint(id: string): string {
    const k = this.getKeys(id)[0];
    return k ? formatKey(k) : "(unbound)";
  }
}

export function formatKey(k: string): string {
  return k
    .split("+")
    .map((p) => (p.length === 1 ? p.toUpperCase() : p.charAt(0).toUpperCase() + p.slice(1)))
    .join("+")
    .replace(/^$/, "+");
}
