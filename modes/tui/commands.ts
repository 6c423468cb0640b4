/**
 * The TUI's built-in slash commands. Anything else starting with "/" (extension and plugin
 * commands, prompt templates, skills) goes through session.prompt, which runs or expands it.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { ThinkingLevel, Kernel } from "../../core/kernel/index.js";
import type { CommandHost } from "./host.js";
import { forkAt } from "./fork.js";
import { BINDING_DESCRIPTIONS, DIALOG_BINDINGS, formatKey, Keybindings } from "./keys.js";
import { SelectLayer } from "./layers.js";
import { findThemes } from "./theme.js";

export interface BuiltinCommand {
  name: string;
  description: string;
  /** What the command takes, shown after its name in the `/` menu (as pi 1.6's argumentHint). */
  argumentHint?: string;
  run(app: CommandHost, args: string): Promise<boolean | void> | boolean | void;
}

const notice = (app: Pick<CommandHost, "addNotice">, text: string, level: "info" | "warning" | "error" | "success" = "info") => app.addNotice(text, level);

/** In pi 1.6's order, with its arguments. */
export const BUILTIN_COMMANDS: BuiltinCommand[] = [
  { name: "settings", description: "Open settings menu", run: (app) => settingsMenu(app) },
  { name: "model", description: "Pick the model for this session (Ctrl+S in the list: also the default)", argumentHint: "<provider/model>", run: async (app, args) => (await import("./commands-models.js")).selectModel(app, args) },
  { name: "tree", description: "Navigate the session tree: jump, fork, label", run: async (app) => (await import("./tree.js")).openTree(app) },
  { name: "thinking", description: "Set the thinking level", argumentHint: "<level>", run: (app, args) => selectThinking(app, args) },
  { name: "scoped-models", description: "Choose the models Ctrl+P cycles through", run: async (app) => (await import("./commands-models.js")).scopedModels(app) },
  { name: "export", description: "Export the session to HTML [file]", run: (app, args) => exportSession(app, args) },
  { name: "import", description: "Import a session file (keeps its id and working directory)", argumentHint: "<path.jsonl>", run: async (app, args) => (await import("./commands-project.js")).importSession(app, args) },
  { name: "share", description: "Share the session as a secret GitHub gist (needs gh)", run: async (app) => (await import("./commands-share.js")).shareSession(app) },
  { name: "bug", description: "Write a bug report (a zip in the current folder)", argumentHint: "<description>", run: async (app, args) => (await import("./commands-share.js")).reportBug(app, args) },
  { name: "copy", description: "Copy the last assistant message to the clipboard", run: async (app) => (await import("./commands-share.js")).copyLast(app) },
  { name: "name", description: "Set the session name", argumentHint: "<name>", run: (app, args) => nameSession(app, args) },
  { name: "session", description: "Show the session file, id, messages, tokens and cost", run: (app) => sessionInfo(app) },
  { name: "changelog", description: "Show what changed in each version", run: async (app) => (await import("./commands-project.js")).changelog(app) },
  { name: "hotkeys", description: "Show the keyboard shortcuts", run: (app) => hotkeys(app) },
  { name: "fork", description: "Start a new session from an earlier user message", run: (app) => forkSession(app) },
  { name: "clone", description: "Duplicate the current branch into a new session", run: (app) => cloneSession(app) },
  { name: "trust", description: "Save whether this project is trusted, for later sessions", run: async (app) => (await import("./commands-project.js")).trustCommand(app) },
  { name: "login", description: "Sign in to a provider or store its API key", argumentHint: "<provider>", run: async (app, args) => (await import("./commands-auth.js")).login(app, args) },
  { name: "logout", description: "Remove stored provider credentials", run: async (app) => (await import("./commands-auth.js")).logout(app) },
  { name: "new", description: "Start a new session", run: (app) => newSession(app) },
  { name: "compact", description: "Compact the context now", argumentHint: "<instructions>", run: (app, args) => compact(app, args) },
  { name: "resume", description: "Resume a previous session (searchable)", run: (app) => resumeSession(app) },
  { name: "reload", description: "Reload keybindings and themes (and extensions, when installed)", run: (app) => reload(app) },
  { name: "quit", description: "Quit", run: (app) => void app.quit(0) },
  { name: "exit", description: "Quit", run: (app) => void app.quit(0) },
];

/**
 * Put the built-ins in the kernel's command registry (source "builtin") so extensions and other
 * plugins see them and `/name` sent through the session runs them here. A name another plugin
 * or extension registered first stays theirs in the registry (the TUI still runs its built-in
 * when the user types it). Returns the function that takes them out again.
 */
/** The owner this mode registers its built-in commands under (its plugin name). */
const OWNER = "mode-interactive";

export function registerBuiltinCommands(kernel: Kernel, run: (text: string) => Promise<boolean>): () => void {
  const offs: Array<() => void> = [];
  for (const c of BUILTIN_COMMANDS) {
    if (kernel.commands.has(c.name)) continue;
    const off = kernel.commands.register(
      c.name,
      { name: c.name, description: c.description, source: "builtin", handler: (args: string) => run(`/${c.name}${args ? ` ${args}` : ""}`) },
      OWNER,
    );
    if (off) offs.push(off);
  }
  return () => {
    for (const off of offs.splice(0)) off();
  };
}

/** Run `text` if it names a built-in command; returns false to let session.prompt handle it. */
export async function runBuiltinCommand(app: CommandHost, text: string): Promise<boolean> {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
  if (!m) return false;
  const cmd = BUILTIN_COMMANDS.find((c) => c.name === m[1]);
  if (!cmd) return false;
  const r = await cmd.run(app, m[2]!.trim());
  return r !== false;
}

// ---- thinking ----------------------------------------------------------------------------------------

/** /thinking [level]: the level for this session; Ctrl+S (app.thinking.save) in the list also saves it as the default. */
async function selectThinking(app: CommandHost, arg: string): Promise<void> {
  const levels = app.session.getAvailableThinkingLevels() as ThinkingLevel[];
  if (levels.length < 2) return notice(app, "This model has no thinking levels", "info");
  let level = arg as ThinkingLevel;
  let persist = false;
  if (!arg || !levels.includes(level)) {
    if (arg) notice(app, `Unknown thinking level "${arg}" (${levels.join(", ")})`, "warning");
    const saved = app.kernel.settings.get().defaultThinkingLevel;
    const items = levels.map((l) => ({
      label: l,
      value: l,
      description: [l === app.session.thinkingLevel ? "✓ current" : "", l === saved ? "· default" : ""].filter(Boolean).join("  ") || undefined,
    }));
    const picked = await app.dialog<ThinkingLevel | undefined>((finish) => {
      const layer: SelectLayer<ThinkingLevel> = new SelectLayer<ThinkingLevel>({
        title: "Thinking level",
        items,
        initialIndex: Math.max(0, levels.indexOf(app.session.thinkingLevel)),
        onDone: finish,
        hint: "↑↓ move · Enter this session · Ctrl+S set as default · Esc cancel",
        onKey: (k, item) => {
          if (!(app.keys.matches(k, "app.thinking.save") || k.id === "ctrl+s")) return false;
          if (item) {
            persist = true;
            layer.finish(item.value);
          }
          return true;
        },
      });
      return layer;
    }, undefined);
    if (!picked) return;
    level = picked;
  }
  const set = app.session.setThinkingLevel(level, { persist });
  notice(app, persist ? `Default thinking level: ${set}` : `Thinking level: ${set}`, "success");
}

// ---- settings -----------------------------------------------------------------------------------

async function settingsMenu(app: CommandHost): Promise<void> {
  await (await import("./settings-menu.js")).openSettings(app);
}

// ---- sessions -----------------------------------------------------------------------------------

async function newSession(app: CommandHost): Promise<void> {
  const r = await app.runtime.newSession();
  if (r?.cancelled) notice(app, "An extension cancelled the new session", "warning");
  else notice(app, "New session started", "success");
}

async function resumeSession(app: CommandHost): Promise<void> {
  const path = await app.pickSession();
  if (!path) return;
  if (path === app.session.sessionFile) return notice(app, "That is the current session", "info");
  const r = await app.runtime.switchSession(path);
  if (r?.cancelled) notice(app, "An extension cancelled the switch", "warning");
  else notice(app, `Resumed ${app.session.sessionName ?? path}`, "success");
}

/** User messages on the current branch, newest first. */
export function userMessagesOnBranch(app: CommandHost): Array<{ id: string; text: string }> {
  const sm = app.session.sessionManager;
  const branch = (sm.getBranch?.() ?? []) as Array<{ id: string; type: string; message?: { role: string; content: unknown } }>;
  const out: Array<{ id: string; text: string }> = [];
  for (const e of branch) {
    if (e.type !== "message" || e.message?.role !== "user") continue;
    const c = e.message.content;
    const text = typeof c === "string" ? c : Array.isArray(c) ? c.map((b: any) => (b?.type === "text" ? b.text : "")).join("") : "";
    out.push({ id: e.id, text });
  }
  return out.reverse();
}

/** Fork into a new session that ends before `entryId` (a user message), with its text in the editor. */
async function forkSession(app: CommandHost): Promise<void> {
  const msgs = userMessagesOnBranch(app);
  if (!msgs.length) return notice(app, "No user message to fork from yet", "info");
  const picked = await app.select(
    "Fork from a user message",
    msgs.map((m) => ({ label: m.text.replace(/\s+/g, " ").slice(0, 200), value: m })),
    { search: true },
  );
  if (picked) await forkAt(app, picked.id, picked.text);
}

async function cloneSession(app: CommandHost): Promise<void> {
  const r = await app.runtime.clone();
  if (r?.cancelled) notice(app, "An extension cancelled the clone", "warning");
  else notice(app, "Cloned to new session", "success");
}

async function compact(app: CommandHost, instructions: string): Promise<void> {
  const s = app.session;
  if (typeof s.compact !== "function") return notice(app, "Compaction is not available in this build", "warning");
  // While an answer streams, compact() stops it first (as pi 1.6 does); what came of it is kept.
  // A failure after compaction_start comes back as compaction_end's errorMessage (shown by the
  // event projector); only one before it (nothing was announced) is shown here.
  let announced = false;
  const off = s.subscribe?.((e: { type: string }) => {
    if (e.type === "compaction_start") announced = true;
  });
  try {
    await s.compact(instructions || undefined);
  } catch (e) {
    if (!announced) notice(app, `Compaction failed: ${(e as Error).message}`, "error");
  } finally {
    off?.();
  }
}

async function exportSession(app: CommandHost, arg: string): Promise<void> {
  const s = app.session;
  const out = arg ? resolve(app.kernel.cwd, arg) : undefined;
  let path: string | undefined;
  if (typeof s.exportToHtml === "function") path = await s.exportToHtml(out);
  else {
    const svc = app.kernel.service("export-session");
    if (svc) path = await svc(s, out);
    else {
      const html = app.kernel.service("export-html");
      if (!html) return notice(app, "HTML export is not available in this build", "warning");
      const file = s.sessionFile as string | undefined;
      if (!file || !existsSync(file)) return notice(app, "The session has not been saved yet; nothing to export", "warning");
      path = await html(file, out);
    }
  }
  notice(app, `Exported to ${path}`, "success");
}

async function nameSession(app: CommandHost, arg: string): Promise<void> {
  let name: string | undefined = arg;
  if (!name) name = await app.input("Session name", { prefill: app.session.sessionName ?? "" });
  if (!name?.trim()) return;
  app.session.setSessionName(name);
  app.updateTitle();
  notice(app, `Session name: ${name.trim()}`, "success");
}

function sessionInfo(app: CommandHost): void {
  const s = app.session;
  const st = s.getSessionStats();
  const t = st.tokens;
  const lines = [
    `Session: ${s.sessionName ?? "(unnamed)"}  id ${s.sessionId}`,
    `File: ${s.sessionFile ?? "(in memory)"}`,
    `Messages: ${st.userMessages} user, ${st.assistantMessages} assistant, ${st.toolCalls} tool calls`,
    `Tokens: ${t.input} in, ${t.output} out, ${t.cacheRead} cache read, ${t.cacheWrite} cache write · cost $${st.cost.toFixed(4)}`,
  ];
  notice(app, lines.join("\n"), "info");
}

function hotkeys(app: CommandHost): void {
  const rows: Array<[string, string]> = [];
  for (const [id, keys] of app.keys.entries()) {
    const d = BINDING_DESCRIPTIONS[id];
    if (d && keys.length) rows.push([keys.map(formatKey).join(", "), d]);
  }
  for (const { dialog, keys } of DIALOG_BINDINGS) {
    const bound = keys.flatMap(([id, label]) => (app.keys.getKeys(id).length ? [`${app.keys.getKeys(id).map(formatKey).join("/")} ${label}`] : []));
    if (bound.length) rows.push([`In ${dialog}`, bound.join(" · ")]);
  }
  rows.push(["!cmd / !!cmd", "Run a shell command (with / without sending the output to the model)"]);
  rows.push(["@path", "Complete a file name"]);
  for (const e of app.kernel.shortcuts.list()) rows.push([formatKey(e.value.key), `${e.value.description ?? ""} (${e.source})`]);
  const w = Math.min(30, Math.max(...rows.map(([k]) => k.length)));
  notice(app, ["Keyboard shortcuts:", ...rows.map(([k, d]) => `  ${k.padEnd(w)}  ${d}`)].join("\n"), "info");
}

async function reload(app: CommandHost): Promise<boolean> {
  if (app.session.isStreaming) {
    notice(app, "Wait for the current response to finish before reloading", "warning");
    return true;
  }
  app.keys = Keybindings.load(`${app.kernel.agentDir}/keybindings.json`);
  app.editor.setKeybindings(app.keys);
  for (const e of app.keys.errors) notice(app, e, "warning");
  const found = findThemes(app.kernel, app.argv);
  app.themes = found.themes;
  for (const e of found.errors) notice(app, e, "warning");
  const t = app.themes.get(app.theme.name) ?? app.themes.get(String(app.kernel.settings.get().theme)) ?? app.theme;
  app.setTheme(t);
  // The extensions plugin registers /reload too: extensions, and with their session_start
  // {reason: "reload"} the skills, prompt templates and context files. It runs as a command of the
  // session (its handler gets the session's context).
  const other = app.kernel.commands.entry("reload");
  if (other && other.source !== OWNER) {
    await app.session.prompt("/reload");
    notice(app, "Reloaded keybindings, extensions, skills, prompts, themes, and context files", "success");
    return true;
  }
  notice(app, "Reloaded keybindings and themes", "success");
  return true;
}
