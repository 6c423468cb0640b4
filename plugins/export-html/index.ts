/**
 * export-html: a session as one self-contained HTML page (see render.ts).
 *
 * Kernel services
 *   "export-html"     (inputPath, outputPath?) => Promise<writtenPath>   — `pi --export <file> [out.html]`
 *   "export-session"  (session, outputPath?) => Promise<writtenPath>     — /export, RPC export_html
 * and the slash command /export [file].
 *
 * The default output is `<app>-session-<session file name>.html` in the working directory.
 * A session file is only read, never written (old versions are migrated in memory).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { definePlugin, type Kernel, type ExportHtml, type ExportSession } from "../../core/kernel/index.js";
import type { AgentSession } from "../../core/engine/index.js";
import { readSessionFile, type SessionEntry, asTreeStore } from "../../core/stores/index.js";
// render.js (~14 KB) is imported by the export itself, not at start-up.
const loadRender = () => import("./render.js");

export type { ExportData } from "./render.js";

export type { ExportHtml, ExportSession } from "../../core/kernel/index.js";

function sessionName(entries: readonly SessionEntry[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === "session_info") return e.name?.trim() || undefined;
  }
  return undefined;
}

function write(path: string, html: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html, "utf8");
  return path;
}

export function createExporters(kernel: Kernel): { exportHtml: ExportHtml; exportSession: ExportSession } {
  const generator = `Exported by ${kernel.app.name} ${kernel.app.version}`;
  const defaultOut = (cwd: string, stem: string) => join(cwd, `${kernel.app.name}-session-${stem}.html`);

  const exportHtml: ExportHtml = async (inputPath, outputPath) => {
    const file = resolve(kernel.cwd, inputPath);
    if (!existsSync(file)) throw new Error(`File not found: ${file}`);
    let parsed;
    try {
      parsed = readSessionFile(file);
    } catch (error) {
      throw new Error(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!parsed.header) throw new Error(`${file} is not a session file (its first line is not a session header)`);
    const { renderSessionHtml } = await loadRender();
    const html = renderSessionHtml({ header: parsed.header, entries: parsed.entries, name: sessionName(parsed.entries), generator });
    return write(outputPath ? resolve(kernel.cwd, outputPath) : defaultOut(kernel.cwd, basename(file, ".jsonl")), html);
  };

  const exportSession: ExportSession = async (session, outputPath) => {
    const store = asTreeStore(session.sessionManager, "export");
    const entries = store.getEntries();
    if (!entries.some((e) => e.type === "message")) throw new Error("nothing to export yet: the session has no messages");
    const file = store.getSessionFile();
    const { renderSessionHtml } = await loadRender();
    const html = renderSessionHtml({
      header: store.getHeader(),
      entries,
      leafId: store.getLeafId(),
      name: store.getSessionName(),
      systemPrompt: await session.getSystemPrompt(),
      tools: session.getActiveTools().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      generator,
    });
    const stem = file ? basename(file, ".jsonl") : session.sessionId;
    // Entries are stored without credentials already; the system prompt and anything else pass the same filter.
    return write(outputPath ? resolve(session.cwd, outputPath) : defaultOut(session.cwd, stem), session.redactSecrets(html));
  };

  return { exportHtml, exportSession };
}

export default definePlugin({
  name: "export-html",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Exports a session to a self-contained HTML file (--export, /export, RPC export_html)",
  setup(api) {
    const { exportHtml, exportSession } = createExporters(api.kernel);
    api.provide("export-html", exportHtml);
    api.provide("export-session", exportSession);
    api.registerFlag({
      name: "export",
      type: "string",
      placeholder: "session.jsonl [out.html]",
      description: "Export a session to a self-contained HTML file and exit",
      group: "Sessions",
      async action(value, { cwd, positionals }) {
        if (typeof value !== "string" || !value) throw new Error("name the session file to export: --export <session.jsonl> [out.html]");
        const target = await exportHtml(resolve(cwd, String(value)), positionals[0] ? resolve(cwd, positionals[0]) : undefined);
        return `Exported to ${target}\n`;
      },
    });
    api.registerCommand({
      name: "export",
      description: "Export the session to an HTML file (optional: the file name)",
      source: "builtin",
      async handler(args, ctx) {
        const session: AgentSession = ctx?.session ?? api.kernel.bound("/export").session;
        const path = await exportSession(session, args.trim() || undefined);
        if (ctx?.ui?.notify) ctx.ui.notify(`Exported to ${path}`, "info");
        else api.report("info", `session exported to ${path}`);
      },
    });
  },
});
