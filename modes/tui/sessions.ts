/**
 * The session picker (/resume, `pi -r`): this folder's sessions or all of them (Tab), newest
 * first, searched by name, first message, message text and folder.
 */
import { SessionManager, listSessionsInDir, type SessionInfo } from "../../core/stores/index.js";
import type { SessionsHost } from "./host.js";
import { SelectLayer, type SelectItem } from "./layers.js";

export function timeAgo(d: Date, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - d.getTime()) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 86400 * 30) return `${Math.floor(s / 86400)}d ago`;
  return d.toISOString().slice(0, 10);
}

function tilde(p: string): string {
  const home = process.env.HOME;
  return home && p.startsWith(home) ? "~" + p.slice(home.length) : p;
}

/** Keep sessions whose text contains every word of the query (case-insensitive). */
export function filterSessions<T extends { searchText?: string; label: string }>(items: T[], query: string): T[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return items.filter((it) => {
    const hay = (it.searchText ?? it.label).toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

export function sessionItems(list: SessionInfo[], opts: { all: boolean; current?: string }): SelectItem<string>[] {
  return list.map((s) => {
    const first = s.firstMessage.replace(/\s+/g, " ").trim();
    const label = s.name ? `${s.name} — ${first}` : first;
    const desc = [timeAgo(s.modified), `${s.messageCount} msg`, opts.all && s.cwd ? tilde(s.cwd) : "", s.path === opts.current ? "(current)" : ""].filter(Boolean).join(" · ");
    return { label, description: desc, value: s.path, searchText: `${s.name ?? ""}\n${s.firstMessage}\n${s.allMessagesText}\n${s.cwd}` };
  });
}

export async function pickSession(app: SessionsHost): Promise<string | undefined> {
  const sm = app.runtime.sessionManager;
  const dir: string | undefined = sm?.getSessionDir?.();
  let all = false;
  const current = app.session.sessionFile as string | undefined;
  const load = async (everything: boolean): Promise<SessionInfo[]> => {
    if (everything) return SessionManager.listAll();
    return dir ? listSessionsInDir(dir) : SessionManager.list(app.kernel.cwd);
  };
  const title = () => `Resume a session (${all ? "all folders" : "this folder"})`;
  let layerRef: SelectLayer<string> | undefined;
  const refresh = async () => {
    const layer = layerRef;
    if (!layer) return;
    layer.title = `${title()} — loading…`;
    app.requestRender();
    try {
      const list = await load(all);
      layer.setItems(sessionItems(list, { all, current }), false);
      layer.title = `${title()} — ${list.length} session${list.length === 1 ? "" : "s"}`;
    } catch (e) {
      layer.title = `${title()} — ${(e as Error).message}`;
    }
    app.requestRender();
  };
  return app.dialog<string | undefined>((finish) => {
    const layer = new SelectLayer<string>({
      title: title(),
      items: [],
      search: true,
      maxVisible: 12,
      onDone: finish,
      filter: filterSessions,
      hint: "↑↓ move · Enter open · Tab this folder / all · Esc cancel",
      onKey: (k) => {
        if (k.id === "tab") {
          all = !all;
          void refresh();
          return true;
        }
        return false;
      },
    });
    layerRef = layer;
    void refresh();
    return layer;
  }, undefined);
}
