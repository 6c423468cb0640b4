/**
 * Keys and keybindings: blessed key events normalised to the reference's key strings
 * ("ctrl+shift+p", "alt+enter", "pageUp"), the default bindings of the app and the editor
 * (reference ids such as "app.interrupt", "tui.editor.cursorLeft"), and
 * `<agentDir>/keybindings.json` overrides (one key or a list per id; old un-namespaced ids are
 * migrated).
 */
import { existsSync, readFileSync } from "node:fs";

/** A normalised key press. */
export interface KeyPress {
  /** Canonical key string: modifiers in the order ctrl, alt, shift, then the key ("ctrl+a", "enter", "/"). */
  id: string;
  /** The printable text of the key, when it inserts text. */
  text?: string;
  /** Raw bytes the terminal sent (for custom components' handleInput). */
  sequence: string;
}

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
  let ctrl = false, alt = false, shift = false;
  let key = "";
  parts.forEach((p, idx) => {
    const l = p.toLowerCase();
    const last = idx === parts.length - 1;
    if (!last && (l === "ctrl" || l === "control")) ctrl = true;
    else if (!last && (l === "alt" || l === "meta" || l === "option")) alt = true;
    else if (!last && l === "shift") shift = true;
    else key = NAME_MAP[l] ?? l;
  });
  if (key === "return") key = "enter";
  const mods = [ctrl && "ctrl", alt && "alt", shift && "shift"].filter(Boolean);
  return [...mods, key].join("+");
}

/** Normalise a blessed keypress (ch, key) into a KeyPress; undefined for events to ignore. */
export function fromBlessed(ch: string | undefined, key: { name?: string; full?: string; ctrl?: boolean; meta?: boolean; shift?: boolean; sequence?: string } | undefined): KeyPress | undefined {
  const seq = key?.sequence ?? ch ?? "";
  let name = key?.name;
  let ctrl = !!key?.ctrl;
  const alt = !!key?.meta;
  let shift = !!key?.shift;
  if (name === "linefeed") {
    name = "j";
    ctrl = true;
  }
  if (!name && ch && ch.length === 1) {
    const c = ch.charCodeAt(0);
    if (c === 0x1c) (name = "\\"), (ctrl = true);
    else if (c === 0x1d) (name = "]"), (ctrl = true);
    else if (c === 0x1e) (name = "^"), (ctrl = true);
    else if (c === 0x1f) (name = "-"), (ctrl = true);
    else if (c === 0x00) (name = "space"), (ctrl = true);
  }
  const printable = !ctrl && !alt && ch !== undefined && ch.length > 0 && !/^[\x00-\x1f\x7f]/.test(ch) && name !== "escape";
  let k: string;
  if (name) {
    k = NAME_MAP[name] ?? name;
    if (name === "enter" && key?.full === "enter") return undefined; // blessed's duplicate of "return"
  } else if (ch) {
    k = ch.length === 1 ? ch.toLowerCase() : ch;
    if (ch.length === 1 && ch !== ch.toLowerCase()) shift = true;
  } else return undefined;
  // Printable symbols carry no shift ("?" not "shift+?"); letters keep it ("shift+a").
  if (printable && !/^[a-z]$/.test(k) && k !== "space") shift = false;
  const mods = [ctrl && "ctrl", alt && "alt", shift && "shift"].filter(Boolean);
  const id = [...mods, k].join("+");
  return { id, text: printable ? (ch === undefined ? undefined : ch) : undefined, sequence: seq };
}

/** Parse a kitty CSI-u (`ESC[13;2u`) or xterm modifyOtherKeys (`ESC[27;2;13~`) sequence. */
export function parseExtendedKey(data: string): KeyPress | undefined {
  let code: number, mod: number;
  let m = /^\x1b\[(\d+)(?::\d+)*(?:;(\d+)(?::\d+)?)?u$/.exec(data);
  if (m) {
    code = Number(m[1]);
    mod = m[2] ? Number(m[2]) : 1;
  } else {
    m = /^\x1b\[27;(\d+);(\d+)~$/.exec(data);
    if (!m) return undefined;
    mod = Number(m[1]);
    code = Number(m[2]);
  }
  const bits = Math.max(0, mod - 1);
  const shift = !!(bits & 1), alt = !!(bits & 2), ctrl = !!(bits & 4);
  let key: string;
  let text: string | undefined;
  if (code === 13) key = "enter";
  else if (code === 27) key = "escape";
  else if (code === 9) key = "tab";
  else if (code === 127 || code === 8) key = "backspace";
  else if (code === 32) key = "space";
  else if (code >= 33 && code <= 126) {
    key = String.fromCharCode(code).toLowerCase();
    if (!ctrl && !alt) text = shift ? String.fromCharCode(code).toUpperCase() : String.fromCharCode(code);
  } else return undefined;
  const keepShift = shift && (/^[a-z]$/.test(key) || key.length > 1);
  const mods = [ctrl && "ctrl", alt && "alt", keepShift && "shift"].filter(Boolean);
  return { id: [...mods, key].join("+"), text, sequence: data };
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
  "tui.editor.undo": ["ctrl+-"],
  // Most terminals send Shift+Enter as a plain Enter; Ctrl+J (a line feed) always works.
  "tui.input.newLine": ["shift+enter", "ctrl+enter", "ctrl+j"],
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
  "app.session.new": [],
  "app.session.tree": [],
  "app.session.fork": [],
  "app.session.resume": [],
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
  "tui.altScreen.search": process.platform === "win32" || process.env.WSL_DISTRO_NAME ? ["ctrl+f"] : ["ctrl+shift+f"],
  "tui.altScreen.searchNext": ["enter", "ctrl+g"],
  "tui.altScreen.searchPrevious": ["shift+enter", "ctrl+shift+g"],
  "tui.altScreen.searchClose": ["escape"],
};

export const BINDING_DESCRIPTIONS: Record<string, string> = {
  "app.interrupt": "Cancel / abort (restores queued messages)",
  "app.clear": "Clear editor (twice: quit)",
  "app.exit": "Quit (when the editor is empty)",
  "app.suspend": "Suspend to background",
  "app.editor.external": "Open the editor text in $VISUAL / $EDITOR",
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
  "tui.editor.undo": "Undo",
};

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
      const id = LEGACY[rawId] ?? rawId;
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
      data = JSON.parse(readFileSync(path, "utf8"));
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

/** Best-effort: raw terminal bytes → key string (for components calling keybindings.matches(data, id)). */
export function keyFromData(data: string): string | undefined {
  const simple: Record<string, string> = {
    "\r": "enter", "\n": "ctrl+j", "\x1b": "escape", "\t": "tab", "\x7f": "backspace", "\b": "backspace",
    "\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left", "\x1bOA": "up", "\x1bOB": "down",
    "\x1bOC": "right", "\x1bOD": "left", "\x1b[H": "home", "\x1b[F": "end", "\x1b[1~": "home", "\x1b[4~": "end",
    "\x1b[5~": "pageUp", "\x1b[6~": "pageDown", "\x1b[3~": "delete", "\x1b[Z": "shift+tab", "\x1b\r": "alt+enter", " ": "space",
  };
  if (simple[data]) return simple[data];
  const ext = parseExtendedKey(data);
  if (ext) return ext.id;
  if (data.length === 1) {
    const c = data.charCodeAt(0);
    if (c >= 1 && c <= 26) return `ctrl+${String.fromCharCode(c + 96)}`;
    if (c >= 0x20 && c < 0x7f) return /[A-Z]/.test(data) ? `shift+${data.toLowerCase()}` : data;
  }
  if (data.length === 2 && data[0] === "\x1b") return `alt+${data[1]!.toLowerCase()}`;
  return undefined;
}
